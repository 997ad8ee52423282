#include "libplan/sim/concurrent/contention.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <sstream>


namespace zp::sim {

ContentionModel ContentionModel::none(int numAccelerators) {
  ContentionModel m;
  m.numAcc_ = numAccelerators;
  return m;
}

ContentionModel ContentionModel::fromSurfaces(std::vector<Surface> surfaces) {
  ContentionModel m;
  m.numAcc_ = static_cast<int>(surfaces.size());
  m.surfaces_ = std::move(surfaces);
  return m;
}

// Position of x in an ascending grid: index i and weight w so that
// x ~ (1-w) g[i] + w g[i+1]; clamped at both ends.
static void locate(const std::vector<double>& g, double x, size_t& i, double& w) {
  if (g.size() == 1 || x <= g.front()) {
    i = 0;
    w = 0;
    return;
  }
  if (x >= g.back()) {
    i = g.size() - 2;
    w = 1;
    return;
  }
  i = static_cast<size_t>(std::upper_bound(g.begin(), g.end(), x) - g.begin()) - 1;
  w = (x - g[i]) / (g[i + 1] - g[i]);
}

double ContentionModel::slowdown(int acc, double own, double external) const {
  if (surfaces_.empty()) return 1.0;
  return slowdownAt(acc, own, external);
}

double ContentionModel::slowdownAt(int acc, double own, double external) const {
  const Surface& s = surfaces_[static_cast<size_t>(acc)];
  size_t i, j;
  double wi, wj;
  locate(s.own, own, i, wi);
  locate(s.external, external, j, wj);
  size_t ne = s.external.size();
  auto at = [&](size_t a, size_t b) {
    a = std::min(a, s.own.size() - 1);
    b = std::min(b, ne - 1);
    return s.slowdown[a * ne + b];
  };
  double v0 = (1 - wj) * at(i, j) + wj * at(i, j + 1);
  double v1 = (1 - wj) * at(i + 1, j) + wj * at(i + 1, j + 1);
  double v = (1 - wi) * v0 + wi * v1;
  // Quantized to 1e-6 so exact solvers work with short rationals.
  return std::max(1.0, std::round(v * 1e6) / 1e6);
}

ContentionModel ContentionModel::scaled(double f) const {
  ContentionModel m = *this;
  if (f == 0) {
    m.surfaces_.clear();
    return m;
  }
  for (auto& s : m.surfaces_)
    for (auto& v : s.slowdown) v = 1 + f * (v - 1);
  return m;
}

}  // namespace zp::sim
