// Depthwise conv (one output channel per input channel) on blocks of channels as
// wide as a vector: a block's rows of [columns][channels], read in place from a
// channel-blocked input or gathered from planes into a tile, and each output position
// is one vector FMA per tap over the block's channels (taps in the padding skipped).
// Where the per-plane kernels vectorise along a row (masked loads at the edges, lanes
// lost to short rows, a permute per load at stride 2), every lane here does useful
// work whatever the map size, stride or dilation.
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

// A block's outputs are computed a band of output rows at a time; gathered from planes,
// the band's input rows (halo included) make a tile of at most about kBandTileBytes, so
// that tile and outputs stay in L2 and the activation runs on outputs still in cache.
constexpr int64_t kBandTileBytes = int64_t{96} << 10;

int64_t bandRows(const ConvAttrs& a, int64_t W, int64_t OH) {
  const int64_t rowsIn = kBandTileBytes / (W * kLanes * 4);
  const int64_t halo = (a.kh - 1) * a.dh + 1;
  return std::clamp<int64_t>(rowsIn >= halo ? (rowsIn - halo) / a.sh + 1 : 1, 1, OH);
}

int64_t bandInputRows(const ConvAttrs& a, int64_t band) { return (band - 1) * a.sh + (a.kh - 1) * a.dh + 1; }

// A block's input rows, each [cols][kLanes]: rows [first, end) of the input, row ih at
// base + (ih - first) * cols * kLanes, its first padL columns zero padding. Rows
// outside (the padding) are absent and their taps skipped, as are columns outside, so
// a channel-blocked input is read in place.
struct BlockRows {
  const float* base = nullptr;
  int64_t first = 0, end = 0, cols = 0, padL = 0;
  const float* row(int64_t ih) const { return ih < first || ih >= end ? nullptr : base + (ih - first) * cols * kLanes; }
};

// The input rows [first, end) of channels [c0, c0 + nc) of x (planes of H*W) into the
// tile, a vector of positions of a vector of channels at a time, transposed in
// registers, with the conv's padding columns zero: every output of a row then lies
// inside, and runs cover whole rows (edges handled tap by tap took 1.17x the time on
// MobileNetV2's 112x112 map of 32 channels).
BlockRows gatherRows(const ConvAttrs& a, const float* x, int64_t H, int64_t W, int64_t nc, int64_t first, int64_t end,
                     float* tile) {
  const DF d;
  const int64_t cols = a.padL + W + a.padR;
  for (int64_t ih = first; ih < end; ++ih) {
    float* dst = tile + (ih - first) * cols * kLanes;
    for (int64_t c = 0; c < a.padL; ++c) hn::StoreU(hn::Zero(d), d, dst + c * kLanes);
    for (int64_t c = a.padL + W; c < cols; ++c) hn::StoreU(hn::Zero(d), d, dst + c * kLanes);
    PlanesRowToBlock(x + ih * W, H * W, W, nc, dst + a.padL * kLanes);
  }
  return {tile, first, end, cols, a.padL};
}

// The same rows from a channel-blocked block ([H][W][kLanes]), copied with the padding
// columns zero.
BlockRows copyRows(const ConvAttrs& a, const float* x, int64_t W, int64_t first, int64_t end, float* tile) {
  const DF d;
  const int64_t cols = a.padL + W + a.padR;
  for (int64_t ih = first; ih < end; ++ih) {
    float* dst = tile + (ih - first) * cols * kLanes;
    for (int64_t c = 0; c < a.padL; ++c) hn::StoreU(hn::Zero(d), d, dst + c * kLanes);
    std::memcpy(dst + a.padL * kLanes, x + ih * W * kLanes, static_cast<size_t>(W * kLanes) * sizeof(float));
    for (int64_t c = a.padL + W; c < cols; ++c) hn::StoreU(hn::Zero(d), d, dst + c * kLanes);
  }
  return {tile, first, end, cols, a.padL};
}

// A channel-blocked input is read in place where rows are long against the kernel: on
// MobileNetV2's 3x3 convs from maps of 14x14 and up 0.55-0.83x the time of copying it
// with padding columns, but 1.25x from 7x7, where a row's two edge outputs (a tap at a
// time, one FMA chain) are 2 of 7, and MobileNetV3-Small's 5x5 ones 1.15x from 14x14.
bool readsInPlace(const ConvAttrs& a, int64_t W) { return W >= 28 || (W >= 14 && a.kw <= 3); }

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

// One output row's geometry: the kernel rows [iLo, iHi) whose input rows are present,
// kernel row i's input row at row0 + (i - iLo) * pitch, shifted so that output column
// ow's window starts at column ow * sw (columns [-off, cols - off) exist), and the
// outputs [lo, hi) whose windows lie inside. Row pointers as base plus multiples of
// a pitch, not an array: loads off an array's pointers took 1.1x the time (indexed
// addressing).
struct RowWindow {
  const float* row0 = nullptr;
  int64_t iLo = 0, iHi = 0, pitch = 0, off = 0, cols = 0, lo = 0, hi = 0;
};

