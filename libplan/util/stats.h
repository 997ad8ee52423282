// Timing and summary statistics shared by every measuring tool: elapsed time
// since a steady-clock point, and the median / percentiles of a sample.
#pragma once
#include <chrono>
#include <vector>

namespace zp {

using SteadyClock = std::chrono::steady_clock;

// Milliseconds (seconds) elapsed since `t0` on the steady clock.
double msSince(SteadyClock::time_point t0);
double secondsSince(SteadyClock::time_point t0);

// The q-quantile (q in [0, 1]) of a sample, linearly interpolated between the
// two nearest ranks (numpy's default). 0 for an empty sample.
double percentile(std::vector<double> sample, double q);
// percentile(sample, 0.5): the middle value, or the mean of the two middle ones.
double median(std::vector<double> sample);

}  // namespace zp
