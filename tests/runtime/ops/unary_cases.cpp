// One input, element by element: math, activations, Clip, Not, Cast.
#include <tuple>

#include "tests/runtime/ops/op_case.h"

namespace zp::runtime::testing {
namespace {

// op(x) on a small and on a large tensor (the large one crosses the parallel threshold).
void floatCases(std::vector<OpCase>& cases, const std::string& op, Fill fill, const std::string& attrs = "",
                int opset = 13) {
  const std::string body = "y = " + op + (attrs.empty() ? "" : " <" + attrs + ">") + " (x)";
  cases.push_back({op, "small" + (attrs.empty() ? "" : " " + attrs), body, {in("x", {2, 3, 5}, fill)}, {"float y"}, opset});
  cases.push_back({op, "large" + (attrs.empty() ? "" : " " + attrs), body, {in("x", {3, 200, 120}, fill)}, {"float y"}, opset});
}

}  // namespace

std::vector<OpCase> unaryCases() {
  std::vector<OpCase> c;
  floatCases(c, "Relu", Fill::Uniform);
  floatCases(c, "Sigmoid", Fill::Wide);
  floatCases(c, "Tanh", Fill::Wide);
  floatCases(c, "Erf", Fill::Uniform);
  floatCases(c, "Sqrt", Fill::Positive);
  floatCases(c, "Exp", Fill::Uniform);
  floatCases(c, "Log", Fill::Positive);
  floatCases(c, "Reciprocal", Fill::AwayFromZero);
  floatCases(c, "Floor", Fill::Halves);
  floatCases(c, "Ceil", Fill::Halves);
  floatCases(c, "Round", Fill::Halves);
  floatCases(c, "Softplus", Fill::Wide);
  floatCases(c, "Neg", Fill::Uniform);
  floatCases(c, "Abs", Fill::Uniform);
  floatCases(c, "HardSwish", Fill::Halves, "", 14);
  floatCases(c, "HardSigmoid", Fill::Halves);
  floatCases(c, "HardSigmoid", Fill::Halves, "alpha=0.5, beta=0.25");
  floatCases(c, "LeakyRelu", Fill::Uniform);
  floatCases(c, "LeakyRelu", Fill::Uniform, "alpha=0.3");
  floatCases(c, "Elu", Fill::Uniform);
  floatCases(c, "Elu", Fill::Uniform, "alpha=0.7");
  c.push_back({"Neg", "int64", "y = Neg (x)", {in("x", {3, 4}, Fill::Wide, DType::I64)}, {"int64 y"}});
  c.push_back({"Abs", "int64", "y = Abs (x)", {in("x", {3, 4}, Fill::Wide, DType::I64)}, {"int64 y"}});
  // Clip: bounds as inputs (opset 11 on), either one absent; as attributes before.
  c.push_back({"Clip", "both bounds", "y = Clip (x, lo, hi)",
               {in("x", {3, 7}), fixed("lo", DType::F32, {}, {-0.25}), fixed("hi", DType::F32, {}, {0.5})}});
  c.push_back({"Clip", "lower bound", "y = Clip (x, lo)", {in("x", {3, 7}), fixed("lo", DType::F32, {}, {0.1}, false)}});
  c.push_back({"Clip", "upper bound", "y = Clip (x, , hi)", {in("x", {3, 7}), fixed("hi", DType::F32, {}, {0.2})}});
  c.push_back({"Clip", "no bounds", "y = Clip (x)", {in("x", {3, 7})}});
  c.push_back({"Clip", "opset 6 attributes", "y = Clip <min=-0.5, max=0.3> (x)", {in("x", {3, 7})}, {"float y"}, 6});
  c.push_back({"Not", "bools", "y = Not (x)", {in("x", {4, 5}, Fill::Bools, DType::Bool)}, {"bool y"}});
  c.push_back({"Not", "scalar", "y = Not (x)", {in("x", {}, Fill::Bools, DType::Bool)}, {"bool y"}});
  // Cast: float to integers truncates toward zero.
  c.push_back({"Cast", "float to int64", "y = Cast <to=7> (x)", {in("x", {3, 5}, Fill::Wide)}, {"int64 y"}});
  c.push_back({"Cast", "float to int32", "y = Cast <to=6> (x)", {in("x", {3, 5}, Fill::Wide)}, {"int32 y"}});
  c.push_back({"Cast", "float to int8", "y = Cast <to=3> (x)", {in("x", {3, 5}, Fill::Wide)}, {"int8 y"}});
  c.push_back({"Cast", "float to uint8", "y = Cast <to=2> (x)", {in("x", {3, 5}, Fill::Counts)}, {"uint8 y"}});
  c.push_back({"Cast", "float to bool", "y = Cast <to=9> (x)", {in("x", {3, 5}, Fill::SmallInts)}, {"bool y"}});
  c.push_back({"Cast", "int64 to float", "y = Cast <to=1> (x)", {in("x", {3, 5}, Fill::Wide, DType::I64)}, {"float y"}});
  c.push_back({"Cast", "int32 to int64", "y = Cast <to=7> (x)", {in("x", {6}, Fill::Wide, DType::I32)}, {"int64 y"}});
  c.push_back({"Cast", "bool to float", "y = Cast <to=1> (x)", {in("x", {6}, Fill::Bools, DType::Bool)}, {"float y"}});
  c.push_back({"Cast", "uint8 to float", "y = Cast <to=1> (x)", {in("x", {6}, Fill::Counts, DType::U8)}, {"float y"}});
  // Every other numeric type, both ways through float (halves round to nearest even).
  const std::vector<std::tuple<DType, int, std::string>> others = {
      {DType::F64, 11, "double"}, {DType::F16, 10, "float16"}, {DType::I16, 5, "int16"},
      {DType::U16, 4, "uint16"},  {DType::U32, 12, "uint32"},  {DType::U64, 13, "uint64"}};
  for (const auto& [dt, onnxType, name] : others) {
    const bool isUnsigned = name[0] == 'u';
    c.push_back({"Cast", "float to " + name, fmt::format("y = Cast <to={}> (x)", onnxType),
                 {in("x", {3, 5}, isUnsigned ? Fill::Counts : Fill::Wide)}, {name + " y"}});
    c.push_back({"Cast", name + " to float", "y = Cast <to=1> (x)", {in("x", {7}, Fill::Counts, dt)}, {"float y"}});
  }
  c.push_back({"Cast", "double to int64", "y = Cast <to=7> (x)", {in("x", {2, 5}, Fill::Wide, DType::F64)}, {"int64 y"}});
  c.push_back({"Cast", "int64 to float16", "y = Cast <to=10> (x)", {in("x", {6}, Fill::Wide, DType::I64)}, {"float16 y"}});
  c.push_back({"Cast", "float16 to double", "y = Cast <to=11> (x)", {in("x", {6}, Fill::Wide, DType::F16)}, {"double y"}});
  c.push_back({"Cast", "uint16 to int8", "y = Cast <to=3> (x)", {in("x", {6}, Fill::Counts, DType::U16)}, {"int8 y"}});
  c.push_back({"CastLike", "float to int32", "y = CastLike (x, like)",
               {in("x", {3, 4}, Fill::Wide), in("like", {1}, Fill::Counts, DType::I32)}, {"int32 y"}, 15});
  c.push_back({"CastLike", "int64 to double", "y = CastLike (x, like)",
               {in("x", {5}, Fill::Wide, DType::I64), in("like", {2}, Fill::Uniform, DType::F64)}, {"double y"}, 15});
  for (const char* op : {"Relu", "Sigmoid", "Exp", "Abs", "Neg", "Sqrt"}) {
    OpCase h{op, "float16", std::string("y = ") + op + " (x)",
             {in("x", {3, 7}, std::string(op) == "Sqrt" ? Fill::Positive : Fill::Uniform, DType::F16)}, {"float16 y"}};
    h.tolerance = 1e-3;
    c.push_back(h);
  }
  // Trigonometric and hyperbolic functions inside their domains.
  for (const char* op : {"Sin", "Cos", "Tan", "Atan", "Sinh", "Cosh", "Asinh"}) floatCases(c, op, Fill::Uniform);
  for (const char* op : {"Asin", "Acos", "Atanh"}) floatCases(c, op, Fill::Uniform);
  floatCases(c, "Acosh", Fill::Counts);
  c.push_back({"Sin", "double", "y = Sin (x)", {in("x", {4, 3}, Fill::Wide, DType::F64)}, {"double y"}});
  floatCases(c, "Softsign", Fill::Wide);
  floatCases(c, "Selu", Fill::Uniform);
  floatCases(c, "Selu", Fill::Uniform, "alpha=2.0, gamma=3.0");
  floatCases(c, "Celu", Fill::Uniform, "", 12);
  floatCases(c, "Celu", Fill::Uniform, "alpha=2.0", 12);
  floatCases(c, "ThresholdedRelu", Fill::Halves, "", 10);
  floatCases(c, "ThresholdedRelu", Fill::Halves, "alpha=0.5", 10);
  floatCases(c, "Shrink", Fill::Halves);
  floatCases(c, "Shrink", Fill::Halves, "bias=1.5, lambd=1.5");
  c.push_back({"Shrink", "int32", "y = Shrink <lambd=1.5, bias=1.0> (x)", {in("x", {8}, Fill::SmallInts, DType::I32)}, {"int32 y"}});
  floatCases(c, "Sign", Fill::SmallInts);
  c.push_back({"Sign", "int64", "y = Sign (x)", {in("x", {9}, Fill::SmallInts, DType::I64)}, {"int64 y"}});
  c.push_back({"Abs", "int8", "y = Abs (x)", {in("x", {9}, Fill::SmallInts, DType::I8)}, {"int8 y"}});
  c.push_back({"Neg", "double", "y = Neg (x)", {in("x", {9}, Fill::Wide, DType::F64)}, {"double y"}});
  c.push_back({"Clip", "int32 bounds", "y = Clip (x, lo, hi)",
               {in("x", {3, 7}, Fill::Wide, DType::I32), fixed("lo", DType::I32, {}, {-5}), fixed("hi", DType::I32, {}, {7})},
               {"int32 y"}});
  c.push_back({"Clip", "uint8 upper bound", "y = Clip (x, , hi)",
               {in("x", {3, 7}, Fill::Counts, DType::U8), fixed("hi", DType::U8, {}, {4})}, {"uint8 y"}});
  // IsNaN / IsInf on values made of 0/0 and 1/0.
  const std::string special = "z = Div (a, b)\n";
  for (const char* op : {"IsNaN", "IsInf"}) {
    c.push_back({op, "division specials", special + "y = " + op + " (z)",
                 {in("a", {12}, Fill::SmallInts), in("b", {12}, Fill::SmallInts)}, {"bool y"}});
  }
  c.push_back({"IsNaN", "double", "y = IsNaN (x)", {in("x", {5}, Fill::Uniform, DType::F64)}, {"bool y"}});
  c.push_back({"IsInf", "positive only", special + "y = IsInf <detect_negative=0> (z)",
               {in("a", {12}, Fill::SmallInts), in("b", {12}, Fill::SmallInts)}, {"bool y"}});
  c.push_back({"IsInf", "negative only", special + "y = IsInf <detect_positive=0> (z)",
               {in("a", {12}, Fill::SmallInts), in("b", {12}, Fill::SmallInts)}, {"bool y"}});
  return c;
}

}  // namespace zp::runtime::testing
