#include "libplan/runtime/kernels/kernels.h"

#include "libplan/runtime/kernels/conv_primitives.h"
#include "libplan/runtime/kernels/internal.h"
#include "libplan/runtime/kernels/sparse.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "libplan/runtime/kernels/parallel.h"
#include "libplan/runtime/kernels/simd_target.h"

namespace zp::runtime {

// ---- helpers -------------------------------------------------------------

float* Scratch::floats(size_t count, size_t slot) {
  // slot < kSharedSlots from kernels; workerFloats passes the slots after them.
  if (blocks_.size() <= slot) blocks_.resize(slot + 1);
  auto& b = blocks_[slot];
  size_t need = std::max<size_t>(count, 1) * sizeof(float);
  if (b.bytes < need) {
    b.mem = allocAligned(need);
    b.bytes = need;
  }
  return static_cast<float*>(b.mem.get());
}

std::vector<float*> Scratch::workerFloats(int workers, size_t count, size_t slot) {
  assert(slot < kWorkerSlots);
  std::vector<float*> out(static_cast<size_t>(std::max(workers, 1)));
  for (size_t w = 0; w < out.size(); ++w) out[w] = floats(count, kSharedSlots + w * kWorkerSlots + slot);
  return out;
}

std::vector<size_t> Scratch::sizes() const {
  std::vector<size_t> out;
  for (const auto& b : blocks_) out.push_back(b.bytes);
  return out;
}

void Scratch::reserve(const std::vector<size_t>& bytes) {
  if (blocks_.size() < bytes.size()) blocks_.resize(bytes.size());
  for (size_t s = 0; s < bytes.size(); ++s)
    if (blocks_[s].bytes < bytes[s]) {
      blocks_[s].mem = allocAligned(bytes[s]);
      blocks_[s].bytes = bytes[s];
    }
}

std::vector<std::pair<void*, size_t>> Scratch::blocks() const {
  std::vector<std::pair<void*, size_t>> out;
  for (const auto& b : blocks_)
    if (b.mem) out.push_back({b.mem.get(), b.bytes});
  return out;
}

size_t Scratch::bytes() const {
  size_t s = 0;
  for (const auto& b : blocks_) s += b.bytes;
  return s;
}

const WeightArray* PackedWeights::find(const std::string& name) const {
  for (const auto& a : arrays)
    if (a.name == name) return &a;
  return nullptr;
}

const WeightArray& PackedWeights::get(const std::string& name) const {
  const WeightArray* a = find(name);
  assert(a && "packed weight array missing");
  return *a;
}

size_t PackedWeights::bytes() const {
  size_t s = 0;
  for (const auto& a : arrays) s += a.bytes();
  return s;
}

template <typename T>
WeightArray PackedWeights::make(std::string name, const std::vector<T>& values, DType dtype) {
  WeightArray a;
  a.name = std::move(name);
  a.dtype = dtype;
  a.count = static_cast<int64_t>(values.size());
  a.owner = allocAligned(values.size() * sizeof(T));
  if (!values.empty()) std::memcpy(a.owner.get(), values.data(), values.size() * sizeof(T));
  a.data = a.owner.get();
  return a;
}
template WeightArray PackedWeights::make<float>(std::string, const std::vector<float>&, DType);
template WeightArray PackedWeights::make<int32_t>(std::string, const std::vector<int32_t>&, DType);

double zeroFraction(const float* w, int64_t n) {
  if (n <= 0) return 0;
  int64_t z = 0;
  for (int64_t i = 0; i < n; ++i) z += (w[i] == 0.0f);
  return static_cast<double>(z) / static_cast<double>(n);
}

void applyEpilogue(float* y, int64_t channels, int64_t perChannel, const float* bias, const Epilogue& e,
                   const float* residual) {
  if (residual) {
    assert(e.clampOnly());
    const float lo = e.kind == Epilogue::None ? -INFINITY : e.kind == Epilogue::Relu ? 0.0f : e.lo;
    const float hi = e.kind == Epilogue::Clip ? e.hi : INFINITY;
    for (int64_t c = 0; c < channels; ++c) {
      float* p = y + c * perChannel;
      const float* r = residual + c * perChannel;
      const float b = bias ? bias[c] : 0.0f;
      // As the unfused nodes round: the conv's sum with its bias, then the Add.
      if (bias)
        for (int64_t i = 0; i < perChannel; ++i) p[i] = std::min(std::max((p[i] + b) + r[i], lo), hi);
      else
        for (int64_t i = 0; i < perChannel; ++i) p[i] = std::min(std::max(p[i] + r[i], lo), hi);
    }
    return;
  }
  if (!bias && e.kind == Epilogue::None) return;
  for (int64_t c = 0; c < channels; ++c) {
    float* p = y + c * perChannel;
    const float b = bias ? bias[c] : 0.0f;
    switch (e.kind) {
      case Epilogue::None: for (int64_t i = 0; i < perChannel; ++i) p[i] += b; break;
      case Epilogue::Relu:
        for (int64_t i = 0; i < perChannel; ++i) { float v = p[i] + b; p[i] = v > 0 ? v : 0; }
        break;
      case Epilogue::Clip:
        for (int64_t i = 0; i < perChannel; ++i) p[i] = std::min(std::max(p[i] + b, e.lo), e.hi);
        break;
      case Epilogue::Function: applyActivation(e.fn, e.params, p, p, perChannel, b); break;
    }
  }
}

void applyEpilogueParallel(float* y, int64_t channels, int64_t perChannel, const float* bias, const Epilogue& e,
                           int threads, const float* residual) {
  if (!bias && !residual && e.kind == Epilogue::None) return;
  parallelForEach(channels * perChannel > 16384 ? threads : 1, channels, [&](int64_t c, int) {
    applyEpilogue(y + c * perChannel, 1, perChannel, bias ? bias + c : nullptr, e,
                  residual ? residual + c * perChannel : nullptr);
  });
}

// ---- Conv: names and applicability -------------------------------------

const char* convKernelName(ConvKernel k) {
  switch (k) {
    case ConvKernel::Naive: return "naive";
    case ConvKernel::Im2col: return "im2col";
    case ConvKernel::Gemm1x1: return "gemm1x1";
    case ConvKernel::Winograd: return "winograd";
    case ConvKernel::Depthwise: return "depthwise";
    case ConvKernel::Sparse: return "sparse";
    case ConvKernel::Packed1x1: return "packed1x1";
    case ConvKernel::Direct: return "direct";
    case ConvKernel::OneDnn: return "onednn";
    case ConvKernel::DirectRows: return "direct_rows";
  }
  return "?";
}

bool parseConvKernel(const std::string& name, ConvKernel* out) {
  for (ConvKernel k : kAllConvKernels)
    if (name == convKernelName(k)) { *out = k; return true; }
  return false;
}

const char* convTransformName(ConvKernel k) {
  switch (k) {
    case ConvKernel::Naive: return "copy";
    case ConvKernel::Im2col: return "pack_gemm";
    case ConvKernel::Gemm1x1: return "pack_gemm";
    case ConvKernel::Winograd: return "winograd_f2x2_3x3";
    case ConvKernel::Depthwise: return "copy";
    case ConvKernel::Sparse: return kSparseConvTransform;
    case ConvKernel::Packed1x1: return "pack_m32_k";
    case ConvKernel::Direct: return "transpose_m16_k";
    case ConvKernel::OneDnn: return "copy";
    case ConvKernel::DirectRows: return "pack_m8_k";
  }
  return "?";
}

static bool isPointwise(const ConvAttrs& a) {
  return a.kh == 1 && a.kw == 1 && a.padT == 0 && a.padL == 0 && a.padB == 0 && a.padR == 0;
}

bool convKernelApplies(ConvKernel k, const ConvAttrs& a) {
  switch (k) {
    case ConvKernel::Naive: case ConvKernel::Im2col: case ConvKernel::Sparse: return true;
    case ConvKernel::Gemm1x1: return isPointwise(a);
    case ConvKernel::Winograd:
      return a.group == 1 && a.kh == 3 && a.kw == 3 && a.sh == 1 && a.sw == 1 && a.dh == 1 && a.dw == 1;
    case ConvKernel::Depthwise: return a.Cg == 1 && a.group > 1 && a.M % a.group == 0;
    case ConvKernel::Packed1x1: return a.group == 1 && convKernelApplies(ConvKernel::Gemm1x1, a);
    case ConvKernel::Direct: return directConvApplies(a);
    case ConvKernel::OneDnn: return a.group == 1 || a.Cg > 1;  // depthwise has a kernel of its own
    case ConvKernel::DirectRows: return directRowsApplies(a);
  }
  return false;
}

bool prepareConvKernel(ConvKernel k, const ConvAttrs& a, int64_t N, int64_t H, int64_t W, PackedWeights* pw) {
  if (k != ConvKernel::OneDnn) return true;
  pw->onednn = ConvPrimitives::make(a, N, H, W, pw->get("w").as<float>());
  return pw->onednn != nullptr;
}

// ---- Conv: weight transforms ---------------------------------------------

static std::vector<float> biasOrZero(const float* bias, int64_t M) {
  std::vector<float> b(static_cast<size_t>(M), 0.0f);
  if (bias) std::copy(bias, bias + M, b.begin());
  return b;
}

PackedWeights transformConvWeights(ConvKernel k, const ConvAttrs& a, const float* w, const float* bias) {
  assert(convKernelApplies(k, a) && a.group > 0 && a.M % a.group == 0);
  PackedWeights pw;
  const int64_t K = a.Cg * a.kh * a.kw;
  const int64_t total = a.M * K;
  pw.arrays.push_back(PackedWeights::make("bias", biasOrZero(bias, a.M), DType::F32));
  switch (k) {
    case ConvKernel::Naive: case ConvKernel::Im2col: case ConvKernel::Gemm1x1: case ConvKernel::Depthwise:
    case ConvKernel::OneDnn:
      // [M, Cg*kh*kw] row-major: group g's rows form the GEMM's A operand.
      pw.arrays.push_back(PackedWeights::make("w", std::vector<float>(w, w + total), DType::F32));
      break;
    case ConvKernel::Winograd:
      pw.arrays.push_back(PackedWeights::make("U", winogradWeights(a, w), DType::F32));
      break;
    case ConvKernel::Sparse: sparseConvWeights(a, w, &pw); break;
    case ConvKernel::Packed1x1:
      pw.arrays.push_back(PackedWeights::make("wp", packPointwiseWeights(a, w), DType::F32));
      break;
    case ConvKernel::Direct:
      pw.arrays.push_back(PackedWeights::make("wd", directConvWeights(a, w), DType::F32));
      break;
    case ConvKernel::DirectRows:
      pw.arrays.push_back(PackedWeights::make("wr", directRowsWeights(a, w), DType::F32));
      break;
  }
  return pw;
}

// ---- Conv: kernels --------------------------------------------------------

static void convNaive(const ConvAttrs& a, const float* w, const float* bias, const float* x, int64_t N, int64_t H,
                      int64_t W, float* y, const Epilogue& e, int threads) {
  const int64_t OH = a.outH(H), OW = a.outW(W), C = a.C(), Mg = a.M / a.group;
  parallelForEach(threads, N * a.M, [&](int64_t nm, int) {
      const int64_t n = nm / a.M, m = nm % a.M;
      const int64_t g = m / Mg;
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double s = 0;
          for (int64_t c = 0; c < a.Cg; ++c)
            for (int64_t i = 0; i < a.kh; ++i) {
              int64_t ih = oh * a.sh - a.padT + i * a.dh;
              if (ih < 0 || ih >= H) continue;
              for (int64_t j = 0; j < a.kw; ++j) {
                int64_t iw = ow * a.sw - a.padL + j * a.dw;
                if (iw < 0 || iw >= W) continue;
                s += static_cast<double>(x[((n * C + g * a.Cg + c) * H + ih) * W + iw]) *
                     w[((m * a.Cg + c) * a.kh + i) * a.kw + j];
              }
            }
          y[((n * a.M + m) * OH + oh) * OW + ow] = actOne(static_cast<float>(s) + bias[m], e);
        }
  });
}

