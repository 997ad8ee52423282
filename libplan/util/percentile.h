// Percentiles of a sample, shared by everything that reports latency
// distributions so that measured and predicted figures are computed alike.
#pragma once
#include <vector>

namespace zp {

// The q-quantile (q in [0, 1]) by linear interpolation between the closest ranks
// (numpy's default): q = 0 is the minimum, q = 1 the maximum. `values` must not be
// empty.
double percentile(std::vector<double> values, double q);

}  // namespace zp
