// Direct conv vectorised over blocks of 16 (or 8) output channels: a block of output
// channels keeps a chunk of output positions of a row in registers (14 with AVX-512,
// 6 for a 16-channel block in AVX2's or NEON's narrower vectors) and adds, per input
// channel and tap, the block's weights times each position's input (an FMA with a
// broadcast operand). Weights are kept transposed per block at load ([K][16]), the
// same layout on every SIMD target, so a run reads them as they are stored. A
// register then holds one position's channels: transposed into planes per vector of
// positions, or stored as it is into channel blocks (kernels.h BlockedLayouts).
//
// Against im2col + GEMM it saves the copy of the columns (kh*kw times the input) and,
// on narrow products, the GEMM's packing: RegNet's grouped convs (16 channels x 9
// taps per group on 7x7 maps), DenseNet's 3x3 convs to 32 channels, the stems.
#include "libplan/runtime/kernels/internal.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <utility>

#include "libplan/runtime/kernels/parallel.h"
#include "libplan/runtime/kernels/simd_target.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "libplan/runtime/kernels/direct.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "libplan/runtime/kernels/simd-inl.h"

#ifndef ZP_RUNTIME_KERNELS_DIRECT_ONCE_
#define ZP_RUNTIME_KERNELS_DIRECT_ONCE_
namespace zp::runtime {
namespace direct {

// Weights per output channel (Cg*kh*kw) at most this many: a block's weights, [Cg*kh*kw][16],
// stay in L2 (147 KB). Covers 3x3 convs on 256 channels, Inception's 5x5 on 48 and 1x7
// on 128-160 (measured against im2col, AVX-512: 0.78x, 0.83-0.88x; its 7x1s 1.01-1.06x).
constexpr int64_t kMaxWeightsPerOutput = 2304;

struct Geom {
  int64_t Hp = 0, Wp = 0, OH = 0, OW = 0, K = 0;
};

// Output channels per block: 16 where the groups' channels divide by 16, else 8
// (RegNet-Y's and ResNeXt's 8-channel groups).
inline int64_t blockLanes(const ConvAttrs& a) { return (a.M / a.group) % 16 == 0 ? 16 : 8; }

}  // namespace direct
}  // namespace zp::runtime
#endif

