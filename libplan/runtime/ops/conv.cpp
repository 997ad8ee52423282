// Conv (1-D and 2-D, groups, dilations, auto_pad; 3-D in conv_volumetric.cpp): the kernel the policy picks, with
// its transformed weights (BatchNormalization folded in when the node carries one),
// from the weight cache when it holds them. Weights fed as activations run im2col
// on a view of them, made per run.
#include <algorithm>
#include <cassert>
#include <chrono>
#include <cmath>
#include <utility>

#include "libplan/runtime/ops/attributes.h"
#include "libplan/runtime/ops/conv_volumetric.h"
#include "libplan/runtime/ops/factories.h"
#include "libplan/runtime/ops/fn_op.h"
#include "libplan/runtime/kernel_policy.h"
#include "libplan/runtime/kernels/conv_primitives.h"
#include "libplan/runtime/ops/heavy_weights.h"
#include "libplan/runtime/ops/sliding_window.h"

namespace zp::runtime::detail {
namespace {

Expected<ConvAttrs> convAttrsAt(const ConvAttrs& base, const std::string& autoPad, int64_t H, int64_t W) {
  ConvAttrs a = base;
  if (autoPad != "NOTSET" && !autoPad.empty()) {
    slidingWindowOut(H, a.kh, a.sh, a.dh, a.padT, a.padB, false, autoPad);
    slidingWindowOut(W, a.kw, a.sw, a.dw, a.padL, a.padR, false, autoPad);
  }
  if (a.outH(H) <= 0 || a.outW(W) <= 0)
    return makeError("input {}x{} is smaller than the kernel", H, W);
  return a;
}

// Conv geometry from the weight's shape and the node's attributes (pads as written).
Expected<ConvAttrs> convAttrsOf(const onnx::NodeProto& n, const Tensor& w) {
  const bool oneD = w.rank() == 3;
  ConvAttrs a;
  a.M = w.shape[0];
  a.Cg = w.shape[1];
  a.kh = oneD ? 1 : w.shape[2];
  a.kw = oneD ? w.shape[2] : w.shape[3];
  a.group = attrInt(n, "group", 1);
  auto strides = attrInts(n, "strides"), dil = attrInts(n, "dilations"), pads = attrInts(n, "pads");
  const size_t sd = oneD ? 1 : 2;
  if (!strides.empty() && strides.size() != sd) return makeError("strides has {} entries", strides.size());
  if (!dil.empty() && dil.size() != sd) return makeError("dilations has {} entries", dil.size());
  if (!pads.empty() && pads.size() != 2 * sd) return makeError("pads has {} entries", pads.size());
  if (oneD) {
    if (!strides.empty()) a.sw = strides[0];
    if (!dil.empty()) a.dw = dil[0];
    if (!pads.empty()) { a.padL = pads[0]; a.padR = pads[1]; }
  } else {
    if (!strides.empty()) { a.sh = strides[0]; a.sw = strides[1]; }
    if (!dil.empty()) { a.dh = dil[0]; a.dw = dil[1]; }
    if (!pads.empty()) { a.padT = pads[0]; a.padL = pads[1]; a.padB = pads[2]; a.padR = pads[3]; }
  }
  if (a.group <= 0 || a.M % a.group != 0) return makeError("group {} does not divide {} output channels", a.group, a.M);
  return a;
}

// The weights and bias a kernel transforms: the ONNX ones, with a fused
// BatchNormalization folded in.
std::pair<std::vector<float>, std::vector<float>> effectiveWeights(const Tensor& w, const Tensor* b, int64_t M,
                                                                   const FusedParts& fused) {
  std::vector<float> ww(w.ptr<float>(), w.ptr<float>() + w.size());
  std::vector<float> bb(static_cast<size_t>(M), 0.0f);
  if (b) std::copy(b->ptr<float>(), b->ptr<float>() + M, bb.begin());
  if (!fused.batchNorm.empty()) {
    auto scale = fused.batchNorm[0]->toF32(), beta = fused.batchNorm[1]->toF32(), mean = fused.batchNorm[2]->toF32(),
         var = fused.batchNorm[3]->toF32();
    const int64_t per = w.size() / M;
    for (int64_t m = 0; m < M; ++m) {
      const float s = scale[static_cast<size_t>(m)] / std::sqrt(var[static_cast<size_t>(m)] + fused.bnEpsilon);
      for (int64_t i = 0; i < per; ++i) ww[static_cast<size_t>(m * per + i)] *= s;
      bb[static_cast<size_t>(m)] = (bb[static_cast<size_t>(m)] - mean[static_cast<size_t>(m)]) * s + beta[static_cast<size_t>(m)];
    }
  }
  return std::make_pair(std::move(ww), std::move(bb));
}

// Kernels that read the ONNX layout [M, Cg*kh*kw] as it is.
bool readsOnnxLayout(ConvKernel k) {
  return k == ConvKernel::Im2col || k == ConvKernel::Gemm1x1 || k == ConvKernel::Naive || k == ConvKernel::Depthwise ||
         k == ConvKernel::OneDnn;
}

// Conv whose weights (and bias) are activations: the geometry and a view of the
// weights are made per run, for the im2col kernel (naive under the naive policy),
// both of which read the ONNX layout as it is.
Expected<std::unique_ptr<Op>> runtimeWeightsConv(const BuildContext& bc) {
  const onnx::NodeProto node = *bc.node;
  const std::string autoPad = attrString(node, "auto_pad", "NOTSET");
  const ConvKernel kernel = bc.policy && bc.policy->policy == "naive" ? ConvKernel::Naive : ConvKernel::Im2col;
  return fnOp([node, autoPad, kernel](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    const Tensor& x = *in[0];
    const Tensor& w = *in[1];
    const Tensor* b = in.size() > 2 ? in[2] : nullptr;
    if (x.dtype != DType::F32 || w.dtype != DType::F32 || (b && b->dtype != DType::F32))
      return makeError("Conv supports float32 only");
    if ((w.rank() != 4 && w.rank() != 3) || x.rank() != w.rank())
      return makeError("only 1-D and 2-D Conv are supported (input {}, weight {})", shapeString(x.shape), shapeString(w.shape));
    ZP_ASSIGN_OR_RETURN(ConvAttrs base, convAttrsOf(node, w));
    const bool oneD = w.rank() == 3;
    const int64_t N = x.shape[0], C = x.shape[1], H = oneD ? 1 : x.shape[2], W = x.shape.back();
    if (C != base.C()) return makeError("input has {} channels, weights expect {}", C, base.C());
    if (b && b->size() != base.M) return makeError("bias has {} values for {} output channels", b->size(), base.M);
    ZP_ASSIGN_OR_RETURN(ConvAttrs a, convAttrsAt(base, autoPad, H, W));
    PackedWeights packed;
    std::vector<float> bias(static_cast<size_t>(a.M), 0.0f);
    if (b) std::copy(b->ptr<float>(), b->ptr<float>() + a.M, bias.begin());
    packed.arrays.push_back(PackedWeights::make("bias", bias, DType::F32));
    packed.arrays.push_back(viewOf("w", w));
    Shape os = oneD ? Shape{N, a.M, a.outW(W)} : Shape{N, a.M, a.outH(H), a.outW(W)};
    Tensor& y = ctx.alloc(0, DType::F32, os);
    runConv(kernel, a, packed, x.ptr<float>(), N, H, W, y.ptr<float>(), Epilogue{}, *ctx.scratch, ctx.threads, ctx.gemm);
    return {};
  });
}

class ConvOp : public Op {
 public:
  static Expected<std::unique_ptr<Op>> make(const BuildContext& bc) {
    const auto& n = *bc.node;
    if (isVolumetricConv(bc)) return makeVolumetricConv(bc);
    const Tensor* w = bc.constInputs.size() > 1 ? bc.constInputs[1] : nullptr;
    const bool constBias = n.input_size() < 3 || n.input(2).empty() || bc.constInputs[2];
    if (n.domain() != graph::kFusedDomain && (!w || !constBias)) return runtimeWeightsConv(bc);
    if (!w) return makeError("Conv weights must be constant");
    if (w->dtype != DType::F32) return makeError("Conv weights must be float32 after dequantization");
    if (w->rank() != 4 && w->rank() != 3) return makeError("only 1-D and 2-D Conv are supported (weight {})", shapeString(w->shape));
    const Tensor* b = nullptr;
    if (n.input_size() > 2 && !n.input(2).empty()) {
      b = bc.constInputs[2];
      if (!b) return makeError("Conv bias must be constant");
    }
    auto op = std::make_unique<ConvOp>();
    op->oneD_ = w->rank() == 3;
    ZP_ASSIGN_OR_RETURN(op->attrs_, convAttrsOf(n, *w));
    const ConvAttrs& a = op->attrs_;
    op->autoPad_ = attrString(n, "auto_pad", "NOTSET");
    ZP_ASSIGN_OR_RETURN(FusedParts fused, fusedParts(bc));
    for (const Tensor* t : fused.batchNorm)
      if (t->size() != a.M) return makeError("fused BatchNormalization has {} values for {} channels", t->size(), a.M);
    op->epilogue_ = fused.epilogue;
    op->residual_ = fused.residual;
    op->info_.sources = {n.input(1)};
    if (b) op->info_.sources.push_back(n.input(2));
    for (const auto& s : fused.batchNormNames) op->info_.sources.push_back(s);
    auto effective = [&]() { return effectiveWeights(*w, b, a.M, fused); };

    ZP_ASSIGN_OR_RETURN(op->info_.zeroFraction, weightZeroFraction(bc, *w));
    ZP_ASSIGN_OR_RETURN(op->kernel_, op->chooseKernel(bc, effective));
    std::string kname = convKernelName(op->kernel_);
    op->info_.packed = &op->packed_;
    if (takeFromCache(bc, kname, *w)) {
      ZP_TRY(weightsFromCache(bc, kname, &op->packed_, &op->info_));
      return finish(bc, std::move(op));
    }
    if (fused.batchNorm.empty() && readsOnnxLayout(op->kernel_)) {
      // Use the weights in place.
      auto t0 = std::chrono::steady_clock::now();
      rejectedEarlier(bc, &op->info_);
      std::vector<float> bb(static_cast<size_t>(a.M), 0.0f);
      if (b) std::copy(b->ptr<float>(), b->ptr<float>() + a.M, bb.begin());
      op->packed_.arrays.push_back(PackedWeights::make("bias", bb, DType::F32));
      op->packed_.arrays.push_back(viewOf("w", *w));
      op->info_.kernel = kname;
      op->info_.transform = "none";
      op->info_.transformMs = msSince(t0);
      return finish(bc, std::move(op));
    }
    uint32_t crc = crcOf(crcOf(0, w), b);
    for (const Tensor* t : fused.batchNorm) crc = crcOf(crc, t);
    resolveWeights(bc, kname, convTransformName(op->kernel_), crc, [&]() {
      auto [ww, bb] = effective();
      return transformConvWeights(op->kernel_, a, ww.data(), bb.data());
    }, &op->packed_, &op->info_);
    return finish(bc, std::move(op));
  }

