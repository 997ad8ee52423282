#include "libplan/runtime/kernels.h"

#include "libplan/runtime/kernels_sparse.h"

#include <fmt/format.h>
#include <oneapi/dnnl/dnnl.h>
#include <blis.h>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include <omp.h>
#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#endif
#include <unistd.h>

namespace zp::runtime {

// ---- helpers -------------------------------------------------------------

float* Scratch::floats(size_t count, size_t slot) {
  if (blocks_.size() <= slot) blocks_.resize(slot + 1);
  auto& b = blocks_[slot];
  size_t need = std::max<size_t>(count, 1) * sizeof(float);
  if (b.bytes < need) {
    b.mem = allocAligned(need);
    b.bytes = need;
  }
  return static_cast<float*>(b.mem.get());
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

// oneDNN runs on OpenMP's default team size; the runtime's own parallel regions
// name their thread counts, so one thread here keeps a GEMM from spawning its own.
// JIT profiling (VTune/perf registration of every generated kernel) is off: it costs
// a cold start several milliseconds and nothing here reads it.
void useSingleThreadedGemm() {
  static const bool configured = [] {
    dnnl_set_jit_profiling_flags(DNNL_JIT_PROFILE_NONE);
    return true;
  }();
  (void)configured;
  omp_set_num_threads(1);
}

const char* gemmLibraryKey(GemmLibrary g) {
  return g == GemmLibrary::Blis ? "blis" : "onednn";
}

bool parseGemmLibrary(const std::string& key, GemmLibrary* out) {
  for (GemmLibrary g : kAllGemmLibraries)
    if (key == gemmLibraryKey(g)) { *out = g; return true; }
  return false;
}

std::string gemmLibraryName(GemmLibrary gemm) {
  if (gemm == GemmLibrary::Blis)
    return fmt::format("BLIS {} sgemm ({})", bli_info_get_version_str(), bli_arch_string(bli_arch_query_id()));
  const dnnl_version_t* v = dnnl_version();
  const char* isa = "generic";
  switch (dnnl_get_effective_cpu_isa()) {
    case dnnl_cpu_isa_sse41: isa = "sse41"; break;
    case dnnl_cpu_isa_avx: isa = "avx"; break;
    case dnnl_cpu_isa_avx2: isa = "avx2"; break;
    case dnnl_cpu_isa_avx2_vnni: isa = "avx2_vnni"; break;
    case dnnl_cpu_isa_avx512_core: isa = "avx512_core"; break;
    case dnnl_cpu_isa_avx512_core_vnni: isa = "avx512_core_vnni"; break;
    case dnnl_cpu_isa_avx512_core_bf16: isa = "avx512_core_bf16"; break;
    case dnnl_cpu_isa_avx512_core_amx: isa = "avx512_core_amx"; break;
    default: break;
  }
  return fmt::format("oneDNN {}.{}.{} sgemm ({})", v->major, v->minor, v->patch, isa);
}

double zeroFraction(const float* w, int64_t n) {
  if (n <= 0) return 0;
  int64_t z = 0;
  for (int64_t i = 0; i < n; ++i) z += (w[i] == 0.0f);
  return static_cast<double>(z) / static_cast<double>(n);
}

static inline float actOne(float v, const Epilogue& e) {
  if (e.kind == Epilogue::Relu) return v > 0 ? v : 0;
  if (e.kind == Epilogue::Clip) return std::min(std::max(v, e.lo), e.hi);
  return v;
}

void applyEpilogue(float* y, int64_t channels, int64_t perChannel, const float* bias, const Epilogue& e) {
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
    }
  }
}

static void applyEpilogueParallel(float* y, int64_t channels, int64_t perChannel, const float* bias,
                                  const Epilogue& e, int threads) {
  if (!bias && e.kind == Epilogue::None) return;
#pragma omp parallel for num_threads(threads) if (threads > 1 && channels * perChannel > 16384) schedule(static)
  for (int64_t c = 0; c < channels; ++c) applyEpilogue(y + c * perChannel, 1, perChannel, bias ? bias + c : nullptr, e);
}

// oneDNN picks its kernels from the CPU it finds (JIT), where Debian's OpenBLAS
// 0.3.21 falls back to SSE3 on cores it does not know. BLIS picks among its
// compiled kernels (its own CPU detection).
static void sgemmOne(GemmLibrary gemm, bool transA, bool transB, int64_t M, int64_t N, int64_t K, float alpha,
                     const float* A, int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
  if (gemm == GemmLibrary::Blis) {
    // BLIS takes row and column strides; its API is not const-correct.
    bli_sgemm(transA ? BLIS_TRANSPOSE : BLIS_NO_TRANSPOSE, transB ? BLIS_TRANSPOSE : BLIS_NO_TRANSPOSE, M, N, K,
              &alpha, const_cast<float*>(A), lda, 1, const_cast<float*>(B), ldb, 1, &beta, C, ldc, 1);
    return;
  }
  [[maybe_unused]] dnnl_status_t st =
      dnnl_sgemm(transA ? 'T' : 'N', transB ? 'T' : 'N', M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
  assert(st == dnnl_success);
}

void startGemmLibrary(GemmLibrary gemm) {
  const float a[4] = {1, 2, 3, 4}, b[4] = {1, 0, 0, 1};
  float c[4];
  sgemmOne(gemm, false, false, 2, 2, 2, 1.0f, a, 2, b, 2, 0.0f, c, 2);
}

// The GEMM library runs single-threaded; with threads > 1 the product is split into
// column (or row) panels computed by the runtime's OpenMP threads, so only one
// thread pool competes for the cores.
void sgemmRowMajor(bool transA, bool transB, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
                   int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc, int threads,
                   GemmLibrary gemm) {
  if (M == 0 || N == 0) return;
  if (K == 0) {
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) C[i * ldc + j] = beta == 0 ? 0 : beta * C[i * ldc + j];
    return;
  }
  threads = std::max(1, threads);
  if (threads == 1 || M * N * K < 2000000) {
    sgemmOne(gemm, transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    return;
  }
  const bool splitN = N >= M || N >= 64 * threads;
  const int64_t total = splitN ? N : M;
  const int64_t chunk = ((total + threads - 1) / threads + 15) / 16 * 16;
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int t = 0; t < threads; ++t) {
    const int64_t lo = t * chunk, hi = std::min(total, lo + chunk);
    if (lo >= hi) continue;
    if (splitN)
      sgemmOne(gemm, transA, transB, M, hi - lo, K, alpha, A, lda, transB ? B + lo * ldb : B + lo, ldb, beta, C + lo, ldc);
    else
      sgemmOne(gemm, transA, transB, hi - lo, N, K, alpha, transA ? A + lo : A + lo * lda, lda, B, ldb, beta, C + lo * ldc,
               ldc);
  }
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
  }
  return "?";
}

