// Integer-arithmetic quantized ops, as ONNX Runtime's quantization tools emit them:
// DynamicQuantizeLinear and MatMulInteger (dynamically quantized transformers),
// ConvInteger, and the QOperator forms QLinearMatMul and QLinearConv. Products
// accumulate in int32 by the definition; requantization rounds half to even.
#include <algorithm>
#include <array>
#include <cmath>

#include "libplan/runtime/ops/attributes.h"
#include "libplan/runtime/ops/broadcast.h"
#include "libplan/runtime/ops/factories.h"
#include "libplan/runtime/ops/fn_op.h"
#include "libplan/runtime/ops/sliding_window.h"

namespace zp::runtime::detail {
namespace {

bool isInt8Type(DType t) { return t == DType::U8 || t == DType::I8; }

// Element i of an 8-bit integer tensor.
int32_t int8At(const Tensor& t, int64_t i) {
  return t.dtype == DType::U8 ? int32_t{t.ptr<uint8_t>()[i]} : int32_t{t.ptr<int8_t>()[i]};
}

// A zero point (or scale) that is one value, or one per row / column / channel.
Expected<std::vector<int32_t>> zeroPoints(const Tensor* t, int64_t perCount, const char* what) {
  if (!t || t->size() == 0) return std::vector<int32_t>(1, 0);
  if (!isInt8Type(t->dtype)) return makeError("{} must be int8 or uint8, not {}", what, dtypeName(t->dtype));
  if (t->size() != 1 && t->size() != perCount) return makeError("{} has {} values, not 1 or {}", what, t->size(), perCount);
  std::vector<int32_t> v(static_cast<size_t>(t->size()));
  for (int64_t i = 0; i < t->size(); ++i) v[static_cast<size_t>(i)] = int8At(*t, i);
  return v;
}

Expected<std::vector<float>> scales(const Tensor& t, int64_t perCount, const char* what) {
  if (t.dtype != DType::F32) return makeError("{} must be float32", what);
  if (t.size() != 1 && t.size() != perCount) return makeError("{} has {} values, not 1 or {}", what, t.size(), perCount);
  return t.toF32();
}

inline int32_t pick(const std::vector<int32_t>& v, int64_t i) { return v.size() == 1 ? v[0] : v[static_cast<size_t>(i)]; }
inline float pick(const std::vector<float>& v, int64_t i) { return v.size() == 1 ? v[0] : v[static_cast<size_t>(i)]; }

// Writes round(v) + zp, saturated to the output type, into y[i].
void requantize(float v, int32_t zp, Tensor& y, int64_t i) {
  const float lo = y.dtype == DType::U8 ? 0.0f : -128.0f, hi = y.dtype == DType::U8 ? 255.0f : 127.0f;
  const float q = std::clamp(std::nearbyint(v) + static_cast<float>(zp), lo, hi);
  if (y.dtype == DType::U8) y.ptr<uint8_t>()[i] = static_cast<uint8_t>(q);
  else y.ptr<int8_t>()[i] = static_cast<int8_t>(q);
}

// (A - aZero) x (B - bZero) in int32 with numpy matmul shapes: A [..., M, K] (or [K]),
// B [..., K, N] (or [K]), batch dims broadcast. aZero is per row of A (M) or one value,
// bZero per column of B (N) or one value.
struct IntProduct {
  Shape shape;                  // the output's shape
  int64_t M = 0, N = 0, K = 0;
  std::vector<int32_t> values;  // [batch, M, N]
};

Expected<IntProduct> intMatMul(const Tensor& a, const Tensor& b, const Tensor* aZeroT, const Tensor* bZeroT) {
  if (!isInt8Type(a.dtype) || !isInt8Type(b.dtype)) return makeError("A and B must be int8 or uint8");
  if (a.rank() < 1 || b.rank() < 1) return makeError("A and B must not be scalars");
  Shape as = a.shape, bs = b.shape;
  if (as.size() == 1) as.insert(as.begin(), 1);
  if (bs.size() == 1) bs.push_back(1);
  IntProduct p;
  p.M = as[as.size() - 2];
  p.K = as.back();
  p.N = bs.back();
  if (bs[bs.size() - 2] != p.K) return makeError("A {} and B {} do not multiply", shapeString(a.shape), shapeString(b.shape));
  const Shape aBatch(as.begin(), as.end() - 2), bBatch(bs.begin(), bs.end() - 2);
  ZP_ASSIGN_OR_RETURN(Shape batch, broadcastShapes({aBatch, bBatch}));
  ZP_ASSIGN_OR_RETURN(auto aZero, zeroPoints(aZeroT, p.M, "a_zero_point"));
  ZP_ASSIGN_OR_RETURN(auto bZero, zeroPoints(bZeroT, p.N, "b_zero_point"));
  const int64_t batches = numel(batch);
  p.values.assign(static_cast<size_t>(batches * p.M * p.N), 0);
  // Batch index -> offsets of A's and B's matrices, through broadcasting.
  const Broadcast bc = makeBroadcast(batch, {aBatch, bBatch});
  std::vector<std::pair<int64_t, int64_t>> offsets;
  forEachRow(bc, [&](int64_t, const int64_t* offs, int64_t len, const int64_t* st) {
    for (int64_t i = 0; i < len; ++i) offsets.emplace_back(offs[0] + i * st[0], offs[1] + i * st[1]);
  });
  if (offsets.empty()) offsets.emplace_back(0, 0);
  for (int64_t t = 0; t < batches; ++t) {
    const int64_t aOff = offsets[static_cast<size_t>(t)].first * p.M * p.K;
    const int64_t bOff = offsets[static_cast<size_t>(t)].second * p.K * p.N;
    int32_t* out = p.values.data() + t * p.M * p.N;
    for (int64_t m = 0; m < p.M; ++m)
      for (int64_t k = 0; k < p.K; ++k) {
        const int32_t av = int8At(a, aOff + m * p.K + k) - pick(aZero, m);
        for (int64_t n = 0; n < p.N; ++n) out[m * p.N + n] += av * (int8At(b, bOff + k * p.N + n) - pick(bZero, n));
      }
  }
  p.shape = batch;
  if (a.rank() > 1) p.shape.push_back(p.M);
  if (b.rank() > 1) p.shape.push_back(p.N);
  return p;
}

// Conv geometry with the spatial dims padded to 3 (leading 1s).
struct IntConvGeom {
  int64_t N = 1, C = 1, M = 1, group = 1;
  std::array<int64_t, 3> in{1, 1, 1}, out{1, 1, 1}, k{1, 1, 1}, s{1, 1, 1}, d{1, 1, 1}, pb{0, 0, 0};
  size_t spatial = 2;
};

Expected<IntConvGeom> intConvGeometry(const onnx::NodeProto& n, const Tensor& x, const Tensor& w) {
  const size_t sd = static_cast<size_t>(x.rank()) - 2;
  if (x.rank() < 3 || x.rank() > 5 || w.rank() != x.rank())
    return makeError("input {} and weight {} are not a 1-D to 3-D convolution", shapeString(x.shape), shapeString(w.shape));
  auto strides = attrInts(n, "strides"), dil = attrInts(n, "dilations"), pads = attrInts(n, "pads");
  if ((!strides.empty() && strides.size() != sd) || (!dil.empty() && dil.size() != sd) || (!pads.empty() && pads.size() != 2 * sd))
    return makeError("strides, dilations or pads do not have one entry per spatial dim");
  const std::string autoPad = attrString(n, "auto_pad", "NOTSET");
  IntConvGeom g;
  g.N = x.shape[0];
  g.C = x.shape[1];
  g.M = w.shape[0];
  g.group = attrInt(n, "group", 1);
  g.spatial = sd;
  if (g.group <= 0 || g.M % g.group != 0 || w.shape[1] * g.group != g.C)
    return makeError("weight {} with group {} does not fit input {}", shapeString(w.shape), g.group, shapeString(x.shape));
  for (size_t i = 0; i < sd; ++i) {
    const size_t j = 3 - sd + i;
    g.in[j] = x.shape[i + 2];
    g.k[j] = w.shape[i + 2];
    g.s[j] = strides.empty() ? 1 : strides[i];
    g.d[j] = dil.empty() ? 1 : dil[i];
    int64_t b = pads.empty() ? 0 : pads[i], e = pads.empty() ? 0 : pads[i + sd];
    g.out[j] = slidingWindowOut(g.in[j], g.k[j], g.s[j], g.d[j], b, e, false, autoPad);
    g.pb[j] = b;
    if (g.out[j] <= 0) return makeError("input {} is smaller than the kernel", shapeString(x.shape));
  }
  return g;
}

// (x - xZero) conv (w - wZero[m]) in int32, [N, M, out...].
std::vector<int32_t> intConv(const IntConvGeom& g, const Tensor& x, const Tensor& w, int32_t xZero,
                             const std::vector<int32_t>& wZero) {
  const int64_t Cg = g.C / g.group, Mg = g.M / g.group, L = g.in[0] * g.in[1] * g.in[2];
  const int64_t P = g.out[0] * g.out[1] * g.out[2], K = g.k[0] * g.k[1] * g.k[2];
  std::vector<int32_t> y(static_cast<size_t>(g.N * g.M * P), 0);
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t m = 0; m < g.M; ++m) {
      const int64_t grp = m / Mg;
      for (int64_t p = 0; p < P; ++p) {
        const std::array<int64_t, 3> o{p / (g.out[1] * g.out[2]), (p / g.out[2]) % g.out[1], p % g.out[2]};
        int32_t acc = 0;
        for (int64_t c = 0; c < Cg; ++c)
          for (int64_t t = 0; t < K; ++t) {
            const std::array<int64_t, 3> tap{t / (g.k[1] * g.k[2]), (t / g.k[2]) % g.k[1], t % g.k[2]};
            std::array<int64_t, 3> at{};
            bool inside = true;
            for (size_t j = 0; j < 3; ++j) {
              at[j] = o[j] * g.s[j] - g.pb[j] + tap[j] * g.d[j];
              inside = inside && at[j] >= 0 && at[j] < g.in[j];
            }
            if (!inside) continue;  // padding holds the zero point: it adds nothing
            const int32_t xv = int8At(x, (n * g.C + grp * Cg + c) * L + (at[0] * g.in[1] + at[1]) * g.in[2] + at[2]) - xZero;
            acc += xv * (int8At(w, (m * Cg + c) * K + t) - pick(wZero, m));
          }
        y[static_cast<size_t>((n * g.M + m) * P + p)] = acc;
      }
    }
  return y;
}

Shape intConvShape(const IntConvGeom& g) {
  Shape s = {g.N, g.M};
  for (size_t j = 3 - g.spatial; j < 3; ++j) s.push_back(g.out[j]);
  return s;
}

const Tensor* optionalInput(const std::vector<const Tensor*>& in, size_t i) { return i < in.size() ? in[i] : nullptr; }

}  // namespace

