// Grouped conv with 16k output channels per group, for CPUs with AVX-512: direct,
// vectorised over 16 output channels. A block of 16 output channels keeps up to 14
// output positions of a row in registers and adds, per input channel and tap, the
// block's weight vector times each position's input (an FMA with a broadcast
// operand). im2col + GEMM spends most of such a conv on the copy (RegNet's groups:
// 16 channels x 9 taps of 49 positions per group on 7x7 maps, 25 groups) and on a
// product too small for the GEMM's packing to pay back.
#include "libplan/runtime/kernels/internal.h"

#include <algorithm>
#include <array>
#include <utility>

#include "libplan/runtime/kernels/avx512_transpose.h"
#include "libplan/runtime/kernels/parallel.h"

namespace zp::runtime {

#if defined(__x86_64__)
namespace {

using namespace avx512;

constexpr int64_t kLanes = 16;
constexpr int kMaxChunk = 14;  // positions in registers: 14 accumulators and the weight vector
// Weights of one block [Cg*kh*kw][16] at most this large (Cg*kh*kw <= 1152): they stay in L2.
constexpr int64_t kMaxBlockWeights = 1152 * kLanes;

const bool kHaveAvx512 = __builtin_cpu_supports("avx512f");

struct Geom {
  int64_t Hp = 0, Wp = 0, OH = 0, OW = 0, K = 0;
};

// Rows m0..m0+15 of w ([M][K]) as [K][16]: the block's weight vector per input channel and tap.
__attribute__((target("avx512f"))) void transposeBlock(const float* w, int64_t K, float* wt) {
  for (int64_t k0 = 0; k0 < K; k0 += kLanes) {
    const int64_t n = std::min(kLanes, K - k0);
    const __mmask16 m = laneMask(n);
    __m512 r[16];
    for (int i = 0; i < 16; ++i) r[i] = _mm512_maskz_loadu_ps(m, w + i * K + k0);
    transpose16(r);
    for (int64_t i = 0; i < n; ++i) _mm512_storeu_ps(wt + (k0 + i) * kLanes, r[i]);
  }
}

// Positions ow0..ow0+T-1 of output row oh for one block: xg is the group's (padded)
// input planes, yb the block's first output plane. Stride S (0: a.sw at run time).
template <int T, int S>
__attribute__((target("avx512f"))) void rowChunk(const ConvAttrs& a, const Geom& g, const float* xg, const float* wt,
                                                 const float* bias, const Epilogue& e, int64_t oh, int64_t ow0,
                                                 float* yb) {
  const int64_t sw = S > 0 ? S : a.sw;
  const __m512 lo = _mm512_set1_ps(e.kind == Epilogue::Clip ? e.lo : 0.0f), hi = _mm512_set1_ps(e.hi);
  __m512 acc[T];
  for (int j = 0; j < T; ++j) acc[j] = _mm512_loadu_ps(bias);
  const float* wv = wt;
  for (int64_t c = 0; c < a.Cg; ++c)
    for (int64_t i = 0; i < a.kh; ++i) {
      const float* row = xg + (c * g.Hp + oh * a.sh + i * a.dh) * g.Wp + ow0 * sw;
      for (int64_t j = 0; j < a.kw; ++j, wv += kLanes) {
        const __m512 w = _mm512_loadu_ps(wv);
        const float* s = row + j * a.dw;
        for (int q = 0; q < T; ++q) acc[q] = _mm512_fmadd_ps(w, _mm512_set1_ps(s[q * sw]), acc[q]);
      }
    }
  __m512 r[16];
  for (int q = 0; q < 16; ++q) {
    if (q >= T) {
      r[q] = _mm512_setzero_ps();
      continue;
    }
    r[q] = acc[q];
    // Masked forms with every lane set: GCC 12 warns about the plain ones (its bug 105593).
    if (e.kind != Epilogue::None) r[q] = _mm512_mask_max_ps(r[q], 0xffff, r[q], lo);
    if (e.kind == Epilogue::Clip) r[q] = _mm512_mask_min_ps(r[q], 0xffff, r[q], hi);
  }
  transpose16(r);  // r[o]: output channel o's T positions
  const __mmask16 m = laneMask(T);
  const int64_t P = g.OH * g.OW;
  for (int o = 0; o < 16; ++o) _mm512_mask_storeu_ps(yb + o * P + oh * g.OW + ow0, m, r[o]);
}

using RowChunkFn = void (*)(const ConvAttrs&, const Geom&, const float*, const float*, const float*, const Epilogue&,
                            int64_t, int64_t, float*);

template <int S, size_t... T>
constexpr std::array<RowChunkFn, sizeof...(T)> chunkTable(std::index_sequence<T...>) {
  return {&rowChunk<static_cast<int>(T) + 1, S>...};
}
// [stride 1, 2, other][T - 1]
const std::array<std::array<RowChunkFn, kMaxChunk>, 3> kRowChunks = {
    chunkTable<1>(std::make_index_sequence<kMaxChunk>{}), chunkTable<2>(std::make_index_sequence<kMaxChunk>{}),
    chunkTable<0>(std::make_index_sequence<kMaxChunk>{})};

// One block (16 output channels of group gi) of one image: every output row, in
// chunks of at most 14 positions balanced along the row.
void block(const ConvAttrs& a, const Geom& g, const float* xg, const float* wt, const float* bias, const Epilogue& e,
           float* yb) {
  const auto& table = kRowChunks[a.sw == 1 ? 0 : a.sw == 2 ? 1 : 2];
  const int64_t chunks = (g.OW + kMaxChunk - 1) / kMaxChunk;
  for (int64_t oh = 0; oh < g.OH; ++oh)
    for (int64_t k = 0, ow0 = 0; k < chunks; ++k) {
      const int64_t t = (g.OW - ow0 + (chunks - k) - 1) / (chunks - k);
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

}  // namespace

bool groupedDirectApplies(const ConvAttrs& a) {
  return kHaveAvx512 && a.group > 1 && (a.M / a.group) % kLanes == 0 && a.Cg * a.kh * a.kw * kLanes <= kMaxBlockWeights;
}

bool groupedDirectPays(const ConvAttrs& a, int64_t, int64_t) { return groupedDirectApplies(a); }

void convGroupedDirect(const ConvAttrs& a, const float* w, const float* bias, const float* x, int64_t N, int64_t H,
                       int64_t W, float* y, const Epilogue& epilogue, Scratch& scratch, int threads) {
  const Epilogue e = epilogue.clampOnly() ? epilogue : Epilogue{};
  const Geom g{H + a.padT + a.padB, W + a.padL + a.padR, a.outH(H), a.outW(W), a.Cg * a.kh * a.kw};
  const int64_t P = g.OH * g.OW, Mg = a.M / a.group, blocks = a.M / kLanes, blocksPerGroup = Mg / kLanes;
  const bool padded = a.padT || a.padB || a.padL || a.padR;
  threads = std::max(1, threads);
  // Every block's weights [K][16], once per call.
  float* wt = scratch.floats(static_cast<size_t>(a.M * g.K), 0);
  parallelForEach(threads, blocks, [&](int64_t b, int) { transposeBlock(w + b * kLanes * g.K, g.K, wt + b * kLanes * g.K); });
  float* xp = padded ? scratch.floats(static_cast<size_t>(a.C() * g.Hp * g.Wp), 1) : nullptr;
  for (int64_t n = 0; n < N; ++n) {
    const float* xn = x + n * a.C() * H * W;
    if (padded) padImage(a, g, xn, H, W, xp, threads);
    const float* in = padded ? xp : xn;
    float* yn = y + n * a.M * P;
    parallelForEach(threads, blocks, [&](int64_t b, int) {
      const int64_t gi = b / blocksPerGroup;
      float* yb = yn + b * kLanes * P;
      block(a, g, in + gi * a.Cg * g.Hp * g.Wp, wt + b * kLanes * g.K, bias + b * kLanes, e, yb);
      if (!epilogue.clampOnly())
        for (int64_t o = 0; o < kLanes; ++o) applyActivation(epilogue.fn, epilogue.params, yb + o * P, yb + o * P, P);
    }, 1);
  }
}
#else
bool groupedDirectApplies(const ConvAttrs&) { return false; }
bool groupedDirectPays(const ConvAttrs&, int64_t, int64_t) { return false; }
void convGroupedDirect(const ConvAttrs&, const float*, const float*, const float*, int64_t, int64_t, int64_t, float*,
                       const Epilogue&, Scratch&, int) {}
#endif

}  // namespace zp::runtime