HWY_BEFORE_NAMESPACE();
namespace zp::runtime::HWY_NAMESPACE {
namespace {

using direct::Geom;

// A block of L output channels: NL-lane vectors (L or, on narrower targets, fewer),
// VPB of them per block.
template <int L>
struct Block {
  using D = hn::CappedTag<float, L>;
  using V = hn::Vec<D>;
  static constexpr int NL = static_cast<int>(hn::MaxLanes(D()));
  static constexpr int VPB = L / NL;
};

// Blocks of a group a tile computes at once: two where 32 registers hold them by 14
// positions, a vector each (the broadcast inputs then feed two FMAs each: 16 loads for
// 28 FMAs instead of 15 for 14); with 4-lane vectors (NEON) a pair would leave room
// for 2 positions. With pairs (one thread, AVX-512): SqueezeNet's 16 -> 64 3x3 on
// 55x55 0.9x the time (forced to this kernel), ResNeXt-50's grouped convs 0.97x summed.
template <int L>
constexpr int kMaxBlocksPerTile = kVectorRegisters >= 32 && Block<L>::VPB == 1 ? 2 : 1;

// Positions per chunk for BB blocks: their accumulators, the weight vectors and a
// broadcast in registers.
template <int L, int BB>
constexpr int maxChunk() {
  return std::clamp((kVectorRegisters - BB * Block<L>::VPB - 1) / (BB * Block<L>::VPB), 1, 14);
}

// Positions ow0..ow0+T-1 of output row oh for BB consecutive blocks: xg is the group's
// (padded) input planes, wt the first block's weights, yb its first output plane.
// Stride S (0: a.sw at run time). YB: y channel-blocked (kernels.h BlockedLayouts, blocks
// of NL channels: yb is then the first block's first position), where a position's
// vector of channels is stored as it is, with no transpose.
template <int L, int T, int S, int BB, bool YB>
void rowChunk(const ConvAttrs& a, const Geom& g, const float* xg, const float* wt, const float* bias,
              const Epilogue& e, int64_t oh, int64_t ow0, float* yb) {
  using B = Block<L>;
  using V = typename B::V;
  constexpr int NL = B::NL, VPB = B::VPB * BB;  // vectors a position: block b's at b * Block<L>::VPB
  const typename B::D d;
  const int64_t sw = S > 0 ? S : a.sw;
  V acc[T][VPB];
  for (int v = 0; v < VPB; ++v) {
    const V b = hn::LoadU(d, bias + v * NL);
    for (int q = 0; q < T; ++q) acc[q][v] = b;
  }
  const float* wv = wt;
  for (int64_t c = 0; c < a.Cg; ++c)
    for (int64_t i = 0; i < a.kh; ++i) {
      const float* row = xg + (c * g.Hp + oh * a.sh + i * a.dh) * g.Wp + ow0 * sw;
      for (int64_t j = 0; j < a.kw; ++j, wv += L) {
        V w[VPB];
        for (int v = 0; v < VPB; ++v) w[v] = hn::LoadU(d, wv + (v / B::VPB) * L * g.K + (v % B::VPB) * NL);
        const float* s = row + j * a.dw;
        for (int q = 0; q < T; ++q) {
          const V x = hn::Set(d, s[q * sw]);
          for (int v = 0; v < VPB; ++v) acc[q][v] = hn::MulAdd(w[v], x, acc[q][v]);
        }
      }
    }
  const V lo = hn::Set(d, e.kind == Epilogue::Clip ? e.lo : 0.0f), hi = hn::Set(d, e.hi);
  for (int q = 0; q < T; ++q)
    for (int v = 0; v < VPB; ++v) {
      if (e.kind != Epilogue::None) acc[q][v] = hn::Max(acc[q][v], lo);
      if (e.kind == Epilogue::Clip) acc[q][v] = hn::Min(acc[q][v], hi);
    }
  const int64_t P = g.OH * g.OW;
  if constexpr (YB) {
    for (int v = 0; v < VPB; ++v)
      for (int q = 0; q < T; ++q) hn::StoreU(acc[q][v], d, yb + (v * P + oh * g.OW + ow0 + q) * NL);
    return;
  }
  // acc[q][v] holds position q's channels v*NL..: transposed per NL positions, r[o]
  // holds channel v*NL + o's positions.
  for (int v = 0; v < VPB; ++v)
    for (int p0 = 0; p0 < T; p0 += NL) {
      V r[NL];
      for (int q = 0; q < NL; ++q) r[q] = p0 + q < T ? acc[p0 + q][v] : hn::Zero(d);
      TransposeSquare(d, r);
      const int n = T - p0 < NL ? T - p0 : NL;
      for (int o = 0; o < NL; ++o) StoreFirst(r[o], d, yb + (v * NL + o) * P + oh * g.OW + ow0 + p0, n);
    }
}

using RowChunkFn = void (*)(const ConvAttrs&, const Geom&, const float*, const float*, const float*, const Epilogue&,
                            int64_t, int64_t, float*);
template <int L, int BB>
using ChunkTable = std::array<std::array<RowChunkFn, maxChunk<L, BB>()>, 3>;  // [stride 1, 2, other][T - 1]

template <int L, int S, int BB, bool YB, size_t... T>
constexpr std::array<RowChunkFn, sizeof...(T)> chunkRow(std::index_sequence<T...>) {
  return {&rowChunk<L, static_cast<int>(T) + 1, S, BB, YB>...};
}
template <int L, int BB, bool YB>
constexpr ChunkTable<L, BB> chunkTable() {
  constexpr auto seq = std::make_index_sequence<maxChunk<L, BB>()>{};
  return {chunkRow<L, 1, BB, YB>(seq), chunkRow<L, 2, BB, YB>(seq), chunkRow<L, 0, BB, YB>(seq)};
}

// Output row oh of BB consecutive blocks (BB * L output channels of one group) of one
// image, in chunks of at most maxChunk positions balanced along the row.
template <int L, int BB, bool YB>
void blocksRow(const ConvAttrs& a, const Geom& g, const float* xg, const float* wt, const float* bias,
               const Epilogue& e, int64_t oh, float* yb) {
  static constexpr ChunkTable<L, BB> kChunks = chunkTable<L, BB, YB>();
  constexpr int64_t kMax = maxChunk<L, BB>();
  const auto& table = kChunks[a.sw == 1 ? 0 : a.sw == 2 ? 1 : 2];
  const int64_t n = (g.OW + kMax - 1) / kMax;
  for (int64_t k = 0, ow0 = 0; k < n; ++k) {
    const int64_t t = (g.OW - ow0 + (n - k) - 1) / (n - k);
    table[static_cast<size_t>(t - 1)](a, g, xg, wt, bias, e, oh, ow0, yb);
    ow0 += t;
  }
}

// Output row oh of blocks [b0, b1) of one group: pairs of blocks where they fit. A
// block's first output lies b * L * P floats into y in planes and in channel blocks alike.
template <int L, bool YB>
void groupRow(const ConvAttrs& a, const Geom& g, const float* xg, const float* wt, const float* bias,
              const Epilogue& e, int64_t oh, float* y, int64_t b0, int64_t b1) {
  const int64_t P = g.OH * g.OW;
  for (int64_t b = b0; b < b1;) {
    const float* wb = wt + b * L * g.K;
    if (kMaxBlocksPerTile<L> >= 2 && b + 2 <= b1) {
      blocksRow<L, kMaxBlocksPerTile<L>, YB>(a, g, xg, wb, bias + b * L, e, oh, y + b * L * P);
      b += 2;
    } else {
      blocksRow<L, 1, YB>(a, g, xg, wb, bias + b * L, e, oh, y + b * L * P);
      b += 1;
    }
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

// Work items are bands of output rows of one group; within a band, row by row, every
// block of the group, so the input rows a row reads are reused from cache by each
// block (DenseNet's 56x56 maps of 128 channels: 1.7 MB of input, a row's 90 KB).
void ConvDirect(const ConvAttrs& a, const float* wt, const float* bias, const float* x, int64_t N, int64_t H, int64_t W,
                float* y, const Epilogue& epilogue, Scratch& scratch, int threads, bool yBlocked) {
  const Epilogue e = epilogue.clampOnly() ? epilogue : Epilogue{};
  const Geom g{H + a.padT + a.padB, W + a.padL + a.padR, a.outH(H), a.outW(W), a.Cg * a.kh * a.kw};
  const int64_t L = direct::blockLanes(a), P = g.OH * g.OW, blocksPerGroup = a.M / a.group / L;
  assert(!yBlocked || (L == 16 && L % kLanes == 0));
  const auto row = yBlocked ? &groupRow<16, true> : L == 16 ? &groupRow<16, false> : &groupRow<8, false>;
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
        row(a, g, xg, wt, bias, e, oh, yn, gi * blocksPerGroup, (gi + 1) * blocksPerGroup);
      if (epilogue.clampOnly()) return;
      // Elementwise: over each block's rows as over each plane's (both start at o * P).
      const int64_t step = yBlocked ? kLanes : 1;
      for (int64_t o = gi * blocksPerGroup * L; o < (gi + 1) * blocksPerGroup * L; o += step) {
        float* rows = yn + o * P + oh0 * g.OW * step;
        applyActivation(epilogue.fn, epilogue.params, rows, rows, (oh1 - oh0) * g.OW * step);
      }
    }, 1);
  }
}

}  // namespace zp::runtime::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace zp::runtime {

