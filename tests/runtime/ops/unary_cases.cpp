// One input, element by element: math, activations, Clip, Not, Cast.
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
  return c;
}

}  // namespace zp::runtime::testing