bool convKernelApplies(ConvKernel k, const ConvAttrs& a) {
  switch (k) {
    case ConvKernel::Naive: case ConvKernel::Im2col: case ConvKernel::Sparse: return true;
    case ConvKernel::Gemm1x1:
      return a.kh == 1 && a.kw == 1 && a.padT == 0 && a.padL == 0 && a.padB == 0 && a.padR == 0;
    case ConvKernel::Winograd:
      return a.group == 1 && a.kh == 3 && a.kw == 3 && a.sh == 1 && a.sw == 1 && a.dh == 1 && a.dw == 1;
    case ConvKernel::Depthwise: return a.Cg == 1 && a.group > 1 && a.M % a.group == 0;
  }
  return false;
}

// ---- Conv: weight transforms ---------------------------------------------

static std::vector<float> biasOrZero(const float* bias, int64_t M) {
  std::vector<float> b(static_cast<size_t>(M), 0.0f);
  if (bias) std::copy(bias, bias + M, b.begin());
  return b;
}

// Winograd F(2x2, 3x3): U = G g G^T, stored [16][M][C].
static std::vector<float> winogradWeights(const ConvAttrs& a, const float* w) {
  const int64_t M = a.M, C = a.Cg;
  std::vector<float> U(static_cast<size_t>(16 * M * C));
  for (int64_t m = 0; m < M; ++m)
    for (int64_t c = 0; c < C; ++c) {
      const float* g = w + (m * C + c) * 9;
      float t[4][3];  // G g
      for (int j = 0; j < 3; ++j) {
        t[0][j] = g[0 * 3 + j];
        t[1][j] = 0.5f * (g[0 * 3 + j] + g[1 * 3 + j] + g[2 * 3 + j]);
        t[2][j] = 0.5f * (g[0 * 3 + j] - g[1 * 3 + j] + g[2 * 3 + j]);
        t[3][j] = g[2 * 3 + j];
      }
      for (int i = 0; i < 4; ++i) {
        float u[4];
        u[0] = t[i][0];
        u[1] = 0.5f * (t[i][0] + t[i][1] + t[i][2]);
        u[2] = 0.5f * (t[i][0] - t[i][1] + t[i][2]);
        u[3] = t[i][2];
        for (int j = 0; j < 4; ++j) U[static_cast<size_t>(((i * 4 + j) * M + m) * C + c)] = u[j];
      }
    }
  return U;
}

PackedWeights transformConvWeights(ConvKernel k, const ConvAttrs& a, const float* w, const float* bias) {
  assert(convKernelApplies(k, a) && a.group > 0 && a.M % a.group == 0);
  PackedWeights pw;
  const int64_t K = a.Cg * a.kh * a.kw;
  const int64_t total = a.M * K;
  pw.arrays.push_back(PackedWeights::make("bias", biasOrZero(bias, a.M), DType::F32));
  switch (k) {
    case ConvKernel::Naive: case ConvKernel::Im2col: case ConvKernel::Gemm1x1: case ConvKernel::Depthwise:
      // [M, Cg*kh*kw] row-major: group g's rows form the GEMM's A operand.
      pw.arrays.push_back(PackedWeights::make("w", std::vector<float>(w, w + total), DType::F32));
      break;
    case ConvKernel::Winograd:
      pw.arrays.push_back(PackedWeights::make("U", winogradWeights(a, w), DType::F32));
      break;
    case ConvKernel::Sparse: sparseConvWeights(a, w, &pw); break;
  }
  return pw;
}

// ---- Conv: kernels --------------------------------------------------------

static void convNaive(const ConvAttrs& a, const float* w, const float* bias, const float* x, int64_t N, int64_t H,
                      int64_t W, float* y, const Epilogue& e, int threads) {
  const int64_t OH = a.outH(H), OW = a.outW(W), C = a.C(), Mg = a.M / a.group;
#pragma omp parallel for collapse(2) num_threads(threads) if (threads > 1) schedule(static)
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < a.M; ++m) {
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
    }
}

#if defined(__AVX2__)
// The 16 floats at s as their 8 even-indexed and 8 odd-indexed ones, in order.
static inline void deinterleave16(const float* s, __m256* even, __m256* odd) {
  const __m256 a = _mm256_loadu_ps(s), b = _mm256_loadu_ps(s + 8);
  // shuffle picks within 128-bit lanes; the permute puts the lanes' halves in order.
  *even = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0))), 0xD8));
  *odd = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1))), 0xD8));
}
#endif

