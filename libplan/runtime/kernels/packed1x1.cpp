// Pointwise (1x1) conv as a product with weights packed once at load, for CPUs with
// AVX-512: Y[M, P] = W[M, K] X[K, P]. The weights are stored in panels of 32 output
// channels, k-major ([M/32][K][32], zero-padded), so that a tile of 32 channels by up
// to 8 pixels keeps 16 accumulators in registers: per k, two weight vectors and one
// broadcast input per pixel. The GEMM library instead packs the weight matrix again
// on every call, which on small maps (7x7, 14x14) costs as much as the product.
// Each tile's 32 channels of a pixel are written with one scatter of stride P.
#include "libplan/runtime/kernels/internal.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "libplan/runtime/kernels/parallel.h"

namespace zp::runtime {

namespace {
constexpr int64_t kPanel = 32;    // output channels per panel
constexpr int kPixelTile = 8;          // pixels per tile
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

#if defined(__x86_64__)
namespace {

template <int NP>
__attribute__((target("avx512f"))) void tile(const float* wp, const float* x, int64_t P, int64_t K, const float* bias,
                                             const Epilogue& e, __mmask16 m0, __mmask16 m1, float* y) {
  const __m512 b0 = _mm512_maskz_loadu_ps(m0, bias), b1 = _mm512_maskz_loadu_ps(m1, bias + 16);
  __m512 a0[NP], a1[NP];
  for (int p = 0; p < NP; ++p) { a0[p] = b0; a1[p] = b1; }
  for (int64_t k = 0; k < K; ++k) {
    const __m512 w0 = _mm512_loadu_ps(wp + k * kPanel), w1 = _mm512_loadu_ps(wp + k * kPanel + 16);
    const float* xr = x + k * P;
    for (int p = 0; p < NP; ++p) {
      const __m512 v = _mm512_set1_ps(xr[p]);
      a0[p] = _mm512_fmadd_ps(w0, v, a0[p]);
      a1[p] = _mm512_fmadd_ps(w1, v, a1[p]);
    }
  }
  const __m512 lo = _mm512_set1_ps(e.kind == Epilogue::Clip ? e.lo : 0.0f), hi = _mm512_set1_ps(e.hi);
  const __m512i idx = _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                                         _mm512_set1_epi32(static_cast<int>(P)));
  for (int p = 0; p < NP; ++p) {
    __m512 v0 = a0[p], v1 = a1[p];
    // Masked forms with every lane set: GCC 12 warns about the plain ones (its bug 105593).
    if (e.kind != Epilogue::None) { v0 = _mm512_mask_max_ps(v0, 0xffff, v0, lo); v1 = _mm512_mask_max_ps(v1, 0xffff, v1, lo); }
    if (e.kind == Epilogue::Clip) { v0 = _mm512_mask_min_ps(v0, 0xffff, v0, hi); v1 = _mm512_mask_min_ps(v1, 0xffff, v1, hi); }
    _mm512_mask_i32scatter_ps(y + p, m0, idx, v0, 4);
    _mm512_mask_i32scatter_ps(y + 16 * P + p, m1, idx, v1, 4);
  }
}

using TileFn = void (*)(const float*, const float*, int64_t, int64_t, const float*, const Epilogue&, __mmask16,
                        __mmask16, float*);
constexpr TileFn kTiles[kPixelTile + 1] = {nullptr, tile<1>, tile<2>, tile<3>, tile<4>, tile<5>, tile<6>, tile<7>, tile<8>};

// Output channels [m0, m0 + 32) by pixels [p0, p1).
void panelPixels(int64_t M, int64_t K, int64_t P, const float* wp, const float* bias, const float* x, float* y,
                 const Epilogue& e, int64_t m0, int64_t p0, int64_t p1) {
  const int64_t rows = std::min(kPanel, M - m0);
  const __mmask16 k0 = static_cast<__mmask16>(rows >= 16 ? 0xffff : (1u << rows) - 1u);
  const __mmask16 k1 = static_cast<__mmask16>(rows >= 32 ? 0xffff : rows <= 16 ? 0 : (1u << (rows - 16)) - 1u);
  const float* wpan = wp + (m0 / kPanel) * K * kPanel;
  for (int64_t p = p0; p < p1; p += kPixelTile) {
    const int np = static_cast<int>(std::min<int64_t>(kPixelTile, p1 - p));
    kTiles[np](wpan, x + p, P, K, bias + m0, e, k0, k1, y + m0 * P + p);
  }
}

void pointwise512(int64_t M, int64_t K, int64_t P, const float* wp, const float* bias, const float* x, float* y,
                  const Epilogue& e, int threads) {
  const int64_t panels = (M + kPanel - 1) / kPanel, groups = (P + kPixelGroup - 1) / kPixelGroup;
  parallelForEach(threads, panels * groups, [&](int64_t item, int) {
    const int64_t p0 = (item % groups) * kPixelGroup;
    panelPixels(M, K, P, wp, bias, x, y, e, (item / groups) * kPanel, p0, std::min(P, p0 + kPixelGroup));
  });
}

const bool kHaveAvx512Pointwise = __builtin_cpu_supports("avx512f");

}  // namespace
#endif

bool pointwisePackedFast() {
#if defined(__x86_64__)
  return kHaveAvx512Pointwise;
#else
  return false;
#endif
}

void convPointwisePacked(const ConvAttrs& a, const PackedWeights& pw, const float* x, int64_t N, int64_t H,
                         int64_t W, float* y, const Epilogue& epilogue, Scratch& scratch, int threads) {
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
#if defined(__x86_64__)
    if (kHaveAvx512Pointwise) {
      pointwise512(M, K, P, wp, bias, xn, yn, e, threads);
    } else
#endif
    {
      // Portable fallback on the same packing (the default policy picks this kernel only with AVX-512).
      parallelForEach(threads, M, [&](int64_t m, int) {
        const float* wm = wp + (m / kPanel) * K * kPanel + m % kPanel;
        for (int64_t p = 0; p < P; ++p) {
          float s = bias[m];
          for (int64_t k = 0; k < K; ++k) s += wm[k * kPanel] * xn[k * P + p];
          yn[m * P + p] = actOne(s, e);
        }
      });
    }
    if (!epilogue.clampOnly()) applyEpilogueParallel(yn, M, P, nullptr, epilogue, threads);
  }
}

}  // namespace zp::runtime
