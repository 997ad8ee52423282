// Views under a new shape and shape queries.
#include "tests/runtime/ops/op_case.h"

namespace zp::runtime::testing {

std::vector<OpCase> shapeCases() {
  std::vector<OpCase> c;
  c.push_back({"Identity", "float", "y = Identity (x)", {in("x", {2, 3, 4})}});
  c.push_back({"Identity", "int64", "y = Identity (x)", {in("x", {5}, Fill::Wide, DType::I64)}, {"int64 y"}});
  c.push_back({"Dropout", "inference", "y = Dropout (x)", {in("x", {2, 3, 4})}});
  c.push_back({"Dropout", "with ratio", "y = Dropout (x, r)", {in("x", {6, 7}), fixed("r", DType::F32, {}, {0.3})}});
  c.push_back({"Reshape", "copy and infer", "y = Reshape (x, s)",
               {in("x", {2, 3, 4}), fixed("s", DType::I64, {3}, {0, -1, 2})}});
  c.push_back({"Reshape", "flatten to 1-D", "y = Reshape (x, s)", {in("x", {2, 3, 4}), fixed("s", DType::I64, {1}, {-1})}});
  c.push_back({"Reshape", "shape as input", "y = Reshape (x, s)",
               {in("x", {4, 6}, Fill::Wide, DType::I64), fixed("s", DType::I64, {3}, {2, 2, 6}, false)}, {"int64 y"}});
  c.push_back({"Reshape", "allowzero", "y = Reshape <allowzero=1> (x, s)",
               {in("x", {2, 0, 3}), fixed("s", DType::I64, {2}, {0, 6})}, {"float y"}, 14});
  for (int axis : {0, 1, 2, -1})
    c.push_back({"Flatten", "axis " + std::to_string(axis), "y = Flatten <axis=" + std::to_string(axis) + "> (x)",
                 {in("x", {2, 3, 4, 5})}});
  c.push_back({"Squeeze", "axes input", "y = Squeeze (x, a)",
               {in("x", {1, 3, 1, 4}), fixed("a", DType::I64, {2}, {0, -2})}});
  c.push_back({"Squeeze", "every unit dimension", "y = Squeeze (x)", {in("x", {1, 3, 1, 4, 1})}});
  c.push_back({"Squeeze", "opset 11 attribute", "y = Squeeze <axes=[2]> (x)", {in("x", {3, 4, 1})}, {"float y"}, 11});
  c.push_back({"Unsqueeze", "axes input", "y = Unsqueeze (x, a)",
               {in("x", {3, 4}), fixed("a", DType::I64, {3}, {0, 3, -1})}});
  c.push_back({"Unsqueeze", "scalar", "y = Unsqueeze (x, a)",
               {in("x", {}, Fill::Wide, DType::I64), fixed("a", DType::I64, {1}, {0})}, {"int64 y"}});
  c.push_back({"Unsqueeze", "opset 11 attribute", "y = Unsqueeze <axes=[1]> (x)", {in("x", {3, 4})}, {"float y"}, 11});
  c.push_back({"Shape", "float", "y = Shape (x)", {in("x", {2, 3, 4})}, {"int64 y"}});
  c.push_back({"Shape", "start and end", "y = Shape <start=1, end=-1> (x)", {in("x", {2, 3, 4, 5})}, {"int64 y"}, 15});
  c.push_back({"Shape", "start only", "y = Shape <start=-2> (x)", {in("x", {2, 3, 4, 5}, Fill::Bools, DType::Bool)}, {"int64 y"}, 15});
  c.push_back({"Size", "float", "y = Size (x)", {in("x", {2, 3, 4})}, {"int64 y"}});
  c.push_back({"Size", "scalar", "y = Size (x)", {in("x", {}, Fill::Wide, DType::I64)}, {"int64 y"}});
  return c;
}

}  // namespace zp::runtime::testing
