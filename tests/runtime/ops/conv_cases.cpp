// Conv under every kernel policy: padding, strides, dilations, groups, depthwise,
// 1x1, 1-D, 3-D, auto_pad and pruned weights.
#include "tests/runtime/ops/op_case.h"

namespace zp::runtime::testing {
namespace {

OpCase conv(const std::string& what, const std::string& attrs, Shape x, Shape w, bool bias, Fill wfill = Fill::Uniform) {
  OpCase c{"Conv", what, "y = Conv <" + attrs + "> (x, W" + std::string(bias ? ", B)" : ")"),
           {in("x", x), init("W", w, wfill)}};
  if (attrs.empty()) c.body = bias ? "y = Conv (x, W, B)" : "y = Conv (x, W)";
  if (bias) c.operands.push_back(init("B", {w[0]}));
  c.tolerance = 1e-4;  // Winograd's transforms round differently
  c.policies = everyForcedPolicy();
  return c;
}

// Weights (and bias) fed as graph inputs: im2col on a view of them per run.
OpCase weightsAsInputs(const std::string& what, const std::string& attrs, Shape x, Shape w, bool bias) {
  OpCase c{"Conv", what, "y = Conv <" + attrs + "> (x, W" + std::string(bias ? ", B)" : ")"), {in("x", x), in("W", w)}};
  if (bias) c.operands.push_back(in("B", {w[0]}));
  c.tolerance = 1e-4;
  c.policies = {"default", "naive"};
  return c;
}

OpCase constWeightsRuntimeBias() {
  OpCase c{"Conv", "constant weights, bias as an input", "y = Conv <pads=[1,1,1,1]> (x, W, B)",
           {in("x", {1, 3, 5, 5}), init("W", {4, 3, 3, 3}), in("B", {4})}};
  c.tolerance = 1e-4;
  c.policies = {"default", "naive"};
  return c;
}

// A 3-D Conv with BatchNormalization and Relu after it: the graph fuses both into the Conv.
OpCase conv3dBatchNormRelu() {
  OpCase c{"Conv", "3-D with BatchNormalization and Relu fused",
           "t = Conv <pads=[1,1,1,1,1,1]> (x, W, B)\n"
           "u = BatchNormalization <epsilon=0.001> (t, s, b2, m, v)\n"
           "y = Relu (u)",
           {in("x", {1, 3, 3, 5, 5}), init("W", {4, 3, 3, 3, 3}), init("B", {4}), init("s", {4}, Fill::Positive),
            init("b2", {4}), init("m", {4}), init("v", {4}, Fill::Positive)}};
  c.tolerance = 1e-4;
  c.policies = everyForcedPolicy();
  return c;
}

}  // namespace

std::vector<OpCase> convCases() {
  return {
      conv("3x3 padded, bias", "pads=[1,1,1,1]", {1, 4, 9, 9}, {8, 4, 3, 3}, true),
      conv("3x3 stride 2, asymmetric pads", "strides=[2,2], pads=[0,1,1,2]", {2, 3, 11, 10}, {5, 3, 3, 3}, true),
      conv("3x3 dilation 2", "dilations=[2,2], pads=[2,2,2,2]", {1, 3, 12, 12}, {4, 3, 3, 3}, false),
      conv("5x3 kernel, no padding", "", {1, 2, 8, 9}, {3, 2, 5, 3}, true),
      conv("1x1", "", {1, 16, 7, 7}, {12, 16, 1, 1}, true),
      conv("1x1 stride 2", "strides=[2,2]", {1, 8, 9, 9}, {8, 8, 1, 1}, false),
      conv("groups", "group=2, pads=[1,1,1,1]", {1, 8, 6, 6}, {6, 4, 3, 3}, true),
      conv("depthwise stride 2", "group=6, strides=[2,2], pads=[1,1,1,1]", {1, 6, 10, 10}, {6, 1, 3, 3}, true),
      conv("depthwise multiplier 2", "group=6, pads=[1,1,1,1]", {1, 6, 7, 7}, {12, 1, 3, 3}, false),
      conv("pruned 3x3", "pads=[1,1,1,1]", {1, 8, 8, 8}, {8, 8, 3, 3}, true, Fill::Pruned),
      conv("pruned 1x1", "", {1, 16, 9, 9}, {16, 16, 1, 1}, true, Fill::Pruned),
      conv("auto_pad SAME_UPPER stride 2", "auto_pad=\"SAME_UPPER\", strides=[2,2]", {1, 2, 7, 8}, {3, 2, 3, 3}, true),
      conv("1-D", "strides=[2], pads=[2,1]", {1, 3, 20}, {4, 3, 5}, true),
      weightsAsInputs("weights as inputs, bias", "pads=[1,1,1,1], strides=[2,1]", {2, 4, 7, 6}, {5, 4, 3, 3}, true),
      weightsAsInputs("weights as inputs, groups", "group=2, dilations=[2,2], pads=[2,1,2,1]", {1, 4, 8, 8}, {6, 2, 3, 2}, false),
      weightsAsInputs("weights as inputs, auto_pad SAME_LOWER", "auto_pad=\"SAME_LOWER\", strides=[2,2]", {1, 3, 7, 8},
                      {4, 3, 3, 3}, true),
      weightsAsInputs("weights as inputs, 1-D", "pads=[1,1]", {1, 3, 11}, {2, 3, 3}, true),
      constWeightsRuntimeBias(),
      conv("3-D padded, bias", "pads=[1,1,1,1,1,1]", {1, 3, 4, 6, 6}, {4, 3, 3, 3, 3}, true),
      conv("3-D stride (1,2,2), asymmetric pads", "strides=[1,2,2], pads=[1,3,3,0,2,1]", {2, 3, 5, 9, 8},
           {5, 3, 3, 7, 7}, false),
      conv("3-D groups, dilation", "group=2, dilations=[2,1,2], pads=[2,1,1,2,1,1]", {1, 4, 5, 5, 6}, {6, 2, 3, 3, 2},
           true),
      conv("3-D (1,3,3) kernel", "pads=[0,1,1,0,1,1]", {1, 3, 4, 7, 7}, {8, 3, 1, 3, 3}, true),
      conv("3-D auto_pad SAME_UPPER stride 2", "auto_pad=\"SAME_UPPER\", strides=[2,2,2]", {1, 2, 5, 6, 7},
           {3, 2, 3, 3, 3}, true),
      weightsAsInputs("weights as inputs, 3-D", "pads=[1,0,1,0,1,1], strides=[1,2,1]", {1, 3, 4, 6, 5}, {2, 3, 3, 2, 3}, true),
      conv3dBatchNormRelu(),
  };
}

}  // namespace zp::runtime::testing
