// Normalizations: BatchNormalization (inference; the session folds it into a Conv
// before it where it can) and LayerNormalization.
#include <algorithm>
#include <cmath>

#include "libplan/runtime/ops/attributes.h"
#include "libplan/runtime/ops/factories.h"
#include "libplan/runtime/ops/fn_op.h"

namespace zp::runtime::detail {

Expected<std::unique_ptr<Op>> makeBatchNormalization(const BuildContext& bc) {
  if (bc.node->output_size() > 1) return makeError("training-mode BatchNormalization is not supported");
  const float eps = attrFloat(*bc.node, "epsilon", 1e-5f);
  return fnOp([eps](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    const Tensor& x = *in[0];
    if (x.dtype != DType::F32 || x.rank() < 2) return makeError("input {} does not fit", shapeString(x.shape));
    auto scale = in[1]->toF32(), bias = in[2]->toF32(), mean = in[3]->toF32(), var = in[4]->toF32();
    const int64_t N = x.shape[0], C = x.shape[1], sp = x.size() / std::max<int64_t>(N * C, 1);
    if (static_cast<int64_t>(scale.size()) != C) return makeError("scale has {} entries for {} channels", scale.size(), C);
    Tensor& y = ctx.alloc(0, DType::F32, x.shape);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t c = 0; c < C; ++c) {
        const size_t ci = static_cast<size_t>(c);
        const float s = scale[ci] / std::sqrt(var[ci] + eps), b = bias[ci] - mean[ci] * s;
        const float* p = x.ptr<float>() + (n * C + c) * sp;
        float* q = y.ptr<float>() + (n * C + c) * sp;
        for (int64_t i = 0; i < sp; ++i) q[i] = p[i] * s + b;
      }
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
    for (int64_t o = 0; o < outer; ++o) {
      const float* p = x.ptr<float>() + o * len;
      float* q = y.ptr<float>() + o * len;
      double mean = 0, var = 0;
      for (int64_t i = 0; i < len; ++i) mean += p[i];
      mean /= static_cast<double>(len);
      for (int64_t i = 0; i < len; ++i) var += (p[i] - mean) * (p[i] - mean);
      var /= static_cast<double>(len);
      const float inv = static_cast<float>(1.0 / std::sqrt(var + eps));
      for (int64_t i = 0; i < len; ++i)
        q[i] = (p[i] - static_cast<float>(mean)) * inv * scale->ptr<float>()[i] + (bias ? bias->ptr<float>()[i] : 0.0f);
    }
    return {};
  });
}

}  // namespace zp::runtime::detail
