// Normalizations: BatchNormalization (inference; the session folds it into a Conv
// before it where it can, else it may carry a fused activation), LayerNormalization
// (also the fused form of its decomposition), InstanceNormalization, LRN and
// MeanVarianceNormalization.
#include <algorithm>
#include <cmath>

#include "libplan/runtime/kernels/parallel.h"
#include "libplan/runtime/kernels/sums.h"
#include "libplan/runtime/ops/attributes.h"
#include "libplan/runtime/ops/factories.h"
#include "libplan/runtime/ops/fn_op.h"
#include "libplan/runtime/ops/heavy_weights.h"

namespace zp::runtime::detail {
namespace {

// y = x * s + b, then the epilogue, over one plane.
void scaleShift(const float* p, float* q, int64_t n, float s, float b, const Epilogue& e) {
  switch (e.kind) {
    case Epilogue::None: for (int64_t i = 0; i < n; ++i) q[i] = p[i] * s + b; break;
    case Epilogue::Relu:
      for (int64_t i = 0; i < n; ++i) { const float v = p[i] * s + b; q[i] = v > 0 ? v : 0; }
      break;
    case Epilogue::Clip:
      for (int64_t i = 0; i < n; ++i) q[i] = std::min(std::max(p[i] * s + b, e.lo), e.hi);
      break;
    case Epilogue::Function:
      for (int64_t i = 0; i < n; ++i) q[i] = p[i] * s + b;
      applyActivation(e.fn, e.params, q, q, n);
      break;
  }
}

// Float32 rows: the sums in 16 partial lanes, rows split over the threads.
void layerNormF32(int threads, const float* x, float* y, const float* sc, const float* bi, int64_t outer, int64_t len,
                  float eps, float* meanP, float* invP) {
  parallelFor(outer * len > 16384 ? threads : 1, outer, 0, [&](int64_t lo, int64_t hi, int) {
    for (int64_t o = lo; o < hi; ++o) {
      const float* p = x + o * len;
      float* q = y + o * len;
      const float mean = sum16(p, len) / static_cast<float>(len);
      const float var = sumSquaredDiff16(p, len, mean) / static_cast<float>(len);
      const float inv = 1.0f / std::sqrt(var + eps);
      if (bi)
        for (int64_t i = 0; i < len; ++i) q[i] = (p[i] - mean) * inv * sc[i] + bi[i];
      else
        for (int64_t i = 0; i < len; ++i) q[i] = (p[i] - mean) * inv * sc[i];
      if (meanP) meanP[o] = mean;
      if (invP) invP[o] = inv;
    }
  });
}

}  // namespace

Expected<std::unique_ptr<Op>> makeBatchNormalization(const BuildContext& bc) {
  if (bc.node->output_size() > 1) return makeError("training-mode BatchNormalization is not supported");
  const float eps = attrFloat(*bc.node, "epsilon", 1e-5f);
  ZP_ASSIGN_OR_RETURN(Epilogue e, fusedEpilogue(*bc.node));
  return fnOp([eps, e](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    const Tensor& x = *in[0];
    if (x.dtype != DType::F32 || x.rank() < 2) return makeError("input {} does not fit", shapeString(x.shape));
    auto scale = in[1]->toF32(), bias = in[2]->toF32(), mean = in[3]->toF32(), var = in[4]->toF32();
    const int64_t N = x.shape[0], C = x.shape[1], sp = x.size() / std::max<int64_t>(N * C, 1);
    if (static_cast<int64_t>(scale.size()) != C) return makeError("scale has {} entries for {} channels", scale.size(), C);
    Tensor& y = ctx.alloc(0, DType::F32, x.shape);
    const float* px = x.ptr<float>();
    float* py = y.ptr<float>();
    parallelForEach(N * C * sp > 16384 ? ctx.threads : 1, N * C, [&](int64_t nc, int) {
      const size_t ci = static_cast<size_t>(nc % C);
      const float s = scale[ci] / std::sqrt(var[ci] + eps), b = bias[ci] - mean[ci] * s;
      scaleShift(px + nc * sp, py + nc * sp, sp, s, b, e);
    });
    return {};
  });
}

// LayerNormalization over the dims from `axis` on; its optional Mean and InvStdDev
// outputs (float32, the input's shape with the normalized dims set to 1).
Expected<std::unique_ptr<Op>> makeLayerNormalization(const BuildContext& bc) {
  const int64_t axis = attrInt(*bc.node, "axis", -1);
  const float eps = attrFloat(*bc.node, "epsilon", 1e-5f);
  auto wanted = [&](int i) { return bc.node->output_size() > i && !bc.node->output(i).empty(); };
  const bool meanOut = wanted(1), invOut = wanted(2);
  return fnOp([axis, eps, meanOut, invOut](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    const Tensor& x = *in[0];
    if (x.dtype != DType::F32 && x.dtype != DType::F64) return makeError("input must be float32 or float64");
    const int64_t a = normAxis(axis, x.rank());
    if (a < 0 || a >= x.rank()) return makeError("axis {} out of range for rank {}", axis, x.rank());
    int64_t outer = 1, len = 1;
    for (int64_t d = 0; d < a; ++d) outer *= x.shape[static_cast<size_t>(d)];
    for (int64_t d = a; d < x.rank(); ++d) len *= x.shape[static_cast<size_t>(d)];
    const Tensor* scale = in[1];
    const Tensor* bias = in.size() > 2 ? in[2] : nullptr;
    if (scale->size() != len || (bias && bias->size() != len)) return makeError("scale/bias do not match normalized size {}", len);
    if (scale->dtype != x.dtype || (bias && bias->dtype != x.dtype)) return makeError("scale/bias differ in type from the input");
    Tensor& y = ctx.alloc(0, x.dtype, x.shape);
    Shape statShape = x.shape;
    for (int64_t d = a; d < x.rank(); ++d) statShape[static_cast<size_t>(d)] = 1;
    float* meanP = meanOut ? ctx.alloc(1, DType::F32, statShape).ptr<float>() : nullptr;
    float* invP = invOut ? ctx.alloc(2, DType::F32, statShape).ptr<float>() : nullptr;
    if (x.dtype == DType::F32) {
      layerNormF32(ctx.threads, x.ptr<float>(), y.ptr<float>(), scale->ptr<float>(), bias ? bias->ptr<float>() : nullptr,
                   outer, len, eps, meanP, invP);
      return {};
    }
    for (int64_t o = 0; o < outer; ++o) {
      const double* p = x.ptr<double>() + o * len;
      double* q = y.ptr<double>() + o * len;
      double mean = 0, var = 0;
      for (int64_t i = 0; i < len; ++i) mean += p[i];
      mean /= static_cast<double>(len);
      for (int64_t i = 0; i < len; ++i) var += (p[i] - mean) * (p[i] - mean);
      var /= static_cast<double>(len);
      const double inv = 1.0 / std::sqrt(var + eps);
      for (int64_t i = 0; i < len; ++i) q[i] = (p[i] - mean) * inv * scale->ptr<double>()[i] + (bias ? bias->ptr<double>()[i] : 0.0);
      if (meanP) meanP[o] = static_cast<float>(mean);
      if (invP) invP[o] = static_cast<float>(inv);
    }
    return {};
  });
}

// InstanceNormalization: each (sample, channel) plane normalized, then scale[c] and B[c].
Expected<std::unique_ptr<Op>> makeInstanceNormalization(const BuildContext& bc) {
  const double eps = attrFloat(*bc.node, "epsilon", 1e-5f);
  return fnOp([eps](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    const Tensor& x = *in[0];
    if ((x.dtype != DType::F32 && x.dtype != DType::F64) || x.rank() < 3)
      return makeError("input {} {} does not fit", dtypeName(x.dtype), shapeString(x.shape));
    const int64_t N = x.shape[0], C = x.shape[1], sp = x.size() / std::max<int64_t>(N * C, 1);
    const auto scale = in[1]->toF64(), bias = in[2]->toF64();
    if (static_cast<int64_t>(scale.size()) != C || static_cast<int64_t>(bias.size()) != C)
      return makeError("scale/B have {}/{} values for {} channels", scale.size(), bias.size(), C);
    Tensor& y = ctx.alloc(0, x.dtype, x.shape);
    const auto v = x.toF64();
    for (int64_t nc = 0; nc < N * C; ++nc) {
      const double* p = v.data() + nc * sp;
      double mean = 0, var = 0;
      for (int64_t i = 0; i < sp; ++i) mean += p[i];
      mean /= static_cast<double>(sp);
      for (int64_t i = 0; i < sp; ++i) var += (p[i] - mean) * (p[i] - mean);
      var /= static_cast<double>(sp);
      const size_t c = static_cast<size_t>(nc % C);
      const double s = scale[c] / std::sqrt(var + eps);
      for (int64_t i = 0; i < sp; ++i) {
        const double r = (p[i] - mean) * s + bias[c];
        if (x.dtype == DType::F32) y.ptr<float>()[nc * sp + i] = static_cast<float>(r);
        else y.ptr<double>()[nc * sp + i] = r;
      }
    }
    return {};
  });
}

// LRN across channels: x / (bias + alpha / size * sum of squares in the window)^beta.
Expected<std::unique_ptr<Op>> makeLRN(const BuildContext& bc) {
  const int64_t size = attrInt(*bc.node, "size", 0);
  const double alpha = attrFloat(*bc.node, "alpha", 1e-4f), beta = attrFloat(*bc.node, "beta", 0.75f),
               bias = attrFloat(*bc.node, "bias", 1.0f);
  if (size < 1) return makeError("size {} is not positive", size);
  return fnOp([=](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    const Tensor& x = *in[0];
    if (x.dtype != DType::F32 || x.rank() < 3) return makeError("input {} {} does not fit", dtypeName(x.dtype), shapeString(x.shape));
    const int64_t N = x.shape[0], C = x.shape[1], sp = x.size() / std::max<int64_t>(N * C, 1);
    const int64_t before = (size - 1) / 2, after = size - 1 - before;
    Tensor& y = ctx.alloc(0, DType::F32, x.shape);
    const float* px = x.ptr<float>();
    for (int64_t n = 0; n < N; ++n)
      for (int64_t c = 0; c < C; ++c)
        for (int64_t i = 0; i < sp; ++i) {
          double sq = 0;
          for (int64_t k = std::max<int64_t>(0, c - before); k <= std::min(C - 1, c + after); ++k) {
            const double v = px[(n * C + k) * sp + i];
            sq += v * v;
          }
          const int64_t at = (n * C + c) * sp + i;
          y.ptr<float>()[at] = static_cast<float>(px[at] / std::pow(bias + alpha / static_cast<double>(size) * sq, beta));
        }
    return {};
  });
}

// MeanVarianceNormalization: (x - mean) / sqrt(variance + 1e-9) over `axes`.
Expected<std::unique_ptr<Op>> makeMeanVarianceNormalization(const BuildContext& bc) {
  std::vector<int64_t> axes = attrInts(*bc.node, "axes");
  if (axes.empty()) axes = {0, 2, 3};
  return fnOp([axes](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    const Tensor& x = *in[0];
    if (x.dtype != DType::F32 && x.dtype != DType::F64) return makeError("input must be float32 or float64");
    const int64_t r = x.rank();
    std::vector<bool> red(static_cast<size_t>(r), false);
    for (auto a : axes) {
      const int64_t d = normAxis(a, r);
      if (d < 0 || d >= r) return makeError("axis {} out of range", a);
      red[static_cast<size_t>(d)] = true;
    }
    // The flat index of each element's statistics group.
    std::vector<int64_t> group(static_cast<size_t>(x.size()));
    int64_t groups = 1;
    for (int64_t d = 0; d < r; ++d)
      if (!red[static_cast<size_t>(d)]) groups *= x.shape[static_cast<size_t>(d)];
    for (int64_t i = 0; i < x.size(); ++i) {
      int64_t rem = i, g = 0, mul = 1;
      for (int64_t d = r; d-- > 0;) {
        const int64_t idx = rem % x.shape[static_cast<size_t>(d)];
        rem /= x.shape[static_cast<size_t>(d)];
        if (!red[static_cast<size_t>(d)]) { g += idx * mul; mul *= x.shape[static_cast<size_t>(d)]; }
      }
      group[static_cast<size_t>(i)] = g;
    }
    const auto v = x.toF64();
    std::vector<double> sum(static_cast<size_t>(groups), 0), sq(static_cast<size_t>(groups), 0);
    for (size_t i = 0; i < v.size(); ++i) { sum[static_cast<size_t>(group[i])] += v[i]; sq[static_cast<size_t>(group[i])] += v[i] * v[i]; }
    const double count = static_cast<double>(x.size()) / static_cast<double>(std::max<int64_t>(groups, 1));
    Tensor& y = ctx.alloc(0, x.dtype, x.shape);
    for (size_t i = 0; i < v.size(); ++i) {
      const size_t g = static_cast<size_t>(group[i]);
      const double mean = sum[g] / count, var = sq[g] / count - mean * mean;
      const double out = (v[i] - mean) / std::sqrt(var + 1e-9);
      if (x.dtype == DType::F32) y.ptr<float>()[i] = static_cast<float>(out);
      else y.ptr<double>()[i] = out;
    }
    return {};
  });
}

}  // namespace zp::runtime::detail
