// Neural-network ops: Conv, Gemm, MatMul (with kernel choices and cached weight
// transforms), pooling, normalizations, Softmax; plus the op registry.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <random>

#include <omp.h>

#include "libplan/runtime/cache/crc32c.h"
#include "libplan/runtime/ops_internal.h"
#include "libplan/runtime/cache/weight_cache.h"

namespace zp::runtime {
namespace detail {
namespace {

double msSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// A packed array that views a constant tensor (kept alive through its owner).
WeightArray viewOf(const std::string& name, const Tensor& t) {
  WeightArray a;
  a.name = name;
  a.dtype = t.dtype;
  a.count = t.size();
  a.data = t.data;
  a.owner = t.owner;
  return a;
}

bool rejectedEarlier(const BuildContext& bc, WeightInfo* info);

uint32_t crcOf(uint32_t seed, const Tensor* t) {
  if (!t) return seed;
  return crc32c(t->data, t->bytes(), seed);
}

// Resolves cached or transformed weights for a heavy node. `transform` runs only
// when the cache has no usable entry.
template <typename TransformFn>
void resolveWeights(const BuildContext& bc, const std::string& kernel, const std::string& transformName,
                    uint32_t sourceCrc, TransformFn transform, PackedWeights* packed, WeightInfo* info) {
  info->kernel = kernel;
  info->transform = transformName;
  info->sourceCrc = sourceCrc;
  info->sourceCrcKnown = true;
  const std::string& name = bc.node->name();
  if (rejectedEarlier(bc, info)) {
    // warned there
  } else if (bc.cache) {
    std::string why;
    switch (bc.cache->lookup(name, kernel, sourceCrc, packed, &why)) {
      case WeightCache::Result::Hit:
        info->fromCache = true;
        return;
      case WeightCache::Result::Corrupt:
        info->cacheCorrupt = true;
        if (bc.warnings)
          bc.warnings->push_back(fmt::format("{}: node '{}': {}; using raw ONNX weights",
                                             bc.cache->path().string(), name, why));
        break;
      case WeightCache::Result::Miss: break;
    }
  } else if (!bc.cacheRejected.empty() && bc.warnings) {
    bc.warnings->push_back(fmt::format("{}; node '{}' uses raw ONNX weights", bc.cacheRejected, name));
  }
  auto t0 = std::chrono::steady_clock::now();
  *packed = transform();
  info->transformMs = msSince(t0);
}

// A node whose cache entry an earlier session of this model found corrupt (while
// running from the cache alone) uses its raw weights; says so once.
bool rejectedEarlier(const BuildContext& bc, WeightInfo* info) {
  if (!bc.corruptNodes) return false;
  auto it = bc.corruptNodes->find(bc.node->name());
  if (it == bc.corruptNodes->end()) return false;
  info->cacheCorrupt = true;
  if (bc.warnings)
    bc.warnings->push_back(fmt::format("{}: node '{}': {}; using raw ONNX weights",
                                       bc.cache ? bc.cache->path().string() : std::string("weight cache"),
                                       bc.node->name(), it->second));
  return true;
}

// Sessions built from a cache's model skeleton: the weights of (node, kernel) as
// the cache holds them, viewed in place; their checksums are verified before the
// node first runs.
Status weightsFromCache(const BuildContext& bc, const std::string& kernel, PackedWeights* packed, WeightInfo* info) {
  const std::string& name = bc.node->name();
  const WeightCache::Entry* e = bc.cache->entry(name);
  if (!e || !bc.cache->mapped(name, kernel, info->sources, packed)) {
    std::string srcs;
    for (const auto& s : info->sources) srcs += (srcs.empty() ? "" : ", ") + s;
    if (!e) return makeError("the weight cache has no entry for this node");
    if (e->kernel != kernel) return makeError("the weight cache holds kernel {} for this node, not {}", e->kernel, kernel);
    return makeError("the weight cache holds this node's weights made from other inputs than {}", srcs);
  }
  info->kernel = kernel;
  info->transform = e->transform;
  info->sourceCrc = e->sourceCrc;
  info->sourceCrcKnown = true;
  info->fromCache = true;
  return {};
}

// The zero fraction of a heavy node's weight matrix: recorded in the cache when
// the weights are not at hand.
Expected<double> weightZeroFraction(const BuildContext& bc, const Tensor& w) {
  if (!bc.fromCacheOnly) return zeroFraction(w.ptr<float>(), w.size());
  const WeightCache::Entry* e = bc.cache->entry(bc.node->name());
  if (!e || !e->hasZeroFraction) return makeError("the weight cache has no entry for this node");
  return e->zeroFraction;
}

struct PoolGeom {
  std::vector<int64_t> kernel, strides, pads, dil;
  bool ceil = false;
  std::string autoPad = "NOTSET";
};

// Computes output size and (for auto_pad) the begin/end pads of one spatial dim.
int64_t poolOut(int64_t in, int64_t k, int64_t s, int64_t d, int64_t& pb, int64_t& pe, bool ceil,
                const std::string& autoPad) {
  const int64_t ek = d * (k - 1) + 1;
  if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    int64_t out = (in + s - 1) / s;
    int64_t total = std::max<int64_t>(0, (out - 1) * s + ek - in);
    pb = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
    pe = total - pb;
    return out;
  }
  if (autoPad == "VALID") { pb = pe = 0; }
  const int64_t span = in + pb + pe - ek;
  if (!ceil) return span / s + 1;
  int64_t out = (span + s - 1) / s + 1;
  if ((out - 1) * s >= in + pb) --out;  // last window must start inside the input or the begin padding
  return out;
}

Expected<ConvAttrs> convAttrsAt(const ConvAttrs& base, const std::string& autoPad, int64_t H, int64_t W) {
  ConvAttrs a = base;
  if (autoPad != "NOTSET" && !autoPad.empty()) {
    poolOut(H, a.kh, a.sh, a.dh, a.padT, a.padB, false, autoPad);
    poolOut(W, a.kw, a.sw, a.dw, a.padL, a.padR, false, autoPad);
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

// Gemm / MatMul with a constant 2-D right-hand side.
class ConstGemmOp : public Op {
 public:
  // isGemm: ONNX Gemm (A 2-D, transA, alpha, beta, C); else MatMul (A of any rank >= 1).
  static Expected<std::unique_ptr<Op>> make(const BuildContext& bc, bool isGemm) {
    const auto& n = *bc.node;
    const Tensor* b = bc.constInputs[1];
    if (b->dtype != DType::F32 || b->rank() != 2) return makeError("constant weight must be a float32 matrix");
    auto op = std::make_unique<ConstGemmOp>();
    op->isGemm_ = isGemm;
    const bool transB = isGemm && attrInt(n, "transB", 0) != 0;
    op->transA_ = isGemm && attrInt(n, "transA", 0) != 0;
    const float alpha = isGemm ? attrFloat(n, "alpha", 1.0f) : 1.0f;
    const float beta = isGemm ? attrFloat(n, "beta", 1.0f) : 1.0f;
    op->K_ = transB ? b->shape[1] : b->shape[0];
    op->N_ = transB ? b->shape[0] : b->shape[1];
    const Tensor* c = nullptr;
    if (isGemm && n.input_size() > 2 && !n.input(2).empty()) {
      c = bc.constInputs[2];
      if (c && !(c->size() == op->N_ && (c->rank() == 1 || (c->rank() == 2 && c->shape[0] == 1)))) c = nullptr;
      if (!c) { op->runtimeC_ = true; op->beta_ = beta; }
      if (c && c->dtype != DType::F32) return makeError("Gemm C must be float32");
    }
    op->epilogue_ = bc.epilogue;
    if (op->runtimeC_ && op->epilogue_.kind != Epilogue::None)
      return makeError("internal: activation fused into a Gemm with a runtime C");
    op->info_.sources = {n.input(1)};
    if (c) op->info_.sources.push_back(n.input(2));
    ZP_ASSIGN_OR_RETURN(op->info_.zeroFraction, weightZeroFraction(bc, *b));
    const auto& p = *bc.policy;
    GemmKernel k = op->info_.zeroFraction >= p.sparseThreshold ? GemmKernel::Sparse : GemmKernel::Blas;
    if (auto it = p.perNode.find(n.name()); it != p.perNode.end()) {
      if (!parseGemmKernel(it->second, &k)) return makeError("kernel '{}' is not a Gemm/MatMul kernel", it->second);
    } else {
      GemmKernel forced;
      if (parseGemmKernel(p.policy, &forced)) k = forced;
    }
    op->kernel_ = k;
    op->info_.packed = &op->packed_;
    if (bc.fromCacheOnly) {
      ZP_TRY(weightsFromCache(bc, gemmKernelName(k), &op->packed_, &op->info_));
      return std::unique_ptr<Op>(std::move(op));
    }
    const int64_t K = op->K_, N = op->N_;
    if (k != GemmKernel::Sparse && transB && alpha == 1.0f) {
      // [N, K] is the packed layout already: use the weights in place.
      auto t0 = std::chrono::steady_clock::now();
      rejectedEarlier(bc, &op->info_);
      std::vector<float> bv(static_cast<size_t>(N), 0.0f);
      if (c)
        for (int64_t i = 0; i < N; ++i) bv[static_cast<size_t>(i)] = beta * c->ptr<float>()[i];
      op->packed_.arrays.push_back(PackedWeights::make("bias", bv, DType::F32));
      op->packed_.arrays.push_back(viewOf("w", *b));
      op->info_.kernel = gemmKernelName(k);
      op->info_.transform = "none";
      op->info_.transformMs = msSince(t0);
      return std::unique_ptr<Op>(std::move(op));
    }
    uint32_t crc = crcOf(crcOf(0, b), c);
    resolveWeights(bc, gemmKernelName(k), gemmTransformName(k), crc, [&]() {
      return transformGemmWeights(k, K, N, b->ptr<float>(), transB, c ? c->ptr<float>() : nullptr, alpha, beta);
    }, &op->packed_, &op->info_);
    return std::unique_ptr<Op>(std::move(op));
  }

  Status run(ExecContext& ctx, const std::vector<const Tensor*>& in) override {
    const Tensor& a = *in[0];
    if (a.dtype != DType::F32) return makeError("input must be float32");
    const float* pa = a.ptr<float>();
    int64_t rows;
    Shape os;
    if (isGemm_) {
      if (a.rank() != 2) return makeError("Gemm input A must be 2-D, got {}", shapeString(a.shape));
      const int64_t ak = transA_ ? a.shape[0] : a.shape[1];
      if (ak != K_) return makeError("A {} does not match K={}", shapeString(a.shape), K_);
      rows = transA_ ? a.shape[1] : a.shape[0];
      if (transA_) {
        float* t = ctx.scratch->floats(static_cast<size_t>(a.size()), 2);
        for (int64_t i = 0; i < a.shape[0]; ++i)
          for (int64_t j = 0; j < a.shape[1]; ++j) t[j * a.shape[0] + i] = pa[i * a.shape[1] + j];
        pa = t;
      }
      os = {rows, N_};
    } else {
      if (a.rank() < 1 || a.shape.back() != K_) return makeError("A {} does not match K={}", shapeString(a.shape), K_);
      rows = a.size() / K_;
      os = a.shape;
      if (a.rank() == 1) os = {N_};
      else os.back() = N_;
    }
    Tensor& y = ctx.alloc(0, DType::F32, os);
    runGemm(kernel_, K_, N_, packed_, pa, rows, y.ptr<float>(), epilogue_, ctx.threads, ctx.gemm);
    if (runtimeC_) {
      const Tensor& c = *in[2];
      ZP_ASSIGN_OR_RETURN(Shape bs, broadcastShapes({os, c.shape}));
      if (bs != os) return makeError("C {} does not broadcast to {}", shapeString(c.shape), shapeString(os));
      Broadcast br = makeBroadcast(os, {os, c.shape});
      float* py = y.ptr<float>();
      const float* pc = c.ptr<float>();
      const float beta = beta_;
      forEachRow(br, [&](int64_t o, const int64_t* offs, int64_t len, const int64_t* st) {
        for (int64_t i = 0; i < len; ++i) py[o + i] += beta * pc[offs[1] + i * st[1]];
      });
    }
    return {};
  }

  std::string kernel() const override { return gemmKernelName(kernel_); }
  const WeightInfo* weights() const override { return &info_; }

 private:
  bool isGemm_ = false, transA_ = false, runtimeC_ = false;
  float beta_ = 1.0f;
  int64_t K_ = 0, N_ = 0;
  Epilogue epilogue_;
  GemmKernel kernel_ = GemmKernel::Blas;
  PackedWeights packed_;
  WeightInfo info_;
};

// MatMul of two activations with numpy broadcasting of batch dimensions.
Expected<Tensor*> matmulDynamic(ExecContext& ctx, const Tensor& A, const Tensor& B, float alpha, bool transA, bool transB) {
  if (A.dtype != DType::F32 || B.dtype != DType::F32) return makeError("MatMul supports float32 only");
  Shape as = A.shape, bs = B.shape;
  const bool aVec = as.size() == 1, bVec = bs.size() == 1;
  if (aVec) as.insert(as.begin(), 1);
  if (bVec) bs.push_back(1);
  const int64_t M = transA ? as[as.size() - 1] : as[as.size() - 2];
  const int64_t K = transA ? as[as.size() - 2] : as[as.size() - 1];
  const int64_t K2 = transB ? bs[bs.size() - 1] : bs[bs.size() - 2];
  const int64_t N = transB ? bs[bs.size() - 2] : bs[bs.size() - 1];
  if (K != K2) return makeError("MatMul shapes {} and {} do not match", shapeString(A.shape), shapeString(B.shape));
  Shape ab(as.begin(), as.end() - 2), bb(bs.begin(), bs.end() - 2);
  ZP_ASSIGN_OR_RETURN(Shape batch, broadcastShapes({ab, bb}));
  Shape os = batch;
  if (!aVec) os.push_back(M);
  if (!bVec) os.push_back(N);
  Tensor& y = ctx.alloc(0, DType::F32, os);
  const int64_t nb = numel(batch);
  Broadcast br = makeBroadcast(batch, {ab, bb});
  std::vector<std::pair<int64_t, int64_t>> offs;
  offs.reserve(static_cast<size_t>(nb));
  if (batch.empty()) offs.push_back({0, 0});
  else
    forEachRow(br, [&](int64_t, const int64_t* o, int64_t len, const int64_t* st) {
      for (int64_t i = 0; i < len; ++i) offs.push_back({o[0] + i * st[0], o[1] + i * st[1]});
    });
  const int64_t nBatch = static_cast<int64_t>(offs.size());
  const bool batchParallel = ctx.threads > 1 && nBatch >= ctx.threads;
#pragma omp parallel for num_threads(ctx.threads) if (batchParallel) schedule(static)
  for (int64_t i = 0; i < nBatch; ++i) {
    const float* pa = A.ptr<float>() + offs[static_cast<size_t>(i)].first * M * K;
    const float* pb = B.ptr<float>() + offs[static_cast<size_t>(i)].second * K * N;
    sgemmRowMajor(transA, transB, M, N, K, alpha, pa, transA ? M : K, pb, transB ? K : N, 0.0f,
                  y.ptr<float>() + i * M * N, N, batchParallel ? 1 : ctx.threads, ctx.gemm);
  }
  return &y;
}

Factory poolFactory(bool isMax) {
  return [isMax](const BuildContext& bc) -> Expected<std::unique_ptr<Op>> {
    const auto& n = *bc.node;
    if (n.output_size() > 1 && !n.output(1).empty()) return makeError("MaxPool Indices output is not supported");
    PoolGeom g;
    g.kernel = attrInts(n, "kernel_shape");
    g.strides = attrInts(n, "strides");
    g.pads = attrInts(n, "pads");
    g.dil = attrInts(n, "dilations");
    g.ceil = attrInt(n, "ceil_mode", 0) != 0;
    g.autoPad = attrString(n, "auto_pad", "NOTSET");
    const bool includePad = attrInt(n, "count_include_pad", 0) != 0;
    const size_t sd = g.kernel.size();
    if (sd != 1 && sd != 2) return makeError("only 1-D and 2-D pooling is supported");
    if (g.strides.empty()) g.strides.assign(sd, 1);
    if (g.dil.empty()) g.dil.assign(sd, 1);
    if (g.pads.empty()) g.pads.assign(2 * sd, 0);
    if (sd == 1) {  // treat as 2-D with a unit height
      g.kernel.insert(g.kernel.begin(), 1);
      g.strides.insert(g.strides.begin(), 1);
      g.dil.insert(g.dil.begin(), 1);
      g.pads = {0, g.pads[0], 0, g.pads[1]};
    }
    const bool oneD = sd == 1;
    return fnOp([g, isMax, includePad, oneD](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
      const Tensor& x = *in[0];
      if (x.dtype != DType::F32 || x.rank() != (oneD ? 3 : 4)) return makeError("input {} does not fit the pooling", shapeString(x.shape));
      const int64_t N = x.shape[0], C = x.shape[1], H = oneD ? 1 : x.shape[2], W = x.shape.back();
      int64_t pt = g.pads[0], pl = g.pads[1], pb = g.pads[2], pr = g.pads[3];
      const int64_t OH = poolOut(H, g.kernel[0], g.strides[0], g.dil[0], pt, pb, g.ceil, g.autoPad);
      const int64_t OW = poolOut(W, g.kernel[1], g.strides[1], g.dil[1], pl, pr, g.ceil, g.autoPad);
      if (OH <= 0 || OW <= 0) return makeError("pooling output would be empty");
      Tensor& y = ctx.alloc(0, DType::F32, oneD ? Shape{N, C, OW} : Shape{N, C, OH, OW});
      const float* px = x.ptr<float>();
      float* py = y.ptr<float>();
      const int64_t kh = g.kernel[0], kw = g.kernel[1], sh = g.strides[0], sw = g.strides[1], dh = g.dil[0], dw = g.dil[1];
      if (isMax) {
        ConvAttrs a;
        a.kh = kh; a.kw = kw; a.sh = sh; a.sw = sw; a.dh = dh; a.dw = dw; a.padT = pt; a.padL = pl;
        // ceil_mode windows may reach past the end padding: pad the end as far as they reach.
        a.padB = (OH - 1) * sh + dh * (kh - 1) + 1 - H - pt;
        a.padR = (OW - 1) * sw + dw * (kw - 1) + 1 - W - pl;
        runMaxPool(a, px, N, C, H, W, py, *ctx.scratch, ctx.threads);
        return {};
      }
#pragma omp parallel for num_threads(ctx.threads) if (ctx.threads > 1) schedule(static)
      for (int64_t nc = 0; nc < N * C; ++nc) {
        const float* src = px + nc * H * W;
        float* dst = py + nc * OH * OW;
        for (int64_t oh = 0; oh < OH; ++oh)
          for (int64_t ow = 0; ow < OW; ++ow) {
            const int64_t h0 = oh * sh - pt, w0 = ow * sw - pl;
            {
              const int64_t h1 = std::min(h0 + kh, H + pb), w1 = std::min(w0 + kw, W + pr);
              int64_t count = (h1 - h0) * (w1 - w0);
              const int64_t hs = std::max<int64_t>(h0, 0), ws = std::max<int64_t>(w0, 0);
              const int64_t he = std::min(h1, H), we = std::min(w1, W);
              if (!includePad) count = (he - hs) * (we - ws);
              float s = 0;
              for (int64_t ih = hs; ih < he; ++ih)
                for (int64_t iw = ws; iw < we; ++iw) s += src[ih * W + iw];
              dst[oh * OW + ow] = count > 0 ? s / static_cast<float>(count) : 0.0f;
            }
          }
      }
      return {};
    });
  };
}

Factory globalPoolFactory(bool isMax) {
  return [isMax](const BuildContext&) -> Expected<std::unique_ptr<Op>> {
    return fnOp([isMax](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
      const Tensor& x = *in[0];
      if (x.dtype != DType::F32 || x.rank() < 3) return makeError("input {} does not fit global pooling", shapeString(x.shape));
      Shape s = {x.shape[0], x.shape[1]};
      int64_t sp = 1;
      for (int64_t d = 2; d < x.rank(); ++d) { s.push_back(1); sp *= x.shape[static_cast<size_t>(d)]; }
      Tensor& y = ctx.alloc(0, DType::F32, s);
      const int64_t nc = x.shape[0] * x.shape[1];
      for (int64_t i = 0; i < nc; ++i) {
        const float* p = x.ptr<float>() + i * sp;
        float acc = isMax ? -INFINITY : 0.0f;
        for (int64_t j = 0; j < sp; ++j) acc = isMax ? std::max(acc, p[j]) : acc + p[j];
        y.ptr<float>()[i] = isMax ? acc : acc / static_cast<float>(sp);
      }
      return {};
    });
  };
}

Factory softmaxFactory(bool logSoftmax) {
  return [logSoftmax](const BuildContext& bc) -> Expected<std::unique_ptr<Op>> {
    const int opset = bc.opset;
    const int64_t axis = attrInt(*bc.node, "axis", opset >= 13 ? -1 : 1);
    return fnOp([=](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
      const Tensor& x = *in[0];
      if (x.dtype != DType::F32) return makeError("input must be float32");
      const int64_t a = normAxis(axis, x.rank());
      if (a < 0 || a >= std::max<int64_t>(x.rank(), 1)) return makeError("axis {} out of range", axis);
      int64_t outer = 1, len = 1, inner = 1;
      for (int64_t d = 0; d < a; ++d) outer *= x.shape[static_cast<size_t>(d)];
      if (opset >= 13) {
        len = x.rank() ? x.shape[static_cast<size_t>(a)] : 1;
        for (int64_t d = a + 1; d < x.rank(); ++d) inner *= x.shape[static_cast<size_t>(d)];
      } else {
        for (int64_t d = a; d < x.rank(); ++d) len *= x.shape[static_cast<size_t>(d)];
      }
      Tensor& y = ctx.alloc(0, DType::F32, x.shape);
      const float* px = x.ptr<float>();
      float* py = y.ptr<float>();
#pragma omp parallel for num_threads(ctx.threads) if (ctx.threads > 1 && outer * inner > 64) schedule(static)
      for (int64_t oi = 0; oi < outer * inner; ++oi) {
        const int64_t o = oi / inner, i = oi % inner;
        const float* s = px + o * len * inner + i;
        float* d = py + o * len * inner + i;
        float m = -INFINITY;
        for (int64_t k = 0; k < len; ++k) m = std::max(m, s[k * inner]);
        double sum = 0;
        for (int64_t k = 0; k < len; ++k) {
          float e = std::exp(s[k * inner] - m);
          d[k * inner] = e;
          sum += e;
        }
        if (logSoftmax) {
          const float ls = static_cast<float>(std::log(sum));
          for (int64_t k = 0; k < len; ++k) d[k * inner] = s[k * inner] - m - ls;
        } else {
          const float inv = static_cast<float>(1.0 / sum);
          for (int64_t k = 0; k < len; ++k) d[k * inner] *= inv;
        }
      }
      return {};
    });
  };
}

}  // namespace

void registerNnOps(std::map<std::string, Factory>& r) {
  r["Conv"] = [](const BuildContext& bc) { return ConvOp::make(bc); };
  r["Gemm"] = [](const BuildContext& bc) -> Expected<std::unique_ptr<Op>> {
    if (bc.constInputs.size() > 1 && bc.constInputs[1] && bc.constInputs[1]->rank() == 2) return ConstGemmOp::make(bc, true);
    const auto& n = *bc.node;
    const bool tA = attrInt(n, "transA", 0) != 0, tB = attrInt(n, "transB", 0) != 0;
    const float alpha = attrFloat(n, "alpha", 1.0f), beta = attrFloat(n, "beta", 1.0f);
    return fnOp([=](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
      if (in[0]->rank() != 2 || in[1]->rank() != 2) return makeError("Gemm inputs must be 2-D");
      ZP_ASSIGN_OR_RETURN(Tensor * y, matmulDynamic(ctx, *in[0], *in[1], alpha, tA, tB));
      if (in.size() > 2 && in[2]) {
        const Tensor& c = *in[2];
        ZP_ASSIGN_OR_RETURN(Shape bs, broadcastShapes({y->shape, c.shape}));
        if (bs != y->shape) return makeError("C {} does not broadcast to {}", shapeString(c.shape), shapeString(y->shape));
        Broadcast br = makeBroadcast(y->shape, {y->shape, c.shape});
        float* py = y->ptr<float>();
        forEachRow(br, [&](int64_t o, const int64_t* offs, int64_t len, const int64_t* st) {
          for (int64_t i = 0; i < len; ++i) py[o + i] += beta * c.ptr<float>()[offs[1] + i * st[1]];
        });
      }
      return {};
    });
  };
  r["MatMul"] = [](const BuildContext& bc) -> Expected<std::unique_ptr<Op>> {
    if (bc.constInputs.size() > 1 && bc.constInputs[1] && bc.constInputs[1]->rank() == 2 &&
        bc.constInputs[1]->dtype == DType::F32)
      return ConstGemmOp::make(bc, false);
    return fnOp([](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
      auto y = matmulDynamic(ctx, *in[0], *in[1], 1.0f, false, false);
      if (!y.ok()) return y.error();
      return {};
    });
  };
  r["MaxPool"] = poolFactory(true);
  r["AveragePool"] = poolFactory(false);
  r["GlobalAveragePool"] = globalPoolFactory(false);
  r["GlobalMaxPool"] = globalPoolFactory(true);
  r["Softmax"] = softmaxFactory(false);
  r["LogSoftmax"] = softmaxFactory(true);

  r["BatchNormalization"] = [](const BuildContext& bc) -> Expected<std::unique_ptr<Op>> {
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
  };

  r["LayerNormalization"] = [](const BuildContext& bc) -> Expected<std::unique_ptr<Op>> {
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
  };
}

const std::map<std::string, Factory>& registry() {
  static const std::map<std::string, Factory> r = [] {
    std::map<std::string, Factory> m;
    registerBasicOps(m);
    registerNnOps(m);
    return m;
  }();
  return r;
}

}  // namespace detail

const std::vector<std::string>& policyNames() {
  static const std::vector<std::string> names = {"default", "tune", "naive", "im2col", "gemm1x1",
                                                 "winograd", "depthwise", "sparse", "blas"};
  return names;
}

bool isKnownPolicy(const std::string& name) {
  const auto& n = policyNames();
  return std::find(n.begin(), n.end(), name) != n.end();
}

bool isSupportedOp(const std::string& opType) { return detail::registry().count(opType) > 0; }

bool isFusableActivation(const onnx::NodeProto& n, const std::vector<const Tensor*>& constInputs, Epilogue* out) {
  if (n.op_type() == "Relu") { out->kind = Epilogue::Relu; return true; }
  if (n.op_type() != "Clip") return false;
  float lo = attrFloat(n, "min", -INFINITY), hi = attrFloat(n, "max", INFINITY);
  for (int i = 1; i < n.input_size() && i < 3; ++i) {
    if (n.input(i).empty()) continue;
    const Tensor* t = constInputs.size() > static_cast<size_t>(i) ? constInputs[static_cast<size_t>(i)] : nullptr;
    if (!t || t->size() != 1) return false;
    (i == 1 ? lo : hi) = t->toF32()[0];
  }
  out->kind = Epilogue::Clip;
  out->lo = lo;
  out->hi = hi;
  return true;
}

Expected<std::unique_ptr<Op>> createOp(const BuildContext& bc) {
  const auto& reg = detail::registry();
  const auto& n = *bc.node;
  if (!n.domain().empty() && n.domain() != "ai.onnx")
    return makeError("{}: operator domain '{}' is not supported", detail::nodeLabel(n), n.domain());
  auto it = reg.find(n.op_type());
  if (it == reg.end()) return makeError("{}: operator '{}' is not supported", detail::nodeLabel(n), n.op_type());
  auto op = it->second(bc);
  if (!op.ok()) return makeError("{}: {}", detail::nodeLabel(n), op.error().message);
  return op;
}

}  // namespace zp::runtime