// col[(c*kh + i)*kw + j][(oh - oh0)*OW + ow] for Cg channels starting at x and
// output rows [oh0, oh1); rows of col `ld` floats apart ((oh1 - oh0)*OW: one
// image's columns; more: images side by side).
static void im2colRows(const ConvAttrs& a, const float* x, int64_t H, int64_t W, int64_t oh0, int64_t oh1, float* col,
                       int threads, int64_t ld) {
  const int64_t OW = a.outW(W), rows = a.Cg * a.kh * a.kw;
  parallelForEach(rows * (oh1 - oh0) * OW > 32768 ? threads : 1, rows, [&](int64_t r, int) {
    const int64_t c = r / (a.kh * a.kw), i = (r / a.kw) % a.kh, j = r % a.kw;
    float* dst = col + r * ld;
    const float* src = x + c * H * W;
    // ow range with iw inside [0, W): iw = ow*sw - padL + j*dw
    const int64_t off = j * a.dw - a.padL;
    int64_t lo = off >= 0 ? 0 : (-off + a.sw - 1) / a.sw;
    int64_t hi = (W - off + a.sw - 1) / a.sw;  // first ow with iw >= W
    lo = std::min(lo, OW);
    hi = std::max(std::min(hi, OW), lo);
    for (int64_t oh = oh0; oh < oh1; ++oh) {
      const int64_t ih = oh * a.sh - a.padT + i * a.dh;
      float* d = dst + (oh - oh0) * OW;
      if (ih < 0 || ih >= H) { std::memset(d, 0, static_cast<size_t>(OW) * 4); continue; }
      const float* s = src + ih * W;
      for (int64_t ow = 0; ow < lo; ++ow) d[ow] = 0;
      if (a.sw == 1) std::memcpy(d + lo, s + lo + off, static_cast<size_t>(hi - lo) * 4);
      else if (a.sw == 2) copyEven(s + off, lo, hi, d);
      else
        for (int64_t ow = lo; ow < hi; ++ow) d[ow] = s[ow * a.sw + off];
      for (int64_t ow = hi; ow < OW; ++ow) d[ow] = 0;
    }
  });
}

