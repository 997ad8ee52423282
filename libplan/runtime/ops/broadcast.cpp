#include "libplan/runtime/ops/broadcast.h"

#include <algorithm>
#include <string>

namespace zp::runtime::detail {

Expected<Shape> broadcastShapes(const std::vector<Shape>& shapes) {
  size_t r = 0;
  for (const auto& s : shapes) r = std::max(r, s.size());
  Shape out(r, 1);
  for (const auto& s : shapes)
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t& o = out[r - s.size() + i];
      int64_t d = s[i];
      if (d == o || d == 1) continue;
      if (o == 1) { o = d; continue; }
      std::string all;
      for (const auto& t : shapes) all += shapeString(t) + " ";
      return makeError("shapes {}cannot be broadcast", all);
    }
  return out;
}

Broadcast makeBroadcast(const Shape& out, const std::vector<Shape>& ins) {
  Broadcast b;
  b.out = out;
  const size_t r = out.size(), n = ins.size();
  std::vector<std::vector<int64_t>> full(n, std::vector<int64_t>(r, 0));
  for (size_t i = 0; i < n; ++i) {
    int64_t st = 1;
    for (size_t d = r; d-- > 0;) {
      size_t off = r - ins[i].size();
      int64_t dim = d >= off ? ins[i][d - off] : 1;
      full[i][d] = (dim == 1) ? 0 : st;
      st *= dim;
    }
  }
  b.strides.assign(n, {});
  for (size_t d = 0; d < r; ++d) {
    if (out[d] == 1) continue;
    if (!b.dims.empty()) {
      bool merge = true;
      for (size_t i = 0; i < n; ++i)
        if (b.strides[i].back() != full[i][d] * out[d]) { merge = false; break; }
      if (merge) {
        b.dims.back() *= out[d];
        for (size_t i = 0; i < n; ++i) b.strides[i].back() = full[i][d];
        continue;
      }
    }
    b.dims.push_back(out[d]);
    for (size_t i = 0; i < n; ++i) b.strides[i].push_back(full[i][d]);
  }
  return b;
}

}  // namespace zp::runtime::detail
