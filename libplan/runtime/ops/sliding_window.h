// Output size of a sliding window (Conv, pooling) along one spatial dimension.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>

namespace zp::runtime::detail {

// Computes output size and (for auto_pad) the begin/end pads of one spatial dim.
inline int64_t slidingWindowOut(int64_t in, int64_t k, int64_t s, int64_t d, int64_t& pb, int64_t& pe, bool ceil,
                                const std::string& autoPad) {
  const int64_t ek = d * (k - 1) + 1;
  if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    int64_t out = (in + s - 1) / s;
    int64_t total = std::max<int64_t>(0, (out - 1) * s + ek - in);
    pb = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
    pe = total - pb;
    return out;
  }
  if (autoPad == "VALID") { pb = pe = 0; }
  const int64_t span = in + pb + pe - ek;
  if (!ceil) return span / s + 1;
  int64_t out = (span + s - 1) / s + 1;
  if ((out - 1) * s >= in + pb) --out;  // last window must start inside the input or the begin padding
  return out;
}

}  // namespace zp::runtime::detail