static void im2col(const ConvAttrs& a, const float* x, int64_t H, int64_t W, float* col, int threads, int64_t ld = 0) {
  const int64_t OH = a.outH(H), OW = a.outW(W);
  im2colRows(a, x, H, W, 0, OH, col, threads, ld == 0 ? OH * OW : ld);
}

// Whether a group's GEMM needs its columns copied (everything but 1x1 stride 1 unpadded).
static bool needsColumns(const ConvAttrs& a) { return !(isPointwise(a) && a.sh == 1 && a.sw == 1); }

// The B operand of group g's GEMM: the input itself for 1x1 stride 1 without
// padding, else written to `col` (Cg*kh*kw rows of OH*OW): a subsampled copy for
// strided 1x1, im2col otherwise.
static const float* convColumns(const ConvAttrs& a, const float* xg, int64_t H, int64_t W, float* col, int threads) {
  const int64_t OH = a.outH(H), OW = a.outW(W);
  if (!needsColumns(a)) return xg;
  if (isPointwise(a)) {
    parallelForEach(threads, a.Cg, [&](int64_t c, int) {
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow)
          col[(c * OH + oh) * OW + ow] = xg[(c * H + oh * a.sh) * W + ow * a.sw];
    });
    return col;
  }
  im2col(a, xg, H, W, col, threads);
  return col;
}