RowWindow rowWindow(const ConvAttrs& a, const BlockRows& src, int64_t oh, int64_t OW) {
  RowWindow r;
  const int64_t ih0 = oh * a.sh - a.padT;  // kernel row i reads ih0 + i * dh
  const int64_t above = src.first - ih0, upTo = src.end - 1 - ih0;  // in input rows from ih0
  r.iLo = above > 0 ? std::min(a.kh, (above + a.dh - 1) / a.dh) : 0;
  r.iHi = upTo >= 0 ? std::clamp<int64_t>(upTo / a.dh + 1, r.iLo, a.kh) : r.iLo;
  r.off = a.padL - src.padL;
  r.cols = src.cols;
  r.pitch = a.dh * src.cols * kLanes;
  if (r.iLo < r.iHi) r.row0 = src.row(ih0 + r.iLo * a.dh) - r.off * kLanes;
  // ow * sw - off >= 0 and ow * sw - off + (kw - 1) * dw <= cols - 1
  r.lo = std::min(OW, (r.off + a.sw - 1) / a.sw);
  const int64_t last = src.cols - 1 - (a.kw - 1) * a.dw + r.off;
  r.hi = std::clamp<int64_t>(last < 0 ? 0 : last / a.sw + 1, r.lo, OW);
  return r;
}

// Output ow of a row at the edge: the taps whose input lies inside.
HWY_INLINE VF edgeOutput(const ConvAttrs& a, const RowWindow& r, const float* wt, VF vb, int64_t ow) {
  const DF d;
  VF acc = vb;
  for (int64_t i = r.iLo; i < r.iHi; ++i) {
    const float* row = r.row0 + (i - r.iLo) * r.pitch;
    for (int64_t j = 0; j < a.kw; ++j) {
      const int64_t iw = ow * a.sw + j * a.dw;  // in the shifted columns
      if (iw - r.off >= 0 && iw - r.off < r.cols)
        acc = hn::MulAdd(hn::LoadU(d, wt + (i * a.kw + j) * kLanes), hn::LoadU(d, row + iw * kLanes), acc);
    }
  }
  return acc;
}

// Inside outputs ow0 .. ow1 - 1 of a row kOutputs at a time, a load per FMA: any
// stride, dilation and kernel width. Inlined: as a call per row it took 1.27x the time
// of the loop it replaced (MobileNetV2's 56x56 map at stride 2).
HWY_INLINE void insideTail(const ConvAttrs& a, const RowWindow& r, const float* wt, VF vb, const Clamp& clamp,
                           int64_t ow0, int64_t ow1, float* out) {
  const DF d;
  const int64_t stepW = a.sw * kLanes;
  for (; ow0 < ow1; ow0 += kOutputs) {
    const int64_t n = std::min<int64_t>(kOutputs, ow1 - ow0);
    VF acc[kOutputs] = {vb, vb, vb, vb};
    for (int64_t i = r.iLo; i < r.iHi; ++i) {
      const float* row = r.row0 + (i - r.iLo) * r.pitch + ow0 * a.sw * kLanes;
      for (int64_t j = 0; j < a.kw; ++j) {
        const VF w = hn::LoadU(d, wt + (i * a.kw + j) * kLanes);
        const float* s = row + j * a.dw * kLanes;
        for (int q = 0; q < kOutputs; ++q)
          if (q < n) acc[q] = hn::MulAdd(w, hn::LoadU(d, s + q * stepW), acc[q]);
      }
    }
    for (int q = 0; q < n; ++q) hn::StoreU(clamp(acc[q]), d, out + (ow0 + q) * kLanes);
  }
}