HWY_EXPORT(ConvDirect);

bool directConvApplies(const ConvAttrs& a) {
  const bool pointwise = a.kh == 1 && a.kw == 1;  // one GEMM without a copy: gemm1x1 and packed1x1
  return a.M % a.group == 0 && (a.M / a.group) % 8 == 0 && a.Cg * a.kh * a.kw <= direct::kMaxWeightsPerOutput &&
         !(pointwise && a.group == 1);
}

// Rows m0..m0+L-1 of w ([M][K]) as [K][L] per block: the block's weight vector per
// input channel and tap.
std::vector<float> directConvWeights(const ConvAttrs& a, const float* w) {
  const int64_t L = direct::blockLanes(a), K = a.Cg * a.kh * a.kw;
  std::vector<float> wt(static_cast<size_t>(a.M * K));
  for (int64_t b = 0; b < a.M / L; ++b)
    for (int64_t i = 0; i < L; ++i)
      for (int64_t k = 0; k < K; ++k) wt[static_cast<size_t>((b * K + k) * L + i)] = w[(b * L + i) * K + k];
  return wt;
}

// Blocked output where a block is whole vectors of whole tiles: 16 output channels a
// block, a plain (ungrouped) conv, on a target of at most 16 lanes.
bool directConvWritesBlocks(const ConvAttrs& a) {
  return directConvApplies(a) && a.group == 1 && direct::blockLanes(a) == 16 && 16 % simdFloatLanes() == 0;
}

void convDirect(const ConvAttrs& a, const float* wt, const float* bias, const float* x, int64_t N, int64_t H, int64_t W,
                float* y, const Epilogue& epilogue, Scratch& scratch, int threads, bool yBlocked) {
  assert(!yBlocked || directConvWritesBlocks(a));
  HWY_DYNAMIC_DISPATCH(ConvDirect)(a, wt, bias, x, N, H, W, y, epilogue, scratch, threads, yBlocked);
}

}  // namespace zp::runtime
#endif  // HWY_ONCE
