// Max and average pooling of small maps on blocks of channels as wide as a vector: a
// block's planes are transposed into a tile of [rows][columns][channels] with the
// padding (-inf for max, 0 for average), every output is one vector operation per tap
// over the block's channels, and the outputs are transposed back into their planes.
// Per plane, a 17x17 map fills two vectors a row with one lane of the second used;
// here every lane works.
#include "libplan/runtime/kernels/internal.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <vector>

#include "libplan/runtime/kernels/parallel.h"
#include "libplan/runtime/kernels/simd_target.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "libplan/runtime/kernels/pool_blocked.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "libplan/runtime/kernels/simd-inl.h"

HWY_BEFORE_NAMESPACE();
namespace zp::runtime::HWY_NAMESPACE {
namespace {

constexpr int kOutputs = 8;  // outputs combined at once: eight independent chains

// The tile's rows and columns: the input with its padding. The end padding may be
// negative (the pool op sets it to where the last window ends, which in floor mode can
// be before the input's end): the tile still holds the whole input.
struct TileSize {
  int64_t Hp = 0, Wp = 0;
};
TileSize tileSize(const ConvAttrs& a, int64_t H, int64_t W) {
  return {a.padT + H + std::max<int64_t>(a.padB, 0), a.padL + W + std::max<int64_t>(a.padR, 0)};
}

// The block's padded tile: rows of Wp columns of kLanes floats.
void fillTile(const ConvAttrs& a, const float* x, int64_t H, int64_t W, int64_t nc, float pad, float* tile) {
  const DF d;
  const VF vp = hn::Set(d, pad);
  const auto [Hp, Wp] = tileSize(a, H, W);
  for (int64_t r = 0; r < Hp; ++r) {
    float* row = tile + r * Wp * kLanes;
    const int64_t ih = r - a.padT;
    const bool inside = ih >= 0 && ih < H;
    for (int64_t c = 0; c < Wp; ++c)
      if (!inside || c < a.padL || c >= a.padL + W) hn::StoreU(vp, d, row + c * kLanes);
    if (inside) PlanesRowToBlock(x + ih * W, H * W, W, nc, row + a.padL * kLanes);
  }
}

// Outputs [OH*OW][kLanes] of one block from its tile: the maximum, or the sum divided
// by its window's count (rowCount[oh] * colCount[ow]; 0 where that is 0). kOutputs
// outputs of a row at a time, one loop over the window's taps at offsets computed once
// (loops over its rows and columns with the first tap as a branch inside took 1.3x the
// time on Inception's 17x17 maps).
template <bool kMax>
void blockOutputs(const ConvAttrs& a, const float* tile, int64_t Wp, int64_t OH, int64_t OW, const float* rowCount,
                  const float* colCount, float* out) {
  const DF d;
  const int64_t stepW = a.sw * kLanes, taps = a.kh * a.kw;
  assert(taps <= kPoolBlockedMaxTaps);
  int64_t off[kPoolBlockedMaxTaps];
  for (int64_t i = 0; i < a.kh; ++i)
    for (int64_t j = 0; j < a.kw; ++j) off[i * a.kw + j] = (i * a.dh * Wp + j * a.dw) * kLanes;
  for (int64_t oh = 0; oh < OH; ++oh) {
    const float* row = tile + oh * a.sh * Wp * kLanes;
    for (int64_t ow0 = 0; ow0 < OW; ow0 += kOutputs) {
      const int64_t n = std::min<int64_t>(kOutputs, OW - ow0);
      const float* s = row + ow0 * stepW;
      VF acc[kOutputs];
      // Outputs past n repeat output n - 1's loads (inside the tile) and are not stored.
      for (int q = 0; q < kOutputs; ++q) acc[q] = hn::LoadU(d, s + std::min<int64_t>(q, n - 1) * stepW);
      for (int64_t t = 1; t < taps; ++t) {
        const float* st = s + off[t];
        for (int q = 0; q < kOutputs; ++q) {
          const VF v = hn::LoadU(d, st + std::min<int64_t>(q, n - 1) * stepW);
          acc[q] = kMax ? hn::Max(acc[q], v) : hn::Add(acc[q], v);
        }
      }
      for (int q = 0; q < n; ++q) {
        VF r = acc[q];
        if constexpr (!kMax) {
          const float count = rowCount[oh] * colCount[ow0 + q];
          r = hn::Mul(r, hn::Set(d, count > 0 ? 1.0f / count : 0.0f));
        }
        hn::StoreU(r, d, out + (oh * OW + ow0 + q) * kLanes);
      }
    }
  }
}

template <bool kMax>
void poolBlocks(const ConvAttrs& a, const float* rowCount, const float* colCount, const float* x, int64_t planes,
                int64_t H, int64_t W, float* y, Scratch& scratch, int threads) {
  const auto [Hp, Wp] = tileSize(a, H, W);
  const int64_t OH = a.outH(H), OW = a.outW(W), P = OH * OW;
  const int64_t blocks = (planes + kLanes - 1) / kLanes;
  threads = std::max(1, threads);
  const std::vector<float*> tiles = scratch.workerFloats(threads, static_cast<size_t>(Hp * Wp * kLanes), 0);
  const std::vector<float*> outs = scratch.workerFloats(threads, static_cast<size_t>(P * kLanes), 1);
  parallelForEach(threads, blocks, [&](int64_t b, int tid) {
    const int64_t c0 = b * kLanes, nc = std::min(kLanes, planes - c0);
    float* tile = tiles[static_cast<size_t>(tid)];
    float* out = outs[static_cast<size_t>(tid)];
    fillTile(a, x + c0 * H * W, H, W, nc, kMax ? -INFINITY : 0.0f, tile);
    blockOutputs<kMax>(a, tile, Wp, OH, OW, rowCount, colCount, out);
    BlockToPlanes(out, P, nc, P, y + c0 * P);
  });
}

}  // namespace

void MaxPoolBlocked(const ConvAttrs& a, const float* x, int64_t planes, int64_t H, int64_t W, float* y,
                    Scratch& scratch, int threads) {
  poolBlocks<true>(a, nullptr, nullptr, x, planes, H, W, y, scratch, threads);
}

void AvgPoolBlocked(const ConvAttrs& a, const float* rowCount, const float* colCount, const float* x, int64_t planes,
                    int64_t H, int64_t W, float* y, Scratch& scratch, int threads) {
  poolBlocks<false>(a, rowCount, colCount, x, planes, H, W, y, scratch, threads);
}

}  // namespace zp::runtime::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace zp::runtime {

