// Pooling: MaxPool and AveragePool (padding, ceil mode, dilations, 1-D, auto_pad)
// and their global forms.
#include "tests/runtime/ops/op_case.h"

namespace zp::runtime::testing {

std::vector<OpCase> poolCases() {
  std::vector<OpCase> c;
  const auto pool = [&](const std::string& op, const std::string& what, const std::string& attrs, Shape x) {
    c.push_back({op, what, "y = " + op + " <" + attrs + "> (x)", {in("x", std::move(x), Fill::Wide)}});
  };
  pool("MaxPool", "3x3 stride 2 padded", "kernel_shape=[3,3], strides=[2,2], pads=[1,1,1,1]", {1, 3, 9, 9});
  pool("MaxPool", "2x2 stride 2", "kernel_shape=[2,2], strides=[2,2]", {2, 2, 8, 6});
  pool("MaxPool", "ceil mode", "kernel_shape=[3,3], strides=[2,2], ceil_mode=1", {1, 2, 10, 10});
  pool("MaxPool", "dilation 2", "kernel_shape=[2,2], dilations=[2,2]", {1, 2, 7, 7});
  pool("MaxPool", "asymmetric kernel and pads", "kernel_shape=[3,2], strides=[1,2], pads=[1,0,0,1]", {1, 3, 6, 7});
  pool("MaxPool", "auto_pad SAME_UPPER", "kernel_shape=[3,3], strides=[2,2], auto_pad=\"SAME_UPPER\"", {1, 2, 7, 8});
  pool("MaxPool", "1-D", "kernel_shape=[3], strides=[2], pads=[1,1]", {1, 2, 11});
  pool("AveragePool", "padding excluded", "kernel_shape=[3,3], strides=[2,2], pads=[1,1,1,1]", {1, 3, 9, 9});
  pool("AveragePool", "padding included", "kernel_shape=[3,3], pads=[1,1,1,1], count_include_pad=1", {1, 2, 6, 6});
  pool("AveragePool", "ceil mode", "kernel_shape=[2,2], strides=[2,2], ceil_mode=1", {1, 2, 7, 7});
  pool("AveragePool", "1-D", "kernel_shape=[4], strides=[3]", {2, 3, 13});
  for (const char* op : {"GlobalAveragePool", "GlobalMaxPool"}) {
    c.push_back({op, "2-D", std::string("y = ") + op + " (x)", {in("x", {2, 3, 5, 4}, Fill::Wide)}});
    c.push_back({op, "1-D", std::string("y = ") + op + " (x)", {in("x", {1, 4, 7}, Fill::Wide)}});
  }
  return c;
}

}  // namespace zp::runtime::testing
