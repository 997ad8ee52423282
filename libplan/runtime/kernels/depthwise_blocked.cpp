// Depthwise conv (one output channel per input channel) on blocks of channels as
// wide as a vector: a block's planes are gathered into a zero-padded tile of
// [rows][columns][channels], and each output position is one vector FMA per tap
// over the block's channels. Where the per-plane kernels vectorise along a row
// (masked loads at the edges, lanes lost to short rows, a permute per load at
// stride 2), every lane here does useful work whatever the map size, stride or
// dilation.
#include "libplan/runtime/kernels/internal.h"

#include <algorithm>
#include <cassert>
#include <cstring>

#include "libplan/runtime/kernels/parallel.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "libplan/runtime/kernels/depthwise_blocked.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "libplan/runtime/kernels/simd-inl.h"

#ifndef ZP_RUNTIME_KERNELS_DEPTHWISE_BLOCKED_ONCE_
#define ZP_RUNTIME_KERNELS_DEPTHWISE_BLOCKED_ONCE_
namespace zp::runtime {
constexpr int64_t kBlockedMaxTaps = 64;
}  // namespace zp::runtime
#endif

HWY_BEFORE_NAMESPACE();
namespace zp::runtime::HWY_NAMESPACE {
namespace {

constexpr int kOutputs = 4;  // output positions summed at once: four independent FMA chains

struct TileGeom {
  int64_t Hp = 0, Wp = 0;
};

TileGeom tileGeom(const ConvAttrs& a, int64_t H, int64_t W) { return {H + a.padT + a.padB, W + a.padL + a.padR}; }

// A block's outputs are computed a band of output rows at a time, from a tile of the
// band's input rows (halo included) of at most about kBandTileBytes, so that tile and
// outputs stay in L2 and the activation runs on outputs still in cache.
constexpr int64_t kBandTileBytes = int64_t{96} << 10;

int64_t bandRows(const ConvAttrs& a, const TileGeom& g, int64_t OH) {
  const int64_t rowsIn = kBandTileBytes / (g.Wp * kLanes * 4);
  const int64_t halo = (a.kh - 1) * a.dh + 1;
  return std::clamp<int64_t>(rowsIn >= halo ? (rowsIn - halo) / a.sh + 1 : 1, 1, OH);
}

int64_t bandInputRows(const ConvAttrs& a, int64_t band) { return (band - 1) * a.sh + (a.kh - 1) * a.dh + 1; }

// Padded rows r0 .. r0 + rows - 1 of a block's tile, padding rows and columns zero;
// fillRow(ih, dst) writes input row ih's W positions of kLanes channels to dst.
template <typename FillRow>
void fillTile(const ConvAttrs& a, const TileGeom& g, int64_t H, int64_t W, int64_t r0, int64_t rows, float* tile,
              const FillRow& fillRow) {
  const DF d;
  const VF zero = hn::Zero(d);
  for (int64_t r = 0; r < rows; ++r) {
    float* row = tile + r * g.Wp * kLanes;
    const int64_t ih = r0 + r - a.padT;
    if (ih < 0 || ih >= H) {
      for (int64_t c = 0; c < g.Wp; ++c) hn::StoreU(zero, d, row + c * kLanes);
      continue;
    }
    for (int64_t c = 0; c < a.padL; ++c) hn::StoreU(zero, d, row + c * kLanes);
    fillRow(ih, row + a.padL * kLanes);
    for (int64_t c = a.padL + W; c < g.Wp; ++c) hn::StoreU(zero, d, row + c * kLanes);
  }
}

// Channels [c0, c0 + nc) of x (planes of H*W) into the tile: a vector of positions of a
// vector of channels at a time, transposed in registers.
void gatherTile(const ConvAttrs& a, const TileGeom& g, const float* x, int64_t H, int64_t W, int64_t nc, int64_t r0,
                int64_t rows, float* tile) {
  fillTile(a, g, H, W, r0, rows, tile, [&](int64_t ih, float* dst) {
    const DF d;
    for (int64_t iw0 = 0; iw0 < W; iw0 += kLanes) {
      const int64_t n = std::min(kLanes, W - iw0);
      VF v[kLanes];
      for (int64_t c = 0; c < kLanes; ++c) v[c] = c < nc ? LoadFirst(d, x + c * H * W + ih * W + iw0, n) : hn::Zero(d);
      TransposeSquare(d, v);
      for (int64_t p = 0; p < n; ++p) hn::StoreU(v[p], d, dst + (iw0 + p) * kLanes);
    }
  });
}

// The same rows from a channel-blocked input: x is the block ([H][W][kLanes]), copied row by row.
void copyTile(const ConvAttrs& a, const TileGeom& g, const float* x, int64_t H, int64_t W, int64_t r0, int64_t rows,
              float* tile) {
  fillTile(a, g, H, W, r0, rows, tile, [&](int64_t ih, float* dst) {
    std::memcpy(dst, x + ih * W * kLanes, static_cast<size_t>(W * kLanes) * sizeof(float));
  });
}

// [count][kLanes] channel-interleaved outputs into nc planes of P floats from position p0.
void scatterPlanes(const float* out, int64_t count, int64_t nc, int64_t P, float* y) {
  const DF d;
  for (int64_t p0 = 0; p0 < count; p0 += kLanes) {
    const int64_t n = std::min(kLanes, count - p0);
    VF v[kLanes];
    for (int64_t q = 0; q < kLanes; ++q) v[q] = q < n ? hn::LoadU(d, out + (p0 + q) * kLanes) : hn::Zero(d);
    TransposeSquare(d, v);
    for (int64_t c = 0; c < nc; ++c) StoreFirst(v[c], d, y + c * P + p0, n);
  }
}

struct Clamp {
  VF lo, hi;
  Epilogue::Kind kind;
  explicit Clamp(const Epilogue& e)
      : lo(hn::Set(DF(), e.kind == Epilogue::Clip ? e.lo : 0.0f)), hi(hn::Set(DF(), e.hi)), kind(e.kind) {}
  HWY_INLINE VF operator()(VF v) const {
    if (kind != Epilogue::None) v = hn::Max(v, lo);
    if (kind == Epilogue::Clip) v = hn::Min(v, hi);
    return v;
  }
};

// Outputs ow0..OW-1 of row oh kOutputs at a time, a load per FMA: any stride, dilation
// and kernel width. Inlined: as a call per row it took 1.27x the time of the loop it
// replaced (MobileNetV2's 56x56 map at stride 2).
HWY_INLINE void rowTail(const ConvAttrs& a, const TileGeom& g, const float* tile, const float* wt, VF vb,
                        const Clamp& clamp, int64_t oh, int64_t ow0, int64_t OW, float* out) {
  const DF d;
  const int64_t stepW = a.sw * kLanes;
  for (; ow0 < OW; ow0 += kOutputs) {
    const int64_t n = std::min<int64_t>(kOutputs, OW - ow0);
    VF acc[kOutputs] = {vb, vb, vb, vb};
    for (int64_t i = 0; i < a.kh; ++i) {
      const float* row = tile + ((oh * a.sh + i * a.dh) * g.Wp + ow0 * a.sw) * kLanes;
      for (int64_t j = 0; j < a.kw; ++j) {
        const VF w = hn::LoadU(d, wt + (i * a.kw + j) * kLanes);
        const float* s = row + j * a.dw * kLanes;
        for (int q = 0; q < kOutputs; ++q)
          if (q < n) acc[q] = hn::MulAdd(w, hn::LoadU(d, s + q * stepW), acc[q]);
      }
    }
    for (int q = 0; q < n; ++q) hn::StoreU(clamp(acc[q]), d, out + (oh * OW + ow0 + q) * kLanes);
  }
}

// One block's outputs, [OH*OW][kLanes] channel-interleaved, stride 1, KW taps per row,
// no dilation: runs of kRun outputs of a row, whose inputs per kernel row are loaded
// once into registers and feed every output whose window covers them (3x3 stride 1
// with runs of 8: 10 loads for 24 FMAs; with a load per FMA, 0.77-0.95x the time on
// MobileNetV2's and MnasNet's 56x56 to 14x14 maps, AVX-512); the rest of each row by
// rowTail. Runs of 4 where 16 registers must hold them. KW = 0: every output by rowTail.
constexpr int kRun = kVectorRegisters >= 32 ? 8 : 4;
template <int KW>
void blockOutputs(const ConvAttrs& a, const TileGeom& g, const float* tile, const float* wt, const float* bias,
                  const Epilogue& e, int64_t OH, int64_t OW, float* out) {
  const DF d;
  const VF vb = hn::LoadU(d, bias);
  const Clamp clamp(e);
  constexpr int kIn = kRun - 1 + KW;
  const int64_t runEnd = KW > 0 ? OW / kRun * kRun : 0;
  for (int64_t oh = 0; oh < OH; ++oh) {
    for (int64_t ow0 = 0; ow0 < runEnd; ow0 += kRun) {
      VF acc[kRun];
      for (int q = 0; q < kRun; ++q) acc[q] = vb;
      for (int64_t i = 0; i < a.kh; ++i) {
        const float* row = tile + ((oh * a.sh + i) * g.Wp + ow0) * kLanes;
        VF in[kIn];
        for (int t = 0; t < kIn; ++t) in[t] = hn::LoadU(d, row + t * kLanes);
        for (int j = 0; j < KW; ++j) {
          const VF w = hn::LoadU(d, wt + (i * KW + j) * kLanes);
          for (int q = 0; q < kRun; ++q) acc[q] = hn::MulAdd(w, in[q + j], acc[q]);
        }
      }
      for (int q = 0; q < kRun; ++q) hn::StoreU(clamp(acc[q]), d, out + (oh * OW + ow0 + q) * kLanes);
    }
    rowTail(a, g, tile, wt, vb, clamp, oh, runEnd, OW, out);
  }
}

using BlockOutputsFn = void (*)(const ConvAttrs&, const TileGeom&, const float*, const float*, const float*,
                                const Epilogue&, int64_t, int64_t, float*);
BlockOutputsFn blockOutputsFor(const ConvAttrs& a) {
  // Stride 2 kept the load per FMA: runs of its 17-23 inputs measured 1.18x slower
  // (MobileNetV2's 56x56 map of 144 channels, AVX-512).
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

// xBlocked, yBlocked: channel-blocked input, output (kernels.h BlockedLayouts); C a
// multiple of kLanes then, and a block of x or y starts where its first plane would.
void ConvDepthwiseBlocked(const ConvAttrs& a, const PackedWeights& pw, const float* x, int64_t N, int64_t H,
                          int64_t W, float* y, const Epilogue& epilogue, Scratch& scratch, int threads, bool xBlocked,
                          bool yBlocked) {
  const Epilogue e = epilogue.clampOnly() ? epilogue : Epilogue{};
  const int64_t C = a.M, taps = a.kh * a.kw, OH = a.outH(H), OW = a.outW(W), P = OH * OW;
  const int64_t blocks = (C + kLanes - 1) / kLanes;
  const float* w = pw.get("w").as<float>();
  const float* bias = pw.get("bias").as<float>();
  const TileGeom g = tileGeom(a, H, W);
  const int64_t band = bandRows(a, g, OH), bands = (OH + band - 1) / band;
  const int64_t tileFloats = bandInputRows(a, band) * g.Wp * kLanes, outFloats = band * OW * kLanes;
  threads = std::max(1, threads);
  const std::vector<float*> tiles = scratch.workerFloats(threads, static_cast<size_t>(tileFloats), 0);
  const std::vector<float*> outs = scratch.workerFloats(threads, static_cast<size_t>(outFloats), 1);
  const BlockOutputsFn outputs = blockOutputsFor(a);
  parallelForEach(threads, N * blocks * bands, [&](int64_t item, int tid) {
    const int64_t nb = item / bands, oh0 = (item % bands) * band, rows = std::min(band, OH - oh0);
    const int64_t n = nb / blocks, c0 = (nb % blocks) * kLanes, nc = std::min(kLanes, C - c0);
    float* tile = tiles[static_cast<size_t>(tid)];
    if (xBlocked) copyTile(a, g, x + (n * C + c0) * H * W, H, W, oh0 * a.sh, bandInputRows(a, rows), tile);
    else gatherTile(a, g, x + (n * C + c0) * H * W, H, W, nc, oh0 * a.sh, bandInputRows(a, rows), tile);
    // Weights [tap][block's channels], lanes past nc zero; bias likewise.
    HWY_ALIGN float wt[kBlockedMaxTaps * kLanes] = {};
    HWY_ALIGN float bb[kLanes] = {};
    for (int64_t c = 0; c < nc; ++c) {
      for (int64_t t = 0; t < taps; ++t) wt[t * kLanes + c] = w[(c0 + c) * taps + t];
      bb[c] = bias[c0 + c];
    }
    // Blocked output: the band's rows straight into the block.
    float* out = yBlocked ? y + (n * C + c0) * P + oh0 * OW * kLanes : outs[static_cast<size_t>(tid)];
    outputs(a, g, tile, wt, bb, e, rows, OW, out);
    // Elementwise, so on the channel-interleaved outputs as well as on the planes.
    if (!epilogue.clampOnly()) applyActivation(epilogue.fn, epilogue.params, out, out, rows * OW * kLanes);
    if (!yBlocked) scatterPlanes(out, rows * OW, nc, P, y + (n * C + c0) * P + oh0 * OW);
  });
}

}  // namespace zp::runtime::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace zp::runtime {

HWY_EXPORT(ConvDepthwiseBlocked);

bool depthwiseBlockedApplies(const ConvAttrs& a) { return a.M == a.group && a.Cg == 1 && a.kh * a.kw <= kBlockedMaxTaps; }

// Measured against the rows and window kernels, one thread, per node (a profiled run after 20 warm ones) on
// the depthwise convs of MobileNetV2, MobileNetV3-Small/Large, EfficientNet-B0 and
// MnasNet (AVX-512 host): 0.28-0.84x their time from 28x28 maps down (stride 2 and 5x5
// the most: 0.28-0.47x), 0.93-1.01x on 56x56 maps at stride 1. With a whole map per
// tile, 112x112 maps (830 KB per block) were a tie at stride 1; cut into bands of rows
// the kernel pays there too: depthwise convs in all, per model, 0.69x (MobileNetV2),
// 0.86x (EfficientNet-B0), 0.88x (MobileNetV3-Large), 0.96x (MnasNet).
bool depthwiseBlockedPays(const ConvAttrs& a) { return depthwiseBlockedApplies(a); }

void convDepthwiseBlocked(const ConvAttrs& a, const PackedWeights& pw, const float* x, int64_t N, int64_t H,
                          int64_t W, float* y, const Epilogue& epilogue, Scratch& scratch, int threads,
                          BlockedLayouts layouts) {
  assert(!layouts.blockedInput || convTakesBlockedInput(ConvKernel::Depthwise, a));
  assert(!layouts.blockedOutput || convTakesBlockedOutput(ConvKernel::Depthwise, a));
  HWY_DYNAMIC_DISPATCH(ConvDepthwiseBlocked)(a, pw, x, N, H, W, y, epilogue, scratch, threads, layouts.blockedInput,
                                             layouts.blockedOutput);
}

}  // namespace zp::runtime
#endif  // HWY_ONCE