  // What the kernel makes for the node's input shape beyond its weights (onednn's
  // primitives: their time counts as the node's transform). Without a static shape,
  // or where oneDNN has nothing fast for it, the same weights run im2col.
  static Expected<std::unique_ptr<Op>> finish(const BuildContext& bc, std::unique_ptr<ConvOp> op) {
    if (op->kernel_ != ConvKernel::OneDnn) return std::unique_ptr<Op>(std::move(op));
    auto t0 = std::chrono::steady_clock::now();
    bool prepared = false;
    if (const auto& in = bc.inputShapes.empty() ? std::nullopt : bc.inputShapes[0]; in && !op->oneD_ && in->size() == 4) {
      const int64_t N = (*in)[0], H = (*in)[2], W = (*in)[3];
      auto a = convAttrsAt(op->attrs_, op->autoPad_, H, W);
      if (N > 0 && H > 0 && W > 0 && a.ok())
        prepared = prepareConvKernel(ConvKernel::OneDnn, *a, N, H, W, &op->packed_);
    }
    if (!prepared) op->kernel_ = ConvKernel::Im2col;
    op->info_.transformMs += msSince(t0);
    op->info_.libraryBytes = op->packed_.onednn ? op->packed_.onednn->bytes() : 0;
    return std::unique_ptr<Op>(std::move(op));
  }