// Below this many output positions per image, a batch's images share one GEMM:
// a product that narrow is dominated by the GEMM call's fixed cost.
constexpr int64_t kBatchedGemmMaxPositions = 256;

// Group g of every image in one GEMM: columns of image n at n*P of each row, the
// product [Mg, N*P] scattered back to each image's output planes.
static void convGemmBatched(const ConvAttrs& a, const float* w, const float* bias, const float* x, int64_t N,
                            int64_t H, int64_t W, float* y, const Epilogue& e, Scratch& scratch, int threads,
                            GemmLibrary gemm, const float* residual) {
  const int64_t OH = a.outH(H), OW = a.outW(W), P = OH * OW, K = a.Cg * a.kh * a.kw, Mg = a.M / a.group;
  const int64_t NP = N * P;
  float* col = scratch.floats(static_cast<size_t>(K * NP));
  float* out = scratch.floats(static_cast<size_t>(Mg * NP), 1);
  const bool pointwise = isPointwise(a);
  for (int64_t g = 0; g < a.group; ++g) {
    for (int64_t n = 0; n < N; ++n) {
      const float* xg = x + (n * a.C() + g * a.Cg) * H * W;
      if (!pointwise) {
        im2col(a, xg, H, W, col + n * P, threads, NP);
        continue;
      }
      for (int64_t c = 0; c < a.Cg; ++c)
        for (int64_t oh = 0; oh < OH; ++oh)
          for (int64_t ow = 0; ow < OW; ++ow) col[c * NP + n * P + oh * OW + ow] = xg[(c * H + oh * a.sh) * W + ow * a.sw];
    }
    sgemmRowMajor(false, false, Mg, NP, K, 1.0f, w + g * Mg * K, K, col, NP, 0.0f, out, NP, threads, gemm);
    for (int64_t n = 0; n < N; ++n) {
      float* yg = y + (n * a.M + g * Mg) * P;
      for (int64_t m = 0; m < Mg; ++m) std::memcpy(yg + m * P, out + m * NP + n * P, static_cast<size_t>(P) * 4);
      applyEpilogueParallel(yg, Mg, P, bias + g * Mg, e, threads,
                            residual ? residual + (yg - y) : nullptr);
    }
  }
}

