// The process's peak resident set size, to report what serving really held in
// memory beside what the planner's own byte counts say.
#pragma once
#include <cstdint>

namespace zp {

// Peak RSS (VmHWM of /proc/self/status; getrusage's ru_maxrss where /proc is
// missing), in bytes.
int64_t peakRssBytes();
// Resets the peak to the current RSS (Linux: "5" into /proc/self/clear_refs), so
// that a later peakRssBytes() covers only what came after. False when the kernel
// does not allow it; the peak then covers the whole process.
bool resetPeakRss();

}  // namespace zp
