// QuantizeLinear and DequantizeLinear, per tensor and per axis; the integer-arithmetic
// quantized ops (DynamicQuantizeLinear, MatMulInteger, QLinearMatMul, ConvInteger, QLinearConv).
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
  c.push_back({"DynamicQuantizeLinear", "mixed signs", "y, s, z = DynamicQuantizeLinear (x)", {in("x", {4, 7}, Fill::Wide)},
               {"uint8 y", "float s", "uint8 z"}});
  c.push_back({"DynamicQuantizeLinear", "positive only", "y, s, z = DynamicQuantizeLinear (x)",
               {in("x", {3, 5}, Fill::Positive)}, {"uint8 y", "float s", "uint8 z"}});
  c.push_back({"MatMulInteger", "uint8 x int8, scalar zero points", "y = MatMulInteger (a, b, az, bz)",
               {in("a", {3, 5}, Fill::Counts, DType::U8), in("b", {5, 4}, Fill::Wide, DType::I8),
                fixed("az", DType::U8, {}, {4}), fixed("bz", DType::I8, {}, {-2})}, {"int32 y"}});
  c.push_back({"MatMulInteger", "batched, broadcast, no zero points", "y = MatMulInteger (a, b)",
               {in("a", {2, 3, 6}, Fill::Counts, DType::U8), in("b", {6, 2}, Fill::Counts, DType::U8)}, {"int32 y"}});
  c.push_back({"MatMulInteger", "per-column b zero points", "y = MatMulInteger (a, b, az, bz)",
               {in("a", {2, 4}, Fill::Counts, DType::U8), in("b", {4, 3}, Fill::Counts, DType::U8),
                fixed("az", DType::U8, {}, {1}), fixed("bz", DType::U8, {3}, {1, 5, 3})}, {"int32 y"}});
  // A dynamically quantized Linear, as onnxruntime.quantization.quantize_dynamic writes it.
  c.push_back({"MatMulInteger", "dynamic quantization of a Linear",
               "q, s, z = DynamicQuantizeLinear (x)\n"
               "i = MatMulInteger (q, w, z, wz)\n"
               "f = Cast <to=1> (i)\n"
               "sc = Mul (s, ws)\n"
               "y = Mul (f, sc)",
               {in("x", {2, 3, 8}), init("w", {8, 5}, Fill::Wide, DType::I8), fixed("wz", DType::I8, {}, {0}),
                fixed("ws", DType::F32, {}, {0.02})}});
  c.push_back({"QLinearMatMul", "uint8", "y = QLinearMatMul (a, as, az, b, bs, bz, ys, yz)",
               {in("a", {3, 6}, Fill::Counts, DType::U8), fixed("as", DType::F32, {}, {0.05}), fixed("az", DType::U8, {}, {3}),
                in("b", {6, 4}, Fill::Counts, DType::U8), fixed("bs", DType::F32, {}, {0.1}), fixed("bz", DType::U8, {}, {5}),
                fixed("ys", DType::F32, {}, {0.03}), fixed("yz", DType::U8, {}, {100})}, {"uint8 y"}});
  c.push_back({"QLinearMatMul", "int8 batched", "y = QLinearMatMul (a, as, az, b, bs, bz, ys, yz)",
               {in("a", {2, 3, 5}, Fill::Wide, DType::I8), fixed("as", DType::F32, {}, {0.02}), fixed("az", DType::I8, {}, {1}),
                in("b", {2, 5, 4}, Fill::Wide, DType::I8), fixed("bs", DType::F32, {}, {0.04}), fixed("bz", DType::I8, {}, {-1}),
                fixed("ys", DType::F32, {}, {0.2}), fixed("yz", DType::I8, {}, {-5})}, {"int8 y"}});
  c.push_back({"ConvInteger", "padded, zero points", "y = ConvInteger <pads=[1,1,1,1]> (x, w, xz, wz)",
               {in("x", {1, 3, 5, 6}, Fill::Counts, DType::U8), init("w", {4, 3, 3, 3}, Fill::Counts, DType::U8),
                fixed("xz", DType::U8, {}, {2}), fixed("wz", DType::U8, {}, {3})}, {"int32 y"}});
  c.push_back({"ConvInteger", "strided groups, no zero points", "y = ConvInteger <group=2, strides=[2,2]> (x, w)",
               {in("x", {2, 4, 7, 7}, Fill::Counts, DType::U8), init("w", {6, 2, 3, 2}, Fill::Counts, DType::U8)}, {"int32 y"}});
  c.push_back({"QLinearConv", "uint8 with bias", "y = QLinearConv <pads=[1,1,1,1]> (x, xs, xz, w, ws, wz, ys, yz, b)",
               {in("x", {1, 3, 6, 5}, Fill::Counts, DType::U8), fixed("xs", DType::F32, {}, {0.05}),
                fixed("xz", DType::U8, {}, {4}), init("w", {4, 3, 3, 3}, Fill::Counts, DType::U8),
                fixed("ws", DType::F32, {}, {0.02}), fixed("wz", DType::U8, {}, {5}), fixed("ys", DType::F32, {}, {0.04}),
                fixed("yz", DType::U8, {}, {120}), init("b", {4}, Fill::Wide, DType::I32)}, {"uint8 y"}});
  c.push_back({"QLinearConv", "int8 weights per channel, strided", "y = QLinearConv <strides=[2,2]> (x, xs, xz, w, ws, wz, ys, yz)",
               {in("x", {1, 2, 7, 7}, Fill::Counts, DType::U8), fixed("xs", DType::F32, {}, {0.1}),
                fixed("xz", DType::U8, {}, {3}), init("w", {3, 2, 3, 3}, Fill::Wide, DType::I8),
                fixed("ws", DType::F32, {3}, {0.01, 0.02, 0.03}), fixed("wz", DType::I8, {3}, {0, 0, 0}),
                fixed("ys", DType::F32, {}, {0.05}), fixed("yz", DType::U8, {}, {128})}, {"uint8 y"}});
  return c;
}

}  // namespace zp::runtime::testing