// Above this many bytes of one image's columns, im2col and the GEMM go a few output
// rows at a time (one thread per tile). Measured with DenseNet-121's and
// Inception-v3's 3x3 convs at one thread: tiles of 1-2 MB cut their time 3-10 %
// against whole images (14 MB of columns for a 56x56 map of 128 channels), tiles
// of 128-256 KB are slower (each GEMM call packs its weights again).
constexpr int64_t kColumnTileBytes = int64_t{1} << 20;

// One image's group as GEMMs over a few output rows at a time, each thread with its
// own rows: the columns im2col writes are read back by the GEMM from cache, where
// a whole image's columns come from memory.
static void convGemmRowTiles(const ConvAttrs& a, const float* w, const float* xg, int64_t H, int64_t W, float* yg,
                             Scratch& scratch, int threads, GemmLibrary gemm) {
  const int64_t OH = a.outH(H), OW = a.outW(W), P = OH * OW, K = a.Cg * a.kh * a.kw, Mg = a.M / a.group;
  // Smaller tiles rather than idle threads (as many as the product's parts).
  const int parts = gemmSplitParts(gemm, threads);
  const int64_t rowsPerTile = std::clamp<int64_t>(kColumnTileBytes / (K * OW * 4), 1, (OH + parts - 1) / parts);
  const int64_t tiles = (OH + rowsPerTile - 1) / rowsPerTile;
  const int workers = static_cast<int>(std::min<int64_t>(threads, tiles));
  const int64_t tileFloats = K * rowsPerTile * OW;
  const std::vector<float*> cols = scratch.workerFloats(workers, static_cast<size_t>(tileFloats));
  parallelForEach(workers, tiles, [&](int64_t t, int worker) {
    const int64_t oh0 = t * rowsPerTile, oh1 = std::min(OH, oh0 + rowsPerTile), n = (oh1 - oh0) * OW;
    float* col = cols[static_cast<size_t>(worker)];
    im2colRows(a, xg, H, W, oh0, oh1, col, 1, n);
    sgemmRowMajor(false, false, Mg, n, K, 1.0f, w, K, col, n, 0.0f, yg + oh0 * OW, P, 1, gemm);
  }, 1);
}

// A grouped conv's groups side by side, each on one thread: one group's product is
// too small to split well (RegNet's 16-channel groups: 16 x 144 weights). RegNet-X-400MF
// at two threads: 10.6 -> 8.3 ms, ResNeXt-50 32x4d 56.7 -> 50.8 ms.
static void convGemmGroups(const ConvAttrs& a, const float* w, const float* bias, const float* x, int64_t N, int64_t H,
                           int64_t W, float* y, const Epilogue& e, Scratch& scratch, int threads, GemmLibrary gemm,
                           const float* residual) {
  const int64_t OH = a.outH(H), OW = a.outW(W), P = OH * OW, K = a.Cg * a.kh * a.kw, Mg = a.M / a.group;
  const int64_t colFloats = needsColumns(a) ? K * P : 0;
  const std::vector<float*> cols =
      colFloats ? scratch.workerFloats(threads, static_cast<size_t>(colFloats)) : std::vector<float*>{};
  parallelForEach(threads, N * a.group, [&](int64_t ng, int worker) {
    const int64_t n = ng / a.group, g = ng % a.group;
    const float* xg = x + (n * a.C() + g * a.Cg) * H * W;
    float* yg = y + (n * a.M + g * Mg) * P;
    const float* b = convColumns(a, xg, H, W, colFloats ? cols[static_cast<size_t>(worker)] : nullptr, 1);
    sgemmRowMajor(false, false, Mg, P, K, 1.0f, w + g * Mg * K, K, b, P, 0.0f, yg, P, 1, gemm);
    applyEpilogueParallel(yg, Mg, P, bias + g * Mg, e, 1, residual ? residual + (yg - y) : nullptr);
  }, 1);
}

