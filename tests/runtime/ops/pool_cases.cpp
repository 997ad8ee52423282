// Pooling: MaxPool and AveragePool (padding, ceil mode, dilations, 1-D, 3-D, auto_pad;
// integer types and Indices), MaxUnpool, and the global forms.
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
  pool("MaxPool", "3-D padded stride 2", "kernel_shape=[3,3,3], strides=[2,2,2], pads=[1,1,1,1,1,1]", {1, 2, 5, 7, 6});
  pool("MaxPool", "3-D (1,3,3) ceil mode", "kernel_shape=[1,3,3], strides=[1,2,2], ceil_mode=1", {2, 2, 3, 8, 8});
  pool("MaxPool", "3-D dilation", "kernel_shape=[2,2,2], dilations=[2,1,2]", {1, 2, 5, 4, 5});
  pool("AveragePool", "3-D padding excluded", "kernel_shape=[3,3,3], strides=[1,2,2], pads=[1,1,1,1,1,1]", {1, 2, 4, 7, 7});
  pool("AveragePool", "3-D padding included, ceil", "kernel_shape=[2,3,3], strides=[2,2,2], pads=[0,1,1,0,1,1], "
       "count_include_pad=1, ceil_mode=1", {1, 3, 5, 6, 7});
  c.push_back({"MaxPool", "uint8", "y = MaxPool <kernel_shape=[3,3], strides=[2,2], pads=[1,1,1,1]> (x)",
               {in("x", {1, 2, 7, 7}, Fill::Counts, DType::U8)}, {"uint8 y"}});
  c.push_back({"MaxPool", "int8 1-D", "y = MaxPool <kernel_shape=[2], strides=[2]> (x)",
               {in("x", {1, 3, 9}, Fill::SmallInts, DType::I8)}, {"int8 y"}});
  c.push_back({"MaxPool", "float64", "y = MaxPool <kernel_shape=[2,2]> (x)",
               {in("x", {1, 2, 5, 5}, Fill::Wide, DType::F64)}, {"double y"}});
  c.push_back({"MaxPool", "Indices output", "y, i = MaxPool <kernel_shape=[3,3], strides=[2,2], pads=[1,1,1,1]> (x)",
               {in("x", {2, 3, 7, 6}, Fill::Wide)}, {"float y", "int64 i"}});
  c.push_back({"MaxPool", "Indices output, column-major",
               "y, i = MaxPool <kernel_shape=[2,2], strides=[2,1], storage_order=1> (x)",
               {in("x", {1, 2, 6, 5}, Fill::Wide)}, {"float y", "int64 i"}});
  c.push_back({"MaxPool", "Indices output, 3-D", "y, i = MaxPool <kernel_shape=[2,2,2], strides=[2,2,2]> (x)",
               {in("x", {1, 2, 4, 4, 6}, Fill::Wide)}, {"float y", "int64 i"}});
  c.push_back({"MaxUnpool", "after MaxPool", "p, i = MaxPool <kernel_shape=[2,2], strides=[2,2]> (x)\n"
               "y = MaxUnpool <kernel_shape=[2,2], strides=[2,2]> (p, i)", {in("x", {2, 3, 6, 8}, Fill::Wide)}});
  c.push_back({"MaxUnpool", "output_shape, padded", "p, i = MaxPool <kernel_shape=[3,3], strides=[2,2], pads=[1,1,1,1]> (x)\n"
               "y = MaxUnpool <kernel_shape=[3,3], strides=[2,2], pads=[1,1,1,1]> (p, i, s)",
               {in("x", {1, 2, 7, 7}, Fill::Wide), fixed("s", DType::I64, {4}, {1, 2, 7, 7})}});
  // An output_shape larger than the unpooled input is left to the ONNX node tests: ONNX's
  // reference keeps each index's coordinates (the extra size is padding at the end), while
  // ONNX Runtime scatters the flat indices over the larger tensor, across channels.
  c.push_back({"MaxUnpool", "3-D", "p, i = MaxPool <kernel_shape=[2,2,2], strides=[2,2,2]> (x)\n"
               "y = MaxUnpool <kernel_shape=[2,2,2], strides=[2,2,2]> (p, i)", {in("x", {1, 2, 4, 4, 4}, Fill::Wide)}});
  for (const char* op : {"GlobalAveragePool", "GlobalMaxPool"}) {
    c.push_back({op, "2-D", std::string("y = ") + op + " (x)", {in("x", {2, 3, 5, 4}, Fill::Wide)}});
    c.push_back({op, "1-D", std::string("y = ") + op + " (x)", {in("x", {1, 4, 7}, Fill::Wide)}});
  }
  return c;
}

}  // namespace zp::runtime::testing