// d[k] = s[2k] for k in [lo, hi): stride-2 columns. The vector loop stops while a full
// 16-float load still ends before s[2 * (hi - 1)], so it never reads past the row.
static void copyEven(const float* s, int64_t lo, int64_t hi, float* d) {
  int64_t k = lo;
#if defined(__AVX2__)
  for (; k + 8 < hi; k += 8) {
    __m256 ev, od;
    deinterleave16(s + 2 * k, &ev, &od);
    _mm256_storeu_ps(d + k, ev);
  }
#endif
  for (; k < hi; ++k) d[k] = s[2 * k];
}

// col[(c*kh + i)*kw + j][oh*OW + ow] for Cg channels starting at x.
static void im2col(const ConvAttrs& a, const float* x, int64_t H, int64_t W, float* col, int threads) {
  const int64_t OH = a.outH(H), OW = a.outW(W), rows = a.Cg * a.kh * a.kw;
#pragma omp parallel for num_threads(threads) if (threads > 1 && rows * OH * OW > 32768) schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t c = r / (a.kh * a.kw), i = (r / a.kw) % a.kh, j = r % a.kw;
    float* dst = col + r * OH * OW;
    const float* src = x + c * H * W;
    // ow range with iw inside [0, W): iw = ow*sw - padL + j*dw
    const int64_t off = j * a.dw - a.padL;
    int64_t lo = off >= 0 ? 0 : (-off + a.sw - 1) / a.sw;
    int64_t hi = (W - off + a.sw - 1) / a.sw;  // first ow with iw >= W
    lo = std::min(lo, OW);
    hi = std::max(std::min(hi, OW), lo);
    for (int64_t oh = 0; oh < OH; ++oh) {
      const int64_t ih = oh * a.sh - a.padT + i * a.dh;
      float* d = dst + oh * OW;
      if (ih < 0 || ih >= H) { std::memset(d, 0, static_cast<size_t>(OW) * 4); continue; }
      const float* s = src + ih * W;
      for (int64_t ow = 0; ow < lo; ++ow) d[ow] = 0;
      if (a.sw == 1) std::memcpy(d + lo, s + lo + off, static_cast<size_t>(hi - lo) * 4);
      else if (a.sw == 2) copyEven(s + off, lo, hi, d);
      else
        for (int64_t ow = lo; ow < hi; ++ow) d[ow] = s[ow * a.sw + off];
      for (int64_t ow = hi; ow < OW; ++ow) d[ow] = 0;
    }
  }
}

// The B operand of group g's GEMM: the input itself for 1x1 stride 1 without
// padding, a subsampled copy for strided 1x1, im2col otherwise.
static const float* convColumns(const ConvAttrs& a, const float* xg, int64_t H, int64_t W, Scratch& scratch,
                                int threads) {
  const int64_t OH = a.outH(H), OW = a.outW(W);
  const bool pointwise = a.kh == 1 && a.kw == 1 && a.padT == 0 && a.padL == 0 && a.padB == 0 && a.padR == 0;
  if (pointwise && a.sh == 1 && a.sw == 1) return xg;
  float* col = scratch.floats(static_cast<size_t>(a.Cg * a.kh * a.kw * OH * OW));
  if (pointwise) {
#pragma omp parallel for num_threads(threads) if (threads > 1) schedule(static)
    for (int64_t c = 0; c < a.Cg; ++c)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow)
          col[(c * OH + oh) * OW + ow] = xg[(c * H + oh * a.sh) * W + ow * a.sw];
    return col;
  }
  im2col(a, xg, H, W, col, threads);
  return col;
}

static void convGemm(const ConvAttrs& a, const PackedWeights& pw, const float* x, int64_t N, int64_t H, int64_t W,
                     float* y, const Epilogue& e, Scratch& scratch, int threads, GemmLibrary gemm) {
  const int64_t OH = a.outH(H), OW = a.outW(W), P = OH * OW, K = a.Cg * a.kh * a.kw, Mg = a.M / a.group;
  const float* w = pw.get("w").as<float>();
  const float* bias = pw.get("bias").as<float>();
  for (int64_t n = 0; n < N; ++n)
    for (int64_t g = 0; g < a.group; ++g) {
      const float* xg = x + (n * a.C() + g * a.Cg) * H * W;
      const float* col = convColumns(a, xg, H, W, scratch, threads);
      float* yg = y + (n * a.M + g * Mg) * P;
      sgemmRowMajor(false, false, Mg, P, K, 1.0f, w + g * Mg * K, K, col, P, 0.0f, yg, P, threads, gemm);
      applyEpilogueParallel(yg, Mg, P, bias + g * Mg, e, threads);
    }
}