static void convGemm(const ConvAttrs& a, const PackedWeights& pw, const float* x, int64_t N, int64_t H, int64_t W,
                     float* y, const Epilogue& e, Scratch& scratch, int threads, GemmLibrary gemm,
                     const float* residual = nullptr) {
  const int64_t OH = a.outH(H), OW = a.outW(W), P = OH * OW, K = a.Cg * a.kh * a.kw, Mg = a.M / a.group;
  const float* w = pw.get("w").as<float>();
  const float* bias = pw.get("bias").as<float>();
  if (N > 1 && P <= kBatchedGemmMaxPositions)
    return convGemmBatched(a, w, bias, x, N, H, W, y, e, scratch, threads, gemm, residual);
  // Whole groups per thread: their products' extents differ from the row tiles' one
  // thread uses, so only with a library whose results do not depend on them.
  if (threads > 1 && a.group >= threads && gemmSplitsFreely(gemm))
    return convGemmGroups(a, w, bias, x, N, H, W, y, e, scratch, threads, gemm, residual);
  const bool rowTiles = !isPointwise(a) && K * P * 4 > kColumnTileBytes;
  float* col = needsColumns(a) && !rowTiles ? scratch.floats(static_cast<size_t>(K * P)) : nullptr;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t g = 0; g < a.group; ++g) {
      const float* xg = x + (n * a.C() + g * a.Cg) * H * W;
      float* yg = y + (n * a.M + g * Mg) * P;
      if (rowTiles) {
        convGemmRowTiles(a, w + g * Mg * K, xg, H, W, yg, scratch, threads, gemm);
      } else {
        const float* b = convColumns(a, xg, H, W, col, threads);
        sgemmRowMajor(false, false, Mg, P, K, 1.0f, w + g * Mg * K, K, b, P, 0.0f, yg, P, threads, gemm);
      }
      applyEpilogueParallel(yg, Mg, P, bias + g * Mg, e, threads, residual ? residual + (yg - y) : nullptr);
    }
}

bool convTakesBlockedInput(ConvKernel k, const ConvAttrs& a) {
  const int64_t b = simdFloatLanes();
  switch (k) {
    case ConvKernel::Packed1x1: return a.sh == 1 && a.sw == 1 && a.C() % b == 0 && a.group == 1;
    case ConvKernel::Depthwise: return depthwiseBlockedPays(a) && a.C() % b == 0;
    default: return false;
  }
}

bool convTakesBlockedOutput(ConvKernel k, const ConvAttrs& a) {
  const int64_t b = simdFloatLanes();
  switch (k) {
    case ConvKernel::Packed1x1: return a.M % b == 0 && a.group == 1;
    case ConvKernel::Depthwise: return depthwiseBlockedPays(a) && a.M % b == 0;
    case ConvKernel::Direct: return directConvWritesBlocks(a) && a.M % b == 0;
    default: return false;
  }
}

