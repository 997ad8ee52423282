// Softmax and LogSoftmax along an axis (opset 13) or over the flattened tail (before);
// the losses built on them, NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss.
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
    c.push_back({o, "float16", "y = " + o + " (x)", {in("x", {3, 6}, Fill::Wide, DType::F16)}, {"float16 y"}, 13, 2e-3});
  }
  // The classification losses: targets fixed in [0, C) with ignored ones.
  c.push_back({"NegativeLogLikelihoodLoss", "mean, weights, ignore_index", "y = NegativeLogLikelihoodLoss <ignore_index=1> (x, t, w)",
               {in("x", {3, 4}), fixed("t", DType::I64, {3}, {0, 1, 3}, false), in("w", {4}, Fill::Positive)}});
  c.push_back({"NegativeLogLikelihoodLoss", "none, N C d1 d2", "y = NegativeLogLikelihoodLoss <reduction=\"none\"> (x, t)",
               {in("x", {2, 3, 2, 2}), fixed("t", DType::I64, {2, 2, 2}, {0, 1, 2, 2, 1, 0, 0, 2})}});
  c.push_back({"NegativeLogLikelihoodLoss", "sum, int32 targets", "y = NegativeLogLikelihoodLoss <reduction=\"sum\"> (x, t)",
               {in("x", {2, 5, 3}), fixed("t", DType::I32, {2, 3}, {4, 0, 1, 3, 3, 2})}});
  c.push_back({"SoftmaxCrossEntropyLoss", "mean with log_prob", "y, lp = SoftmaxCrossEntropyLoss (x, t)",
               {in("x", {4, 5}, Fill::Wide), fixed("t", DType::I64, {4}, {1, 4, 0, 2})}, {"float y", "float lp"}});
  c.push_back({"SoftmaxCrossEntropyLoss", "sum, weights, negative ignore_index",
               "y = SoftmaxCrossEntropyLoss <reduction=\"sum\", ignore_index=-1> (x, t, w)",
               {in("x", {2, 3, 4}), fixed("t", DType::I64, {2, 4}, {0, -1, 2, 1, 2, 2, -1, 0}), in("w", {3}, Fill::Positive)}});
  c.push_back({"SoftmaxCrossEntropyLoss", "none, N C d1 d2", "y = SoftmaxCrossEntropyLoss <reduction=\"none\"> (x, t)",
               {in("x", {2, 3, 2, 3}), fixed("t", DType::I64, {2, 2, 3}, {0, 1, 2, 2, 1, 0, 0, 2, 1, 1, 0, 2})}});
  return c;
}

}  // namespace zp::runtime::testing
