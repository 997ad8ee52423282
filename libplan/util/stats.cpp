#include "libplan/util/stats.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace zp {

double msSince(SteadyClock::time_point t0) {
  return std::chrono::duration<double, std::milli>(SteadyClock::now() - t0).count();
}

double secondsSince(SteadyClock::time_point t0) {
  return std::chrono::duration<double>(SteadyClock::now() - t0).count();
}

double percentile(std::vector<double> v, double q) {
  assert(q >= 0 && q <= 1);
  if (v.empty()) return 0;
  const double pos = q * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  // The lo-th smallest and the next one up, as a full sort would place them.
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(lo), v.end());
  const double below = v[lo];
  const double above = lo + 1 < v.size() ? *std::min_element(v.begin() + static_cast<std::ptrdiff_t>(lo) + 1, v.end()) : below;
  return below + (above - below) * (pos - static_cast<double>(lo));
}

double median(std::vector<double> v) { return percentile(std::move(v), 0.5); }

}  // namespace zp