// Window kernels (depthwise conv, max pooling). Each channel plane is copied once
// into padded buffers split by row and column phase (input row
// sh*r + pr goes to row phase pr, slot r; likewise columns), so every tap of every
// stride and dilation reads at a constant offset from the output position and no
// tap needs a bounds check. Output (oh, ow) lives at flat position oh*Wq + ow, so
// whole planes run as one long row in blocks of 32 outputs: four independent
// accumulators per tap keep the vector units busy even on 7x7 maps. The Wq - OW
// padding columns per row are computed and dropped when copying out.
namespace {

struct WindowGeom {
  int64_t OH = 0, OW = 0, R = 0, Wq = 0, phaseStride = 0, phases = 0;
  std::vector<int64_t> tapOffset;  // per tap (i, j): offset of output (0, 0)'s input
  static constexpr int64_t kBlock = 32;
  static constexpr int64_t kSlack = 2 * kBlock;  // the AVX-512 path runs blocks of 64
  int64_t flatLen() const { return OH * Wq; }
  int64_t planeFloats() const { return phases * phaseStride + kSlack; }
};

WindowGeom windowGeom(const ConvAttrs& a, int64_t H, int64_t W) {
  WindowGeom g;
  g.OH = a.outH(H);
  g.OW = a.outW(W);
  g.R = g.OH + (a.dh * (a.kh - 1)) / a.sh;
  g.Wq = g.OW + (a.dw * (a.kw - 1)) / a.sw;
  g.phaseStride = g.R * g.Wq;
  g.phases = a.sh * a.sw;
  for (int64_t i = 0; i < a.kh; ++i)
    for (int64_t j = 0; j < a.kw; ++j) {
      const int64_t row = i * a.dh, col = j * a.dw;
      const int64_t phase = (row % a.sh) * a.sw + col % a.sw;
      g.tapOffset.push_back(phase * g.phaseStride + (row / a.sh) * g.Wq + col / a.sw);
    }
  return g;
}

void windowPadPlane(const ConvAttrs& a, const WindowGeom& g, const float* src, int64_t H, int64_t W, float pad,
                    float* q) {
  for (int64_t pr = 0; pr < a.sh; ++pr)
    for (int64_t pc = 0; pc < a.sw; ++pc) {
      float* plane = q + (pr * a.sw + pc) * g.phaseStride;
      // Slots k whose input column k*sw + pc - padL lies inside [0, W): [kLo, kHi).
      const int64_t sw = a.sw, first = pc - a.padL;
      const int64_t kLo = std::min(g.Wq, first >= 0 ? 0 : (-first + sw - 1) / sw);
      const int64_t kHi = std::max(kLo, std::min(g.Wq, (W - first + sw - 1) / sw));
      for (int64_t r = 0; r < g.R; ++r) {
        float* dst = plane + r * g.Wq;
        const int64_t ih = r * a.sh + pr - a.padT;
        if (ih < 0 || ih >= H) { std::fill(dst, dst + g.Wq, pad); continue; }
        const float* sp = src + ih * W + first;
        std::fill(dst, dst + kLo, pad);
        if (sw == 1) std::memcpy(dst + kLo, sp + kLo, static_cast<size_t>(kHi - kLo) * 4);
        else if (sw == 2) copyEven(sp, kLo, kHi, dst);
        else
          for (int64_t k = kLo; k < kHi; ++k) dst[k] = sp[k * sw];
        std::fill(dst + kHi, dst + g.Wq, pad);
      }
    }
  // The last block may read up to kSlack floats past the last phase plane.
  std::fill(q + g.phases * g.phaseStride, q + g.planeFloats(), pad);
}

// flat[0, roundUp(OH*Wq, kBlock or 2 * kBlock)) = bias + sum over taps, then the epilogue.
void depthwiseFlat(const WindowGeom& g, const float* q, const float* wm, float bias, const Epilogue& e,
                   float* flat) {
  const int64_t taps = static_cast<int64_t>(g.tapOffset.size()), L = g.flatLen();
  const int64_t* off = g.tapOffset.data();
#if defined(__AVX2__) && defined(__FMA__)
  const __m256 vb = _mm256_set1_ps(bias);
  const __m256 lo = _mm256_set1_ps(e.kind == Epilogue::Clip ? e.lo : 0.0f);
  const __m256 hi = _mm256_set1_ps(e.hi);
  for (int64_t f = 0; f < L; f += WindowGeom::kBlock) {
    __m256 a0 = vb, a1 = vb, a2 = vb, a3 = vb;
    for (int64_t t = 0; t < taps; ++t) {
      const __m256 w = _mm256_set1_ps(wm[t]);
      const float* s = q + off[t] + f;
      a0 = _mm256_fmadd_ps(w, _mm256_loadu_ps(s), a0);
      a1 = _mm256_fmadd_ps(w, _mm256_loadu_ps(s + 8), a1);
      a2 = _mm256_fmadd_ps(w, _mm256_loadu_ps(s + 16), a2);
      a3 = _mm256_fmadd_ps(w, _mm256_loadu_ps(s + 24), a3);
    }
    if (e.kind != Epilogue::None) {
      a0 = _mm256_max_ps(a0, lo); a1 = _mm256_max_ps(a1, lo); a2 = _mm256_max_ps(a2, lo); a3 = _mm256_max_ps(a3, lo);
    }
    if (e.kind == Epilogue::Clip) {
      a0 = _mm256_min_ps(a0, hi); a1 = _mm256_min_ps(a1, hi); a2 = _mm256_min_ps(a2, hi); a3 = _mm256_min_ps(a3, hi);
    }
    _mm256_storeu_ps(flat + f, a0);
    _mm256_storeu_ps(flat + f + 8, a1);
    _mm256_storeu_ps(flat + f + 16, a2);
    _mm256_storeu_ps(flat + f + 24, a3);
  }
#else
  for (int64_t f = 0; f < L; ++f) {
    float acc = bias;
    for (int64_t t = 0; t < taps; ++t) acc += wm[t] * q[off[t] + f];
    flat[f] = actOne(acc, e);
  }
#endif
}

#if defined(__x86_64__)
// The same with 16-float vectors, for CPUs with AVX-512 (64 outputs per block).
__attribute__((target("avx512f"))) void depthwiseFlat512(const WindowGeom& g, const float* q, const float* wm,
                                                         float bias, const Epilogue& e, float* flat) {
  const int64_t taps = static_cast<int64_t>(g.tapOffset.size()), L = g.flatLen();
  const int64_t* off = g.tapOffset.data();
  const __m512 vb = _mm512_set1_ps(bias);
  const __m512 lo = _mm512_set1_ps(e.kind == Epilogue::Clip ? e.lo : 0.0f);
  const __m512 hi = _mm512_set1_ps(e.hi);
  for (int64_t f = 0; f < L; f += 2 * WindowGeom::kBlock) {
    __m512 a0 = vb, a1 = vb, a2 = vb, a3 = vb;
    for (int64_t t = 0; t < taps; ++t) {
      const __m512 w = _mm512_set1_ps(wm[t]);
      const float* s = q + off[t] + f;
      a0 = _mm512_fmadd_ps(w, _mm512_loadu_ps(s), a0);
      a1 = _mm512_fmadd_ps(w, _mm512_loadu_ps(s + 16), a1);
      a2 = _mm512_fmadd_ps(w, _mm512_loadu_ps(s + 32), a2);
      a3 = _mm512_fmadd_ps(w, _mm512_loadu_ps(s + 48), a3);
    }
    // Masked forms with every lane set: GCC 12 warns about the plain ones (its bug 105593).
    if (e.kind != Epilogue::None) {
      a0 = _mm512_mask_max_ps(a0, 0xffff, a0, lo); a1 = _mm512_mask_max_ps(a1, 0xffff, a1, lo);
      a2 = _mm512_mask_max_ps(a2, 0xffff, a2, lo); a3 = _mm512_mask_max_ps(a3, 0xffff, a3, lo);
    }
    if (e.kind == Epilogue::Clip) {
      a0 = _mm512_mask_min_ps(a0, 0xffff, a0, hi); a1 = _mm512_mask_min_ps(a1, 0xffff, a1, hi);
      a2 = _mm512_mask_min_ps(a2, 0xffff, a2, hi); a3 = _mm512_mask_min_ps(a3, 0xffff, a3, hi);
    }
    _mm512_storeu_ps(flat + f, a0);
    _mm512_storeu_ps(flat + f + 16, a1);
    _mm512_storeu_ps(flat + f + 32, a2);
    _mm512_storeu_ps(flat + f + 48, a3);
  }
}
const bool kHaveAvx512 = __builtin_cpu_supports("avx512f");
#else
const bool kHaveAvx512 = false;
#endif

}  // namespace

