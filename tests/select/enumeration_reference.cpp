// The code plan-solve ran before its searches, kept as the reference: the
// same scans over the list of valid combinations (a choice's candidate is a
// list index inside, a combination number outside).
#include "tests/select/enumeration_reference.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <set>

#include <fmt/format.h>

#include "passes/preload/preload.h"
#include "libplan/util/infinity.h"

namespace zp::select::reference {

Listed listOf(const TaskSpace& ts) {
  Listed l;
  l.numbers = ts.validCombinations();
  for (uint64_t k : l.numbers) l.candidates.push_back(ts.candidate(k));
  return l;
}

namespace {

// A choice with list indices as one with combination numbers.
Choice numbered(const StitchSpace& space, Choice c) {
  for (size_t t = 0; t < c.candidate.size(); ++t) c.candidate[t] = static_cast<int64_t>(numberOf(space, t, static_cast<int>(c.candidate[t])));
  return c;
}

// Per task: the list index with the least missScore under `pl` (the first when none compares).
int closestIndex(const TaskSpace& ts, const Listed& l, const std::vector<int>& oidx, const plan::TaskSlo& s,
                 const SelectParams& params, bool originalsOnly) {
  int pick = -1;
  double bestMiss = kInf;
  for (size_t k = 0; k < l.candidates.size(); ++k) {
    const auto& c = l.candidates[k];
    if (originalsOnly && !c.original) continue;
    double m = missScore(decisionAccuracy(c, params), ts.latencyMs(l.numbers[k], oidx), s);
    if (pick < 0 || m < bestMiss) { bestMiss = m; pick = static_cast<int>(k); }
  }
  return pick;
}

}  // namespace

uint64_t numberOf(const StitchSpace& space, size_t t, int k) {
  return space.tasks[t].validCombinations()[static_cast<size_t>(k)];
}

std::vector<std::vector<int>> feasibleSets(const StitchSpace& space, const plan::SloConfiguration& slo,
                                           const std::vector<std::vector<std::string>>& orders,
                                           const SelectParams& params, bool originalsOnly) {
  const auto orderIdx = orderIndices(space, orders);
  std::vector<std::vector<int>> theta(space.tasks.size());
  for (size_t t = 0; t < space.tasks.size(); ++t) {
    const auto& ts = space.tasks[t];
    const Listed l = listOf(ts);
    const auto& s = slo.tasks.at(ts.name);
    for (size_t k = 0; k < l.candidates.size(); ++k) {
      const auto& c = l.candidates[k];
      if (originalsOnly && !c.original) continue;
      if (decisionAccuracy(c, params) < s.accuracy) continue;
      for (const auto& o : orderIdx)
        if (ts.latencyMs(l.numbers[k], o) <= s.latencyMs) {
          theta[t].push_back(static_cast<int>(k));
          break;
        }
    }
  }
  return theta;
}

Algorithm1Result algorithm1(const StitchSpace& space, const plan::SloConfiguration& slo,
                            const std::vector<std::vector<std::string>>& orders, const SelectParams& params,
                            bool originalsOnly, const std::string& system) {
  const size_t T = space.tasks.size();
  const auto orderIdx = orderIndices(space, orders);
  const auto theta = feasibleSets(space, slo, orders, params, originalsOnly);
  std::vector<Listed> lists;
  for (const auto& ts : space.tasks) lists.push_back(listOf(ts));
  Algorithm1Result r;
  r.choice.system = system;
  double best = kInf;
  size_t bestOrder = 0;
  for (size_t oi = 0; oi < orderIdx.size(); ++oi) {
    ++r.ordersEvaluated;
    double sum = 0;
    int counted = 0;
    for (size_t t = 0; t < T; ++t) {
      if (theta[t].empty()) continue;
      double m = kInf;
      for (int k : theta[t]) m = std::min(m, space.tasks[t].latencyMs(lists[t].numbers[static_cast<size_t>(k)], orderIdx[oi]));
      sum += m;
      ++counted;
    }
    double mean = counted ? sum / counted : 0.0;
    if (mean < best) {
      best = mean;
      bestOrder = oi;
    }
  }
  r.choice.order = orders[bestOrder];
  r.meanLatencyMs = std::isfinite(best) ? best : 0.0;
  for (size_t t = 0; t < T; ++t) {
    const auto& ts = space.tasks[t];
    std::vector<std::string> pl(r.choice.order.begin(), r.choice.order.begin() + ts.positions);
    const auto& oidx = orderIdx[bestOrder];
    int pick = -1;
    double bestLat = kInf;
    for (int k : theta[t]) {
      double l = ts.latencyMs(lists[t].numbers[static_cast<size_t>(k)], oidx);
      if (l < bestLat) { bestLat = l; pick = k; }
    }
    bool feasible = pick >= 0;
    if (!feasible) pick = closestIndex(ts, lists[t], oidx, slo.tasks.at(ts.name), params, originalsOnly);
    assert(pick >= 0);
    r.choice.candidate.push_back(pick);
    r.choice.placement.push_back(pl);
    r.choice.feasible.push_back(feasible);
  }
  r.choice = numbered(space, r.choice);
  return r;
}

std::vector<Choice> baselineChoices(const StitchSpace& space, const plan::SloConfiguration& slo,
                                    const SelectParams& params) {
  std::vector<Choice> out;
  auto npPlacement = [&](const TaskSpace& ts, const Candidate& c) {
    std::vector<std::string> best;
    double bestLat = kInf;
    for (const auto& p : space.processors) {
      std::vector<std::string> pl(static_cast<size_t>(ts.positions), p.name);
      double l = ts.latencyMs(c, pl);
      if (best.empty() || l < bestLat) { bestLat = l; best = pl; }
    }
    return best;
  };
  auto fixedOrder = [&](int positions) {
    std::vector<std::string> names = params.fixedOrder;
    if (names.empty()) {
      for (const auto& p : space.processors) names.push_back(p.name);
      std::reverse(names.begin(), names.end());
    }
    std::vector<std::string> o;
    for (int p = 0; p < positions; ++p) o.push_back(names[static_cast<size_t>(p) % names.size()]);
    return o;
  };
  for (const std::string system : {"SV-AO-P", "SV-AO-NP", "SV-LO-P", "SV-LO-NP", "AV-P", "AV-NP"}) {
    const bool partitioned = system.find("-NP") == std::string::npos;
    Choice ch;
    ch.system = system;
    for (size_t t = 0; t < space.tasks.size(); ++t) {
      const auto& ts = space.tasks[t];
      const Listed l = listOf(ts);
      const auto& s = slo.tasks.at(ts.name);
      std::vector<int> orig;
      for (size_t k = 0; k < l.candidates.size(); ++k)
        if (l.candidates[k].original) orig.push_back(static_cast<int>(k));
      auto placementFor = [&](const Candidate& c) { return partitioned ? fixedOrder(ts.positions) : npPlacement(ts, c); };
      auto cand = [&](int k) -> const Candidate& { return l.candidates[static_cast<size_t>(k)]; };
      int pick = -1;
      bool feasible = false;
      if (system.rfind("SV-AO", 0) == 0) {
        for (int k : orig)
          if (pick < 0 || cand(k).accuracy(true) > cand(pick).accuracy(true)) pick = k;
      } else if (system.rfind("SV-LO", 0) == 0) {
        double best = kInf;
        for (int k : orig) {
          double lat = ts.latencyMs(cand(k), placementFor(cand(k)));
          if (pick < 0 || lat < best) { best = lat; pick = k; }
        }
      } else {
        double best = kInf, bestMiss = kInf;
        int closest = -1;
        for (int k : orig) {
          const auto& c = cand(k);
          double lat = ts.latencyMs(c, placementFor(c));
          double acc = c.accuracy(true);
          if (acc >= s.accuracy && lat <= s.latencyMs && lat < best) { best = lat; pick = k; }
          double m = missScore(acc, lat, s);
          if (closest < 0 || m < bestMiss) { bestMiss = m; closest = k; }
        }
        feasible = pick >= 0;
        if (!feasible) pick = closest;
      }
      const auto& c = cand(pick);
      auto pl = placementFor(c);
      if (system.rfind("SV", 0) == 0) feasible = c.accuracy(true) >= s.accuracy && ts.latencyMs(c, pl) <= s.latencyMs;
      ch.candidate.push_back(pick);
      ch.placement.push_back(pl);
      ch.feasible.push_back(feasible);
    }
    if (partitioned) ch.order = fixedOrder(space.tasks.empty() ? 0 : space.tasks[0].positions);
    out.push_back(numbered(space, std::move(ch)));
  }
  return out;
}

Choice zooplanChoice(const StitchSpace& space, const plan::SloConfiguration& slo, const SelectParams& params,
                     Algorithm1Result* algorithm1Out, std::string* note) {
  auto orders = globalOrders(space);
  Algorithm1Result a1 = reference::algorithm1(space, slo, orders, params, false, "zooplan");
  if (algorithm1Out) *algorithm1Out = a1;
  Choice best = a1.choice;
  Outcome bestOutcome = evaluate(space, slo, best, params);
  std::string winner = "Algorithm 1";
  auto consider = [&](const Choice& c, const std::string& label) {
    Outcome o = evaluate(space, slo, c, params);
    if (betterOutcome(o, bestOutcome)) {
      best = c;
      best.system = "zooplan";
      bestOutcome = o;
      winner = label;
    }
  };
  for (const auto& o : orders) {
    auto r = reference::algorithm1(space, slo, {o}, params, false, "zooplan");
    std::string label;
    for (const auto& p : o) {
      if (!label.empty()) label += ">";
      label += p;
    }
    consider(r.choice, "Algorithm 1 with order " + label);
  }
  {
    Choice np;
    np.system = "zooplan";
    for (size_t t = 0; t < space.tasks.size(); ++t) {
      const auto& ts = space.tasks[t];
      const Listed l = listOf(ts);
      const auto& s = slo.tasks.at(ts.name);
      int pick = -1, closest = -1;
      double bestLat = kInf, bestMiss = kInf;
      std::vector<std::string> pickPl, closestPl;
      for (size_t k = 0; k < l.candidates.size(); ++k) {
        const auto& c = l.candidates[k];
        for (const auto& p : space.processors) {
          std::vector<std::string> pl(static_cast<size_t>(ts.positions), p.name);
          double lat = ts.latencyMs(c, pl), acc = decisionAccuracy(c, params);
          if (acc >= s.accuracy && lat <= s.latencyMs && lat < bestLat) { bestLat = lat; pick = static_cast<int>(k); pickPl = pl; }
          double m = missScore(acc, lat, s);
          if (closest < 0 || m < bestMiss) { bestMiss = m; closest = static_cast<int>(k); closestPl = pl; }
        }
      }
      np.feasible.push_back(pick >= 0);
      np.candidate.push_back(pick >= 0 ? pick : closest);
      np.placement.push_back(pick >= 0 ? pickPl : closestPl);
    }
    consider(numbered(space, np), "stitched variants run whole on their fastest processor");
  }
  for (const auto& b : reference::baselineChoices(space, slo, params)) consider(b, "the " + b.system + " choice");
  if (note) *note = winner;
  return best;
}

GlobalOrder multiConfigurationOrder(const StitchSpace& space, const std::vector<std::vector<std::string>>& orders,
                                    const std::vector<std::vector<std::vector<int>>>& theta) {
  GlobalOrder g{orders.front(), kInf};
  for (const auto& o : orders) {
    double sum = 0;
    int n = 0;
    for (const auto& perTask : theta)
      for (size_t t = 0; t < space.tasks.size(); ++t) {
        const auto& ts = space.tasks[t];
        const Listed l = listOf(ts);
        double m = kInf;
        for (int k : perTask[t])
          m = std::min(m, ts.latencyMs(l.candidates[static_cast<size_t>(k)],
                                       std::vector<std::string>(o.begin(), o.begin() + ts.positions)));
        if (std::isfinite(m)) { sum += m; ++n; }
      }
    double mean = n ? sum / n : 0.0;
    if (mean < g.meanLatencyMs - 1e-12) { g.meanLatencyMs = mean; g.order = o; }
  }
  return g;
}

}  // namespace zp::select::reference
