// Direct conv for CPUs with AVX-512, vectorised over 16 (or 8) output channels: a
// block of output channels keeps up to 14 output positions of a row in registers and
// adds, per input channel and tap, the block's weight vector times each position's
// input (an FMA with a broadcast operand). Weights are kept transposed per block at
// load ([K][16]), so a run reads them as they are stored.
//
// Against im2col + GEMM it saves the copy of the columns (kh*kw times the input) and,
// on narrow products, the GEMM's packing: RegNet's grouped convs (16 channels x 9
// taps per group on 7x7 maps), DenseNet's 3x3 convs to 32 channels, the stems.
#include "libplan/runtime/kernels/internal.h"

#include <algorithm>
#include <array>
#include <utility>

#include "libplan/runtime/kernels/avx512_transpose.h"
#include "libplan/runtime/kernels/parallel.h"
#include "libplan/runtime/kernels/cpu_features.h"

namespace zp::runtime {

#if defined(__x86_64__)
namespace {

using namespace avx512;

constexpr int kMaxChunk = 14;  // positions in registers: 14 accumulators and the weight vector
// Weights per output channel (Cg*kh*kw) at most this many: a block's weights, [Cg*kh*kw][16],
// stay in L2 (147 KB). Covers 3x3 convs on 256 channels, Inception's 5x5 on 48 and 1x7
// on 128-160 (measured against im2col: 0.78x, 0.83-0.88x; its 7x1s 1.01-1.06x).
constexpr int64_t kMaxWeightsPerOutput = 2304;


// A block of 16 output channels in a zmm register, or of 8 (RegNet-Y's and ResNeXt's
// 8-channel groups) in a ymm one.
#define ZP_AVX512 __attribute__((target("avx512f,avx512vl")))
struct Lanes16 {
  static constexpr int L = 16;
  using V = __m512;
  ZP_AVX512 static V load(const float* p) { return _mm512_loadu_ps(p); }
  ZP_AVX512 static V loadFirst(const float* p, int n) { return _mm512_maskz_loadu_ps(laneMask(n), p); }
  ZP_AVX512 static void storeAll(float* p, V v) { _mm512_storeu_ps(p, v); }
  ZP_AVX512 static V set1(float x) { return _mm512_set1_ps(x); }
  ZP_AVX512 static V zero() { return _mm512_setzero_ps(); }
  ZP_AVX512 static V fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  // Masked forms with every lane set: GCC 12 warns about the plain ones (its bug 105593).
  ZP_AVX512 static V max(V a, V b) { return _mm512_mask_max_ps(a, 0xffff, a, b); }
  ZP_AVX512 static V min(V a, V b) { return _mm512_mask_min_ps(a, 0xffff, a, b); }
  ZP_AVX512 static void transpose(V r[16]) { transpose16(r); }
  ZP_AVX512 static void store(float* p, int n, V v) { _mm512_mask_storeu_ps(p, laneMask(n), v); }
};
struct Lanes8 {
  static constexpr int L = 8;
  using V = __m256;
  ZP_AVX512 static V load(const float* p) { return _mm256_loadu_ps(p); }
  ZP_AVX512 static V loadFirst(const float* p, int n) { return _mm256_maskz_loadu_ps(mask8(n), p); }
  ZP_AVX512 static void storeAll(float* p, V v) { _mm256_storeu_ps(p, v); }
  ZP_AVX512 static V set1(float x) { return _mm256_set1_ps(x); }
  ZP_AVX512 static V zero() { return _mm256_setzero_ps(); }
  ZP_AVX512 static V fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  ZP_AVX512 static V max(V a, V b) { return _mm256_max_ps(a, b); }
  ZP_AVX512 static V min(V a, V b) { return _mm256_min_ps(a, b); }
  ZP_AVX512 static void transpose(V r[8]) {
    V t[8], u[8];
    for (int k = 0; k < 8; k += 2) {
      t[k] = _mm256_unpacklo_ps(r[k], r[k + 1]);
      t[k + 1] = _mm256_unpackhi_ps(r[k], r[k + 1]);
    }
    for (int k = 0; k < 8; k += 4) {
      u[k] = _mm256_shuffle_ps(t[k], t[k + 2], _MM_SHUFFLE(1, 0, 1, 0));
      u[k + 1] = _mm256_shuffle_ps(t[k], t[k + 2], _MM_SHUFFLE(3, 2, 3, 2));
      u[k + 2] = _mm256_shuffle_ps(t[k + 1], t[k + 3], _MM_SHUFFLE(1, 0, 1, 0));
      u[k + 3] = _mm256_shuffle_ps(t[k + 1], t[k + 3], _MM_SHUFFLE(3, 2, 3, 2));
    }
    for (int k = 0; k < 4; ++k) {
      r[k] = _mm256_permute2f128_ps(u[k], u[k + 4], 0x20);
      r[k + 4] = _mm256_permute2f128_ps(u[k], u[k + 4], 0x31);
    }
  }
  ZP_AVX512 static void store(float* p, int n, V v) { _mm256_mask_storeu_ps(p, mask8(n), v); }
  static __mmask8 mask8(int n) { return static_cast<__mmask8>(n >= 8 ? 0xff : (1u << n) - 1u); }
};

struct Geom {
  int64_t Hp = 0, Wp = 0, OH = 0, OW = 0, K = 0;
};

// Rows m0..m0+L-1 of w ([M][K]) as [K][L]: the block's weight vector per input
// channel and tap, L columns at a time transposed in registers (once, when the
// weights are transformed at load).
template <typename X>
ZP_AVX512 void transposeBlock(const float* w, int64_t K, float* wt) {
  constexpr int L = X::L;
  for (int64_t k0 = 0; k0 < K; k0 += L) {
    const int n = static_cast<int>(std::min<int64_t>(L, K - k0));
    typename X::V r[L];
    // Masked loads cost several plain ones on some CPUs (AMD's Zen 4): only for the tail.
    for (int i = 0; i < L; ++i) r[i] = n == L ? X::load(w + i * K + k0) : X::loadFirst(w + i * K + k0, n);
    X::transpose(r);
    for (int i = 0; i < n; ++i) X::storeAll(wt + (k0 + i) * L, r[i]);
  }
}

// Positions ow0..ow0+T-1 of output row oh for one block: xg is the group's (padded)
// input planes, yb the block's first output plane. Stride S (0: a.sw at run time).
template <typename X, int T, int S>
ZP_AVX512 void rowChunk(const ConvAttrs& a, const Geom& g, const float* xg, const float* wt, const float* bias,
                        const Epilogue& e, int64_t oh, int64_t ow0, float* yb) {
  using V = typename X::V;
  constexpr int L = X::L;
  const int64_t sw = S > 0 ? S : a.sw;
  const V lo = X::set1(e.kind == Epilogue::Clip ? e.lo : 0.0f), hi = X::set1(e.hi);
  V acc[T];
  for (int j = 0; j < T; ++j) acc[j] = X::load(bias);
  const float* wv = wt;
  for (int64_t c = 0; c < a.Cg; ++c)
    for (int64_t i = 0; i < a.kh; ++i) {
      const float* row = xg + (c * g.Hp + oh * a.sh + i * a.dh) * g.Wp + ow0 * sw;
      for (int64_t j = 0; j < a.kw; ++j, wv += L) {
        const V w = X::load(wv);
        const float* s = row + j * a.dw;
        for (int q = 0; q < T; ++q) acc[q] = X::fma(w, X::set1(s[q * sw]), acc[q]);
      }
    }
  for (int q = 0; q < T; ++q) {
    if (e.kind != Epilogue::None) acc[q] = X::max(acc[q], lo);
    if (e.kind == Epilogue::Clip) acc[q] = X::min(acc[q], hi);
  }
  // acc[q] holds position q's L channels: transposed, r[o] holds channel o's positions.
  const int64_t P = g.OH * g.OW;
  for (int p0 = 0; p0 < T; p0 += L) {
    V r[L];
    for (int q = 0; q < L; ++q) r[q] = p0 + q < T ? acc[p0 + q] : X::zero();
    X::transpose(r);
    const int n = T - p0 < L ? T - p0 : L;
    for (int o = 0; o < L; ++o) X::store(yb + o * P + oh * g.OW + ow0 + p0, n, r[o]);
  }
}

using RowChunkFn = void (*)(const ConvAttrs&, const Geom&, const float*, const float*, const float*, const Epilogue&,
                            int64_t, int64_t, float*);
using ChunkTable = std::array<std::array<RowChunkFn, kMaxChunk>, 3>;  // [stride 1, 2, other][T - 1]

template <typename X, int S, size_t... T>
constexpr std::array<RowChunkFn, sizeof...(T)> chunkRow(std::index_sequence<T...>) {
  return {&rowChunk<X, static_cast<int>(T) + 1, S>...};
}
template <typename X>
constexpr ChunkTable chunkTable() {
  constexpr auto seq = std::make_index_sequence<kMaxChunk>{};
  return {chunkRow<X, 1>(seq), chunkRow<X, 2>(seq), chunkRow<X, 0>(seq)};
}
const ChunkTable kChunks16 = chunkTable<Lanes16>(), kChunks8 = chunkTable<Lanes8>();

// Output rows oh0..oh1-1 of one block (L output channels of one group) of one image,
// in chunks of at most 14 positions balanced along each row.
void blockRows(const ConvAttrs& a, const Geom& g, const ChunkTable& chunks, const float* xg, const float* wt,
               const float* bias, const Epilogue& e, int64_t oh0, int64_t oh1, float* yb) {
  const auto& table = chunks[a.sw == 1 ? 0 : a.sw == 2 ? 1 : 2];
  const int64_t n = (g.OW + kMaxChunk - 1) / kMaxChunk;
  for (int64_t oh = oh0; oh < oh1; ++oh)
    for (int64_t k = 0, ow0 = 0; k < n; ++k) {
      const int64_t t = (g.OW - ow0 + (n - k) - 1) / (n - k);
      table[static_cast<size_t>(t - 1)](a, g, xg, wt, bias, e, oh, ow0, yb);
      ow0 += t;
    }
}

// Image n's C planes with the conv's zero padding around each.
void padImage(const ConvAttrs& a, const Geom& g, const float* x, int64_t H, int64_t W, float* xp, int threads) {
  parallelForEach(threads, a.C(), [&](int64_t c, int) {
    float* q = xp + c * g.Hp * g.Wp;
    std::fill(q, q + g.Hp * g.Wp, 0.0f);
    for (int64_t h = 0; h < H; ++h)
      std::copy(x + (c * H + h) * W, x + (c * H + h + 1) * W, q + (h + a.padT) * g.Wp + a.padL);
  });
}

// Output channels per block: 16 where the groups' channels divide by 16, else 8.
int64_t blockLanes(const ConvAttrs& a) { return (a.M / a.group) % 16 == 0 ? 16 : 8; }

}  // namespace

bool directConvApplies(const ConvAttrs& a) {
  const bool pointwise = a.kh == 1 && a.kw == 1;  // one GEMM without a copy: gemm1x1 and packed1x1
  return kHaveAvx512Vl && a.M % a.group == 0 && (a.M / a.group) % 8 == 0 && a.Cg * a.kh * a.kw <= kMaxWeightsPerOutput &&
         !(pointwise && a.group == 1);
}

std::vector<float> directConvWeights(const ConvAttrs& a, const float* w) {
  const int64_t L = blockLanes(a), K = a.Cg * a.kh * a.kw;
  std::vector<float> wt(static_cast<size_t>(a.M * K));
  for (int64_t b = 0; b < a.M / L; ++b) {
    if (L == 16) transposeBlock<Lanes16>(w + b * L * K, K, wt.data() + b * L * K);
    else transposeBlock<Lanes8>(w + b * L * K, K, wt.data() + b * L * K);
  }
  return wt;
}

// Work items are bands of output rows of one group; within a band, row by row, every
// block of the group, so the input rows a row reads are reused from cache by each
// block (DenseNet's 56x56 maps of 128 channels: 1.7 MB of input, a row's 90 KB).
void convDirect(const ConvAttrs& a, const float* wt, const float* bias, const float* x, int64_t N, int64_t H, int64_t W,
                float* y, const Epilogue& epilogue, Scratch& scratch, int threads) {
  const Epilogue e = epilogue.clampOnly() ? epilogue : Epilogue{};
  const Geom g{H + a.padT + a.padB, W + a.padL + a.padR, a.outH(H), a.outW(W), a.Cg * a.kh * a.kw};
  const int64_t L = blockLanes(a), P = g.OH * g.OW, blocksPerGroup = a.M / a.group / L;
  const ChunkTable& chunks = L == 16 ? kChunks16 : kChunks8;
  const bool padded = a.padT || a.padB || a.padL || a.padR;
  threads = std::max(1, threads);
  // About four items per thread (one band per group when the groups are that many).
  const int64_t bands = threads == 1 ? 1 : std::clamp<int64_t>((4 * threads + a.group - 1) / a.group, 1, g.OH);
  const int64_t rowsPerBand = (g.OH + bands - 1) / bands;
  float* xp = padded ? scratch.floats(static_cast<size_t>(a.C() * g.Hp * g.Wp), 1) : nullptr;
  for (int64_t n = 0; n < N; ++n) {
    const float* xn = x + n * a.C() * H * W;
    if (padded) padImage(a, g, xn, H, W, xp, threads);
    const float* in = padded ? xp : xn;
    float* yn = y + n * a.M * P;
    parallelForEach(threads, a.group * bands, [&](int64_t item, int) {
      const int64_t gi = item / bands, oh0 = item % bands * rowsPerBand, oh1 = std::min(g.OH, oh0 + rowsPerBand);
      if (oh0 >= oh1) return;  // bands of ceil(OH / bands) rows: the last ones may be empty
      const float* xg = in + gi * a.Cg * g.Hp * g.Wp;
      for (int64_t oh = oh0; oh < oh1; ++oh)
        for (int64_t b = gi * blocksPerGroup; b < (gi + 1) * blocksPerGroup; ++b)
          blockRows(a, g, chunks, xg, wt + b * L * g.K, bias + b * L, e, oh, oh + 1, yn + b * L * P);
      if (epilogue.clampOnly()) return;
      for (int64_t o = gi * blocksPerGroup * L; o < (gi + 1) * blocksPerGroup * L; ++o)
        applyActivation(epilogue.fn, epilogue.params, yn + o * P + oh0 * g.OW, yn + o * P + oh0 * g.OW,
                        (oh1 - oh0) * g.OW);
    }, 1);
  }
}
#undef ZP_AVX512
#else
bool directConvApplies(const ConvAttrs&) { return false; }
std::vector<float> directConvWeights(const ConvAttrs& a, const float* w) {
  return std::vector<float>(w, w + a.M * a.Cg * a.kh * a.kw);
}
void convDirect(const ConvAttrs&, const float*, const float*, const float*, int64_t, int64_t, int64_t, float*,
                const Epilogue&, Scratch&, int) {}
#endif

}  // namespace zp::runtime