void runConv(ConvKernel k, const ConvAttrs& a, const PackedWeights& pw, const float* x, int64_t N, int64_t H,
             int64_t W, float* y, const Epilogue& e, Scratch& scratch, int threads, GemmLibrary gemm,
             BlockedLayouts layouts, const float* residual) {
  threads = std::max(1, threads);
  assert(!layouts.blockedInput || convTakesBlockedInput(k, a));
  assert(!layouts.blockedOutput || convTakesBlockedOutput(k, a));
  assert(!residual || (e.clampOnly() && !layouts.blockedOutput && residual != y));
  // The residual goes in where a kernel writes its outputs: the GEMM's epilogue pass,
  // the packed pointwise kernel's tiles, Winograd's output transform, oneDNN's bands.
  // The other kernels finish their sums with the bias alone, and one pass after them
  // adds it and clamps.
  const bool residualPass =
      residual && !(k == ConvKernel::Im2col || k == ConvKernel::Gemm1x1 || k == ConvKernel::Packed1x1 ||
                    k == ConvKernel::Winograd || k == ConvKernel::OneDnn);
  const Epilogue ek = residualPass ? Epilogue{} : e;
  // Winograd and sparse clamp in their own loops; an activation function runs over
  // their output planes afterwards.
  const Epilogue clamp = ek.clampOnly() ? ek : Epilogue{};
  switch (k) {
    case ConvKernel::Naive:
      convNaive(a, pw.get("w").as<float>(), pw.get("bias").as<float>(), x, N, H, W, y, ek, threads);
      break;
    case ConvKernel::Im2col: case ConvKernel::Gemm1x1:
      convGemm(a, pw, x, N, H, W, y, ek, scratch, threads, gemm, residual);
      return;
    case ConvKernel::Depthwise:  // blocks only on the blocked kernel, which pays wherever it applies
      if (layouts.any()) convDepthwiseBlocked(a, pw, x, N, H, W, y, ek, scratch, threads, layouts);
      else convDepthwise(a, pw, x, N, H, W, y, ek, scratch, threads);
      break;
    case ConvKernel::Winograd: convWinograd(a, pw, x, N, H, W, y, clamp, scratch, threads, gemm, residual); break;
    case ConvKernel::Sparse: convSparse(a, pw, x, N, H, W, y, clamp, scratch, threads); break;
    case ConvKernel::Packed1x1:
      convPointwisePacked(a, pw, x, N, H, W, y, ek, scratch, threads, layouts, residual);
      return;
    case ConvKernel::Direct:
      convDirect(a, pw.get("wd").as<float>(), pw.get("bias").as<float>(), x, N, H, W, y, ek, scratch, threads,
                 layouts.blockedOutput);
      break;
    case ConvKernel::DirectRows:
      convDirectRows(a, pw.get("wr").as<float>(), pw.get("bias").as<float>(), x, N, H, W, y, ek, scratch, threads);
      break;
    case ConvKernel::OneDnn:
      // Without primitives for this shape the same weights run im2col.
      if (pw.onednn && pw.onednn->fits(N, H, W))
        pw.onednn->run(x, pw.get("bias").as<float>(), ek, y, scratch, threads, residual);
      else
        convGemm(a, pw, x, N, H, W, y, ek, scratch, threads, gemm, residual);
      return;
  }
  const int64_t plane = a.outH(H) * a.outW(W);
  if (residualPass) {
    applyEpilogueParallel(y, N * a.M, plane, nullptr, e, threads, residual);
  } else if (k == ConvKernel::Winograd || k == ConvKernel::Sparse) {
    if (!e.clampOnly())
      parallelForEach(threads, N * a.M, [&](int64_t i, int) {
        applyActivation(e.fn, e.params, y + i * plane, y + i * plane, plane);
      });
  }
}

// ---- Gemm with constant weights ------------------------------------------

const char* gemmKernelName(GemmKernel k) {
  switch (k) {
    case GemmKernel::Naive: return "naive";
    case GemmKernel::Blas: return "blas";
    case GemmKernel::Sparse: return "sparse";
  }
  return "?";
}

bool parseGemmKernel(const std::string& name, GemmKernel* out) {
  for (GemmKernel k : kAllGemmKernels)
    if (name == gemmKernelName(k)) { *out = k; return true; }
  return false;
}

const char* gemmTransformName(GemmKernel k) {
  switch (k) {
    case GemmKernel::Naive: return "transpose_nk";
    case GemmKernel::Blas: return "transpose_nk";
    case GemmKernel::Sparse: return "csr_nk";
  }
  return "?";
}

