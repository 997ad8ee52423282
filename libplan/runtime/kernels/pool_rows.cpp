// Max and average pooling from the input rows, for column strides 1 and 2, in two
// passes over a plane: the maximum (sum) over each output row's window rows (whole
// rows, a vector of columns per register, stored once; at stride 2 split into even
// and odd columns), then over each window's columns, read at constant offsets; an
// average divides by its window's count there. The window layout copies every
// plane into stride phases first, which for a 3x3 pool costs more than the maxima
// (SqueezeNet's and GoogLeNet's pools ran at 3-4x ONNX Runtime's time, Inception's
// 3x3 average pools 5.6x); a per-row buffer updated in place and read back at once
// stalled on store forwarding instead (1.8x this one's time on 28x28 maps).
#include "libplan/runtime/kernels/internal.h"

#include <algorithm>
#include <cmath>

#include "libplan/runtime/kernels/parallel.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "libplan/runtime/kernels/pool_rows.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "libplan/runtime/kernels/simd-inl.h"

#ifndef ZP_RUNTIME_KERNELS_POOL_ROWS_ONCE_
#define ZP_RUNTIME_KERNELS_POOL_ROWS_ONCE_
namespace zp::runtime {
constexpr int64_t kPoolMaxRows = 32;  // window rows kept as pointers
}  // namespace zp::runtime
#endif

