// Direct conv vectorised along output rows, for convs with few input channels (the
// stems: 3 channels, 3x3 to 7x7 windows). A tile keeps 8 output channels by up to
// three vectors of positions of one output row in registers and adds, per input
// channel and tap, the input vectors times each channel's weight (an FMA with a
// broadcast operand): 24 FMAs per 3 loads of inputs and 8 of weights with AVX-512.
// Outputs are stored as they lie in the planes, with no transpose or scatter.
//
// The input is copied once per image with its padding, each row split into as many
// phases as the column stride (phase q holds the padded columns q, q + sw, ...), so
// that every tap's inputs for consecutive outputs are consecutive floats at any
// stride: no permute per load.
#include "libplan/runtime/kernels/internal.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>
#include <vector>

#include "libplan/runtime/kernels/parallel.h"
#include "libplan/runtime/kernels/simd_target.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "libplan/runtime/kernels/direct_rows.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "libplan/runtime/kernels/simd-inl.h"

#ifndef ZP_RUNTIME_KERNELS_DIRECT_ROWS_ONCE_
#define ZP_RUNTIME_KERNELS_DIRECT_ROWS_ONCE_
namespace zp::runtime {
namespace direct_rows {

constexpr int64_t kChannels = 8;  // output channels per tile (and per chunk of packed weights)

struct Geom {
  int64_t Hp = 0, Wq = 0, OH = 0, OW = 0, K = 0;
  int64_t rows = 0;  // padded rows per channel the copy holds: a band's (all, on one thread)
  // Per tap (input channel, kernel row, kernel column, as the weights run): where its
  // input for output (0, 0) lies in the phase rows. One loop over all taps: per
  // channel and kernel row, a loop over 3 columns took 1.2x the time (a stem's 3x3).
  std::vector<int64_t> tapOff;
};

// Each phase row holds ceil(Wp / sw) columns and a vector's worth of zeros after them:
// the last vector of a row's outputs loads past its end.
inline Geom geomOf(const ConvAttrs& a, int64_t H, int64_t W, int64_t lanes, int64_t bandRows) {
  Geom g;
  g.Hp = H + a.padT + a.padB;
  g.Wq = (W + a.padL + a.padR + a.sw - 1) / a.sw + lanes;
  g.OH = a.outH(H);
  g.OW = a.outW(W);
  g.K = a.Cg * a.kh * a.kw;
  g.rows = (bandRows - 1) * a.sh + (a.kh - 1) * a.dh + 1;
  for (int64_t c = 0; c < a.Cg; ++c)
    for (int64_t i = 0; i < a.kh; ++i)
      for (int64_t j = 0; j < a.kw; ++j)
        g.tapOff.push_back(((c * g.rows + i * a.dh) * a.sw + j * a.dw % a.sw) * g.Wq + j * a.dw / a.sw);
  return g;
}

}  // namespace direct_rows
}  // namespace zp::runtime
#endif

