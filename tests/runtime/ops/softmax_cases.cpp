// Softmax and LogSoftmax along an axis (opset 13) or over the flattened tail (before).
#include "tests/runtime/ops/op_case.h"

namespace zp::runtime::testing {

std::vector<OpCase> softmaxCases() {
  std::vector<OpCase> c;
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    const std::string o = op;
    c.push_back({o, "last axis", "y = " + o + " (x)", {in("x", {2, 3, 7}, Fill::Wide)}});
    c.push_back({o, "middle axis", "y = " + o + " <axis=1> (x)", {in("x", {2, 5, 4}, Fill::Wide)}});
    c.push_back({o, "opset 11 flattened tail", "y = " + o + " <axis=1> (x)", {in("x", {2, 3, 4})}, {"float y"}, 11});
    c.push_back({o, "float16", "y = " + o + " (x)", {in("x", {3, 6}, Fill::Wide, DType::F16)}, {"float16 y"}, 13, 2e-3});
  }
  return c;
}

}  // namespace zp::runtime::testing
