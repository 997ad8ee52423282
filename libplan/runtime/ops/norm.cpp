// Normalizations: BatchNormalization (inference; the session folds it into a Conv
// before it where it can, else it may carry a fused activation) and
// LayerNormalization (also the fused form of its decomposition).
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

Expected<std::unique_ptr<Op>> makeLayerNormalization(const BuildContext& bc) {
  for (int i = 1; i < bc.node->output_size(); ++i)
    if (!bc.node->output(i).empty()) return makeError("LayerNormalization Mean/InvStdDev outputs are not supported");
  const int64_t axis = attrInt(*bc.node, "axis", -1);
  const float eps = attrFloat(*bc.node, "epsilon", 1e-5f);
  return fnOp([axis, eps](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    const Tensor& x = *in[0];
    if (x.dtype != DType::F32) return makeError("input must be float32");
    const int64_t a = normAxis(axis, x.rank());
    int64_t outer = 1, len = 1;
    for (int64_t d = 0; d < a; ++d) outer *= x.shape[static_cast<size_t>(d)];
    for (int64_t d = a; d < x.rank(); ++d) len *= x.shape[static_cast<size_t>(d)];
    const Tensor* scale = in[1];
    const Tensor* bias = in.size() > 2 ? in[2] : nullptr;
    if (scale->size() != len || (bias && bias->size() != len)) return makeError("scale/bias do not match normalized size {}", len);
    Tensor& y = ctx.alloc(0, DType::F32, x.shape);
    const float* sc = scale->ptr<float>();
    const float* bi = bias ? bias->ptr<float>() : nullptr;
    parallelFor(outer * len > 16384 ? ctx.threads : 1, outer, 0, [&](int64_t lo, int64_t hi, int) {
      for (int64_t o = lo; o < hi; ++o) {
        const float* p = x.ptr<float>() + o * len;
        float* q = y.ptr<float>() + o * len;
        const float mean = sum16(p, len) / static_cast<float>(len);
        const float var = sumSquaredDiff16(p, len, mean) / static_cast<float>(len);
        const float inv = 1.0f / std::sqrt(var + eps);
        if (bi)
          for (int64_t i = 0; i < len; ++i) q[i] = (p[i] - mean) * inv * sc[i] + bi[i];
        else
          for (int64_t i = 0; i < len; ++i) q[i] = (p[i] - mean) * inv * sc[i];
      }
    });
    return {};
  });
}

}  // namespace zp::runtime::detail