HWY_BEFORE_NAMESPACE();
namespace zp::runtime::HWY_NAMESPACE {
namespace {

using direct_rows::Geom;
using direct_rows::kChannels;

// Vectors of positions per tile: with 32 registers three (24 accumulators, three
// inputs and a broadcast), with 16 one.
constexpr int kMaxVectors = kVectorRegisters >= 32 ? 3 : 1;

// Output positions ow0 .. ow0 + n - 1 (NV vectors, the last possibly partial) of row oh,
// whose first input row is row ohIn * sh of the band's copy xp,
// channels m0 .. m0 + mc - 1 (mc <= 8; the chunk's weights wc are [K][8], zero past mc;
// bias at m0).
template <int NV>
void tile(const ConvAttrs& a, const Geom& g, const float* xp, const float* wc, const float* bias, const Epilogue& e,
          int64_t oh, int64_t ohIn, int64_t ow0, int64_t n, int64_t mc, float* y) {
  const DF d;
  VF acc[kChannels][NV];
  for (int m = 0; m < kChannels; ++m) {
    const VF b = hn::Set(d, m < mc ? bias[m] : 0.0f);
    for (int v = 0; v < NV; ++v) acc[m][v] = b;
  }
  const float* base = xp + ohIn * a.sh * a.sw * g.Wq + ow0;
  const int64_t* off = g.tapOff.data();
  for (int64_t t = 0; t < g.K; ++t) {
    const float* s = base + off[t];
    const float* w = wc + t * kChannels;
    VF x[NV];
    for (int v = 0; v < NV; ++v) x[v] = hn::LoadU(d, s + v * kLanes);
    for (int m = 0; m < kChannels; ++m) {
      const VF wm = hn::Set(d, w[m]);
      for (int v = 0; v < NV; ++v) acc[m][v] = hn::MulAdd(wm, x[v], acc[m][v]);
    }
  }
  const Epilogue::Kind kind = e.kind;
  const VF lo = hn::Set(d, kind == Epilogue::Clip ? e.lo : 0.0f), hi = hn::Set(d, e.hi);
  const int64_t P = g.OH * g.OW;
  for (int m = 0; m < kChannels; ++m) {
    if (m >= mc) break;
    float* out = y + m * P + oh * g.OW + ow0;
    for (int v = 0; v < NV; ++v) {
      VF r = acc[m][v];
      if (kind != Epilogue::None) r = hn::Max(r, lo);
      if (kind == Epilogue::Clip) r = hn::Min(r, hi);
      StoreFirst(r, d, out + v * kLanes, n - v * kLanes);
    }
  }
}

using TileFn = void (*)(const ConvAttrs&, const Geom&, const float*, const float*, const float*, const Epilogue&,
                        int64_t, int64_t, int64_t, int64_t, int64_t, float*);
template <size_t... I>
constexpr std::array<TileFn, sizeof...(I)> tileTable(std::index_sequence<I...>) {
  return {&tile<static_cast<int>(I) + 1>...};
}
constexpr auto kTiles = tileTable(std::make_index_sequence<kMaxVectors>{});

// Padded row r of channel c into its phase rows: zeros outside the input. Input
// column iw lands in phase (iw + padL) % sw at (iw + padL) / sw; at stride 2 a pass of
// interleaved loads fills both phases (a pass per phase took 1.7x the time).
void padRow(const ConvAttrs& a, const Geom& g, const float* xc, int64_t H, int64_t W, int64_t r, float* dst) {
  const int64_t ih = r - a.padT;
  if (ih < 0 || ih >= H) {
    std::memset(dst, 0, static_cast<size_t>(a.sw * g.Wq) * sizeof(float));
    return;
  }
  const float* src = xc + ih * W;
  // Per phase: the first input column it holds, how many, and where they start.
  int64_t first[2] = {0, 0}, count[2] = {0, 0}, u0[2] = {0, 0};
  for (int64_t q = 0; q < a.sw; ++q) {
    const int64_t f = ((q - a.padL) % a.sw + a.sw) % a.sw, n = f < W ? (W - f + a.sw - 1) / a.sw : 0;
    const int64_t u = (f + a.padL) / a.sw;
    float* p = dst + q * g.Wq;
    std::memset(p, 0, static_cast<size_t>(u) * sizeof(float));
    std::memset(p + u + n, 0, static_cast<size_t>(g.Wq - u - n) * sizeof(float));
    if (a.sw == 1) std::memcpy(p + u, src, static_cast<size_t>(n) * sizeof(float));
    else if (a.sw > 2) for (int64_t k = 0; k < n; ++k) p[u + k] = src[f + k * a.sw];
    else first[q] = f, count[q] = n, u0[q] = u;
  }
  if (a.sw != 2) return;
  // Columns 2k and 2k + 1 together: the phase of even columns and that of odd ones.
  const int64_t qe = first[0] == 0 ? 0 : 1, qo = 1 - qe;
  float* pe = dst + qe * g.Wq + u0[qe];
  float* po = dst + qo * g.Wq + u0[qo];
  const DF d;
  int64_t k = 0;
  for (; 2 * (k + kLanes) <= W; k += kLanes) {
    VF even, odd;
    hn::LoadInterleaved2(d, src + 2 * k, even, odd);
    hn::StoreU(even, d, pe + k);
    hn::StoreU(odd, d, po + k);
  }
  for (; 2 * k < W; ++k) {
    pe[k] = src[2 * k];
    if (2 * k + 1 < W) po[k] = src[2 * k + 1];
  }
}

}  // namespace

// Work items are bands of output rows, each copying the input rows it reads into its
// worker's buffer (the halo rows twice): with the copy split over the threads and the
// rows over them again, two threads took 1.2x one thread's time (each reading rows the
// other wrote). Every output is computed the same way whatever the bands, so results
// do not depend on the thread count.
void ConvDirectRows(const ConvAttrs& a, const float* wr, const float* bias, const float* x, int64_t N, int64_t H,
                    int64_t W, float* y, const Epilogue& epilogue, Scratch& scratch, int threads) {
  const Epilogue e = epilogue.clampOnly() ? epilogue : Epilogue{};
  threads = std::max(1, threads);
  const int64_t OH = a.outH(H);
  const int64_t bands = threads == 1 ? 1 : std::min<int64_t>(4 * threads, OH), band = (OH + bands - 1) / bands;
  const Geom g = direct_rows::geomOf(a, H, W, kLanes, band);
  const int64_t C = a.Cg, P = g.OH * g.OW, chunks = (a.M + kChannels - 1) / kChannels;
  const int64_t phaseRows = a.sw * g.Wq;
  // A row's vectors of positions in groups of at most kMaxVectors, as even as the count
  // allows: 7 as 3, 2, 2, not 3, 3, 1, whose one vector per tap waits on its loads.
  const int64_t vectors = (g.OW + kLanes - 1) / kLanes, groups = (vectors + kMaxVectors - 1) / kMaxVectors;
  const std::vector<float*> copies = scratch.workerFloats(threads, static_cast<size_t>(C * g.rows * phaseRows), 0);
  for (int64_t n = 0; n < N; ++n) {
    const float* xn = x + n * C * H * W;
    float* yn = y + n * a.M * P;
    parallelForEach(threads, bands, [&](int64_t bi, int tid) {
      const int64_t oh0 = bi * band, oh1 = std::min(OH, oh0 + band);
      if (oh0 >= oh1) return;
      float* xp = copies[static_cast<size_t>(tid)];
      const int64_t r0 = oh0 * a.sh, r1 = std::min(g.Hp, (oh1 - 1) * a.sh + (a.kh - 1) * a.dh + 1);
      for (int64_t c = 0; c < C; ++c)
        for (int64_t r = r0; r < r1; ++r) padRow(a, g, xn + c * H * W, H, W, r, xp + (c * g.rows + r - r0) * phaseRows);
      for (int64_t oh = oh0; oh < oh1; ++oh) {
        for (int64_t gi = 0; gi < groups; ++gi) {
          const int64_t v0 = vectors * gi / groups, nv = vectors * (gi + 1) / groups - v0;
          const int64_t ow0 = v0 * kLanes, count = std::min(nv * kLanes, g.OW - ow0);
          for (int64_t ch = 0; ch < chunks; ++ch)
            kTiles[static_cast<size_t>(nv - 1)](a, g, xp, wr + ch * g.K * kChannels, bias + ch * kChannels, e, oh,
                                                oh - oh0, ow0, count, std::min(kChannels, a.M - ch * kChannels),
                                                yn + ch * kChannels * P);
        }
        if (epilogue.clampOnly()) continue;
        for (int64_t m = 0; m < a.M; ++m)
          applyActivation(epilogue.fn, epilogue.params, yn + m * P + oh * g.OW, yn + m * P + oh * g.OW, g.OW);
      }
    }, 1);
  }
}

}  // namespace zp::runtime::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace zp::runtime {

