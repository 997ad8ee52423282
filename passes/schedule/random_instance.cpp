#include "passes/schedule/random_instance.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdlib>
#include <random>
#include <sstream>

#include <fmt/format.h>

namespace zp::schedule {

namespace {
double uniform(std::mt19937_64& g, double lo, double hi) {
  double u = static_cast<double>(g() >> 11) * (1.0 / 9007199254740992.0);
  return lo + (hi - lo) * u;
}
// Profiles carry a few digits (like Table 2's); short decimals also keep
// Z3's rationals small.
double q(double v, double step) { return std::round(v / step) * step; }
}  // namespace

sim::ContentionModel syntheticContention(int A) {
  std::vector<sim::ContentionModel::Surface> surfaces;
  for (int a = 0; a < A; ++a) {
    const double k = a == 0 ? 0.6 : 0.35;
    sim::ContentionModel::Surface s;
    s.own = {0.0, 25.0, 50.0, 75.0, 100.0};
    s.external = {0.0, 30.0, 60.0, 90.0, 120.0, 200.0};
    for (double own : s.own)
      for (double ext : s.external)  // six decimals, as a contention CSV would hold them
        s.slowdown.push_back(std::strtod(fmt::format("{:.6f}", 1 + k * (own / 100) * std::min(ext, 120.0) / 100).c_str(), nullptr));
    surfaces.push_back(std::move(s));
  }
  return sim::ContentionModel::fromSurfaces(std::move(surfaces));
}

sim::Problem randomInstance(const RandomInstanceParams& prm) {
  std::mt19937_64 g(prm.seed);
  sim::Problem p;
  for (int a = 0; a < prm.accelerators; ++a) p.accelerators.push_back(a == 0 ? "GPU" : fmt::format("ACC{}", a));
  const size_t A = static_cast<size_t>(prm.accelerators);
  for (int n = 0; n < prm.dnns; ++n) {
    sim::Dnn d;
    d.name = fmt::format("dnn{}", n);
    if (prm.pipeline && n > 0) d.deps.push_back(n - 1);
    for (int i = 0; i < prm.groups; ++i) {
      sim::GroupCost c;
      c.name = fmt::format("g{}", i);
      c.timeMs.assign(A, 0);
      c.transitionOutMs.assign(A, 0);
      c.transitionInMs.assign(A, 0);
      c.demand.assign(A, 0);
      double tg = uniform(g, 0.05, 0.5);
      double dem = uniform(g, 30, 90);
      for (size_t a = 0; a < A; ++a) {
        double ratio = a == 0 ? 1.0 : uniform(g, 1.2, 2.2);
        c.timeMs[a] = q(tg * ratio, 0.001);
        c.transitionOutMs[a] = q(uniform(g, 0.0, 0.1), 0.001);
        c.transitionInMs[a] = q(uniform(g, 0.0, 0.05), 0.001);
        c.demand[a] = q(dem / ratio, 0.01);
      }
      d.groups.push_back(std::move(c));
    }
    p.dnns.push_back(std::move(d));
  }
  p.contention = syntheticContention(prm.accelerators);
  return p;
}

}  // namespace zp::schedule
