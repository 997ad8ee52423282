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

}  // namespace zp::runtime::detail