// A band's outputs of one block, [rows][OW][kLanes] channel-interleaved. Stride 1, KW
// taps per row, no dilation: the inside of each row in runs of kRun outputs, whose
// inputs per kernel row are loaded once into registers and feed every output whose
// window covers them (3x3 stride 1 with runs of 8: 10 loads for 24 FMAs; with a load
// per FMA, 0.77-0.95x the time on MobileNetV2's and MnasNet's 56x56 to 14x14 maps,
// AVX-512); the rest of the inside by insideTail, the edges by edgeOutput. Runs of 4
// where 16 registers must hold them. KW = 0: the whole inside by insideTail.
constexpr int kRun = kVectorRegisters >= 32 ? 8 : 4;
template <int KW>
void blockOutputs(const ConvAttrs& a, const BlockRows& src, const float* wt, const float* bias, const Epilogue& e,
                  int64_t oh0, int64_t rows, int64_t OW, float* out) {
  const DF d;
  const VF vb = hn::LoadU(d, bias);
  const Clamp clamp(e);
  constexpr int kIn = kRun - 1 + KW;
  for (int64_t oh = oh0; oh < oh0 + rows; ++oh) {
    const RowWindow r = rowWindow(a, src, oh, OW);
    float* o = out + (oh - oh0) * OW * kLanes;
    for (int64_t ow = 0; ow < r.lo; ++ow) hn::StoreU(clamp(edgeOutput(a, r, wt, vb, ow)), d, o + ow * kLanes);
    int64_t ow0 = r.lo;
    if constexpr (KW > 0) {
      for (; ow0 + kRun <= r.hi; ow0 += kRun) {
        VF acc[kRun];
        for (int q = 0; q < kRun; ++q) acc[q] = vb;
        for (int64_t i = r.iLo; i < r.iHi; ++i) {
          const float* row = r.row0 + (i - r.iLo) * r.pitch + ow0 * kLanes;
          VF in[kIn];
          for (int t = 0; t < kIn; ++t) in[t] = hn::LoadU(d, row + t * kLanes);
          for (int j = 0; j < KW; ++j) {
            const VF w = hn::LoadU(d, wt + (i * KW + j) * kLanes);
            for (int q = 0; q < kRun; ++q) acc[q] = hn::MulAdd(w, in[q + j], acc[q]);
          }
        }
        for (int q = 0; q < kRun; ++q) hn::StoreU(clamp(acc[q]), d, o + (ow0 + q) * kLanes);
      }
    }
    insideTail(a, r, wt, vb, clamp, ow0, r.hi, o);
    for (int64_t ow = r.hi; ow < OW; ++ow) hn::StoreU(clamp(edgeOutput(a, r, wt, vb, ow)), d, o + ow * kLanes);
  }
}

using BlockOutputsFn = void (*)(const ConvAttrs&, const BlockRows&, const float*, const float*, const Epilogue&,
                                int64_t, int64_t, int64_t, float*);
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
  const int64_t band = bandRows(a, W, OH), bands = (OH + band - 1) / band;
  const bool inPlace = xBlocked && readsInPlace(a, W);
  const int64_t tileFloats = inPlace ? 0 : bandInputRows(a, band) * (a.padL + W + a.padR) * kLanes;
  const int64_t outFloats = band * OW * kLanes;
  threads = std::max(1, threads);
  const std::vector<float*> tiles = scratch.workerFloats(threads, static_cast<size_t>(tileFloats), 0);
  const std::vector<float*> outs = scratch.workerFloats(threads, static_cast<size_t>(outFloats), 1);
  const BlockOutputsFn outputs = blockOutputsFor(a);
  parallelForEach(threads, N * blocks * bands, [&](int64_t item, int tid) {
    const int64_t nb = item / bands, oh0 = (item % bands) * band, rows = std::min(band, OH - oh0);
    const int64_t n = nb / blocks, c0 = (nb % blocks) * kLanes, nc = std::min(kLanes, C - c0);
    const float* xb = x + (n * C + c0) * H * W;
    const int64_t first = std::max<int64_t>(0, oh0 * a.sh - a.padT);
    const int64_t end = std::clamp<int64_t>(oh0 * a.sh - a.padT + bandInputRows(a, rows), first, H);
    float* tile = tiles[static_cast<size_t>(tid)];
    const BlockRows src = inPlace    ? BlockRows{xb, 0, H, W, 0}
                          : xBlocked ? copyRows(a, xb, W, first, end, tile)
                                     : gatherRows(a, xb, H, W, nc, first, end, tile);
    // Weights [tap][block's channels], lanes past nc zero; bias likewise.
    HWY_ALIGN float wt[kBlockedMaxTaps * kLanes] = {};
    HWY_ALIGN float bb[kLanes] = {};
    for (int64_t c = 0; c < nc; ++c) {
      for (int64_t t = 0; t < taps; ++t) wt[t * kLanes + c] = w[(c0 + c) * taps + t];
      bb[c] = bias[c0 + c];
    }
    // Blocked output: the band's rows straight into the block.
    float* out = yBlocked ? y + (n * C + c0) * P + oh0 * OW * kLanes : outs[static_cast<size_t>(tid)];
    outputs(a, src, wt, bb, e, oh0, rows, OW, out);
    // Elementwise, so on the channel-interleaved outputs as well as on the planes.
    if (!epilogue.clampOnly()) applyActivation(epilogue.fn, epilogue.params, out, out, rows * OW * kLanes);
    if (!yBlocked) BlockToPlanes(out, rows * OW, nc, P, y + (n * C + c0) * P + oh0 * OW);
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
