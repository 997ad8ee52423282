#include "libplan/sim/concurrent/contention_fit.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace zp::sim {
namespace {

// Sorted values, those within `merge` of the first of a run taken as their mean.
std::vector<double> clusters(std::vector<double> v, double merge) {
  std::sort(v.begin(), v.end());
  std::vector<double> out;
  for (size_t i = 0; i < v.size();) {
    size_t j = i;
    double sum = 0;
    while (j < v.size() && v[j] - v[i] <= merge) sum += v[j++];
    out.push_back(sum / static_cast<double>(j - i));
    i = j;
  }
  return out;
}

size_t nearest(const std::vector<double>& axis, double x) {
  size_t best = 0;
  for (size_t k = 1; k < axis.size(); ++k)
    if (std::abs(axis[k] - x) < std::abs(axis[best] - x)) best = k;
  return best;
}

}  // namespace

Expected<ContentionModel::Surface> fitContentionSurface(const std::vector<ContentionPoint>& points, double merge) {
  std::vector<double> owns{0}, externals{0};
  for (const auto& p : points) {
    if (!std::isfinite(p.own) || !std::isfinite(p.external) || !std::isfinite(p.slowdown) || p.own < 0 ||
        p.external < 0)
      return makeError("contention point ({}, {}, {}): not finite and non-negative", p.own, p.external, p.slowdown);
    owns.push_back(p.own);
    externals.push_back(p.external);
  }
  ContentionModel::Surface s;
  s.own = clusters(owns, merge);
  s.external = clusters(externals, merge);
  std::map<std::pair<size_t, size_t>, std::pair<double, int>> cells;
  for (const auto& p : points) {
    auto& c = cells[{nearest(s.own, p.own), nearest(s.external, p.external)}];
    c.first += p.slowdown;
    ++c.second;
  }
  s.slowdown.assign(s.own.size() * s.external.size(), 1.0);
  for (size_t i = 0; i < s.own.size(); ++i)
    for (size_t j = 0; j < s.external.size(); ++j) {
      auto it = cells.find({i, j});
      if (it == cells.end()) {
        if (i == 0 || j == 0) continue;  // no demand on one side: no slowdown
        return makeError("contention surface: no measurement at own {:.1f}%, external {:.1f}%", s.own[i], s.external[j]);
      }
      s.slowdown[i * s.external.size() + j] = std::max(1.0, it->second.first / it->second.second);
    }
  return s;
}

Expected<std::vector<ContentionResidual>> leaveOneRowOut(const std::vector<ContentionPoint>& points, double merge) {
  ZP_ASSIGN_OR_RETURN(auto full, fitContentionSurface(points, merge));
  std::vector<ContentionResidual> out;
  for (size_t row = 1; row + 1 < full.own.size(); ++row) {
    std::vector<ContentionPoint> rest, held;
    for (const auto& p : points) (nearest(full.own, p.own) == row ? held : rest).push_back(p);
    ZP_ASSIGN_OR_RETURN(auto without, fitContentionSurface(rest, merge));
    const auto model = ContentionModel::fromSurfaces({without});
    for (const auto& p : held) out.push_back({p, model.slowdown(0, p.own, p.external)});
  }
  return out;
}

}  // namespace zp::sim
