// A task is one plane's strip of 16 output rows: it writes those rows whole, and
// reads the input 16 columns wide, a cache line per input row of a tile.
#include "libplan/runtime/kernels/transpose.h"

#include <algorithm>

#include "libplan/runtime/kernels/avx512_transpose.h"
#include "libplan/runtime/kernels/parallel.h"
#include "libplan/runtime/kernels/cpu_features.h"

namespace zp::runtime {
namespace {

constexpr int64_t kTile = 16;
// Below this many elements the copy is shorter than a helper thread's start.
constexpr int64_t kParallelElements = 16384;

// One tile of na x nb output elements, a0 and b0 its corner.
void tileScalar(const uint32_t* src, int64_t ld, int64_t na, int64_t nb, uint32_t* dst, int64_t cols) {
  for (int64_t a = 0; a < na; ++a)
    for (int64_t b = 0; b < nb; ++b) dst[a * cols + b] = src[a + b * ld];
}

#if defined(__x86_64__)

__attribute__((target("avx512f"))) void tileAvx512(const uint32_t* src, int64_t ld, int64_t na, int64_t nb,
                                                   uint32_t* dst, int64_t cols) {
  using namespace avx512;
  const __mmask16 loadMask = laneMask(na), storeMask = laneMask(nb);
  __m512 r[kTile];
  for (int64_t b = 0; b < kTile; ++b)
    r[b] = b < nb ? _mm512_maskz_loadu_ps(loadMask, src + b * ld) : _mm512_setzero_ps();
  transpose16(r);
  for (int64_t a = 0; a < na; ++a) _mm512_mask_storeu_ps(dst + a * cols, storeMask, r[a]);
}
#endif

void strip(const uint32_t* src, int64_t rows, int64_t cols, int64_t ld, int64_t a0, uint32_t* dst) {
  const int64_t na = std::min(kTile, rows - a0);
  for (int64_t b0 = 0; b0 < cols; b0 += kTile) {
    const int64_t nb = std::min(kTile, cols - b0);
    const uint32_t* s = src + a0 + b0 * ld;
    uint32_t* d = dst + a0 * cols + b0;
#if defined(__x86_64__)
    if (kHaveAvx512) {
      tileAvx512(s, ld, na, nb, d, cols);
      continue;
    }
#endif
    tileScalar(s, ld, na, nb, d, cols);
  }
}

}  // namespace

void transposePlanes(const uint32_t* src, const std::vector<int64_t>& planeOffsets, int64_t rows, int64_t cols,
                     int64_t ld, uint32_t* dst, int threads) {
  const int64_t strips = (rows + kTile - 1) / kTile;
  const int64_t tasks = static_cast<int64_t>(planeOffsets.size()) * strips;
  const int64_t elements = static_cast<int64_t>(planeOffsets.size()) * rows * cols;
  parallelForEach(elements >= kParallelElements ? threads : 1, tasks, [&](int64_t t, int) {
    const int64_t p = t / strips, a0 = (t % strips) * kTile;
    strip(src + planeOffsets[static_cast<size_t>(p)], rows, cols, ld, a0, dst + p * rows * cols);
  });
}

}  // namespace zp::runtime
