// Conv (1-D and 2-D, groups, dilations, auto_pad): the kernel the policy picks, with
// its transformed weights (BatchNormalization folded in when the node carries one),
// from the weight cache when it holds them.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>

#include "libplan/runtime/ops/attributes.h"
#include "libplan/runtime/ops/factories.h"
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

double medianOf(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

class ConvOp : public Op {
 public:
  static Expected<std::unique_ptr<Op>> make(const BuildContext& bc) {
    const auto& n = *bc.node;
    const Tensor* w = bc.constInputs.size() > 1 ? bc.constInputs[1] : nullptr;
    if (!w) return makeError("Conv weights must be constant");
    if (w->dtype != DType::F32) return makeError("Conv weights must be float32 after dequantization");
    if (w->rank() != 4 && w->rank() != 3) return makeError("only 1-D and 2-D Conv are supported (weight {})", shapeString(w->shape));
    const Tensor* b = nullptr;
    if (n.input_size() > 2 && !n.input(2).empty()) {
      b = bc.constInputs[2];
      if (!b) return makeError("Conv bias must be constant");
    }
    auto op = std::make_unique<ConvOp>();
    const bool oneD = w->rank() == 3;
    op->oneD_ = oneD;
    ConvAttrs& a = op->attrs_;
    a.M = w->shape[0];
    a.Cg = w->shape[1];
    a.kh = oneD ? 1 : w->shape[2];
    a.kw = oneD ? w->shape[2] : w->shape[3];
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
    op->autoPad_ = attrString(n, "auto_pad", "NOTSET");
    if (a.group <= 0 || a.M % a.group != 0) return makeError("group {} does not divide {} output channels", a.group, a.M);
    op->epilogue_ = bc.epilogue;

    // Effective weights (BatchNormalization folded in when the session fused one).
    op->info_.sources = {n.input(1)};
    if (b) op->info_.sources.push_back(n.input(2));
    for (const auto& s : bc.bnFoldNames) op->info_.sources.push_back(s);
    auto effective = [&, w, b]() {
      std::vector<float> ww(w->ptr<float>(), w->ptr<float>() + w->size());
      std::vector<float> bb(static_cast<size_t>(a.M), 0.0f);
      if (b) std::copy(b->ptr<float>(), b->ptr<float>() + a.M, bb.begin());
      if (!bc.bnFold.empty()) {
        auto scale = bc.bnFold[0]->toF32(), beta = bc.bnFold[1]->toF32(), mean = bc.bnFold[2]->toF32(),
             var = bc.bnFold[3]->toF32();
        const int64_t per = w->size() / a.M;
        for (int64_t m = 0; m < a.M; ++m) {
          const float s = scale[static_cast<size_t>(m)] / std::sqrt(var[static_cast<size_t>(m)] + bc.bnEpsilon);
          for (int64_t i = 0; i < per; ++i) ww[static_cast<size_t>(m * per + i)] *= s;
          bb[static_cast<size_t>(m)] = (bb[static_cast<size_t>(m)] - mean[static_cast<size_t>(m)]) * s + beta[static_cast<size_t>(m)];
        }
      }
      return std::make_pair(std::move(ww), std::move(bb));
    };

    ZP_ASSIGN_OR_RETURN(op->info_.zeroFraction, weightZeroFraction(bc, *w));
    ZP_ASSIGN_OR_RETURN(op->kernel_, op->choose(bc, effective));
    std::string kname = convKernelName(op->kernel_);
    const ConvKernel k = op->kernel_;
    op->info_.packed = &op->packed_;
    if (bc.fromCacheOnly) {
      ZP_TRY(weightsFromCache(bc, kname, &op->packed_, &op->info_));
      return std::unique_ptr<Op>(std::move(op));
    }
    if (bc.bnFold.empty() && (k == ConvKernel::Im2col || k == ConvKernel::Gemm1x1 || k == ConvKernel::Naive ||
                              k == ConvKernel::Depthwise)) {
      // These kernels read the ONNX layout [M, Cg*kh*kw] as is: use the weights in place.
      auto t0 = std::chrono::steady_clock::now();
      rejectedEarlier(bc, &op->info_);
      std::vector<float> bb(static_cast<size_t>(a.M), 0.0f);
      if (b) std::copy(b->ptr<float>(), b->ptr<float>() + a.M, bb.begin());
      op->packed_.arrays.push_back(PackedWeights::make("bias", bb, DType::F32));
      op->packed_.arrays.push_back(viewOf("w", *w));
      op->info_.kernel = kname;
      op->info_.transform = "none";
      op->info_.transformMs = msSince(t0);
      return std::unique_ptr<Op>(std::move(op));
    }
    uint32_t crc = crcOf(crcOf(0, w), b);
    for (const Tensor* t : bc.bnFold) crc = crcOf(crc, t);
    resolveWeights(bc, kname, convTransformName(op->kernel_), crc, [&]() {
      auto [ww, bb] = effective();
      return transformConvWeights(op->kernel_, a, ww.data(), bb.data());
    }, &op->packed_, &op->info_);
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
    Tensor& y = ctx.alloc(0, DType::F32, os);
    runConv(kernel_, a, packed_, x.ptr<float>(), N, H, W, y.ptr<float>(), epilogue_, *ctx.scratch, ctx.threads, ctx.gemm);
    return {};
  }

  std::string kernel() const override { return convKernelName(kernel_); }
  const WeightInfo* weights() const override { return &info_; }

 private:
  template <typename Eff>
  Expected<ConvKernel> choose(const BuildContext& bc, Eff& effective) {
    const auto& p = *bc.policy;
    const std::string& name = bc.node->name();
    ConvKernel k;
    if (auto it = p.perNode.find(name); it != p.perNode.end()) {
      if (!parseConvKernel(it->second, &k)) return makeError("kernel '{}' is not a Conv kernel", it->second);
      if (!convKernelApplies(k, attrs_)) return makeError("kernel '{}' does not apply to this Conv", it->second);
      return k;
    }
    if (parseConvKernel(p.policy, &k) && convKernelApplies(k, attrs_)) return k;
    if (p.policy == "tune" && bc.inputShapes.size() > 0 && bc.inputShapes[0] && autoPad_ == "NOTSET") {
      return tune(*bc.inputShapes[0], effective, bc.threads, bc.gemm);
    }
    return heuristic(p, bc.inputShapes.empty() ? std::nullopt : bc.inputShapes[0]);
  }

  // Thresholds measured with bench/runtime on an AVX-512 host (GEMM in oneDNN): with
  // vectorized transforms Winograd F(2x2,3x3) beats im2col from 64 input and output
  // channels on maps of 8x8 and more (ResNet-18's 56x56 to 14x14, GoogLeNet's 56x56 to
  // 14x14) and loses on 7x7 maps and few channels. The sparse kernel (one thread, against
  // the best of im2col/gemm1x1/winograd) breaks even at 70-80% zeros on kxk convs of any
  // stride and map size (ResNet-18's: 1.0-2.1x at 80%, the lowest on 28x28x128 against
  // Winograd, 1.9-3.2x at 90%; the digits nets' 8x8 and 4x4 maps: 1.4-3x at 80%), but 1x1
  // convs are a plain GEMM for dense: there sparse needs ~90% zeros (1.1-2.3x at 90% on
  // ResNet-50's 1x1s and ResNet-18's strided ones from 7x7 up, 0.9x with 96 input
  // channels) and still loses on maps smaller than 7x7 (its fixed cost).
  ConvKernel heuristic(const KernelPolicy& p, const std::optional<Shape>& in) const {
    const ConvAttrs& a = attrs_;
    if (convKernelApplies(ConvKernel::Depthwise, a)) return ConvKernel::Depthwise;
    const bool known = in && in->size() == 4;
    const int64_t H = known ? (*in)[2] : 0, W = known ? (*in)[3] : 0;
    const double zf = info_.zeroFraction;
    const bool pointwise = a.kh == 1 && a.kw == 1;
    if (!pointwise && zf >= p.sparseThreshold) return ConvKernel::Sparse;
    if (pointwise && zf >= std::max(p.sparseThreshold, 0.9) && (!known || H * W >= 49 * a.sh * a.sw))
      return ConvKernel::Sparse;
    if (convKernelApplies(ConvKernel::Gemm1x1, a)) return ConvKernel::Gemm1x1;
    if (convKernelApplies(ConvKernel::Winograd, a) && a.Cg >= 64 && a.M >= 64 && (!known || (H >= 8 && W >= 8)))
      return ConvKernel::Winograd;
    return ConvKernel::Im2col;
  }

  template <typename Eff>
  ConvKernel tune(const Shape& in, Eff& effective, int threads, GemmLibrary gemm) const {
    auto [ww, bb] = effective();
    const int64_t N = in[0], H = oneD_ ? 1 : in[2], W = in.back();
    auto aOr = convAttrsAt(attrs_, autoPad_, H, W);
    if (!aOr.ok()) return ConvKernel::Im2col;
    const ConvAttrs& a = *aOr;
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> dist(-1, 1);
    std::vector<float> x(static_cast<size_t>(N * a.C() * H * W)), y(static_cast<size_t>(N * a.M * a.outH(H) * a.outW(W)));
    for (auto& v : x) v = dist(rng);
    Scratch scratch;
    ConvKernel best = ConvKernel::Im2col;
    double bestMs = INFINITY;
    for (ConvKernel k : kAllConvKernels) {
      if (k == ConvKernel::Naive || !convKernelApplies(k, a)) continue;
      PackedWeights pw = transformConvWeights(k, a, ww.data(), bb.data());
      std::vector<double> times;
      for (int rep = 0; rep < 4; ++rep) {
        auto t0 = std::chrono::steady_clock::now();
        runConv(k, a, pw, x.data(), N, H, W, y.data(), epilogue_, scratch, threads, gemm);
        if (rep > 0) times.push_back(msSince(t0));
      }
      double ms = medianOf(times);
      if (ms < bestMs) { bestMs = ms; best = k; }
    }
    return best;
  }

  ConvAttrs attrs_;
  bool oneD_ = false;
  std::string autoPad_;
  Epilogue epilogue_;
  ConvKernel kernel_ = ConvKernel::Im2col;
  PackedWeights packed_;
  WeightInfo info_;
};

}  // namespace

Expected<std::unique_ptr<Op>> makeConv(const BuildContext& bc) { return ConvOp::make(bc); }

}  // namespace zp::runtime::detail
