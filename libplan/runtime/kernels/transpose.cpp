// A task is one plane's strip of 16 output rows: it writes those rows whole, and
// reads the input in tiles as wide as a vector, a cache line or less per input row.
#include "libplan/runtime/kernels/transpose.h"

#include <algorithm>

#include "libplan/runtime/kernels/parallel.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "libplan/runtime/kernels/transpose.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "libplan/runtime/kernels/simd-inl.h"

#ifndef ZP_RUNTIME_KERNELS_TRANSPOSE_ONCE_
#define ZP_RUNTIME_KERNELS_TRANSPOSE_ONCE_
namespace zp::runtime {
constexpr int64_t kStrip = 16;  // output rows per task
// Below this many elements the copy is shorter than a helper thread's start.
constexpr int64_t kParallelElements = 16384;
}  // namespace zp::runtime
#endif

HWY_BEFORE_NAMESPACE();
namespace zp::runtime::HWY_NAMESPACE {
namespace {

using DU = hn::ScalableTag<uint32_t>;
constexpr int64_t kTile = static_cast<int64_t>(hn::MaxLanes(DU()));

// One tile of na x nb output elements (at most kTile each), transposed in registers.
void Tile(const uint32_t* src, int64_t ld, int64_t na, int64_t nb, uint32_t* dst, int64_t cols) {
  const DU d;
  hn::Vec<DU> r[kTile];
  for (int64_t b = 0; b < kTile; ++b) r[b] = b < nb ? LoadFirst(d, src + b * ld, na) : hn::Zero(d);
  TransposeSquare(d, r);
  for (int64_t a = 0; a < na; ++a) StoreFirst(r[a], d, dst + a * cols, nb);
}

}  // namespace

// Output rows a0 .. a0 + kStrip - 1 (or fewer at the end) of one plane, its rows
// ldDst elements apart.
void Strip(const uint32_t* src, int64_t rows, int64_t cols, int64_t ld, int64_t a0, uint32_t* dst, int64_t ldDst) {
  const int64_t end = std::min(rows, a0 + kStrip);
  for (int64_t t0 = a0; t0 < end; t0 += kTile) {
    const int64_t na = std::min(kTile, end - t0);
    for (int64_t b0 = 0; b0 < cols; b0 += kTile)
      Tile(src + t0 + b0 * ld, ld, na, std::min(kTile, cols - b0), dst + t0 * ldDst + b0, ldDst);
  }
}

}  // namespace zp::runtime::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace zp::runtime {

HWY_EXPORT(Strip);

void transposePlanes(const uint32_t* src, const std::vector<int64_t>& planeOffsets, int64_t rows, int64_t cols,
                     int64_t ld, uint32_t* dst, int threads) {
  const int64_t strips = (rows + kStrip - 1) / kStrip;
  const int64_t tasks = static_cast<int64_t>(planeOffsets.size()) * strips;
  const int64_t elements = static_cast<int64_t>(planeOffsets.size()) * rows * cols;
  const auto strip = HWY_DYNAMIC_DISPATCH(Strip);
  parallelForEach(elements >= kParallelElements ? threads : 1, tasks, [&](int64_t t, int) {
    const int64_t p = t / strips, a0 = (t % strips) * kStrip;
    strip(src + planeOffsets[static_cast<size_t>(p)], rows, cols, ld, a0, dst + p * rows * cols, cols);
  });
}

void transposeInto(const uint32_t* src, int64_t rows, int64_t cols, int64_t ld, uint32_t* dst, int64_t ldDst) {
  const auto strip = HWY_DYNAMIC_DISPATCH(Strip);
  for (int64_t a0 = 0; a0 < rows; a0 += kStrip) strip(src, rows, cols, ld, a0, dst, ldDst);
}

}  // namespace zp::runtime
#endif  // HWY_ONCE
