#include "libplan/util/percentile.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace zp {

double percentile(std::vector<double> values, double q) {
  assert(!values.empty() && q >= 0 && q <= 1);
  std::sort(values.begin(), values.end());
  const double pos = q * static_cast<double>(values.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, values.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return frac == 0 ? values[lo] : values[lo] + (values[hi] - values[lo]) * frac;
}

}  // namespace zp