Expected<std::unique_ptr<Op>> makeDynamicQuantizeLinear(const BuildContext&) {
  return fnOp([](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    const Tensor& x = *in[0];
    if (x.dtype != DType::F32) return makeError("DynamicQuantizeLinear takes float32, not {}", dtypeName(x.dtype));
    const float* px = x.ptr<float>();
    // The range always includes 0, so that 0 is exactly representable.
    float lo = 0, hi = 0;
    for (int64_t i = 0; i < x.size(); ++i) { lo = std::min(lo, px[i]); hi = std::max(hi, px[i]); }
    const float scale = hi == lo ? 1.0f : (hi - lo) / 255.0f;
    const float zero = std::clamp(std::nearbyint(0.0f - lo / scale), 0.0f, 255.0f);
    Tensor& y = ctx.alloc(0, DType::U8, x.shape);
    for (int64_t i = 0; i < x.size(); ++i)
      y.ptr<uint8_t>()[i] = static_cast<uint8_t>(std::clamp(std::nearbyint(px[i] / scale) + zero, 0.0f, 255.0f));
    ctx.alloc(1, DType::F32, {}).ptr<float>()[0] = scale;
    ctx.alloc(2, DType::U8, {}).ptr<uint8_t>()[0] = static_cast<uint8_t>(zero);
    return {};
  });
}