  Status run(ExecContext& ctx, const std::vector<const Tensor*>& in) override {
    const Tensor& x = *in[0];
    const int64_t r = oneD_ ? 3 : 4;
    if (x.rank() != r || x.dtype != DType::F32)
      return makeError("input {} {} does not fit the Conv", dtypeName(x.dtype), shapeString(x.shape));
    const int64_t N = x.shape[0], C = x.shape[1], H = oneD_ ? 1 : x.shape[2], W = x.shape[r - 1];
    if (C != attrs_.C()) return makeError("input has {} channels, weights expect {}", C, attrs_.C());
    ZP_ASSIGN_OR_RETURN(ConvAttrs a, convAttrsAt(attrs_, autoPad_, H, W));
    Shape os = oneD_ ? Shape{N, a.M, a.outW(W)} : Shape{N, a.M, a.outH(H), a.outW(W)};
    const float* residual = nullptr;
    if (residual_) {
      const size_t at = graph::kFusedResidualInput;
      const Tensor* r = at < in.size() ? in[at] : nullptr;
      if (!r || r->dtype != DType::F32 || r->shape != os)
        return makeError("the residual added to the Conv's output {} is {}", shapeString(os),
                         r ? std::string(dtypeName(r->dtype)) + " " + shapeString(r->shape) : std::string("missing"));
      residual = r->ptr<float>();
    }
    Tensor& y = ctx.alloc(0, DType::F32, os);
    runConv(kernel_, a, packed_, x.ptr<float>(), N, H, W, y.ptr<float>(), epilogue_, *ctx.scratch, ctx.threads, ctx.gemm,
            layouts_, residual);
    return {};
  }

