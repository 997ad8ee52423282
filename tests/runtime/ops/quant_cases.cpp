// QuantizeLinear and DequantizeLinear, per tensor and per axis.
#include "tests/runtime/ops/op_case.h"

namespace zp::runtime::testing {

std::vector<OpCase> quantCases() {
  std::vector<OpCase> c;
  // Halves with a scale of 1 land on rounding ties (to even).
  c.push_back({"QuantizeLinear", "uint8 per tensor", "y = QuantizeLinear (x, s, z)",
               {in("x", {3, 8}, Fill::Halves), fixed("s", DType::F32, {}, {1.0}), fixed("z", DType::U8, {}, {128})},
               {"uint8 y"}});
  c.push_back({"QuantizeLinear", "int8 saturating", "y = QuantizeLinear (x, s, z)",
               {in("x", {4, 5}, Fill::Wide), fixed("s", DType::F32, {}, {0.1}), fixed("z", DType::I8, {}, {-3})},
               {"int8 y"}});
  c.push_back({"QuantizeLinear", "no zero point: uint8", "y = QuantizeLinear (x, s)",
               {in("x", {6}, Fill::Wide), fixed("s", DType::F32, {}, {0.2})}, {"uint8 y"}});
  c.push_back({"QuantizeLinear", "per axis", "y = QuantizeLinear <axis=1> (x, s, z)",
               {in("x", {2, 3, 4}, Fill::Uniform), fixed("s", DType::F32, {3}, {0.01, 0.02, 0.05}),
                fixed("z", DType::I8, {3}, {0, 5, -5})},
               {"int8 y"}});
  c.push_back({"DequantizeLinear", "uint8 per tensor", "y = DequantizeLinear (x, s, z)",
               {in("x", {3, 8}, Fill::Counts, DType::U8), fixed("s", DType::F32, {}, {0.5}), fixed("z", DType::U8, {}, {4})}});
  c.push_back({"DequantizeLinear", "int8 per axis", "y = DequantizeLinear <axis=0> (x, s, z)",
               {in("x", {3, 4}, Fill::Wide, DType::I8), fixed("s", DType::F32, {3}, {0.1, 0.2, 0.3}),
                fixed("z", DType::I8, {3}, {1, -2, 0})}});
  c.push_back({"DequantizeLinear", "int32 without zero point", "y = DequantizeLinear (x, s)",
               {in("x", {5}, Fill::Wide, DType::I32), fixed("s", DType::F32, {}, {0.125})}});
  return c;
}

}  // namespace zp::runtime::testing
