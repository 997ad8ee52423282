// Max pooling from the input rows, for CPUs with AVX-512 and column strides 1 and 2:
// an output row is the maximum of its window's input rows (whole rows, 16 lanes at a
// time), then of each window's columns in that row, read at constant offsets (at
// stride 2 from the row split into its even and odd columns). The window layout
// copies every plane into stride phases first; for a 3x3 stride-2 pool that copy
// costs more than the maxima themselves (SqueezeNet's and GoogLeNet's pools ran at
// 3-4x ONNX Runtime's time).
#include "libplan/runtime/kernels/internal.h"

#include <algorithm>
#include <cmath>

#include "libplan/runtime/kernels/avx512_transpose.h"
#include "libplan/runtime/kernels/parallel.h"

namespace zp::runtime {

#if defined(__x86_64__)
namespace {

using namespace avx512;

constexpr int64_t kLanes = 16;
const bool kHaveAvx512 = __builtin_cpu_supports("avx512f");

struct RowGeom {
  int64_t OH = 0, OW = 0;
  int64_t len = 0;  // padded row: padL -inf, the W inputs, -inf up to the last window's end and a vector beyond
  int64_t half = 0;  // even and odd columns at stride 2
};

RowGeom rowGeom(const ConvAttrs& a, int64_t H, int64_t W) {
  RowGeom g;
  g.OH = a.outH(H);
  g.OW = a.outW(W);
  const int64_t reach = (g.OW - 1) * a.sw + (a.kw - 1) * a.dw + 1;
  g.len = std::max(a.padL + W, reach) + 2 * kLanes;
  g.half = (g.len + 1) / 2 + kLanes;
  return g;
}

// Masked forms with every lane set: GCC 12 warns about the plain ones (its bug 105593).
__attribute__((target("avx512f"))) inline __m512 vmax(__m512 a, __m512 b) { return _mm512_mask_max_ps(a, 0xffff, a, b); }

// row[padL + w] = the maximum over the window's in-bounds input rows of output row oh
// (row's other cells stay -inf); false when every row of the window is padding.
__attribute__((target("avx512f"))) bool verticalMax(const ConvAttrs& a, const float* x, int64_t H, int64_t W,
                                                    int64_t oh, float* row) {
  bool any = false;
  float* dst = row + a.padL;
  for (int64_t i = 0; i < a.kh; ++i) {
    const int64_t ih = oh * a.sh - a.padT + i * a.dh;
    if (ih < 0 || ih >= H) continue;
    const float* src = x + ih * W;
    for (int64_t w = 0; w < W; w += kLanes) {
      const __mmask16 m = laneMask(W - w);
      const __m512 v = _mm512_maskz_loadu_ps(m, src + w);
      _mm512_mask_storeu_ps(dst + w, m, any ? vmax(_mm512_maskz_loadu_ps(m, dst + w), v) : v);
    }
    any = true;
  }
  return any;
}

// even[k] = row[2k], odd[k] = row[2k + 1] over the padded row.
__attribute__((target("avx512f"))) void splitColumns(const float* row, const RowGeom& g, float* even, float* odd) {
  const __m512i evenIdx = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i oddIdx = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  for (int64_t k = 0; 2 * k + 2 * kLanes <= g.len; k += kLanes) {
    const __m512 lo = _mm512_loadu_ps(row + 2 * k), hi = _mm512_loadu_ps(row + 2 * k + kLanes);
    _mm512_storeu_ps(even + k, _mm512_permutex2var_ps(lo, evenIdx, hi));
    _mm512_storeu_ps(odd + k, _mm512_permutex2var_ps(lo, oddIdx, hi));
  }
}

// out[ow] = max over taps j of row[ow * sw + j * dw], sw 1 or 2.
__attribute__((target("avx512f"))) void horizontalMax(const ConvAttrs& a, const RowGeom& g, const float* row,
                                                      const float* even, const float* odd, float* out) {
  for (int64_t ow = 0; ow < g.OW; ow += kLanes) {
    __m512 acc = _mm512_set1_ps(-INFINITY);
    for (int64_t j = 0; j < a.kw; ++j) {
      const int64_t t = j * a.dw;
      const float* src = a.sw == 1 ? row + t : (t % 2 == 0 ? even + t / 2 : odd + t / 2);
      acc = vmax(acc, _mm512_loadu_ps(src + ow));
    }
    _mm512_mask_storeu_ps(out + ow, laneMask(g.OW - ow), acc);
  }
}

}  // namespace

bool maxPoolRowsApplies(const ConvAttrs& a) { return kHaveAvx512 && (a.sw == 1 || a.sw == 2); }

void maxPoolRows(const ConvAttrs& a, const float* x, int64_t planes, int64_t H, int64_t W, float* y, Scratch& scratch,
                 int threads) {
  const RowGeom g = rowGeom(a, H, W);
  threads = std::max(1, threads);
  const int64_t perThread = g.len + 2 * g.half;
  float* buffers = scratch.floats(static_cast<size_t>(threads * perThread));
  parallelForEach(threads, planes, [&](int64_t p, int tid) {
    float* row = buffers + tid * perThread;
    float *even = row + g.len, *odd = even + g.half;
    std::fill(row, row + perThread, -INFINITY);
    const float* xp = x + p * H * W;
    float* yp = y + p * g.OH * g.OW;
    for (int64_t oh = 0; oh < g.OH; ++oh) {
      float* out = yp + oh * g.OW;
      if (!verticalMax(a, xp, H, W, oh, row)) {
        std::fill(out, out + g.OW, -INFINITY);
        continue;
      }
      if (a.sw == 2) splitColumns(row, g, even, odd);
      horizontalMax(a, g, row, even, odd, out);
    }
  });
}
#else
bool maxPoolRowsApplies(const ConvAttrs&) { return false; }
void maxPoolRows(const ConvAttrs&, const float*, int64_t, int64_t, int64_t, float*, Scratch&, int) {}
#endif

}  // namespace zp::runtime