static void convDepthwise(const ConvAttrs& a, const PackedWeights& pw, const float* x, int64_t N, int64_t H,
                          int64_t W, float* y, const Epilogue& e, Scratch& scratch, int threads) {
  const int64_t mult = a.M / a.group, C = a.C(), taps = a.kh * a.kw;
  const float* w = pw.get("w").as<float>();
  const float* bias = pw.get("bias").as<float>();
  const WindowGeom g = windowGeom(a, H, W);
  const int64_t plane = g.planeFloats(), flatLen = g.flatLen() + WindowGeom::kSlack;
  float* planes = scratch.floats(static_cast<size_t>(threads * plane), 0);
  float* flats = scratch.floats(static_cast<size_t>(threads * flatLen), 1);
#pragma omp parallel for collapse(2) num_threads(threads) if (threads > 1) schedule(static)
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c) {
      const int64_t tid = omp_get_thread_num();
      float* q = planes + tid * plane;
      float* flat = flats + tid * flatLen;
      windowPadPlane(a, g, x + (n * C + c) * H * W, H, W, 0.0f, q);
      for (int64_t k = 0; k < mult; ++k) {
        const int64_t m = c * mult + k;
#if defined(__x86_64__)
        if (kHaveAvx512) depthwiseFlat512(g, q, w + m * taps, bias[m], e, flat);
        else
#endif
          depthwiseFlat(g, q, w + m * taps, bias[m], e, flat);
        float* dst = y + (n * a.M + m) * g.OH * g.OW;
        for (int64_t oh = 0; oh < g.OH; ++oh)
          std::memcpy(dst + oh * g.OW, flat + oh * g.Wq, static_cast<size_t>(g.OW) * 4);
      }
    }
}

void runMaxPool(const ConvAttrs& a, const float* x, int64_t N, int64_t C, int64_t H, int64_t W, float* y,
                Scratch& scratch, int threads) {
  threads = std::max(1, threads);
  const WindowGeom g = windowGeom(a, H, W);
  const int64_t plane = g.planeFloats(), flatLen = g.flatLen() + WindowGeom::kSlack;
  const int64_t taps = static_cast<int64_t>(g.tapOffset.size());
  const int64_t* off = g.tapOffset.data();
  float* planes = scratch.floats(static_cast<size_t>(threads * plane), 0);
  float* flats = scratch.floats(static_cast<size_t>(threads * flatLen), 1);
#pragma omp parallel for num_threads(threads) if (threads > 1) schedule(static)
  for (int64_t nc = 0; nc < N * C; ++nc) {
    const int64_t tid = omp_get_thread_num();
    float* q = planes + tid * plane;
    float* flat = flats + tid * flatLen;
    windowPadPlane(a, g, x + nc * H * W, H, W, -INFINITY, q);
    const int64_t L = g.flatLen();
    std::copy(q + off[0], q + off[0] + L, flat);
    for (int64_t t = 1; t < taps; ++t) {
      const float* s = q + off[t];
      for (int64_t f = 0; f < L; ++f) flat[f] = std::max(flat[f], s[f]);
    }
    float* dst = y + nc * g.OH * g.OW;
    for (int64_t oh = 0; oh < g.OH; ++oh)
      std::memcpy(dst + oh * g.OW, flat + oh * g.Wq, static_cast<size_t>(g.OW) * 4);
  }
}

#if defined(__AVX2__) && defined(__FMA__)
// Winograd transforms, 8 tiles per vector. A channel is first copied into zero-padded
// rows split into even and odd columns (tile tw starts at column 2*tw), so the 4x4
// inputs of 8 consecutive tiles are 16 contiguous loads.
struct WinogradRows {
  int64_t R = 0, Wq = 0;  // rows, slots per row (even and odd planes)
};

