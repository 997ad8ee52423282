// Depthwise conv (one output channel per input channel) on blocks of 16 channels, for
// CPUs with AVX-512: a block's planes are gathered into a zero-padded tile of
// [rows][columns][16 channels], and each output position is one vector FMA per tap
// over the 16 channels. Where the per-plane kernels vectorise along a row (masked
// loads at the edges, lanes lost to short rows, a permute per load at stride 2),
// every lane here does useful work whatever the map size, stride or dilation.
#include "libplan/runtime/kernels/internal.h"

#include <algorithm>

#include "libplan/runtime/kernels/avx512_transpose.h"
#include "libplan/runtime/kernels/parallel.h"
#include "libplan/runtime/kernels/cpu_features.h"

namespace zp::runtime {

#if defined(__x86_64__)
namespace {

using namespace avx512;

constexpr int64_t kMaxTaps = 64;
constexpr int kOutputs = 4;  // output positions summed at once: four independent FMA chains

struct TileGeom {
  int64_t Hp = 0, Wp = 0;
  int64_t floats() const { return Hp * Wp * kAvx512Lanes; }
};

TileGeom tileGeom(const ConvAttrs& a, int64_t H, int64_t W) { return {H + a.padT + a.padB, W + a.padL + a.padR}; }

// A block's outputs are computed a band of output rows at a time, from a tile of the
// band's input rows (halo included) of at most about kBandTileBytes, so that tile and
// outputs stay in L2 and the activation runs on outputs still in cache.
constexpr int64_t kBandTileBytes = int64_t{96} << 10;

int64_t bandRows(const ConvAttrs& a, const TileGeom& g, int64_t OH) {
  const int64_t rowsIn = kBandTileBytes / (g.Wp * kAvx512Lanes * 4);
  const int64_t halo = (a.kh - 1) * a.dh + 1;
  return std::clamp<int64_t>(rowsIn >= halo ? (rowsIn - halo) / a.sh + 1 : 1, 1, OH);
}

int64_t bandInputRows(const ConvAttrs& a, int64_t band) { return (band - 1) * a.sh + (a.kh - 1) * a.dh + 1; }

const bool kHaveAvx512Blocked = __builtin_cpu_supports("avx512f");

// Channels [c0, c0 + nc) of x (planes of H*W), padded rows r0 .. r0 + rows - 1, into
// the tile, padding rows and columns zero: 16 positions of 16 channels at a time,
// transposed in registers.
__attribute__((target("avx512f"))) void gatherTile(const ConvAttrs& a, const TileGeom& g, const float* x, int64_t H,
                                                   int64_t W, int64_t nc, int64_t r0, int64_t rows, float* tile) {
  const __m512 zero = _mm512_setzero_ps();
  for (int64_t r = 0; r < rows; ++r) {
    float* row = tile + r * g.Wp * kAvx512Lanes;
    const int64_t ih = r0 + r - a.padT;
    if (ih < 0 || ih >= H) {
      for (int64_t c = 0; c < g.Wp; ++c) _mm512_storeu_ps(row + c * kAvx512Lanes, zero);
      continue;
    }
    for (int64_t c = 0; c < a.padL; ++c) _mm512_storeu_ps(row + c * kAvx512Lanes, zero);
    for (int64_t iw0 = 0; iw0 < W; iw0 += kAvx512Lanes) {
      const int64_t n = std::min(kAvx512Lanes, W - iw0);
      const __mmask16 m = laneMask(n);
      __m512 v[16];
      for (int64_t c = 0; c < kAvx512Lanes; ++c)
        v[c] = c < nc ? _mm512_maskz_loadu_ps(m, x + c * H * W + ih * W + iw0) : zero;
      transpose16(v);
      for (int64_t p = 0; p < n; ++p) _mm512_storeu_ps(row + (a.padL + iw0 + p) * kAvx512Lanes, v[p]);
    }
    for (int64_t c = a.padL + W; c < g.Wp; ++c) _mm512_storeu_ps(row + c * kAvx512Lanes, zero);
  }
}

// [count][16] channel-interleaved outputs into nc planes of P floats from position p0.
__attribute__((target("avx512f"))) void scatterPlanes(const float* out, int64_t count, int64_t nc, int64_t P,
                                                      float* y) {
  const __m512 zero = _mm512_setzero_ps();
  for (int64_t p0 = 0; p0 < count; p0 += kAvx512Lanes) {
    const int64_t n = std::min(kAvx512Lanes, count - p0);
    __m512 v[16];
    for (int64_t q = 0; q < kAvx512Lanes; ++q) v[q] = q < n ? _mm512_loadu_ps(out + (p0 + q) * kAvx512Lanes) : zero;
    transpose16(v);
    const __mmask16 m = laneMask(n);
    for (int64_t c = 0; c < nc; ++c) _mm512_mask_storeu_ps(y + c * P + p0, m, v[c]);
  }
}

__attribute__((target("avx512f"))) inline __m512 clampOutput(__m512 v, const Epilogue& e, __m512 lo, __m512 hi) {
  // Masked forms with every lane set: GCC 12 warns about the plain ones (its bug 105593).
  if (e.kind != Epilogue::None) v = _mm512_mask_max_ps(v, 0xffff, v, lo);
  if (e.kind == Epilogue::Clip) v = _mm512_mask_min_ps(v, 0xffff, v, hi);
  return v;
}

// Outputs ow0..OW-1 of row oh kOutputs at a time, a load per FMA: any stride, dilation
// and kernel width. Inlined: as a call per row it took 1.27x the time of the loop it
// replaced (MobileNetV2's 56x56 map at stride 2).
__attribute__((target("avx512f"), always_inline)) inline void rowTail(
    const ConvAttrs& a, const TileGeom& g, const float* tile, const float* wt, __m512 vb, const Epilogue& e,
    __m512 lo, __m512 hi, int64_t oh, int64_t ow0, int64_t OW, float* out) {
  const int64_t stepW = a.sw * kAvx512Lanes;
  for (; ow0 < OW; ow0 += kOutputs) {
    const int64_t n = std::min<int64_t>(kOutputs, OW - ow0);
    __m512 acc[kOutputs] = {vb, vb, vb, vb};
    for (int64_t i = 0; i < a.kh; ++i) {
      const float* row = tile + ((oh * a.sh + i * a.dh) * g.Wp + ow0 * a.sw) * kAvx512Lanes;
      for (int64_t j = 0; j < a.kw; ++j) {
        const __m512 w = _mm512_loadu_ps(wt + (i * a.kw + j) * kAvx512Lanes);
        const float* s = row + j * a.dw * kAvx512Lanes;
        for (int q = 0; q < kOutputs; ++q)
          if (q < n) acc[q] = _mm512_fmadd_ps(w, _mm512_loadu_ps(s + q * stepW), acc[q]);
      }
    }
    for (int q = 0; q < n; ++q) _mm512_storeu_ps(out + (oh * OW + ow0 + q) * kAvx512Lanes, clampOutput(acc[q], e, lo, hi));
  }
}

// One block's outputs, [OH*OW][16] channel-interleaved, stride 1, KW taps per row, no
// dilation: runs of kRun outputs of a row, whose inputs per kernel row are loaded once
// into registers and feed every output whose window covers them (3x3 stride 1: 10
// loads for 24 FMAs; with a load per FMA, 0.77-0.95x the time on MobileNetV2's and
// MnasNet's 56x56 to 14x14 maps); the rest of each row by rowTail. KW = 0: every
// output by rowTail.
constexpr int kRun = 8;
template <int KW>
__attribute__((target("avx512f"))) void blockOutputs(const ConvAttrs& a, const TileGeom& g, const float* tile,
                                                     const float* wt, const float* bias, const Epilogue& e,
                                                     int64_t OH, int64_t OW, float* out) {
  const __m512 vb = _mm512_loadu_ps(bias);
  const __m512 lo = _mm512_set1_ps(e.kind == Epilogue::Clip ? e.lo : 0.0f), hi = _mm512_set1_ps(e.hi);
  constexpr int kIn = kRun - 1 + KW;
  const int64_t runEnd = KW > 0 ? OW / kRun * kRun : 0;
  for (int64_t oh = 0; oh < OH; ++oh) {
    for (int64_t ow0 = 0; ow0 < runEnd; ow0 += kRun) {
      __m512 acc[kRun];
      for (int q = 0; q < kRun; ++q) acc[q] = vb;
      for (int64_t i = 0; i < a.kh; ++i) {
        const float* row = tile + ((oh * a.sh + i) * g.Wp + ow0) * kAvx512Lanes;
        __m512 in[kIn];
        for (int t = 0; t < kIn; ++t) in[t] = _mm512_loadu_ps(row + t * kAvx512Lanes);
        for (int j = 0; j < KW; ++j) {
          const __m512 w = _mm512_loadu_ps(wt + (i * KW + j) * kAvx512Lanes);
          for (int q = 0; q < kRun; ++q) acc[q] = _mm512_fmadd_ps(w, in[q + j], acc[q]);
        }
      }
      for (int q = 0; q < kRun; ++q) _mm512_storeu_ps(out + (oh * OW + ow0 + q) * kAvx512Lanes, clampOutput(acc[q], e, lo, hi));
    }
    rowTail(a, g, tile, wt, vb, e, lo, hi, oh, runEnd, OW, out);
  }
}

using BlockOutputsFn = void (*)(const ConvAttrs&, const TileGeom&, const float*, const float*, const float*,
                                const Epilogue&, int64_t, int64_t, float*);
BlockOutputsFn blockOutputsFor(const ConvAttrs& a) {
  // Stride 2 kept the load per FMA: runs of its 17-23 inputs measured 1.18x slower
  // (MobileNetV2's 56x56 map of 144 channels).
  if (a.dw == 1 && a.dh == 1 && a.sw == 1) {
    switch (a.kw) {
      case 3: return &blockOutputs<3>;
      case 5: return &blockOutputs<5>;
      case 7: return &blockOutputs<7>;
      default: break;
    }
  }
  return &blockOutputs<0>;
}

}  // namespace

bool depthwiseBlockedApplies(const ConvAttrs& a) {
  return kHaveAvx512Blocked && a.M == a.group && a.Cg == 1 && a.kh * a.kw <= kMaxTaps;
}

// Measured against the rows and window kernels, one thread, per node (a profiled run after 20 warm ones) on
// the depthwise convs of MobileNetV2, MobileNetV3-Small/Large, EfficientNet-B0 and
// MnasNet (AVX-512 host): 0.28-0.84x their time from 28x28 maps down (stride 2 and 5x5
// the most: 0.28-0.47x), 0.93-1.01x on 56x56 maps at stride 1. With a whole map per
// tile, 112x112 maps (830 KB per block) were a tie at stride 1; cut into bands of rows
// the kernel pays there too: depthwise convs in all, per model, 0.69x (MobileNetV2),
// 0.86x (EfficientNet-B0), 0.88x (MobileNetV3-Large), 0.96x (MnasNet).
bool depthwiseBlockedPays(const ConvAttrs& a) { return depthwiseBlockedApplies(a); }

void convDepthwiseBlocked(const ConvAttrs& a, const PackedWeights& pw, const float* x, int64_t N, int64_t H,
                          int64_t W, float* y, const Epilogue& epilogue, Scratch& scratch, int threads) {
  const Epilogue e = epilogue.clampOnly() ? epilogue : Epilogue{};
  const int64_t C = a.M, taps = a.kh * a.kw, OH = a.outH(H), OW = a.outW(W), P = OH * OW;
  const int64_t blocks = (C + kAvx512Lanes - 1) / kAvx512Lanes;
  const float* w = pw.get("w").as<float>();
  const float* bias = pw.get("bias").as<float>();
  const TileGeom g = tileGeom(a, H, W);
  const int64_t band = bandRows(a, g, OH), bands = (OH + band - 1) / band;
  const int64_t tileFloats = bandInputRows(a, band) * g.Wp * kAvx512Lanes, outFloats = band * OW * kAvx512Lanes;
  threads = std::max(1, threads);
  float* tiles = scratch.floats(static_cast<size_t>(threads * tileFloats), 0);
  float* outs = scratch.floats(static_cast<size_t>(threads * outFloats), 1);
  const BlockOutputsFn outputs = blockOutputsFor(a);
  parallelForEach(threads, N * blocks * bands, [&](int64_t item, int tid) {
    const int64_t nb = item / bands, oh0 = (item % bands) * band, rows = std::min(band, OH - oh0);
    const int64_t n = nb / blocks, c0 = (nb % blocks) * kAvx512Lanes, nc = std::min(kAvx512Lanes, C - c0);
    float* tile = tiles + tid * tileFloats;
    gatherTile(a, g, x + (n * C + c0) * H * W, H, W, nc, oh0 * a.sh, bandInputRows(a, rows), tile);
    // Weights [tap][16 channels], lanes past nc zero; bias likewise.
    alignas(64) float wt[kMaxTaps * kAvx512Lanes] = {};
    alignas(64) float bb[kAvx512Lanes] = {};
    for (int64_t c = 0; c < nc; ++c) {
      for (int64_t t = 0; t < taps; ++t) wt[t * kAvx512Lanes + c] = w[(c0 + c) * taps + t];
      bb[c] = bias[c0 + c];
    }
    float* out = outs + tid * outFloats;
    outputs(a, g, tile, wt, bb, e, rows, OW, out);
    // Elementwise, so on the channel-interleaved outputs as well as on the planes.
    if (!epilogue.clampOnly()) applyActivation(epilogue.fn, epilogue.params, out, out, rows * OW * kAvx512Lanes);
    scatterPlanes(out, rows * OW, nc, P, y + (n * C + c0) * P + oh0 * OW);
  });
}
#else
bool depthwiseBlockedApplies(const ConvAttrs&) { return false; }
bool depthwiseBlockedPays(const ConvAttrs&) { return false; }
void convDepthwiseBlocked(const ConvAttrs&, const PackedWeights&, const float*, int64_t, int64_t, int64_t, float*,
                          const Epilogue&, Scratch&, int) {}
#endif

}  // namespace zp::runtime
