#pragma once
#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "libplan/sim/concurrent/simulator.h"

namespace zp::testing {

// Brute force: every assignment of every group to every allowed accelerator,
// each simulated; returns the best simulated objective value.
inline double bruteForce(const sim::Problem& p, sim::Objective obj, int maxTransitions = -1,
                         sim::Schedule* best = nullptr) {
  sim::Schedule s;
  for (const auto& d : p.dnns) s.assign.emplace_back(d.groups.size(), 0);
  std::vector<std::pair<size_t, size_t>> slots;
  for (size_t n = 0; n < p.dnns.size(); ++n)
    for (size_t i = 0; i < p.dnns[n].groups.size(); ++i) slots.emplace_back(n, i);
  double bestV = sim::worstValue(obj);
  bool any = false;
  sim::Simulator simr(p);
  for (;;) {
    bool ok = true;
    for (auto [n, i] : slots) ok = ok && p.dnns[n].groups[i].allowed(s.assign[n][i]);
    for (size_t n = 0; ok && n < s.assign.size() && maxTransitions >= 0; ++n)
      ok = sim::countTransitions(s, static_cast<int>(n)) <= maxTransitions;
    if (ok) {
      double v = simr.run(s, {.recordSpans = false}).value(obj);
      if (!any || sim::better(obj, v, bestV)) {
        bestV = v;
        any = true;
        if (best) *best = s;
      }
    }
    size_t k = 0;
    for (; k < slots.size(); ++k) {
      auto [n, i] = slots[k];
      if (++s.assign[n][i] < p.numAccelerators()) break;
      s.assign[n][i] = 0;
    }
    if (k == slots.size()) break;
  }
  return bestV;
}

inline bool near(double a, double b, double rel = 1e-9) {
  return std::fabs(a - b) <= rel * std::max({1.0, std::fabs(a), std::fabs(b)});
}

}  // namespace zp::testing