  std::string kernel() const override { return convKernelName(kernel_); }
  const WeightInfo* weights() const override { return &info_; }
  std::optional<size_t> blockableInput() const override {
    return !oneD_ && convTakesBlockedInput(kernel_, attrs_) ? std::optional<size_t>(0) : std::nullopt;
  }
  // The residual is added in planes.
  bool takesBlockedOutput() const override {
    return !oneD_ && !residual_ && convTakesBlockedOutput(kernel_, attrs_);
  }
  BlockedLayouts layouts() const override { return layouts_; }
  void setLayouts(BlockedLayouts layouts) override {
    assert(!layouts.blockedInput || blockableInput());
    assert(!layouts.blockedOutput || takesBlockedOutput());
    layouts_ = layouts;
  }

 private:
  template <typename Eff>
  Expected<ConvKernel> chooseKernel(const BuildContext& bc, Eff& effective) const {
    ConvNode node;
    node.name = bc.node->name();
    node.attrs = attrs_;
    if (!bc.inputShapes.empty()) node.input = bc.inputShapes[0];
    node.zeroFraction = info_.zeroFraction;
    node.tunable = node.input && autoPad_ == "NOTSET";
    node.gemm = bc.gemm;
    node.feedsDepthwise = bc.feedsDepthwise;
    node.fedByDepthwise = bc.fedByDepthwise;
    return chooseConvKernel(*bc.policy, node, [&]() {
      const Shape& in = *node.input;
      const int64_t N = in[0], H = oneD_ ? 1 : in[2], W = in.back();
      auto [ww, bb] = effective();
      auto a = convAttrsAt(attrs_, autoPad_, H, W);
      if (!a.ok()) return ConvKernel::Im2col;
      return tuneConvKernel(*a, N, H, W, ww.data(), bb.data(), epilogue_, bc.threads, bc.gemm);
    });
  }

  ConvAttrs attrs_;
  bool oneD_ = false;
  std::string autoPad_;
  Epilogue epilogue_;
  bool residual_ = false;  // input graph::kFusedResidualInput added to the output
  ConvKernel kernel_ = ConvKernel::Im2col;
  BlockedLayouts layouts_;
  PackedWeights packed_;
  WeightInfo info_;
};

}  // namespace

Expected<std::unique_ptr<Op>> makeConv(const BuildContext& bc) { return ConvOp::make(bc); }

}  // namespace zp::runtime::detail