HWY_EXPORT(ConvDirectRows);

bool directRowsFast() { return simdFloatLanes() >= 16; }

bool directRowsApplies(const ConvAttrs& a) {
  return a.group == 1 && !(a.kh == 1 && a.kw == 1 && a.sh == 1 && a.sw == 1);
}

// Rows m0..m0+7 of w ([M][K]) as [K][8] per chunk, zero past M.
std::vector<float> directRowsWeights(const ConvAttrs& a, const float* w) {
  const int64_t K = a.Cg * a.kh * a.kw, chunks = (a.M + direct_rows::kChannels - 1) / direct_rows::kChannels;
  std::vector<float> wr(static_cast<size_t>(chunks * K * direct_rows::kChannels), 0.0f);
  for (int64_t m = 0; m < a.M; ++m)
    for (int64_t k = 0; k < K; ++k)
      wr[static_cast<size_t>(((m / direct_rows::kChannels) * K + k) * direct_rows::kChannels +
                             m % direct_rows::kChannels)] = w[m * K + k];
  return wr;
}

void convDirectRows(const ConvAttrs& a, const float* wr, const float* bias, const float* x, int64_t N, int64_t H,
                    int64_t W, float* y, const Epilogue& epilogue, Scratch& scratch, int threads) {
  HWY_DYNAMIC_DISPATCH(ConvDirectRows)(a, wr, bias, x, N, H, W, y, epilogue, scratch, threads);
}

}  // namespace zp::runtime
#endif  // HWY_ONCE
