// Conv over 3 spatial dims: geometry per run from the input's shape; constant
// weights have a fused BatchNormalization folded in once, at build. The vol2col
// GEMM kernel runs unless the policy is `naive`.
#include "libplan/runtime/ops/conv_volumetric.h"

#include <cmath>

#include "libplan/runtime/kernels/conv_volumetric.h"
#include "libplan/runtime/ops/attributes.h"
#include "libplan/runtime/ops/fn_op.h"
#include "libplan/runtime/ops/heavy_weights.h"
#include "libplan/runtime/ops/sliding_window.h"

namespace zp::runtime::detail {
namespace {

struct VolumetricAttrs {
  std::vector<int64_t> strides, dil, pads;
  int64_t group = 1;
  std::string autoPad = "NOTSET";
};

Expected<ConvVolumetricGeom> geometry(const VolumetricAttrs& a, const Tensor& x, const Shape& w) {
  if (x.rank() != 5 || w.size() != 5)
    return makeError("input {} and weight {} are not both 3-D convolution operands", shapeString(x.shape), shapeString(w));
  ConvVolumetricGeom g;
  g.N = x.shape[0];
  g.C = x.shape[1];
  g.M = w[0];
  g.group = a.group;
  if (g.group <= 0 || g.M % g.group != 0 || w[1] * g.group != g.C)
    return makeError("weight {} with group {} does not fit input {}", shapeString(w), g.group, shapeString(x.shape));
  if ((!a.strides.empty() && a.strides.size() != 3) || (!a.dil.empty() && a.dil.size() != 3) ||
      (!a.pads.empty() && a.pads.size() != 6))
    return makeError("strides, dilations or pads do not have one entry per spatial dim");
  for (size_t d = 0; d < 3; ++d) {
    g.in[d] = x.shape[d + 2];
    g.kernel[d] = w[d + 2];
    g.stride[d] = a.strides.empty() ? 1 : a.strides[d];
    g.dil[d] = a.dil.empty() ? 1 : a.dil[d];
    int64_t begin = a.pads.empty() ? 0 : a.pads[d], end = a.pads.empty() ? 0 : a.pads[d + 3];
    g.out[d] = slidingWindowOut(g.in[d], g.kernel[d], g.stride[d], g.dil[d], begin, end, false, a.autoPad);
    g.padBegin[d] = begin;
    if (g.out[d] <= 0) return makeError("input {} is smaller than the kernel {}", shapeString(x.shape), shapeString(w));
  }
  return g;
}

// Weights [M, ...] and bias [M] with a fused BatchNormalization folded in.
void foldBatchNorm(const FusedParts& fused, int64_t M, std::vector<float>* w, std::vector<float>* b) {
  if (fused.batchNorm.empty()) return;
  auto scale = fused.batchNorm[0]->toF32(), beta = fused.batchNorm[1]->toF32(), mean = fused.batchNorm[2]->toF32(),
       var = fused.batchNorm[3]->toF32();
  const size_t per = w->size() / static_cast<size_t>(M);
  for (size_t m = 0; m < static_cast<size_t>(M); ++m) {
    const float s = scale[m] / std::sqrt(var[m] + fused.bnEpsilon);
    for (size_t i = 0; i < per; ++i) (*w)[m * per + i] *= s;
    (*b)[m] = ((*b)[m] - mean[m]) * s + beta[m];
  }
}

}  // namespace

bool isVolumetricConv(const BuildContext& bc) {
  const Tensor* w = bc.constInputs.size() > 1 ? bc.constInputs[1] : nullptr;
  if (w) return w->rank() == 5;
  for (size_t i = 0; i < 2 && i < bc.inputShapes.size(); ++i)
    if (bc.inputShapes[i] && bc.inputShapes[i]->size() == 5) return true;
  return false;
}

Expected<std::unique_ptr<Op>> makeVolumetricConv(const BuildContext& bc) {
  const auto& n = *bc.node;
  VolumetricAttrs a;
  a.strides = attrInts(n, "strides");
  a.dil = attrInts(n, "dilations");
  a.pads = attrInts(n, "pads");
  a.group = attrInt(n, "group", 1);
  a.autoPad = attrString(n, "auto_pad", "NOTSET");
  ZP_ASSIGN_OR_RETURN(FusedParts fused, fusedParts(bc));
  const ConvVolumetricKernel kernel =
      bc.policy && bc.policy->policy == "naive" ? ConvVolumetricKernel::Naive : ConvVolumetricKernel::Vol2col;
  const Tensor* cw = bc.constInputs.size() > 1 ? bc.constInputs[1] : nullptr;
  const bool hasBias = n.input_size() > 2 && !n.input(2).empty();
  const Tensor* cb = hasBias ? bc.constInputs[2] : nullptr;
  // Constant weights (and bias): folded once. Otherwise they are read per run.
  std::vector<float> weights, bias;
  Shape wShape;
  const bool constant = cw && (!hasBias || cb);
  if (!constant && !fused.batchNorm.empty()) return makeError("a fused BatchNormalization needs constant Conv weights");
  if (constant) {
    if (cw->dtype != DType::F32 || (cb && cb->dtype != DType::F32)) return makeError("Conv supports float32 only");
    wShape = cw->shape;
    if (wShape.empty() || (cb && cb->size() != wShape[0]))
      return makeError("bias of {} values does not fit weight {}", cb ? cb->size() : 0, shapeString(wShape));
    weights.assign(cw->ptr<float>(), cw->ptr<float>() + cw->size());
    bias.assign(static_cast<size_t>(wShape[0]), 0.0f);
    if (cb) std::copy(cb->ptr<float>(), cb->ptr<float>() + cb->size(), bias.begin());
    for (const Tensor* t : fused.batchNorm)
      if (t->size() != wShape[0]) return makeError("fused BatchNormalization has {} values for {} channels", t->size(), wShape[0]);
    foldBatchNorm(fused, wShape[0], &weights, &bias);
  }
  const Epilogue epilogue = fused.epilogue;
  return fnOp([=](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    const Tensor& x = *in[0];
    const Tensor* w = in[1];
    const Tensor* b = hasBias ? in[2] : nullptr;
    if (x.dtype != DType::F32 || (!constant && (w->dtype != DType::F32 || (b && b->dtype != DType::F32))))
      return makeError("Conv supports float32 only");
    ZP_ASSIGN_OR_RETURN(ConvVolumetricGeom g, geometry(a, x, constant ? wShape : w->shape));
    if (!constant && b && b->size() != g.M) return makeError("bias has {} values for {} output channels", b->size(), g.M);
    Tensor& y = ctx.alloc(0, DType::F32, {g.N, g.M, g.out[0], g.out[1], g.out[2]});
    runConvVolumetric(kernel, g, x.ptr<float>(), constant ? weights.data() : w->ptr<float>(),
                      constant ? bias.data() : (b ? b->ptr<float>() : nullptr), epilogue, y.ptr<float>(), *ctx.scratch,
                      ctx.threads, ctx.gemm);
    return {};
  });
}

}  // namespace zp::runtime::detail
