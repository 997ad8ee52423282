// Reductions: Sum (axes as an input from opset 13), Mean, Max, Min, SumSquare, Prod,
// L1, L2, LogSum, LogSumExp on floats, doubles and integers; CumSum.
#include "tests/runtime/ops/op_case.h"

namespace zp::runtime::testing {

std::vector<OpCase> reduceCases() {
  std::vector<OpCase> c;
  c.push_back({"ReduceSum", "axes input, kept", "y = ReduceSum (x, a)",
               {in("x", {2, 3, 4}), fixed("a", DType::I64, {2}, {0, -1})}});
  c.push_back({"ReduceSum", "axes input, dropped", "y = ReduceSum <keepdims=0> (x, a)",
               {in("x", {2, 3, 4, 5}), fixed("a", DType::I64, {1}, {2})}});
  c.push_back({"ReduceSum", "no axes: everything", "y = ReduceSum (x)", {in("x", {3, 4})}});
  c.push_back({"ReduceSum", "no axes: noop", "y = ReduceSum <noop_with_empty_axes=1> (x)", {in("x", {3, 4})}});
  c.push_back({"ReduceSum", "opset 11 attribute", "y = ReduceSum <axes=[1]> (x)", {in("x", {3, 4, 2})}, {"float y"}, 11});
  for (const char* op : {"ReduceMean", "ReduceMax", "ReduceMin", "ReduceSumSquare", "ReduceProd", "ReduceL1", "ReduceL2",
                         "ReduceLogSumExp"}) {
    const std::string o = op;
    c.push_back({o, "one axis", "y = " + o + " <axes=[1]> (x)", {in("x", {2, 5, 3})}});
    c.push_back({o, "two axes, dropped", "y = " + o + " <axes=[0,-1], keepdims=0> (x)", {in("x", {2, 5, 3})}});
    c.push_back({o, "all axes", "y = " + o + " (x)", {in("x", {4, 6}, Fill::Wide)}});
  }
  // LogSum needs positive sums.
  c.push_back({"ReduceLogSum", "one axis", "y = ReduceLogSum <axes=[1]> (x)", {in("x", {2, 5, 3}, Fill::Positive)}});
  c.push_back({"ReduceLogSum", "all axes", "y = ReduceLogSum (x)", {in("x", {4, 6}, Fill::Positive)}});
  // Other element types: integers accumulate exactly, double in double.
  c.push_back({"ReduceSum", "int64", "y = ReduceSum (x, a)", {in("x", {3, 4}, Fill::Wide, DType::I64), fixed("a", DType::I64, {1}, {1})},
               {"int64 y"}});
  c.push_back({"ReduceMax", "int32", "y = ReduceMax <axes=[0]> (x)", {in("x", {3, 4}, Fill::Wide, DType::I32)}, {"int32 y"}});
  c.push_back({"ReduceProd", "int64", "y = ReduceProd <axes=[1], keepdims=0> (x)", {in("x", {3, 4}, Fill::SmallInts, DType::I64)},
               {"int64 y"}});
  c.push_back({"ReduceMean", "double", "y = ReduceMean <axes=[1]> (x)", {in("x", {3, 4}, Fill::Wide, DType::F64)}, {"double y"}});
  c.push_back({"ReduceL2", "double", "y = ReduceL2 (x)", {in("x", {3, 4}, Fill::Wide, DType::F64)}, {"double y"}});
  c.push_back({"ReduceMin", "uint8", "y = ReduceMin <axes=[1]> (x)", {in("x", {3, 4}, Fill::Counts, DType::U8)}, {"uint8 y"}});
  // CumSum: forward, exclusive, reversed, on floats and integers.
  c.push_back({"CumSum", "axis 1", "y = CumSum (x, a)", {in("x", {2, 5, 3}), fixed("a", DType::I64, {}, {1})}});
  c.push_back({"CumSum", "exclusive reverse, negative axis", "y = CumSum <exclusive=1, reverse=1> (x, a)",
               {in("x", {3, 6}), fixed("a", DType::I32, {}, {-1})}});
  c.push_back({"CumSum", "int64 axis 0", "y = CumSum (x, a)",
               {in("x", {4, 3}, Fill::Wide, DType::I64), fixed("a", DType::I64, {}, {0}, false)}, {"int64 y"}});
  c.push_back({"CumSum", "double exclusive", "y = CumSum <exclusive=1> (x, a)",
               {in("x", {7}, Fill::Wide, DType::F64), fixed("a", DType::I64, {}, {0})}, {"double y"}});
  return c;
}

}  // namespace zp::runtime::testing