static void winogradSplitChannel(const float* src, int64_t H, int64_t W, int64_t padT, int64_t padL,
                                 const WinogradRows& g, float* even, float* odd) {
  for (int64_t r = 0; r < g.R; ++r) {
    float* e = even + r * g.Wq;
    float* o = odd + r * g.Wq;
    const int64_t ih = r - padT;
    if (ih < 0 || ih >= H) {
      std::memset(e, 0, static_cast<size_t>(g.Wq) * 4);
      std::memset(o, 0, static_cast<size_t>(g.Wq) * 4);
      continue;
    }
    const float* s = src + ih * W;
    auto at = [&](int64_t col) { return (col >= 0 && col < W) ? s[col] : 0.0f; };
    // Slots [kLo, kHi) have both columns 2k - padL and 2k + 1 - padL inside the row.
    const int64_t kLo = std::min(g.Wq, (padL + 1) / 2);
    const int64_t kHi = std::max(kLo, std::min(g.Wq, (W - 1 + padL) / 2));
    for (int64_t k = 0; k < kLo; ++k) { e[k] = at(2 * k - padL); o[k] = at(2 * k + 1 - padL); }
    const float* sp = s - padL;
    int64_t k = kLo;
    for (; k + 8 <= kHi; k += 8) {
      __m256 ev, od;
      deinterleave16(sp + 2 * k, &ev, &od);
      _mm256_storeu_ps(e + k, ev);
      _mm256_storeu_ps(o + k, od);
    }
    for (; k < kHi; ++k) { e[k] = sp[2 * k]; o[k] = sp[2 * k + 1]; }
    for (k = kHi; k < g.Wq; ++k) { e[k] = at(2 * k - padL); o[k] = at(2 * k + 1 - padL); }
  }
}

// V[xi][tile] (xi = 4i + j, stride `xiStride`) = (B^T d B)[i][j] for the channel's tiles.
static void winogradInputChannel(const float* even, const float* odd, const WinogradRows& g, int64_t TH, int64_t TW,
                                 float* V, int64_t xiStride) {
  for (int64_t th = 0; th < TH; ++th)
    for (int64_t tw = 0; tw < TW; tw += 8) {
      __m256 t[4][4];
      {
        __m256 d[4][4];
        for (int i = 0; i < 4; ++i) {
          const int64_t r = (2 * th + i) * g.Wq + tw;
          d[i][0] = _mm256_loadu_ps(even + r);
          d[i][1] = _mm256_loadu_ps(odd + r);
          d[i][2] = _mm256_loadu_ps(even + r + 1);
          d[i][3] = _mm256_loadu_ps(odd + r + 1);
        }
        for (int j = 0; j < 4; ++j) {
          t[0][j] = _mm256_sub_ps(d[0][j], d[2][j]);
          t[1][j] = _mm256_add_ps(d[1][j], d[2][j]);
          t[2][j] = _mm256_sub_ps(d[2][j], d[1][j]);
          t[3][j] = _mm256_sub_ps(d[1][j], d[3][j]);
        }
      }
      const int64_t tile = th * TW + tw, n = std::min<int64_t>(8, TW - tw);
      for (int i = 0; i < 4; ++i) {
        const __m256 v[4] = {_mm256_sub_ps(t[i][0], t[i][2]), _mm256_add_ps(t[i][1], t[i][2]),
                             _mm256_sub_ps(t[i][2], t[i][1]), _mm256_sub_ps(t[i][1], t[i][3])};
        for (int j = 0; j < 4; ++j) {
          float* dst = V + (i * 4 + j) * xiStride + tile;
          if (n == 8) {
            _mm256_storeu_ps(dst, v[j]);
          } else {
            alignas(32) float tmp[8];
            _mm256_store_ps(tmp, v[j]);
            std::memcpy(dst, tmp, static_cast<size_t>(n) * 4);
          }
        }
      }
    }
}

// Output tiles of channel m: A^T M A plus bias and epilogue, two output rows of 16
// columns (8 tiles) at a time.
static void winogradOutputChannel(const float* Mx, int64_t xiStride, int64_t TH, int64_t TW, int64_t OH, int64_t OW,
                                  float bias, const Epilogue& e, float* dst) {
  const __m256 vb = _mm256_set1_ps(bias);
  const __m256 lo = _mm256_set1_ps(e.kind == Epilogue::Clip ? e.lo : 0.0f);
  const __m256 hi = _mm256_set1_ps(e.hi);
  auto act = [&](__m256 v) {
    if (e.kind != Epilogue::None) v = _mm256_max_ps(v, lo);
    if (e.kind == Epilogue::Clip) v = _mm256_min_ps(v, hi);
    return v;
  };
  for (int64_t th = 0; th < TH; ++th)
    for (int64_t tw = 0; tw < TW; tw += 8) {
      const int64_t tile = th * TW + tw;
      __m256 r[2][4];
      for (int j = 0; j < 4; ++j) {
        const __m256 m0 = _mm256_loadu_ps(Mx + (0 * 4 + j) * xiStride + tile);
        const __m256 m1 = _mm256_loadu_ps(Mx + (1 * 4 + j) * xiStride + tile);
        const __m256 m2 = _mm256_loadu_ps(Mx + (2 * 4 + j) * xiStride + tile);
        const __m256 m3 = _mm256_loadu_ps(Mx + (3 * 4 + j) * xiStride + tile);
        r[0][j] = _mm256_add_ps(_mm256_add_ps(m0, m1), m2);
        r[1][j] = _mm256_sub_ps(_mm256_sub_ps(m1, m2), m3);
      }
      for (int i = 0; i < 2; ++i) {
        const int64_t oh = th * 2 + i;
        if (oh >= OH) break;
        const __m256 o0 = act(_mm256_add_ps(_mm256_add_ps(_mm256_add_ps(r[i][0], r[i][1]), r[i][2]), vb));
        const __m256 o1 = act(_mm256_add_ps(_mm256_sub_ps(_mm256_sub_ps(r[i][1], r[i][2]), r[i][3]), vb));
        // Interleave: columns 2*tw + 2q come from o0, 2*tw + 2q + 1 from o1.
        const __m256 l = _mm256_unpacklo_ps(o0, o1), h = _mm256_unpackhi_ps(o0, o1);
        const __m256 first = _mm256_permute2f128_ps(l, h, 0x20), second = _mm256_permute2f128_ps(l, h, 0x31);
        float* d = dst + oh * OW + 2 * tw;
        const int64_t n = std::min<int64_t>(16, OW - 2 * tw);
        if (n == 16) {
          _mm256_storeu_ps(d, first);
          _mm256_storeu_ps(d + 8, second);
        } else {
          alignas(32) float tmp[16];
          _mm256_store_ps(tmp, first);
          _mm256_store_ps(tmp + 8, second);
          std::memcpy(d, tmp, static_cast<size_t>(n) * 4);
        }
      }
    }
}

