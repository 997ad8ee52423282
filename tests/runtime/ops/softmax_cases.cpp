// Softmax and LogSoftmax along an axis (opset 13) or over the flattened tail (before).
#include "tests/runtime/ops/op_case.h"

namespace zp::runtime::testing {

std::vector<OpCase> softmaxCases() {
  std::vector<OpCase> c;
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    const std::string o = op;
    c.push_back({o, "last axis", "y = " + o + " (x)", {in("x", {2, 3, 7}, Fill::Wide)}});
    c.push_back({o, "last axis, rows longer than a vector", "y = " + o + " (x)", {in("x", {3, 197}, Fill::Wide)}});
    c.push_back({o, "middle axis", "y = " + o + " <axis=1> (x)", {in("x", {2, 5, 4}, Fill::Wide)}});
    c.push_back({o, "opset 11 flattened tail", "y = " + o + " <axis=1> (x)", {in("x", {2, 3, 4})}, {"float y"}, 11});
  }
  return c;
}

}  // namespace zp::runtime::testing
