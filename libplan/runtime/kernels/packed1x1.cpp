// Pointwise (1x1) conv as a product with weights packed once at load:
// Y[M, P] = W[M, K] X[K, P]. The weights are stored in panels of 32 output
// channels, k-major ([M/32][K][32], zero-padded), so that with AVX-512 a tile of 32
// channels by up to 8 pixels keeps 16 accumulators in registers: per k, two weight
// vectors and one broadcast input per pixel. The GEMM library instead packs the weight matrix again
// on every call, which on small maps (7x7, 14x14) costs as much as the product.
// Each tile's 32 channels of a pixel are written with one scatter of stride P (with
// narrower vectors a panel goes through its tiles in passes of two vectors), or as
// whole vectors into channel blocks (kernels.h BlockedLayouts).
#include "libplan/runtime/kernels/internal.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <cstring>
#include <utility>
#include <vector>

#include "libplan/runtime/kernels/parallel.h"
#include "libplan/runtime/kernels/simd_target.h"

#ifndef ZP_RUNTIME_KERNELS_PACKED1X1_ONCE_
#define ZP_RUNTIME_KERNELS_PACKED1X1_ONCE_
namespace zp::runtime {

namespace {
constexpr int64_t kPanel = 32;    // output channels per panel
constexpr int64_t kPixelGroup = 64;  // pixels per parallel work item
}  // namespace

std::vector<float> packPointwiseWeights(const ConvAttrs& a, const float* w) {
  const int64_t M = a.M, K = a.Cg, panels = (M + kPanel - 1) / kPanel;
  std::vector<float> p(static_cast<size_t>(panels * K * kPanel), 0.0f);
  // Written in order; the reads walk 32 rows of w side by side.
  for (int64_t panel = 0; panel < panels; ++panel) {
    const int64_t m0 = panel * kPanel, rows = std::min(kPanel, M - m0);
    float* dst = p.data() + panel * K * kPanel;
    for (int64_t k = 0; k < K; ++k)
      for (int64_t r = 0; r < rows; ++r) dst[k * kPanel + r] = w[(m0 + r) * K + k];
  }
  return p;
}

}  // namespace zp::runtime
#endif

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "libplan/runtime/kernels/packed1x1.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "libplan/runtime/kernels/simd-inl.h"