static void convWinograd(const ConvAttrs& a, const PackedWeights& pw, const float* x, int64_t N, int64_t H,
                         int64_t W, float* y, const Epilogue& e, Scratch& scratch, int threads, GemmLibrary gemm) {
  const int64_t OH = a.outH(H), OW = a.outW(W), C = a.Cg, M = a.M;
  const int64_t TH = (OH + 1) / 2, TW = (OW + 1) / 2, T = TH * TW;
  const float* U = pw.get("U").as<float>();
  const float* bias = pw.get("bias").as<float>();
  WinogradRows g;
  g.R = 2 * TH + 2;
  g.Wq = TW + 1 + 8;  // the last 8-tile block reads up to 8 slots past TW + 1
  float* V = scratch.floats(static_cast<size_t>(16 * C * T), 0);
  float* Mx = scratch.floats(static_cast<size_t>(16 * M * T + 8), 1);
  float* split = scratch.floats(static_cast<size_t>(threads * 2 * g.R * g.Wq), 2);
  for (int64_t n = 0; n < N; ++n) {
    const float* xn = x + n * C * H * W;
#pragma omp parallel for num_threads(threads) if (threads > 1) schedule(static)
    for (int64_t c = 0; c < C; ++c) {
      float* even = split + static_cast<int64_t>(omp_get_thread_num()) * 2 * g.R * g.Wq;
      float* odd = even + g.R * g.Wq;
      winogradSplitChannel(xn + c * H * W, H, W, a.padT, a.padL, g, even, odd);
      winogradInputChannel(even, odd, g, TH, TW, V + c * T, C * T);
    }
#pragma omp parallel for num_threads(threads) if (threads > 1) schedule(static)
    for (int xi = 0; xi < 16; ++xi)
      sgemmRowMajor(false, false, M, T, C, 1.0f, U + xi * M * C, C, V + xi * C * T, T, 0.0f, Mx + xi * M * T, T, 1, gemm);
    float* yn = y + n * M * OH * OW;
#pragma omp parallel for num_threads(threads) if (threads > 1) schedule(static)
    for (int64_t m = 0; m < M; ++m) winogradOutputChannel(Mx + m * T, M * T, TH, TW, OH, OW, bias[m], e, yn + m * OH * OW);
  }
}
#else
static void convWinograd(const ConvAttrs& a, const PackedWeights& pw, const float* x, int64_t N, int64_t H,
                         int64_t W, float* y, const Epilogue& e, Scratch& scratch, int threads, GemmLibrary gemm) {
  const int64_t OH = a.outH(H), OW = a.outW(W), C = a.Cg, M = a.M;
  const int64_t TH = (OH + 1) / 2, TW = (OW + 1) / 2, T = TH * TW;
  const float* U = pw.get("U").as<float>();
  const float* bias = pw.get("bias").as<float>();
  float* V = scratch.floats(static_cast<size_t>(16 * C * T), 0);
  float* Mx = scratch.floats(static_cast<size_t>(16 * M * T), 1);
  for (int64_t n = 0; n < N; ++n) {
    const float* xn = x + n * C * H * W;
    // Input transform: V[xi][c][t] = (B^T d B)[xi].
#pragma omp parallel for num_threads(threads) if (threads > 1) schedule(static)
    for (int64_t c = 0; c < C; ++c) {
      const float* src = xn + c * H * W;
      for (int64_t th = 0; th < TH; ++th)
        for (int64_t tw = 0; tw < TW; ++tw) {
          float d[4][4];
          const int64_t h0 = th * 2 - a.padT, w0 = tw * 2 - a.padL;
          const bool inside = h0 >= 0 && w0 >= 0 && h0 + 4 <= H && w0 + 4 <= W;
          for (int i = 0; i < 4; ++i)
            for (int j = 0; j < 4; ++j) {
              const int64_t ih = h0 + i, iw = w0 + j;
              d[i][j] = (inside || (ih >= 0 && ih < H && iw >= 0 && iw < W)) ? src[ih * W + iw] : 0.0f;
            }
          float t[4][4];
          for (int j = 0; j < 4; ++j) {
            t[0][j] = d[0][j] - d[2][j];
            t[1][j] = d[1][j] + d[2][j];
            t[2][j] = d[2][j] - d[1][j];
            t[3][j] = d[1][j] - d[3][j];
          }
          const int64_t tile = th * TW + tw;
          for (int i = 0; i < 4; ++i) {
            float v[4] = {t[i][0] - t[i][2], t[i][1] + t[i][2], t[i][2] - t[i][1], t[i][1] - t[i][3]};
            for (int j = 0; j < 4; ++j) V[((i * 4 + j) * C + c) * T + tile] = v[j];
          }
        }
    }
#pragma omp parallel for num_threads(threads) if (threads > 1) schedule(static)
    for (int xi = 0; xi < 16; ++xi)
      sgemmRowMajor(false, false, M, T, C, 1.0f, U + xi * M * C, C, V + xi * C * T, T, 0.0f, Mx + xi * M * T, T, 1, gemm);
    float* yn = y + n * M * OH * OW;
    // Output transform: A^T m A, A^T = [[1,1,1,0],[0,1,-1,-1]].
#pragma omp parallel for num_threads(threads) if (threads > 1) schedule(static)
    for (int64_t m = 0; m < M; ++m) {
      float* dst = yn + m * OH * OW;
      for (int64_t th = 0; th < TH; ++th)
        for (int64_t tw = 0; tw < TW; ++tw) {
          const int64_t tile = th * TW + tw;
          float mm[4][4];
          for (int i = 0; i < 4; ++i)
            for (int j = 0; j < 4; ++j) mm[i][j] = Mx[((i * 4 + j) * M + m) * T + tile];
          float r[2][4];
          for (int j = 0; j < 4; ++j) {
            r[0][j] = mm[0][j] + mm[1][j] + mm[2][j];
            r[1][j] = mm[1][j] - mm[2][j] - mm[3][j];
          }
          for (int i = 0; i < 2; ++i) {
            const int64_t oh = th * 2 + i;
            if (oh >= OH) break;
            float o0 = r[i][0] + r[i][1] + r[i][2] + bias[m];
            float o1 = r[i][1] - r[i][2] - r[i][3] + bias[m];
            dst[oh * OW + tw * 2] = actOne(o0, e);
            if (tw * 2 + 1 < OW) dst[oh * OW + tw * 2 + 1] = actOne(o1, e);
          }
        }
    }
  }
}

