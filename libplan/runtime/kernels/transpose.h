// Planes of 4-byte elements transposed in square tiles of a vector's width, on the runtime's threads.
// Transpose's general strided copy reads its innermost output dim down a column:
// one cache line per element, and ConvNeXt's NCHW <-> NHWC permutes ran slower on
// two threads than on one.
#pragma once
#include <cstdint>
#include <vector>

namespace zp::runtime {

// For every plane p: dst[p][a][b] = src[planeOffsets[p] + a + b * ld], a < rows, b < cols;
// the output planes are contiguous, one after another.
void transposePlanes(const uint32_t* src, const std::vector<int64_t>& planeOffsets, int64_t rows, int64_t cols,
                     int64_t ld, uint32_t* dst, int threads);
// One plane on the calling thread: dst[a * ldDst + b] = src[a + b * ld], a < rows, b < cols.
void transposeInto(const uint32_t* src, int64_t rows, int64_t cols, int64_t ld, uint32_t* dst, int64_t ldDst);

}  // namespace zp::runtime