HWY_BEFORE_NAMESPACE();
namespace zp::runtime::HWY_NAMESPACE {
namespace {

// A panel's channels go through a tile kPassVectors vectors at a time: the whole panel
// with 16 lanes, halves with 8 (AVX2: 2 vectors by 6 pixels in its 16 registers, the
// shape of a GEMM micro-kernel), quarters with 4.
constexpr int kPassVectors = static_cast<int>(std::min<int64_t>(kPanel / kLanes, 2));
constexpr int64_t kPassChannels = kPassVectors * kLanes;
// Pixels per tile: their accumulators, the pass's weight vectors and a broadcast in
// registers (12 with AVX-512 and NEON's 32 registers, 6 with AVX2's 16). On MnasNet's
// and MobileNetV2's pointwise convs (AVX-512, one thread) 12 took 0.93-0.97x the time of 8.
constexpr int kPixelTile = std::clamp((kVectorRegisters - kPassVectors - 1) / kPassVectors, 1, 12);

// XB: x channel-blocked ([K/kLanes][P][kLanes], x at the tile's first pixel of the
// image's first block), else planes (x + k * P). YB: y likewise, else planes. V: the
// vectors of channels a pass computes (1 for a panel's last kLanes or fewer channels).
// res: the residual at the tile's first output (planes, as y), added before the clamp.
// next: the next panel's weights (or null), asked into L2 row by row as this tile runs.
// In a model a conv's weights come from L3 (RegNet-X's 400 -> 400: 640 KB), and the
// line-by-line prefetch of the panel in use (above) leaves each panel's first tile
// waiting on them; with the next panel asked for by the first tile of the one before,
// the kernel's summed time in MnasNet, MobileNetV2, EfficientNet-B0, RegNet-X-400MF
// and ResNet-50 took 0.91-0.97x (one thread, AVX-512, alternating binaries).
template <int NP, bool XB, bool YB, int V>
void tile(const float* wp, const float* x, int64_t P, int64_t K, const float* bias, int64_t rows, const Epilogue& e,
          const float* res, float* y, const float* next) {
  const DF d;
  const hn::RebindToSigned<DF> di;
  // Lane l of a vector is output channel l, P floats apart in planes.
  const auto idx = hn::Mul(hn::Iota(di, 0), hn::Set(di, static_cast<int32_t>(P)));
  VF acc[V][NP];
  for (int v = 0; v < V; ++v) {
    const VF b = LoadFirst(d, bias + v * kLanes, rows - v * kLanes);
    for (int p = 0; p < NP; ++p) acc[v][p] = b;
  }
  for (int64_t k = 0; k < K; ++k) {
    VF w[V];
    for (int v = 0; v < V; ++v) w[v] = hn::LoadU(d, wp + k * kPanel + v * kLanes);
    // The panel streams from L2 once it outgrows L1 (32 channels by K > ~200); asking
    // 16 rows ahead took 0.88-0.96x the time on MnasNet's 7x7 and 14x14 maps. A
    // prefetch past the end does not fault.
    hwy::Prefetch(wp + (k + 16) * kPanel);
    if (next)
      for (int64_t b = 0; b < kPanel; b += 64 / static_cast<int64_t>(sizeof(float)))
        __builtin_prefetch(next + k * kPanel + b, 0, 2);
    const float* xr = XB ? x + (k / kLanes) * P * kLanes + k % kLanes : x + k * P;
    for (int p = 0; p < NP; ++p) {
      const VF xv = hn::Set(d, xr[XB ? p * kLanes : p]);
      for (int v = 0; v < V; ++v) acc[v][p] = hn::MulAdd(w[v], xv, acc[v][p]);
    }
  }
  // The epilogue's kind is read once and every loop has a constant trip count, so the
  // accumulators stay in registers (a load of e.kind per store, which might alias y,
  // and runtime-bounded loops spilled all of them to the stack first).
  const Epilogue::Kind kind = e.kind;
  const VF lo = hn::Set(d, kind == Epilogue::Clip ? e.lo : 0.0f), hi = hn::Set(d, e.hi);
  if constexpr (!YB) {
    if (res) {
      for (int v = 0; v < V; ++v) {
        const int64_t n = std::min(kLanes, rows - v * kLanes);
        const float* r = res + v * kLanes * P;
        for (int p = 0; p < NP; ++p) {
          if (n == kLanes) {
            acc[v][p] = hn::Add(acc[v][p], hn::GatherIndex(d, r + p, idx));
          } else {
            HWY_ALIGN float buf[kLanes] = {};
            for (int64_t l = 0; l < n; ++l) buf[l] = r[l * P + p];
            acc[v][p] = hn::Add(acc[v][p], hn::Load(d, buf));
          }
        }
      }
    }
  }
  if (kind != Epilogue::None)
    for (int v = 0; v < V; ++v)
      for (int p = 0; p < NP; ++p) acc[v][p] = hn::Max(acc[v][p], lo);
  if (kind == Epilogue::Clip)
    for (int v = 0; v < V; ++v)
      for (int p = 0; p < NP; ++p) acc[v][p] = hn::Min(acc[v][p], hi);
  if constexpr (YB) {  // whole blocks: the caller checked M divides into them
    for (int v = 0; v < V; ++v)
      for (int p = 0; p < NP; ++p) hn::StoreU(acc[v][p], d, y + (v * P + p) * kLanes);
  } else {
    for (int v = 0; v < V; ++v) {
      const int64_t n = std::min(kLanes, rows - v * kLanes);
      float* out = y + v * kLanes * P;
      if (n == kLanes) {
        for (int p = 0; p < NP; ++p) hn::ScatterIndex(acc[v][p], d, out + p, idx);
      } else if (n > 0) {
        HWY_ALIGN float buf[kLanes];
        for (int p = 0; p < NP; ++p) {
          hn::Store(acc[v][p], d, buf);
          for (int64_t l = 0; l < n; ++l) out[l * P + p] = buf[l];
        }
      }
    }
  }
}

using TileFn = void (*)(const float*, const float*, int64_t, int64_t, const float*, int64_t, const Epilogue&,
                        const float*, float*, const float*);
using TileTable = std::array<TileFn, kPixelTile>;

template <bool XB, bool YB, int V, size_t... I>
constexpr TileTable tileTable(std::index_sequence<I...>) {
  return {&tile<static_cast<int>(I) + 1, XB, YB, V>...};
}
template <int V>
constexpr std::array<std::array<TileTable, 2>, 2> tilesOf() {
  constexpr auto pixels = std::make_index_sequence<kPixelTile>{};
  return {{{tileTable<false, false, V>(pixels), tileTable<false, true, V>(pixels)},
           {tileTable<true, false, V>(pixels), tileTable<true, true, V>(pixels)}}};
}
// Indexed [one vector][blocked input][blocked output].
constexpr std::array<std::array<TileTable, 2>, 2> kTiles[2] = {tilesOf<kPassVectors>(), tilesOf<1>()};

// Output channels [m0, m0 + kPanel) by pixels [p0, p1).
void panelPixels(int64_t M, int64_t K, int64_t P, const float* wp, const float* bias, const float* x,
                 const float* res, float* y, const Epilogue& e, int64_t m0, int64_t p0, int64_t p1, bool xBlocked,
                 bool yBlocked) {
  const float* wpan = wp + (m0 / kPanel) * K * kPanel;
  // A pixel is 1 float further in planes, kLanes in blocks; channel c starts c * P in both.
  const int64_t xStep = xBlocked ? kLanes : 1, yStep = yBlocked ? kLanes : 1;
  for (int64_t c0 = m0; c0 < std::min(M, m0 + kPanel); c0 += kPassChannels) {
    const int64_t rows = std::min(kPassChannels, M - c0);
    // A last pass of at most a vector's channels (M = 80 or 112 with 16 lanes) computes that vector alone.
    const TileTable& tiles = kTiles[rows <= kLanes][xBlocked][yBlocked];
    // Tiles as even as the count allows: 49 pixels as 7 of 7, not 6 of 8 and one of 1,
    // whose two accumulators wait on each other's FMA latency.
    const int64_t count = p1 - p0, tileCount = (count + kPixelTile - 1) / kPixelTile;
    for (int64_t t = 0, p = p0; t < tileCount; ++t) {
      const int64_t np = (count - (p - p0) + (tileCount - t) - 1) / (tileCount - t);
      const bool first = p0 == 0 && c0 == m0 && t == 0;
      tiles[static_cast<size_t>(np - 1)](wpan + (c0 - m0), x + p * xStep, P, K, bias + c0, rows, e,
                                         res ? res + c0 * P + p : nullptr, y + c0 * P + p * yStep,
                                         first && m0 + kPanel < M ? wpan + K * kPanel : nullptr);
      p += np;
    }
  }
}

}  // namespace

void Pointwise(int64_t M, int64_t K, int64_t P, const float* wp, const float* bias, const float* x, const float* res,
               float* y, const Epilogue& e, int threads, bool xBlocked, bool yBlocked) {
  const int64_t panels = (M + kPanel - 1) / kPanel, groups = (P + kPixelGroup - 1) / kPixelGroup;
  parallelForEach(threads, panels * groups, [&](int64_t item, int) {
    const int64_t p0 = (item % groups) * kPixelGroup;
    panelPixels(M, K, P, wp, bias, x, res, y, e, (item / groups) * kPanel, p0, std::min(P, p0 + kPixelGroup),
                xBlocked, yBlocked);
  });
}

}  // namespace zp::runtime::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace zp::runtime {