#endif

void runConv(ConvKernel k, const ConvAttrs& a, const PackedWeights& pw, const float* x, int64_t N, int64_t H,
             int64_t W, float* y, const Epilogue& e, Scratch& scratch, int threads, GemmLibrary gemm) {
  threads = std::max(1, threads);
  switch (k) {
    case ConvKernel::Naive:
      convNaive(a, pw.get("w").as<float>(), pw.get("bias").as<float>(), x, N, H, W, y, e, threads);
      break;
    case ConvKernel::Im2col: case ConvKernel::Gemm1x1: convGemm(a, pw, x, N, H, W, y, e, scratch, threads, gemm); break;
    case ConvKernel::Winograd: convWinograd(a, pw, x, N, H, W, y, e, scratch, threads, gemm); break;
    case ConvKernel::Depthwise: convDepthwise(a, pw, x, N, H, W, y, e, scratch, threads); break;
    case ConvKernel::Sparse: convSparse(a, pw, x, N, H, W, y, e, scratch, threads); break;
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

void runGemm(GemmKernel k, int64_t K, int64_t N, const PackedWeights& pw, const float* x, int64_t rows, float* y,
             const Epilogue& e, int threads, GemmLibrary gemm) {
  threads = std::max(1, threads);
  const float* bias = pw.get("bias").as<float>();
  switch (k) {
    case GemmKernel::Naive: {
      const float* w = pw.get("w").as<float>();
#pragma omp parallel for collapse(2) num_threads(threads) if (threads > 1) schedule(static)
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t n = 0; n < N; ++n) {
          double s = 0;
          for (int64_t kk = 0; kk < K; ++kk) s += static_cast<double>(x[r * K + kk]) * w[n * K + kk];
          y[r * N + n] = actOne(static_cast<float>(s) + bias[n], e);
        }
      return;
    }
    case GemmKernel::Blas: {
      const float* w = pw.get("w").as<float>();
      if (rows == 1 && K > 0) {
        const int64_t parts = (threads > 1 && N * K >= 262144) ? threads : 1;
        const int64_t chunk = (N + parts - 1) / parts;
#pragma omp parallel for num_threads(static_cast<int>(parts)) if (parts > 1) schedule(static)
        for (int64_t t = 0; t < parts; ++t) {
          const int64_t lo = t * chunk, hi = std::min(N, lo + chunk);
          if (lo < hi)
            sgemmOne(gemm, false, true, 1, hi - lo, K, 1.0f, x, K, w + lo * K, K, 0.0f, y + lo, N);
        }
      } else {
        sgemmRowMajor(false, true, rows, N, K, 1.0f, x, K, w, K, 0.0f, y, N, threads, gemm);
      }
      for (int64_t r = 0; r < rows; ++r) {
        float* yr = y + r * N;
        for (int64_t n = 0; n < N; ++n) yr[n] = actOne(yr[n] + bias[n], e);
      }
      return;
    }
    case GemmKernel::Sparse: {
      const int32_t* rowptr = pw.get("rowptr").as<int32_t>();
      const int32_t* cols = pw.get("cols").as<int32_t>();
      const float* vals = pw.get("vals").as<float>();
#pragma omp parallel for collapse(2) num_threads(threads) if (threads > 1) schedule(static)
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t n = 0; n < N; ++n) {
          const float* xr = x + r * K;
          float s = 0;
          for (int32_t z = rowptr[n]; z < rowptr[n + 1]; ++z) s += vals[z] * xr[cols[z]];
          y[r * N + n] = actOne(s + bias[n], e);
        }
      return;
    }
  }
}

}  // namespace zp::runtime
