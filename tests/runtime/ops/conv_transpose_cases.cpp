// ConvTranspose under the default (col2im GEMM) and naive policies: strides,
// pads, output_padding, output_shape, dilations, groups, auto_pad, 1-D and 3-D,
// weights as graph inputs.
#include "tests/runtime/ops/op_case.h"

namespace zp::runtime::testing {
namespace {

OpCase convT(const std::string& what, const std::string& attrs, Shape x, Shape w, bool bias, bool weightsAsInputs = false,
             int64_t group = 1) {
  std::string body = "y = ConvTranspose " + (attrs.empty() ? std::string() : "<" + attrs + "> ") + "(x, W" + (bias ? ", B)" : ")");
  OpCase c{"ConvTranspose", what, body, {in("x", x), weightsAsInputs ? in("W", w) : init("W", w)}};
  if (bias) c.operands.push_back(weightsAsInputs ? in("B", {w[1] * group}) : init("B", {w[1] * group}));
  c.tolerance = 1e-4;
  c.policies = {"default", "naive"};
  return c;
}

}  // namespace

std::vector<OpCase> convTransposeCases() {
  std::vector<OpCase> c;
  c.push_back(convT("stride 2 kernel 2 (upsampling head)", "strides=[2,2]", {1, 4, 5, 6}, {4, 3, 2, 2}, true));
  c.push_back(convT("stride 2 kernel 4 pads 1", "strides=[2,2], pads=[1,1,1,1]", {2, 3, 4, 4}, {3, 5, 4, 4}, true));
  c.push_back(convT("kernel 3 stride 2 output_padding 1", "strides=[2,2], pads=[1,1,1,1], output_padding=[1,1]",
                    {1, 2, 5, 4}, {2, 3, 3, 3}, false));
  c.push_back(convT("asymmetric strides and pads", "strides=[3,2], pads=[0,1,2,0]", {1, 2, 3, 4}, {2, 2, 3, 2}, true));
  c.push_back(convT("dilations", "dilations=[2,3], pads=[1,1,1,1]", {1, 2, 4, 4}, {2, 2, 3, 3}, true));
  c.push_back(convT("groups", "group=2, strides=[2,2]", {1, 4, 3, 3}, {4, 3, 3, 3}, true, false, 2));
  c.push_back(convT("depthwise groups", "group=4, strides=[2,2], pads=[1,1,1,1]", {1, 4, 4, 5}, {4, 1, 4, 4}, false));
  c.push_back(convT("output_shape", "strides=[3,2], output_shape=[10,8]", {1, 1, 3, 3}, {1, 2, 3, 3}, false));
  c.push_back(convT("auto_pad SAME_UPPER even total", "auto_pad=\"SAME_UPPER\", strides=[2,2]", {1, 2, 3, 3}, {2, 2, 4, 4}, true));
  c.push_back(convT("1-D", "strides=[3], pads=[1,2]", {2, 3, 7}, {3, 4, 5}, true));
  c.push_back(convT("3-D", "strides=[2,1,2], pads=[0,1,1,1,0,0]", {1, 2, 3, 3, 4}, {2, 2, 2, 3, 2}, true));
  c.push_back(convT("auto_pad SAME_UPPER odd total: the extra at the end", "auto_pad=\"SAME_UPPER\", strides=[2,2]", {1, 1, 3, 3}, {1, 1, 3, 3}, false));
  c.push_back(convT("auto_pad SAME_LOWER odd total: the extra at the start", "auto_pad=\"SAME_LOWER\", strides=[2,2]", {1, 1, 3, 3}, {1, 1, 3, 3}, false));
  c.push_back(convT("output_shape with an odd total padding", "strides=[2,2], output_shape=[6,6]", {1, 1, 3, 3}, {1, 1, 3, 3}, false));
  c.push_back(convT("weights and bias as graph inputs", "strides=[2,2], pads=[1,0,0,1]", {1, 3, 4, 4}, {3, 2, 3, 3}, true, true));
  return c;
}

}  // namespace zp::runtime::testing
