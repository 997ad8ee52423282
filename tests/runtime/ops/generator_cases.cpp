// Tensors made from attributes or scalars: Constant, ConstantOfShape, Range.
#include "tests/runtime/ops/op_case.h"

namespace zp::runtime::testing {

std::vector<OpCase> generatorCases() {
  std::vector<OpCase> c;
  c.push_back({"Constant", "tensor", "y = Constant <value = float[2,3] {1.5, -2, 0, 3.25, 7, -0.5}> ()", {}});
  c.push_back({"Constant", "int64 tensor", "y = Constant <value = int64[3] {4, -5, 6}> ()", {}, {"int64 y"}});
  c.push_back({"Constant", "value_float", "y = Constant <value_float = 2.5> ()", {}});
  c.push_back({"Constant", "value_floats", "y = Constant <value_floats = [1.0, -2.0, 3.5]> ()", {}});
  c.push_back({"Constant", "value_int", "y = Constant <value_int = 7> ()", {}, {"int64 y"}});
  c.push_back({"Constant", "value_ints", "y = Constant <value_ints = [3, -1, 4]> ()", {}, {"int64 y"}});
  c.push_back({"Constant", "feeding an op", "k = Constant <value = float[3] {1, 2, 3}> ()\n y = Mul (x, k)", {in("x", {2, 3})}});
  c.push_back({"ConstantOfShape", "zeros by default", "y = ConstantOfShape (s)",
               {fixed("s", DType::I64, {3}, {2, 3, 4}, false)}});
  c.push_back({"ConstantOfShape", "float value", "y = ConstantOfShape <value = float[1] {1.25}> (s)",
               {fixed("s", DType::I64, {2}, {3, 2}, false)}});
  c.push_back({"ConstantOfShape", "int64 value", "y = ConstantOfShape <value = int64[1] {-7}> (s)",
               {fixed("s", DType::I64, {1}, {5}, false)}, {"int64 y"}});
  c.push_back({"Range", "float", "y = Range (a, b, d)",
               {fixed("a", DType::F32, {}, {0.5}, false), fixed("b", DType::F32, {}, {4.0}, false),
                fixed("d", DType::F32, {}, {0.75}, false)}});
  c.push_back({"Range", "int64 descending", "y = Range (a, b, d)",
               {fixed("a", DType::I64, {}, {10}, false), fixed("b", DType::I64, {}, {-3}, false),
                fixed("d", DType::I64, {}, {-4}, false)},
               {"int64 y"}});
  c.push_back({"Range", "int32 empty", "y = Range (a, b, d)",
               {fixed("a", DType::I32, {}, {5}, false), fixed("b", DType::I32, {}, {2}, false),
                fixed("d", DType::I32, {}, {1}, false)},
               {"int32 y"}});
  return c;
}

}  // namespace zp::runtime::testing
