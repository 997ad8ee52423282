// Numpy-style broadcasting of several operands to one output shape.
#pragma once
#include <cstdint>
#include <vector>

#include "libplan/runtime/tensor.h"
#include "libplan/util/error.h"

namespace zp::runtime::detail {

// The operands' broadcast layout, with dimensions merged where every operand is
// contiguous (or broadcast) across them.
struct Broadcast {
  Shape out;
  std::vector<int64_t> dims;                 // merged dims, innermost last
  std::vector<std::vector<int64_t>> strides; // per operand, per merged dim
};
Expected<Shape> broadcastShapes(const std::vector<Shape>& shapes);
Broadcast makeBroadcast(const Shape& out, const std::vector<Shape>& ins);

// f(outOffset, inOffsets, innerLen, innerStrides) for every innermost row.
template <typename F>
void forEachRow(const Broadcast& b, F&& f) {
  const size_t n = b.strides.size();
  const int64_t total = numel(b.out);
  if (total == 0) return;
  if (b.dims.empty()) {
    std::vector<int64_t> offs(n, 0), st(n, 0);
    f(int64_t{0}, offs.data(), int64_t{1}, st.data());
    return;
  }
  const size_t r = b.dims.size();
  const int64_t inner = b.dims[r - 1];
  std::vector<int64_t> innerSt(n), offs(n, 0), idx(r, 0);
  for (size_t i = 0; i < n; ++i) innerSt[i] = b.strides[i][r - 1];
  for (int64_t o = 0; o < total; o += inner) {
    f(o, offs.data(), inner, innerSt.data());
    // odometer over the outer dims
    for (size_t d = r - 1; d-- > 0;) {
      ++idx[d];
      for (size_t i = 0; i < n; ++i) offs[i] += b.strides[i][d];
      if (idx[d] < b.dims[d]) break;
      for (size_t i = 0; i < n; ++i) offs[i] -= b.strides[i][d] * idx[d];
      idx[d] = 0;
    }
  }
}

// forEachRow over the pieces [lo, hi) of the output, where the output is cut into
// pieces of at most `piece` elements that never cross an innermost row: one row
// may be several pieces (a long row), a piece never spans two rows.
template <typename F>
void forEachPiece(const Broadcast& b, int64_t piece, int64_t lo, int64_t hi, F&& f) {
  const size_t n = b.strides.size();
  const size_t r = b.dims.size();
  const int64_t inner = r ? b.dims[r - 1] : 1;
  const int64_t perRow = (inner + piece - 1) / piece;
  std::vector<int64_t> innerSt(n, 0), offs(n, 0), idx(r, 0);
  for (size_t i = 0; i < n && r; ++i) innerSt[i] = b.strides[i][r - 1];
  int64_t row = lo / perRow;
  // The odometer at `row`.
  for (size_t d = r - 1, rem = static_cast<size_t>(row); r && d-- > 0;) {
    idx[d] = static_cast<int64_t>(rem % static_cast<size_t>(b.dims[d]));
    rem /= static_cast<size_t>(b.dims[d]);
    for (size_t i = 0; i < n; ++i) offs[i] += idx[d] * b.strides[i][d];
  }
  std::vector<int64_t> at(n);
  for (int64_t p = lo; p < hi;) {
    const int64_t k = p - row * perRow, start = k * piece, len = std::min(piece, inner - start);
    for (size_t i = 0; i < n; ++i) at[i] = offs[i] + start * innerSt[i];
    f(row * inner + start, at.data(), len, innerSt.data());
    if (++p % perRow != 0 || p >= hi) continue;
    ++row;
    for (size_t d = r - 1; r && d-- > 0;) {
      ++idx[d];
      for (size_t i = 0; i < n; ++i) offs[i] += b.strides[i][d];
      if (idx[d] < b.dims[d]) break;
      for (size_t i = 0; i < n; ++i) offs[i] -= b.strides[i][d] * idx[d];
      idx[d] = 0;
    }
  }
}

// The number of pieces forEachPiece cuts the output into.
inline int64_t pieceCount(const Broadcast& b, int64_t piece) {
  const int64_t total = numel(b.out);
  if (total == 0) return 0;
  const int64_t inner = b.dims.empty() ? 1 : b.dims.back();
  return total / inner * ((inner + piece - 1) / piece);
}

}  // namespace zp::runtime::detail