HWY_EXPORT(Pointwise);

// With 16 lanes a tile keeps 32 channels by 8 pixels in registers; with 8 (AVX2) 16 by 6,
// and the GEMM library's product measured faster (kernel_policy.cpp).
bool pointwisePackedFast() { return simdFloatLanes() >= 16; }

void convPointwisePacked(const ConvAttrs& a, const PackedWeights& pw, const float* x, int64_t N, int64_t H,
                         int64_t W, float* y, const Epilogue& epilogue, Scratch& scratch, int threads,
                         BlockedLayouts layouts, const float* residual) {
  assert(!layouts.blockedInput || convTakesBlockedInput(ConvKernel::Packed1x1, a));
  assert(!layouts.blockedOutput || convTakesBlockedOutput(ConvKernel::Packed1x1, a));
  assert(!residual || (!layouts.blockedOutput && epilogue.clampOnly()));
  const Epilogue e = epilogue.clampOnly() ? epilogue : Epilogue{};
  const int64_t OH = a.outH(H), OW = a.outW(W), P = OH * OW, K = a.Cg, M = a.M;
  const float* wp = pw.get("wp").as<float>();
  const float* bias = pw.get("bias").as<float>();
  for (int64_t n = 0; n < N; ++n) {
    const float* xn = x + n * K * H * W;
    if (a.sh != 1 || a.sw != 1) {  // strided: the subsampled input first
      float* col = scratch.floats(static_cast<size_t>(K * P));
      parallelForEach(threads, K, [&](int64_t c, int) {
        for (int64_t oh = 0; oh < OH; ++oh)
          for (int64_t ow = 0; ow < OW; ++ow) col[(c * OH + oh) * OW + ow] = xn[(c * H + oh * a.sh) * W + ow * a.sw];
      });
      xn = col;
    }
    float* yn = y + n * M * P;
    HWY_DYNAMIC_DISPATCH(Pointwise)(M, K, P, wp, bias, xn, residual ? residual + n * M * P : nullptr, yn, e, threads,
                                    layouts.blockedInput, layouts.blockedOutput);
    // Elementwise: the same on blocks as on planes.
    if (!epilogue.clampOnly()) applyEpilogueParallel(yn, M, P, nullptr, epilogue, threads);
  }
}

}  // namespace zp::runtime
#endif  // HWY_ONCE