Expected<std::unique_ptr<Op>> makeMatMulInteger(const BuildContext&) {
  return fnOp([](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    ZP_ASSIGN_OR_RETURN(IntProduct p, intMatMul(*in[0], *in[1], optionalInput(in, 2), optionalInput(in, 3)));
    Tensor& y = ctx.alloc(0, DType::I32, p.shape);
    std::copy(p.values.begin(), p.values.end(), y.ptr<int32_t>());
    return {};
  });
}

Expected<std::unique_ptr<Op>> makeQLinearMatMul(const BuildContext&) {
  return fnOp([](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    // a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point
    ZP_ASSIGN_OR_RETURN(IntProduct p, intMatMul(*in[0], *in[3], in[2], in[5]));
    ZP_ASSIGN_OR_RETURN(auto aScale, scales(*in[1], p.M, "a_scale"));
    ZP_ASSIGN_OR_RETURN(auto bScale, scales(*in[4], p.N, "b_scale"));
    ZP_ASSIGN_OR_RETURN(auto yScale, scales(*in[6], 1, "y_scale"));
    ZP_ASSIGN_OR_RETURN(auto yZero, zeroPoints(in[7], 1, "y_zero_point"));
    Tensor& y = ctx.alloc(0, in[7]->dtype, p.shape);
    for (int64_t i = 0; i < static_cast<int64_t>(p.values.size()); ++i) {
      const int64_t m = (i / p.N) % p.M, n = i % p.N;
      const float multiplier = pick(aScale, m) * pick(bScale, n) / yScale[0];
      requantize(static_cast<float>(p.values[static_cast<size_t>(i)]) * multiplier, yZero[0], y, i);
    }
    return {};
  });
}

