// Elementwise ops with broadcasting: arithmetic, comparison, logic, variadic, Where.
#include "tests/runtime/ops/op_case.h"

namespace zp::runtime::testing {
namespace {

// Op(a, b) on float operands of these shapes (every broadcasting pattern the
// runtime merges differently), and on int64 and int32 operands.
void binaryCases(std::vector<OpCase>& cases, const std::string& op, Fill fa, Fill fb, const std::string& out,
                 bool integers) {
  const std::string body = "y = " + op + " (a, b)";
  const std::vector<std::pair<std::string, std::pair<Shape, Shape>>> shapes = {
      {"same shape", {{2, 3, 4}, {2, 3, 4}}},
      {"row broadcast", {{2, 3, 5}, {5}}},
      {"both broadcast", {{3, 1, 4}, {1, 5, 1}}},
      {"scalar", {{4, 3}, {}}},
      {"middle axis", {{2, 3, 4}, {3, 1}}},
  };
  for (const auto& [what, ab] : shapes)
    cases.push_back({op, what, body, {in("a", ab.first, fa), in("b", ab.second, fb)}, {out + " y"}});
  if (!integers) return;
  cases.push_back({op, "int64 broadcast", body,
                   {in("a", {3, 4}, fa == Fill::Positive ? Fill::Counts : Fill::SmallInts, DType::I64),
                    in("b", {4}, fb == Fill::Positive || fb == Fill::AwayFromZero ? Fill::Counts : Fill::SmallInts, DType::I64)},
                   {(out == "float" ? "int64" : out) + " y"}});
  cases.push_back({op, "int32", body,
                   {in("a", {5}, fa == Fill::Positive ? Fill::Counts : Fill::SmallInts, DType::I32),
                    in("b", {5}, fb == Fill::Positive || fb == Fill::AwayFromZero ? Fill::Counts : Fill::SmallInts, DType::I32)},
                   {(out == "float" ? "int32" : out) + " y"}});
}

void variadicCases(std::vector<OpCase>& cases, const std::string& op) {
  cases.push_back({op, "one operand", "y = " + op + " (a)", {in("a", {2, 3})}});
  cases.push_back({op, "two broadcast", "y = " + op + " (a, b)", {in("a", {2, 3, 4}), in("b", {3, 1})}});
  cases.push_back({op, "three broadcast", "y = " + op + " (a, b, c)",
                   {in("a", {4}), in("b", {2, 3, 4}, Fill::SmallInts), in("c", {3, 1}, Fill::SmallInts)}});
}

}  // namespace

std::vector<OpCase> elementwiseCases() {
  std::vector<OpCase> c;
  binaryCases(c, "Add", Fill::Uniform, Fill::Uniform, "float", true);
  binaryCases(c, "Sub", Fill::Uniform, Fill::Uniform, "float", true);
  binaryCases(c, "Mul", Fill::Uniform, Fill::Uniform, "float", true);
  binaryCases(c, "Div", Fill::Uniform, Fill::AwayFromZero, "float", true);
  binaryCases(c, "Pow", Fill::Positive, Fill::Uniform, "float", false);
  c.push_back({"Pow", "square", "y = Pow (a, e)", {in("a", {3, 4}), fixed("e", DType::F32, {}, {2.0})}});
  c.push_back({"Pow", "square root", "y = Pow (a, e)", {in("a", {3, 4}, Fill::Positive), fixed("e", DType::F32, {}, {0.5})}});
  // Integer Mod takes the divisor's sign; float Mod is fmod.
  c.push_back({"Mod", "int64 signs", "y = Mod (a, b)",
               {in("a", {4, 5}, Fill::Wide, DType::I64), fixed("b", DType::I64, {5}, {3, -3, 7, -2, 4}, false)},
               {"int64 y"}});
  c.push_back({"Mod", "int32 broadcast", "y = Mod (a, b)",
               {in("a", {2, 3}, Fill::Wide, DType::I32), fixed("b", DType::I32, {1}, {-4}, false)}, {"int32 y"}});
  c.push_back({"Mod", "float fmod", "y = Mod <fmod=1> (a, b)", {in("a", {3, 4}, Fill::Wide), in("b", {4}, Fill::AwayFromZero)}});
  for (const char* op : {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"})
    binaryCases(c, op, Fill::SmallInts, Fill::SmallInts, "bool", true);
  for (const char* op : {"And", "Or"}) {
    const std::string body = std::string("y = ") + op + " (a, b)";
    c.push_back({op, "same shape", body, {in("a", {3, 4}, Fill::Bools, DType::Bool), in("b", {3, 4}, Fill::Bools, DType::Bool)}, {"bool y"}});
    c.push_back({op, "broadcast", body, {in("a", {2, 3, 1}, Fill::Bools, DType::Bool), in("b", {4}, Fill::Bools, DType::Bool)}, {"bool y"}});
  }
  for (const char* op : {"Max", "Min", "Sum", "Mean"}) variadicCases(c, op);
  c.push_back({"PRelu", "per-channel slope", "y = PRelu (x, s)", {in("x", {2, 3, 4, 4}), init("s", {3, 1, 1})}});
  c.push_back({"PRelu", "scalar slope input", "y = PRelu (x, s)", {in("x", {5, 7}), in("s", {1})}});
  c.push_back({"PRelu", "int32 slope row", "y = PRelu (x, s)",
               {in("x", {3, 4}, Fill::SmallInts, DType::I32), in("s", {4}, Fill::SmallInts, DType::I32)}, {"int32 y"}, 16});
  c.push_back({"Xor", "same shape", "y = Xor (a, b)",
               {in("a", {3, 4}, Fill::Bools, DType::Bool), in("b", {3, 4}, Fill::Bools, DType::Bool)}, {"bool y"}});
  c.push_back({"Xor", "broadcast", "y = Xor (a, b)",
               {in("a", {2, 3, 1}, Fill::Bools, DType::Bool), in("b", {4}, Fill::Bools, DType::Bool)}, {"bool y"}});
  c.push_back({"BitShift", "left uint8", "y = BitShift <direction=\"LEFT\"> (a, b)",
               {in("a", {3, 4}, Fill::Counts, DType::U8), fixed("b", DType::U8, {4}, {0, 1, 3, 5}, false)}, {"uint8 y"}, 11});
  c.push_back({"BitShift", "right uint32", "y = BitShift <direction=\"RIGHT\"> (a, b)",
               {in("a", {6}, Fill::Counts, DType::U32), fixed("b", DType::U32, {6}, {0, 1, 2, 3, 4, 1}, false)}, {"uint32 y"}, 11});
  c.push_back({"BitShift", "left uint64 broadcast", "y = BitShift <direction=\"LEFT\"> (a, b)",
               {in("a", {2, 3}, Fill::Counts, DType::U64), fixed("b", DType::U64, {}, {7}, false)}, {"uint64 y"}, 11});
  // Other element types: double, int8, uint16 and mixed-type Pow.
  c.push_back({"Add", "double", "y = Add (a, b)", {in("a", {2, 3}, Fill::Wide, DType::F64), in("b", {3}, Fill::Wide, DType::F64)},
               {"double y"}});
  c.push_back({"Mul", "int8", "y = Mul (a, b)", {in("a", {2, 3}, Fill::SmallInts, DType::I8), in("b", {3}, Fill::SmallInts, DType::I8)},
               {"int8 y"}, 14});
  c.push_back({"Sub", "uint16", "y = Sub (a, b)", {in("a", {5}, Fill::Counts, DType::U16), in("b", {5}, Fill::Counts, DType::U16)},
               {"uint16 y"}, 14});
  c.push_back({"Pow", "float base, int64 exponent", "y = Pow (a, b)",
               {in("a", {2, 3}), in("b", {3}, Fill::SmallInts, DType::I64)}});
  c.push_back({"Pow", "int32 base, float exponent", "y = Pow (a, b)",
               {in("a", {5}, Fill::Counts, DType::I32), in("b", {5}, Fill::Counts)}, {"int32 y"}});
  c.push_back({"Mod", "int64 fmod", "y = Mod <fmod=1> (a, b)",
               {in("a", {4, 5}, Fill::Wide, DType::I64), fixed("b", DType::I64, {5}, {3, -3, 7, -2, 4}, false)}, {"int64 y"}});
  c.push_back({"Mod", "uint8", "y = Mod (a, b)",
               {in("a", {6}, Fill::Counts, DType::U8), fixed("b", DType::U8, {6}, {1, 2, 3, 4, 5, 6}, false)}, {"uint8 y"}});
  c.push_back({"Max", "int32", "y = Max (a, b)", {in("a", {2, 3}, Fill::Wide, DType::I32), in("b", {3}, Fill::Wide, DType::I32)},
               {"int32 y"}});
  c.push_back({"Min", "double", "y = Min (a, b)", {in("a", {2, 3}, Fill::Wide, DType::F64), in("b", {3}, Fill::Wide, DType::F64)},
               {"double y"}});
  // float16 and bfloat16 compute in float32 and round back to nearest even.
  for (const char* op : {"Add", "Mul", "Div", "Max", "Min", "Sum"}) {
    OpCase h{op, "float16", std::string("y = ") + op + " (a, b)",
             {in("a", {2, 5}, Fill::Wide, DType::F16), in("b", {5}, Fill::AwayFromZero, DType::F16)}, {"float16 y"}};
    h.tolerance = 1e-3;
    c.push_back(h);
  }
  c.push_back({"Less", "float16", "y = Less (a, b)",
               {in("a", {2, 5}, Fill::SmallInts, DType::F16), in("b", {5}, Fill::SmallInts, DType::F16)}, {"bool y"}});
  c.push_back({"Equal", "double", "y = Equal (a, b)",
               {in("a", {2, 3}, Fill::SmallInts, DType::F64), in("b", {3}, Fill::SmallInts, DType::F64)}, {"bool y"}});
  c.push_back({"Where", "broadcast", "y = Where (c, a, b)",
               {in("c", {2, 1, 4}, Fill::Bools, DType::Bool), in("a", {3, 4}), in("b", {2, 3, 1})}});
  c.push_back({"Where", "same shape", "y = Where (c, a, b)",
               {in("c", {5, 6}, Fill::Bools, DType::Bool), in("a", {5, 6}), in("b", {5, 6})}});
  c.push_back({"Where", "int64", "y = Where (c, a, b)",
               {in("c", {4}, Fill::Bools, DType::Bool), in("a", {2, 4}, Fill::Wide, DType::I64), in("b", {}, Fill::SmallInts, DType::I64)},
               {"int64 y"}});
  return c;
}

}  // namespace zp::runtime::testing
