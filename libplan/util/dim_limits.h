// The bound a symbolic dim may be given (--batch, --dim, and the batch and dims
// recorded in stitch.json, report.json and the plan).
#pragma once
#include <cstdint>

namespace zp {

// Far above any real batch, small enough that element counts of real tensors stay within int64.
inline constexpr int64_t kMaxDimValue = int64_t{1} << 20;

}  // namespace zp