Expected<std::unique_ptr<Op>> makeConvInteger(const BuildContext& bc) {
  const onnx::NodeProto node = *bc.node;
  return fnOp([node](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    const Tensor& x = *in[0];
    const Tensor& w = *in[1];
    if (!isInt8Type(x.dtype) || !isInt8Type(w.dtype)) return makeError("x and w must be int8 or uint8");
    ZP_ASSIGN_OR_RETURN(IntConvGeom g, intConvGeometry(node, x, w));
    ZP_ASSIGN_OR_RETURN(auto xZero, zeroPoints(optionalInput(in, 2), 1, "x_zero_point"));
    ZP_ASSIGN_OR_RETURN(auto wZero, zeroPoints(optionalInput(in, 3), g.M, "w_zero_point"));
    auto v = intConv(g, x, w, xZero[0], wZero);
    Tensor& y = ctx.alloc(0, DType::I32, intConvShape(g));
    std::copy(v.begin(), v.end(), y.ptr<int32_t>());
    return {};
  });
}

Expected<std::unique_ptr<Op>> makeQLinearConv(const BuildContext& bc) {
  const onnx::NodeProto node = *bc.node;
  return fnOp([node](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    // x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B (int32)
    const Tensor& x = *in[0];
    const Tensor& w = *in[3];
    if (!isInt8Type(x.dtype) || !isInt8Type(w.dtype)) return makeError("x and w must be int8 or uint8");
    ZP_ASSIGN_OR_RETURN(IntConvGeom g, intConvGeometry(node, x, w));
    ZP_ASSIGN_OR_RETURN(auto xScale, scales(*in[1], 1, "x_scale"));
    ZP_ASSIGN_OR_RETURN(auto xZero, zeroPoints(in[2], 1, "x_zero_point"));
    ZP_ASSIGN_OR_RETURN(auto wScale, scales(*in[4], g.M, "w_scale"));
    ZP_ASSIGN_OR_RETURN(auto wZero, zeroPoints(in[5], g.M, "w_zero_point"));
    ZP_ASSIGN_OR_RETURN(auto yScale, scales(*in[6], 1, "y_scale"));
    ZP_ASSIGN_OR_RETURN(auto yZero, zeroPoints(in[7], 1, "y_zero_point"));
    const Tensor* bias = optionalInput(in, 8);
    if (bias && (bias->dtype != DType::I32 || bias->size() != g.M))
      return makeError("B must be int32 with {} values", g.M);
    auto v = intConv(g, x, w, xZero[0], wZero);
    Tensor& y = ctx.alloc(0, in[7]->dtype, intConvShape(g));
    const int64_t P = y.size() / std::max<int64_t>(1, g.N * g.M);
    for (int64_t i = 0; i < y.size(); ++i) {
      const int64_t m = (i / P) % g.M;
      const int32_t acc = v[static_cast<size_t>(i)] + (bias ? bias->ptr<int32_t>()[m] : 0);
      requantize(static_cast<float>(acc) * (xScale[0] * pick(wScale, m) / yScale[0]), yZero[0], y, i);
    }
    return {};
  });
}

}  // namespace zp::runtime::detail
