#include "passes/select/select.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <numeric>

#include "libplan/estimate/latency_model.h"

namespace zp::select {
namespace fs = std::filesystem;
constexpr double kInf = std::numeric_limits<double>::infinity();

namespace {

std::vector<std::vector<std::string>> permutations(const std::vector<std::string>& items, int k) {
  return estimate::placementOrders(items, k);
}

std::vector<std::string> processorNames(const StitchSpace& space) {
  std::vector<std::string> names;
  for (const auto& p : space.processors) names.push_back(p.name);
  return names;
}

// The placements a task's latency can be judged under: every global order
// (positions on distinct processors) and every single processor.
std::vector<std::vector<std::string>> allPlacements(const StitchSpace& space, int positions) {
  auto names = processorNames(space);
  std::vector<std::vector<std::string>> out;
  if (positions <= static_cast<int>(names.size())) out = permutations(names, positions);
  for (const auto& n : names) out.push_back(std::vector<std::string>(static_cast<size_t>(positions), n));
  return out;
}

std::vector<std::string> baselineOrder(const StitchSpace& space, int positions, const SelectParams& params) {
  std::vector<std::string> names = params.fixedOrder;
  if (names.empty()) {
    names = processorNames(space);
    std::reverse(names.begin(), names.end());  // N-G-C: the order prior systems fix
  }
  std::vector<std::string> out;
  for (int p = 0; p < positions; ++p) out.push_back(names[static_cast<size_t>(p) % names.size()]);
  return out;
}

}  // namespace

double decisionAccuracy(const Candidate& c, const SelectParams& params) {
  if (c.original || params.measuredAccuracyForDecisions) return c.accuracy(true);
  return c.predictedAccuracy;
}

double missScore(double acc, double lat, const plan::TaskSlo& slo) {
  double a = std::max(0.0, slo.accuracy - acc) / std::max(slo.accuracy, 1e-9);
  double l = std::max(0.0, lat - slo.latencyMs) / std::max(slo.latencyMs, 1e-9);
  return a + l;
}

namespace {
std::vector<std::vector<int>> orderIndices(const StitchSpace& space, const std::vector<std::vector<std::string>>& orders);
}  // namespace

std::vector<std::vector<int>> feasibleSets(const StitchSpace& space, const plan::SloConfiguration& slo,
                                           const std::vector<std::vector<std::string>>& orders,
                                           const SelectParams& params, bool originalsOnly) {
  const auto orderIdx = orderIndices(space, orders);
  std::vector<std::vector<int>> theta(space.tasks.size());
  for (size_t t = 0; t < space.tasks.size(); ++t) {
    const auto& ts = space.tasks[t];
    const auto& s = slo.tasks.at(ts.name);
    for (size_t k = 0; k < ts.candidates.size(); ++k) {
      const auto& c = ts.candidates[k];
      if (originalsOnly && !c.original) continue;
      if (decisionAccuracy(c, params) < s.accuracy) continue;
      for (const auto& o : orderIdx)
        if (ts.latencyMs(k, o) <= s.latencyMs) {
          theta[t].push_back(static_cast<int>(k));
          break;
        }
    }
  }
  return theta;
}

int processorIndex(const StitchSpace& space, const std::string& name) {
  for (size_t i = 0; i < space.processors.size(); ++i)
    if (space.processors[i].name == name) return static_cast<int>(i);
  return -1;
}

std::vector<std::vector<std::string>> globalOrders(const StitchSpace& space) {
  int positions = 0;
  for (const auto& t : space.tasks) positions = std::max(positions, t.positions);
  return estimate::searchOrders(processorNames(space), positions);
}

std::vector<plan::SloConfiguration> generateSlos(const StitchSpace& space, SloSet set) {
  std::vector<plan::SloConfiguration> out(set == SloSet::Grid ? 25 : 5);
  for (size_t k = 0; k < out.size(); ++k)
    out[k].id = set == SloSet::Grid ? fmt::format("C{:02}", k + 1)
                : set == SloSet::AccuracyGuaranteed ? fmt::format("ACC{}", k + 1)
                                                    : fmt::format("LAT{}", k + 1);
  for (const auto& t : space.tasks) {
    double amin = kInf, amax = -kInf, lmin = kInf, lmax = -kInf;
    for (const auto& c : t.candidates) {
      if (!c.original) continue;
      amin = std::min(amin, c.accuracy(true));
      amax = std::max(amax, c.accuracy(true));
      for (const auto& pl : allPlacements(space, t.positions)) {
        double l = t.latencyMs(c, pl);
        if (!std::isfinite(l)) continue;
        lmin = std::min(lmin, l);
        lmax = std::max(lmax, l);
      }
    }
    auto level = [](double lo, double hi, size_t i) { return lo + (hi - lo) * static_cast<double>(i) / 4.0; };
    for (size_t k = 0; k < out.size(); ++k) {
      plan::TaskSlo s;
      if (set == SloSet::Grid) {
        // Accuracy from strict to loose is not the point here: the grid is the product.
        s.accuracy = std::min(1.0, level(std::max(0.0, amin - 0.02), amax + 0.02, k / 5));
        s.latencyMs = level(0.8 * lmin, 1.2 * lmax, k % 5);
      } else if (set == SloSet::AccuracyGuaranteed) {
        s.accuracy = amax;
        s.latencyMs = level(lmin, lmax, k);
      } else {
        s.latencyMs = lmin;
        s.accuracy = level(amin, amax, k);
      }
      out[k].tasks[t.name] = s;
    }
  }
  return out;
}

Algorithm1Result algorithm1(const StitchSpace& space, const plan::SloConfiguration& slo,
                            const std::vector<std::vector<std::string>>& orders, const SelectParams& params,
                            bool originalsOnly, const std::string& system) {
  const size_t T = space.tasks.size();
  const auto orderIdx = orderIndices(space, orders);
  // Line 2: Θ^t, the variants meeting both SLOs under some order.
  const auto theta = feasibleSets(space, slo, orders, params, originalsOnly);
  // Line 4: the order minimising the mean over tasks of the best variant's latency.
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
      for (int k : theta[t]) m = std::min(m, space.tasks[t].latencyMs(static_cast<size_t>(k), orderIdx[oi]));
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
  // Lines 5-7: per task the fastest variant of Θ^t under p*; an infeasible task
  // runs the variant closest to its SLO.
  for (size_t t = 0; t < T; ++t) {
    const auto& ts = space.tasks[t];
    std::vector<std::string> pl(r.choice.order.begin(), r.choice.order.begin() + ts.positions);
    const auto& oidx = orderIdx[bestOrder];
    int pick = -1;
    double bestLat = kInf;
    for (int k : theta[t]) {
      double l = ts.latencyMs(static_cast<size_t>(k), oidx);
      if (l < bestLat) { bestLat = l; pick = k; }
    }
    bool feasible = pick >= 0;
    if (!feasible) {
      double bestMiss = kInf;
      for (size_t k = 0; k < ts.candidates.size(); ++k) {
        const auto& c = ts.candidates[k];
        if (originalsOnly && !c.original) continue;
        double m = missScore(decisionAccuracy(c, params), ts.latencyMs(k, oidx), slo.tasks.at(ts.name));
        // The first candidate when no score compares (all infinite or NaN): always an index.
        if (pick < 0 || m < bestMiss) { bestMiss = m; pick = static_cast<int>(k); }
      }
    }
    assert(pick >= 0 && "a task without candidates (the stitch manifest reader rejects those)");
    r.choice.candidate.push_back(pick);
    r.choice.placement.push_back(pl);
    r.choice.feasible.push_back(feasible);
  }
  return r;
}

std::vector<sim::TaskQueries> queriesOf(const StitchSpace& space, const Choice& choice, int queries) {
  std::vector<sim::TaskQueries> out;
  for (size_t t = 0; t < space.tasks.size(); ++t) {
    const auto& ts = space.tasks[t];
    const auto& c = ts.candidates[static_cast<size_t>(choice.candidate[t])];
    const auto& pl = choice.placement[t];
    sim::TaskQueries q;
    q.name = ts.name;
    q.queries = queries;
    // A run of consecutive positions on one processor is one stage: it pays the
    // per-run overhead once (the latency model's rule).
    for (int p = 0; p < ts.positions;) {
      int e = p;
      while (e + 1 < ts.positions && pl[static_cast<size_t>(e + 1)] == pl[static_cast<size_t>(p)]) ++e;
      std::vector<std::string> vs(c.variants.begin() + p, c.variants.begin() + e + 1);
      double ms = ts.latency.overhead(pl[static_cast<size_t>(p)]);
      for (int j = p; j <= e; ++j)  // unprofiled: never finishes in time
        ms += ts.latency.subgraph(j, c.variants[static_cast<size_t>(j)], pl[static_cast<size_t>(j)]).value_or(kInf) -
              ts.latency.overhead(pl[static_cast<size_t>(j)]);
      double transfer = p == 0 ? 0.0
                               : ts.latency.transition(pl[static_cast<size_t>(p - 1)], pl[static_cast<size_t>(p)],
                                                       ts.boundaryBytes[static_cast<size_t>(p - 1)]);
      q.stages.push_back(sim::QueryStage{processorIndex(space, pl[static_cast<size_t>(p)]), ms, transfer});
      p = e + 1;
    }
    out.push_back(std::move(q));
  }
  return out;
}

Outcome evaluate(const StitchSpace& space, const plan::SloConfiguration& slo, const Choice& choice,
                 const SelectParams& params) {
  Outcome o;
  const size_t T = space.tasks.size();
  auto queries = queriesOf(space, choice, params.queriesPerTask);
  std::vector<int> arrival(T);
  std::iota(arrival.begin(), arrival.end(), 0);
  o.taskLatencyMs.assign(T, 0.0);
  double violations = 0, throughput = 0;
  int orders = 0;
  do {
    auto r = sim::simulateQueries(queries, static_cast<int>(space.processors.size()), arrival);
    for (size_t t = 0; t < T; ++t) {
      const auto& ts = space.tasks[t];
      const auto& c = ts.candidates[static_cast<size_t>(choice.candidate[t])];
      const auto& s = slo.tasks.at(ts.name);
      // Written so that a NaN (an unprofiled placement, an SLO no number meets) is a violation.
      bool violated = !(c.accuracy(true) >= s.accuracy) || !(r.meanLatencyMs[t] <= s.latencyMs);
      violations += violated;
      o.taskLatencyMs[t] += r.meanLatencyMs[t];
      if (orders == 0) o.taskViolated.push_back(violated);
    }
    throughput += r.throughputQps;
    ++orders;
  } while (std::next_permutation(arrival.begin(), arrival.end()));
  o.violationRate = violations / static_cast<double>(orders * static_cast<int>(T));
  o.throughputQps = throughput / orders;
  for (auto& l : o.taskLatencyMs) l /= orders;
  return o;
}

std::vector<Choice> baselineChoices(const StitchSpace& space, const plan::SloConfiguration& slo,
                                    const SelectParams& params) {
  std::vector<Choice> out;
  auto originals = [&](const TaskSpace& ts) {
    std::vector<int> v;
    for (size_t k = 0; k < ts.candidates.size(); ++k)
      if (ts.candidates[k].original) v.push_back(static_cast<int>(k));
    return v;
  };
  // Non-partitioned: each task's variant whole on the processor where it runs fastest alone.
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
  for (const std::string system : {"SV-AO-P", "SV-AO-NP", "SV-LO-P", "SV-LO-NP", "AV-P", "AV-NP"}) {
    const bool partitioned = system.find("-NP") == std::string::npos;
    Choice ch;
    ch.system = system;
    for (const auto& ts : space.tasks) {
      const auto& s = slo.tasks.at(ts.name);
      auto orig = originals(ts);
      auto placementFor = [&](const Candidate& c) {
        return partitioned ? baselineOrder(space, ts.positions, params) : npPlacement(ts, c);
      };
      int pick = -1;
      bool feasible = false;
      if (system.rfind("SV-AO", 0) == 0) {
        for (int k : orig)
          if (pick < 0 || ts.candidates[static_cast<size_t>(k)].accuracy(true) > ts.candidates[static_cast<size_t>(pick)].accuracy(true))
            pick = k;
      } else if (system.rfind("SV-LO", 0) == 0) {
        double best = kInf;
        for (int k : orig) {
          double l = ts.latencyMs(ts.candidates[static_cast<size_t>(k)], placementFor(ts.candidates[static_cast<size_t>(k)]));
          if (pick < 0 || l < best) { best = l; pick = k; }
        }
      } else {  // AV: the fastest original meeting both SLOs, else the closest
        double best = kInf, bestMiss = kInf;
        int closest = -1;
        for (int k : orig) {
          const auto& c = ts.candidates[static_cast<size_t>(k)];
          double l = ts.latencyMs(c, placementFor(c));
          double acc = c.accuracy(true);
          if (acc >= s.accuracy && l <= s.latencyMs && l < best) { best = l; pick = k; }
          double m = missScore(acc, l, s);
          if (closest < 0 || m < bestMiss) { bestMiss = m; closest = k; }
        }
        feasible = pick >= 0;
        if (!feasible) pick = closest;
      }
      const auto& c = ts.candidates[static_cast<size_t>(pick)];
      auto pl = placementFor(c);
      if (system.rfind("SV", 0) == 0) feasible = c.accuracy(true) >= s.accuracy && ts.latencyMs(c, pl) <= s.latencyMs;
      ch.candidate.push_back(pick);
      ch.placement.push_back(pl);
      ch.feasible.push_back(feasible);
    }
    if (partitioned) ch.order = baselineOrder(space, space.tasks.empty() ? 0 : space.tasks[0].positions, params);
    out.push_back(std::move(ch));
  }
  return out;
}

Choice zooplanChoice(const StitchSpace& space, const plan::SloConfiguration& slo, const SelectParams& params,
                     Algorithm1Result* algorithm1Out, std::string* note) {
  auto orders = globalOrders(space);
  Algorithm1Result a1 = algorithm1(space, slo, orders, params, false, "zooplan");
  if (algorithm1Out) *algorithm1Out = a1;
  Choice best = a1.choice;
  Outcome bestOutcome = evaluate(space, slo, best, params);
  std::string winner = "Algorithm 1";
  auto consider = [&](const Choice& c, const std::string& label) {
    Outcome o = evaluate(space, slo, c, params);
    if (o.violationRate < bestOutcome.violationRate - 1e-12 ||
        (std::abs(o.violationRate - bestOutcome.violationRate) <= 1e-12 && o.throughputQps > bestOutcome.throughputQps * (1 + 1e-9))) {
      best = c;
      best.system = "zooplan";
      bestOutcome = o;
      winner = label;
    }
  };
  for (const auto& o : orders) {
    auto r = algorithm1(space, slo, {o}, params, false, "zooplan");
    std::string label;
    for (const auto& p : o) label += (label.empty() ? "" : ">") + p;
    consider(r.choice, "Algorithm 1 with order " + label);
  }
  // Stitched variants run whole, each on the processor where it is fastest alone:
  // for light tasks, one processor per task can beat a shared pipeline.
  {
    Choice np;
    np.system = "zooplan";
    for (const auto& ts : space.tasks) {
      const auto& s = slo.tasks.at(ts.name);
      int pick = -1, closest = -1;
      double bestLat = kInf, bestMiss = kInf;
      std::vector<std::string> pickPl, closestPl;
      for (size_t k = 0; k < ts.candidates.size(); ++k) {
        const auto& c = ts.candidates[k];
        for (const auto& p : space.processors) {
          std::vector<std::string> pl(static_cast<size_t>(ts.positions), p.name);
          double l = ts.latencyMs(c, pl), acc = decisionAccuracy(c, params);
          if (acc >= s.accuracy && l <= s.latencyMs && l < bestLat) { bestLat = l; pick = static_cast<int>(k); pickPl = pl; }
          double m = missScore(acc, l, s);
          if (closest < 0 || m < bestMiss) { bestMiss = m; closest = static_cast<int>(k); closestPl = pl; }
        }
      }
      np.feasible.push_back(pick >= 0);
      np.candidate.push_back(pick >= 0 ? pick : closest);
      np.placement.push_back(pick >= 0 ? pickPl : closestPl);
    }
    consider(np, "stitched variants run whole on their fastest processor");
  }
  for (const auto& b : baselineChoices(space, slo, params)) consider(b, "the " + b.system + " choice");
  if (note) *note = winner;
  return best;
}

namespace {
std::vector<std::vector<int>> orderIndices(const StitchSpace& space, const std::vector<std::vector<std::string>>& orders) {
  std::vector<std::vector<int>> out;
  for (const auto& o : orders) {
    std::vector<int> idx;
    for (const auto& p : o) idx.push_back(processorIndex(space, p));
    out.push_back(std::move(idx));
  }
  return out;
}
}  // namespace

}  // namespace zp::select