PackedWeights transformGemmWeights(GemmKernel k, int64_t K, int64_t N, const float* b, bool bTransposed,
                                   const float* bias, float alpha, float beta) {
  PackedWeights pw;
  std::vector<float> bvec(static_cast<size_t>(N), 0.0f);
  if (bias)
    for (int64_t n = 0; n < N; ++n) bvec[static_cast<size_t>(n)] = beta * bias[n];
  pw.arrays.push_back(PackedWeights::make("bias", bvec, DType::F32));
  // [N, K] row-major: row n holds the weights of output n.
  std::vector<float> wt(static_cast<size_t>(N * K));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t kk = 0; kk < K; ++kk)
      wt[static_cast<size_t>(n * K + kk)] = alpha * (bTransposed ? b[n * K + kk] : b[kk * N + n]);
  if (k != GemmKernel::Sparse) {
    pw.arrays.push_back(PackedWeights::make("w", wt, DType::F32));
    return pw;
  }
  std::vector<int32_t> rowptr(static_cast<size_t>(N + 1), 0), cols;
  std::vector<float> vals;
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t kk = 0; kk < K; ++kk) {
      float v = wt[static_cast<size_t>(n * K + kk)];
      if (v != 0.0f) { cols.push_back(static_cast<int32_t>(kk)); vals.push_back(v); }
    }
    rowptr[static_cast<size_t>(n + 1)] = static_cast<int32_t>(vals.size());
  }
  pw.arrays.push_back(PackedWeights::make("rowptr", rowptr, DType::I32));
  pw.arrays.push_back(PackedWeights::make("cols", cols, DType::I32));
  pw.arrays.push_back(PackedWeights::make("vals", vals, DType::F32));
  return pw;
}

// Below this many outputs a second thread's start costs more than half the epilogue.
constexpr int64_t kParallelEpilogueValues = 32768;

void runGemm(GemmKernel k, int64_t K, int64_t N, const PackedWeights& pw, const float* x, int64_t rows, float* y,
             const Epilogue& e, int threads, GemmLibrary gemm) {
  threads = std::max(1, threads);
  const float* bias = pw.get("bias").as<float>();
  switch (k) {
    case GemmKernel::Naive: {
      const float* w = pw.get("w").as<float>();
      parallelForEach(threads, rows * N, [&](int64_t rn, int) {
        const int64_t r = rn / N, n = rn % N;
        double s = 0;
        for (int64_t kk = 0; kk < K; ++kk) s += static_cast<double>(x[r * K + kk]) * w[n * K + kk];
        y[r * N + n] = actOne(static_cast<float>(s) + bias[n], e);
      });
      return;
    }
    case GemmKernel::Blas: {
      const float* w = pw.get("w").as<float>();
      if (rows == 1 && K > 0) {
        const int64_t parts = N * K >= 262144 ? gemmSplitParts(gemm, threads) : 1;
        const int64_t chunk = (N + parts - 1) / parts;
        parallelForEach(threads, parts, [&](int64_t t, int) {
          const int64_t lo = t * chunk, hi = std::min(N, lo + chunk);
          if (lo < hi)
            sgemmRowMajor(false, true, 1, hi - lo, K, 1.0f, x, K, w + lo * K, K, 0.0f, y + lo, N, 1, gemm);
        }, 1);
      } else {
        sgemmRowMajor(false, true, rows, N, K, 1.0f, x, K, w, K, 0.0f, y, N, threads, gemm);
      }
      // The epilogue on every thread too: a GELU over a ConvNeXt or ViT MLP's
      // output costs a third of its product.
      const int epilogueThreads = rows * N >= kParallelEpilogueValues ? threads : 1;
      parallelForEach(epilogueThreads, rows, [&](int64_t r, int) { biasAndActivate(y + r * N, bias, N, e); });
      return;
    }
    case GemmKernel::Sparse: {
      const int32_t* rowptr = pw.get("rowptr").as<int32_t>();
      const int32_t* cols = pw.get("cols").as<int32_t>();
      const float* vals = pw.get("vals").as<float>();
      parallelForEach(threads, rows * N, [&](int64_t rn, int) {
        const int64_t r = rn / N, n = rn % N;
        const float* xr = x + r * K;
        float s = 0;
        for (int32_t z = rowptr[n]; z < rowptr[n + 1]; ++z) s += vals[z] * xr[cols[z]];
        y[r * N + n] = actOne(s + bias[n], e);
      });
      return;
    }
  }
}

}  // namespace zp::runtime