HWY_EXPORT(MaxPoolBlocked);
HWY_EXPORT(AvgPoolBlocked);

// Against the per-plane row kernels (pool_rows.cpp), one thread, AVX-512, per node:
// where a row of the plane fills its vectors at most 60% (17 of 32 lanes, 8 or 7 of 16)
// 0.42-0.65x their time (Inception's 3x3 average pools on 17x17 and 8x8 maps,
// GoogLeNet's max pools on 7x7); where it fills them better 1.05-1.9x (35x35 with 73%
// filled, 28x28 and 14x14: the row kernels' separable passes take 6 operations a 3x3
// window, this one 9, and the transposes in and out).
bool poolBlockedPays(const ConvAttrs& a, int64_t H, int64_t W) {
  if (a.kh * a.kw > kPoolBlockedMaxTaps) return false;
  const int64_t lanes = simdFloatLanes(), filled = (W + lanes - 1) / lanes * lanes;
  return H <= 64 && W <= 64 && W * 10 <= filled * 6;
}

void maxPoolBlocked(const ConvAttrs& a, const float* x, int64_t planes, int64_t H, int64_t W, float* y,
                    Scratch& scratch, int threads) {
  HWY_DYNAMIC_DISPATCH(MaxPoolBlocked)(a, x, planes, H, W, y, scratch, threads);
}

void avgPoolBlocked(const ConvAttrs& a, const float* rowCount, const float* colCount, const float* x, int64_t planes,
                    int64_t H, int64_t W, float* y, Scratch& scratch, int threads) {
  HWY_DYNAMIC_DISPATCH(AvgPoolBlocked)(a, rowCount, colCount, x, planes, H, W, y, scratch, threads);
}

}  // namespace zp::runtime
#endif  // HWY_ONCE
