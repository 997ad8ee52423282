// Reductions: Sum (axes as an input from opset 13), Mean, Max, Min, SumSquare.
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
  for (const char* op : {"ReduceMean", "ReduceMax", "ReduceMin", "ReduceSumSquare"}) {
    const std::string o = op;
    c.push_back({o, "one axis", "y = " + o + " <axes=[1]> (x)", {in("x", {2, 5, 3})}});
    c.push_back({o, "two axes, dropped", "y = " + o + " <axes=[0,-1], keepdims=0> (x)", {in("x", {2, 5, 3})}});
    c.push_back({o, "all axes", "y = " + o + " (x)", {in("x", {4, 6}, Fill::Wide)}});
  }
  return c;
}

}  // namespace zp::runtime::testing