HWY_BEFORE_NAMESPACE();
namespace zp::runtime::HWY_NAMESPACE {
namespace {

// The plane's vertical maxima (sums), one row per output row, in padded columns
// (column p is input column p - padL; -inf (0) outside the input): at stride 1 the
// row itself, at stride 2 its even and then its odd columns.
struct PlaneGeom {
  int64_t OH = 0, OW = 0;
  int64_t cols = 0;    // padded columns computed per row: the last window's end, whole pairs of vectors
  int64_t stride = 0;  // floats per row in the buffer
};

PlaneGeom planeGeom(const ConvAttrs& a, int64_t H, int64_t W) {
  PlaneGeom g;
  g.OH = a.outH(H);
  g.OW = a.outW(W);
  const int64_t reach = (g.OW - 1) * a.sw + (a.kw - 1) * a.dw + 1;
  // Reads go up to a vector past the last output: whole pairs of vectors cover both strides.
  g.cols = (reach + kLanes + 2 * kLanes - 1) / (2 * kLanes) * (2 * kLanes);
  g.stride = g.cols + kLanes;
  return g;
}

// What a pool folds its window with: the maximum, or the sum (of an average).
template <bool kSum>
HWY_INLINE VF Identity(DF d) {
  return kSum ? hn::Zero(d) : hn::Set(d, -INFINITY);
}
template <bool kSum>
HWY_INLINE VF Fold(VF acc, VF v) {
  if constexpr (kSum) return hn::Add(acc, v);
  else return hn::Max(acc, v);
}

// The fold over rows[0..n) of input columns first .. first + kLanes - 1 (the identity outside the input).
template <bool kSum>
HWY_INLINE VF ColumnFold(DF d, const float* const* rows, int n, int64_t first, int64_t W) {
  const VF none = Identity<kSum>(d);
  const int64_t lo = std::max<int64_t>(0, -first), hi = std::min(kLanes, W - first);
  VF acc = none;
  if (hi <= lo) return acc;
  if (lo == 0 && hi == kLanes) {
    for (int i = 0; i < n; ++i) acc = Fold<kSum>(acc, hn::LoadU(d, rows[i] + first));
    return acc;
  }
  const auto inside = LaneRange(d, lo, hi);
  for (int i = 0; i < n; ++i)
    acc = Fold<kSum>(acc, hn::IfThenElse(inside, LoadRange(d, rows[i] + first, lo, hi), none));
  return acc;
}

// Every output row's vertical fold into buf (PlaneGeom's layout): each register
// holds the fold over the window's rows before it is stored once.
template <bool kSum>
void VerticalPass(const ConvAttrs& a, const PlaneGeom& g, const float* x, int64_t H, int64_t W, float* buf) {
  const DF d;
  for (int64_t oh = 0; oh < g.OH; ++oh) {
    const float* rows[kPoolMaxRows];
    int n = 0;
    for (int64_t i = 0; i < a.kh; ++i) {
      const int64_t ih = oh * a.sh - a.padT + i * a.dh;
      if (ih >= 0 && ih < H) rows[n++] = x + ih * W;
    }
    float* row = buf + oh * g.stride;
    for (int64_t p = 0; p < g.cols; p += 2 * kLanes) {
      const VF lo = ColumnFold<kSum>(d, rows, n, p - a.padL, W);
      const VF hi = ColumnFold<kSum>(d, rows, n, p + kLanes - a.padL, W);
      if (a.sw == 1) {
        hn::StoreU(lo, d, row + p);
        hn::StoreU(hi, d, row + p + kLanes);
      } else {
        hn::StoreU(hn::ConcatEven(d, hi, lo), d, row + p / 2);
        hn::StoreU(hn::ConcatOdd(d, hi, lo), d, row + g.cols / 2 + p / 2);
      }
    }
  }
}

// out[oh][ow] = the fold over taps j of padded column ow * sw + j * dw of row oh's
// folds; an average's sum divided by rowCount[oh] * colCount[ow] (0 where that is 0).
template <bool kSum>
void HorizontalPass(const ConvAttrs& a, const PlaneGeom& g, const float* buf, const float* rowCount,
                    const float* colCount, float* out) {
  const DF d;
  for (int64_t oh = 0; oh < g.OH; ++oh) {
    const float* row = buf + oh * g.stride;
    for (int64_t ow = 0; ow < g.OW; ow += kLanes) {
      VF acc = Identity<kSum>(d);
      for (int64_t j = 0; j < a.kw; ++j) {
        const int64_t t = j * a.dw;
        const float* src = a.sw == 1 ? row + t : row + (t % 2 == 0 ? 0 : g.cols / 2) + t / 2;
        acc = Fold<kSum>(acc, hn::LoadU(d, src + ow));
      }
      if constexpr (kSum) {
        const VF count = hn::Mul(hn::Set(d, rowCount[oh]), LoadFirst(d, colCount + ow, g.OW - ow));
        acc = hn::IfThenElseZero(hn::Gt(count, hn::Zero(d)), hn::Div(acc, count));
      }
      StoreFirst(acc, d, out + oh * g.OW + ow, g.OW - ow);
    }
  }
}

template <bool kSum>
void PoolRows(const ConvAttrs& a, const float* rowCount, const float* colCount, const float* x, int64_t planes,
              int64_t H, int64_t W, float* y, Scratch& scratch, int threads) {
  const PlaneGeom g = planeGeom(a, H, W);
  threads = std::max(1, threads);
  const int64_t perThread = g.OH * g.stride;
  const std::vector<float*> buffers = scratch.workerFloats(threads, static_cast<size_t>(perThread));
  parallelForEach(threads, planes, [&](int64_t p, int tid) {
    float* buf = buffers[static_cast<size_t>(tid)];
    VerticalPass<kSum>(a, g, x + p * H * W, H, W, buf);
    HorizontalPass<kSum>(a, g, buf, rowCount, colCount, y + p * g.OH * g.OW);
  });
}

}  // namespace

void MaxPoolRows(const ConvAttrs& a, const float* x, int64_t planes, int64_t H, int64_t W, float* y, Scratch& scratch,
                 int threads) {
  PoolRows<false>(a, nullptr, nullptr, x, planes, H, W, y, scratch, threads);
}

void AvgPoolRows(const ConvAttrs& a, const float* rowCount, const float* colCount, const float* x, int64_t planes,
                 int64_t H, int64_t W, float* y, Scratch& scratch, int threads) {
  PoolRows<true>(a, rowCount, colCount, x, planes, H, W, y, scratch, threads);
}

}  // namespace zp::runtime::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace zp::runtime {

HWY_EXPORT(MaxPoolRows);
HWY_EXPORT(AvgPoolRows);

bool poolRowsApply(const ConvAttrs& a) { return (a.sw == 1 || a.sw == 2) && a.kh <= kPoolMaxRows; }

void maxPoolRows(const ConvAttrs& a, const float* x, int64_t planes, int64_t H, int64_t W, float* y, Scratch& scratch,
                 int threads) {
  HWY_DYNAMIC_DISPATCH(MaxPoolRows)(a, x, planes, H, W, y, scratch, threads);
}

void avgPoolRows(const ConvAttrs& a, const float* rowCount, const float* colCount, const float* x, int64_t planes,
                 int64_t H, int64_t W, float* y, Scratch& scratch, int threads) {
  HWY_DYNAMIC_DISPATCH(AvgPoolRows)(a, rowCount, colCount, x, planes, H, W, y, scratch, threads);
}

}  // namespace zp::runtime
#endif  // HWY_ONCE
