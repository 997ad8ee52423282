// Max pooling from the input rows, for CPUs with AVX-512 and column strides 1 and 2,
// in two passes over a plane: the maximum over each output row's window rows (whole
// rows, 16 columns per register, stored once; at stride 2 split into even and odd
// columns), then over each window's columns, read at constant offsets. The window
// layout copies every plane into stride phases first, which for a 3x3 pool costs more
// than the maxima (SqueezeNet's and GoogLeNet's pools ran at 3-4x ONNX Runtime's
// time); a per-row buffer updated in place and read back at once stalled on store
// forwarding instead (1.8x this one's time on 28x28 maps).
#include "libplan/runtime/kernels/internal.h"

#include <algorithm>
#include <cmath>

#include "libplan/runtime/kernels/avx512_transpose.h"
#include "libplan/runtime/kernels/parallel.h"
#include "libplan/runtime/kernels/cpu_features.h"

namespace zp::runtime {

#if defined(__x86_64__)
namespace {

using namespace avx512;

constexpr int64_t kMaxRows = 32;  // window rows kept as pointers

// The plane's vertical maxima, one row per output row, in padded columns (column p
// is input column p - padL; -inf outside the input): at stride 1 the row itself,
// at stride 2 its even and then its odd columns.
struct PlaneGeom {
  int64_t OH = 0, OW = 0;
  int64_t cols = 0;    // padded columns computed per row: the last window's end, whole vectors
  int64_t stride = 0;  // floats per row in the buffer
};

PlaneGeom planeGeom(const ConvAttrs& a, int64_t H, int64_t W) {
  PlaneGeom g;
  g.OH = a.outH(H);
  g.OW = a.outW(W);
  const int64_t reach = (g.OW - 1) * a.sw + (a.kw - 1) * a.dw + 1;
  // Reads go up to a vector past the last output: whole vectors of 32 columns cover both strides.
  g.cols = (reach + kAvx512Lanes + 2 * kAvx512Lanes - 1) / (2 * kAvx512Lanes) * (2 * kAvx512Lanes);
  g.stride = g.cols + kAvx512Lanes;
  return g;
}

// Lanes l with 0 <= first + l < W.
__attribute__((target("avx512f"))) inline __mmask16 inputLanes(int64_t first, int64_t W) {
  const int64_t lo = std::clamp<int64_t>(-first, 0, kAvx512Lanes), hi = std::clamp<int64_t>(W - first, 0, kAvx512Lanes);
  return hi <= lo ? 0 : static_cast<__mmask16>(laneMask(hi) & ~laneMask(lo));
}

// Masked forms with every lane set: GCC 12 warns about the plain ones (its bug 105593).
__attribute__((target("avx512f"))) inline __m512 vmax(__m512 a, __m512 b) { return _mm512_mask_max_ps(a, 0xffff, a, b); }

// Maximum over rows[0..n) of input columns first..first+15 (-inf outside the input).
__attribute__((target("avx512f"))) inline __m512 columnMax(const float* const* rows, int n, int64_t first,
                                                           int64_t W) {
  const __m512 neg = _mm512_set1_ps(-INFINITY);
  const __mmask16 m = inputLanes(first, W);
  __m512 acc = neg;
  if (m == 0) return acc;
  for (int i = 0; i < n; ++i)
    acc = vmax(acc, m == 0xffff ? _mm512_loadu_ps(rows[i] + first) : _mm512_mask_loadu_ps(neg, m, rows[i] + first));
  return acc;
}

// Every output row's vertical maxima into buf (PlaneGeom's layout): each register
// holds the maximum over the window's rows before it is stored once.
__attribute__((target("avx512f"))) void verticalPass(const ConvAttrs& a, const PlaneGeom& g, const float* x, int64_t H,
                                                     int64_t W, float* buf) {
  const __m512i evenIdx = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i oddIdx = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  for (int64_t oh = 0; oh < g.OH; ++oh) {
    const float* rows[kMaxRows];
    int n = 0;
    for (int64_t i = 0; i < a.kh; ++i) {
      const int64_t ih = oh * a.sh - a.padT + i * a.dh;
      if (ih >= 0 && ih < H) rows[n++] = x + ih * W;
    }
    float* row = buf + oh * g.stride;
    for (int64_t p = 0; p < g.cols; p += 2 * kAvx512Lanes) {
      const __m512 lo = columnMax(rows, n, p - a.padL, W), hi = columnMax(rows, n, p + kAvx512Lanes - a.padL, W);
      if (a.sw == 1) {
        _mm512_storeu_ps(row + p, lo);
        _mm512_storeu_ps(row + p + kAvx512Lanes, hi);
      } else {
        _mm512_storeu_ps(row + p / 2, _mm512_permutex2var_ps(lo, evenIdx, hi));
        _mm512_storeu_ps(row + g.cols / 2 + p / 2, _mm512_permutex2var_ps(lo, oddIdx, hi));
      }
    }
  }
}

// out[oh][ow] = max over taps j of padded column ow * sw + j * dw of row oh's maxima.
__attribute__((target("avx512f"))) void horizontalPass(const ConvAttrs& a, const PlaneGeom& g, const float* buf,
                                                       float* out) {
  for (int64_t oh = 0; oh < g.OH; ++oh) {
    const float* row = buf + oh * g.stride;
    for (int64_t ow = 0; ow < g.OW; ow += kAvx512Lanes) {
      __m512 acc = _mm512_set1_ps(-INFINITY);
      for (int64_t j = 0; j < a.kw; ++j) {
        const int64_t t = j * a.dw;
        const float* src = a.sw == 1 ? row + t : row + (t % 2 == 0 ? 0 : g.cols / 2) + t / 2;
        acc = vmax(acc, _mm512_loadu_ps(src + ow));
      }
      float* o = out + oh * g.OW + ow;
      if (g.OW - ow >= kAvx512Lanes) _mm512_storeu_ps(o, acc);
      else _mm512_mask_storeu_ps(o, laneMask(g.OW - ow), acc);
    }
  }
}

}  // namespace

bool maxPoolRowsApplies(const ConvAttrs& a) { return kHaveAvx512 && (a.sw == 1 || a.sw == 2) && a.kh <= kMaxRows; }

void maxPoolRows(const ConvAttrs& a, const float* x, int64_t planes, int64_t H, int64_t W, float* y, Scratch& scratch,
                 int threads) {
  const PlaneGeom g = planeGeom(a, H, W);
  threads = std::max(1, threads);
  const int64_t perThread = g.OH * g.stride;
  float* buffers = scratch.floats(static_cast<size_t>(threads * perThread));
  parallelForEach(threads, planes, [&](int64_t p, int tid) {
    float* buf = buffers + tid * perThread;
    verticalPass(a, g, x + p * H * W, H, W, buf);
    horizontalPass(a, g, buf, y + p * g.OH * g.OW);
  });
}
#else
bool maxPoolRowsApplies(const ConvAttrs&) { return false; }
void maxPoolRows(const ConvAttrs&, const float*, int64_t, int64_t, int64_t, float*, Scratch&, int) {}
#endif

}  // namespace zp::runtime
