#include "passes/select/select.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <functional>
#include <optional>
#include <limits>
#include <map>
#include <numeric>

#include "libplan/estimate/latency_model.h"
#include "libplan/plan/unit.h"
#include "libplan/util/infinity.h"
#include "passes/select/serving_objective.h"

namespace zp::select {
namespace fs = std::filesystem;

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

// The original variants of a task as combinations, in order.
std::vector<uint64_t> originals(const TaskSpace& ts) {
  std::vector<uint64_t> out;
  for (int v = 0; v < static_cast<int>(ts.variants.size()); ++v) {
    const uint64_t k = ts.combinations().originalNumber(v);
    if (ts.valid(k)) out.push_back(k);
  }
  return out;
}

// Algorithm 1 line 4: the first order with the least mean over tasks with a
// non-empty Θ^t of m_t(p). m_t(p) >= q_t(p), so the mean with q in place of
// the m still unknown bounds an order's mean from below (rounding is
// monotone); only the orders that bound cannot rule out get their exact mean.
struct BestOrder {
  size_t order = 0;
  double mean = kInf;
};
BestOrder leastMeanOrder(const std::vector<std::vector<int>>& orders, std::vector<TaskSearch>& tasks) {
  std::vector<bool> counted;
  for (auto& t : tasks) counted.push_back(!t.thetaEmpty());
  auto mean = [&](size_t oi, bool exact, bool* allExact) {
    double sum = 0;
    int n = 0;
    *allExact = true;
    for (size_t t = 0; t < tasks.size(); ++t) {
      if (!counted[t]) continue;
      const Pick& q = tasks[t].fastestAccurate(orders[oi]);
      double m = q.value;
      if (exact || !q.found() || q.value <= tasks[t].slo().latencyMs) m = tasks[t].fastestInTheta(orders[oi]).value;
      else *allExact = false;
      sum += m;
      ++n;
    }
    return n ? sum / n : 0.0;
  };
  BestOrder best;
  std::vector<double> bound(orders.size());
  std::vector<bool> exact(orders.size());
  for (size_t oi = 0; oi < orders.size(); ++oi) {
    bool e = false;
    bound[oi] = mean(oi, false, &e);
    exact[oi] = e;
    if (e && bound[oi] < best.mean) best = {oi, bound[oi]};
  }
  for (size_t oi = 0; oi < orders.size(); ++oi) {
    if (exact[oi] || bound[oi] > best.mean || (bound[oi] == best.mean && oi > best.order)) continue;
    bool e = false;
    const double m = mean(oi, true, &e);
    if (m < best.mean || (m == best.mean && oi < best.order)) best = {oi, m};
  }
  return best;
}

Algorithm1Result algorithm1With(const StitchSpace& space, const std::vector<std::vector<std::string>>& orders,
                                const std::vector<std::vector<int>>& orderIdx, std::vector<TaskSearch>& tasks,
                                const std::string& system) {
  Algorithm1Result r;
  r.choice.system = system;
  r.ordersEvaluated = static_cast<int>(orders.size());
  const BestOrder best = leastMeanOrder(orderIdx, tasks);
  r.choice.order = orders[best.order];
  r.meanLatencyMs = std::isfinite(best.mean) ? best.mean : 0.0;
  // Lines 5-7: per task the fastest of Θ^t under p*; an infeasible task runs the
  // combination closest to its SLO.
  for (size_t t = 0; t < tasks.size(); ++t) {
    const auto& ts = space.tasks[t];
    const Pick& m = tasks[t].fastestInTheta(orderIdx[best.order]);
    const Pick& pick = m.found() ? m : tasks[t].closestMiss(orderIdx[best.order]);
    assert(pick.found() && "a task without candidates (the stitch manifest reader rejects those)");
    r.choice.candidate.push_back(pick.combination);
    r.choice.placement.push_back(std::vector<std::string>(r.choice.order.begin(), r.choice.order.begin() + ts.positions));
    r.choice.feasible.push_back(m.found());
  }
  return r;
}

// What Algorithm 1 over the single order `order` chooses: per task the fastest
// of F if it meets the latency SLO under that order, else the closest miss.
Choice singleOrderChoice(const StitchSpace& space, const std::vector<std::string>& order,
                         const std::vector<int>& orderIdx, std::vector<TaskSearch>& tasks) {
  Choice c;
  c.system = "zooplan";
  c.order = order;
  for (size_t t = 0; t < tasks.size(); ++t) {
    const Pick& q = tasks[t].fastestAccurate(orderIdx);
    const bool feasible = q.found() && q.value <= tasks[t].slo().latencyMs;
    c.candidate.push_back(feasible ? q.combination : tasks[t].closestMiss(orderIdx).combination);
    c.placement.push_back(std::vector<std::string>(order.begin(), order.begin() + space.tasks[t].positions));
    c.feasible.push_back(feasible);
  }
  return c;
}

// Stitched variants run whole, each on the processor where it is fastest alone:
// per task the least (latency, combination, processor) meeting both SLOs, else
// the least (miss, combination, processor).
Choice wholeOnFastestChoice(const StitchSpace& space, const plan::SloConfiguration& slo, const SelectParams& params) {
  Choice np;
  np.system = "zooplan";
  const int P = static_cast<int>(space.processors.size());
  for (const auto& ts : space.tasks) {
    const auto& s = slo.tasks.at(ts.name);
    auto whole = [&](int p) { return PlacementSet::single(std::vector<int>(static_cast<size_t>(ts.positions), p), P); };
    Pick best;
    int bestP = -1;
    auto keep = [&](const Pick& x, int p) {
      if (bestP < 0 || x.value < best.value || (x.value == best.value && x.combination < best.combination)) {
        best = x;
        bestP = p;
      }
    };
    CombinationFilter accurate;
    accurate.accuracyFloor = s.accuracy;
    accurate.measuredForDecisions = params.measuredAccuracyForDecisions;
    for (int p = 0; p < P && !std::isnan(s.accuracy); ++p) {
      const Pick f = fastest(ts, whole(p), accurate);
      if (f.found() && f.value <= s.latencyMs) keep(f, p);
    }
    np.feasible.push_back(bestP >= 0);
    if (bestP < 0) {
      const bool nan = std::isnan(s.accuracy) || std::isnan(s.latencyMs);  // every score NaN: the first is kept
      for (int p = 0; p < (nan ? 1 : P); ++p)
        keep(closestMiss(ts, whole(p), s, params.measuredAccuracyForDecisions, false), p);
    }
    np.candidate.push_back(best.combination);
    np.placement.push_back(std::vector<std::string>(static_cast<size_t>(ts.positions), space.processors[static_cast<size_t>(bestP)].name));
  }
  return np;
}

// Every task whole on processor p: its fastest variant there that meets the
// accuracy floor (else the closest miss). Mixed task by task with others, these
// spread whole tasks over the processors. Nothing when a task has no variant
// that runs there.
std::optional<Choice> wholeOnProcessorChoice(const StitchSpace& space, const plan::SloConfiguration& slo,
                                             const SelectParams& params, int p) {
  Choice c;
  c.system = "zooplan";
  const int P = static_cast<int>(space.processors.size());
  for (const auto& ts : space.tasks) {
    const auto& s = slo.tasks.at(ts.name);
    const auto whole = PlacementSet::single(std::vector<int>(static_cast<size_t>(ts.positions), p), P);
    CombinationFilter accurate;
    accurate.accuracyFloor = s.accuracy;
    accurate.measuredForDecisions = params.measuredAccuracyForDecisions;
    Pick f = std::isnan(s.accuracy) ? Pick{} : fastest(ts, whole, accurate);
    if (!f.found()) f = closestMiss(ts, whole, s, params.measuredAccuracyForDecisions, false);
    const std::vector<int> onP(static_cast<size_t>(ts.positions), p);
    if (!f.found() || !std::isfinite(ts.latencyMs(static_cast<uint64_t>(f.combination), onP))) return std::nullopt;
    c.feasible.push_back(f.found() && f.value <= s.latencyMs);
    c.candidate.push_back(f.combination);
    c.placement.push_back(std::vector<std::string>(static_cast<size_t>(ts.positions), space.processors[static_cast<size_t>(p)].name));
  }
  return c;
}

// Each task's model as given (every position from its reference variant) run
// whole on processor p, or, with p < 0, on the processor where it is fastest
// (lowest index on ties; the first when it runs on none, a choice that misses);
// none when some task's model cannot run on p.
std::optional<Choice> modelsAsGivenChoice(const StitchSpace& space, const plan::SloConfiguration& slo, int p) {
  Choice c;
  c.system = "zooplan";
  const int P = static_cast<int>(space.processors.size());
  for (size_t t = 0; t < space.tasks.size(); ++t) {
    const auto& ts = space.tasks[t];
    const auto ref = std::find(ts.variants.begin(), ts.variants.end(), ts.stitch ? ts.stitch->reference : "");
    const int variant = ref == ts.variants.end() ? 0 : static_cast<int>(ref - ts.variants.begin());
    const uint64_t k = ts.combinations().number(std::vector<int>(static_cast<size_t>(ts.positions), variant));
    if (!ts.valid(k)) return std::nullopt;
    int on = p < 0 ? 0 : p;
    double ms = INFINITY;
    for (int q = (p < 0 ? 0 : p); q < (p < 0 ? P : p + 1); ++q) {
      const double x = ts.latencyMs(k, std::vector<int>(static_cast<size_t>(ts.positions), q));
      if (x < ms) ms = x, on = q;
    }
    if (!std::isfinite(ms)) {
      if (p >= 0) return std::nullopt;
      on = 0;
    }
    c.candidate.push_back(static_cast<int64_t>(k));
    c.placement.push_back(std::vector<std::string>(static_cast<size_t>(ts.positions),
                                                   space.processors[static_cast<size_t>(on)].name));
    c.feasible.push_back(decisionMeetsSlo(space, slo, t, c.candidate.back(), c.placement.back()));
  }
  return c;
}

struct LabelledChoice {
  Choice choice;
  std::string label;
};

// The models as given on their fastest processors, then on each processor;
// framesScheduled: a frame's DNNs where the frame's concurrent schedule
// (HaX-CoNN) maps them. None when a task's reference is no valid choice.
std::vector<LabelledChoice> modelsAsGivenChoices(const StitchSpace& space, const plan::SloConfiguration& slo,
                                                 bool framesScheduled) {
  auto pin = [&](std::optional<Choice> c) {
    for (const auto& [t, proc] : space.scheduledWhole) {
      if (!c || !framesScheduled) break;
      const auto u = static_cast<size_t>(t);
      c->placement[u].assign(c->placement[u].size(), proc);
      c->feasible[u] = decisionMeetsSlo(space, slo, u, c->candidate[u], c->placement[u]);
    }
    return c;
  };
  const std::string framed = framesScheduled ? ", a frame's DNNs where its concurrent schedule maps them" : "";
  std::vector<LabelledChoice> out;
  if (auto c = pin(modelsAsGivenChoice(space, slo, -1)))
    out.push_back({std::move(*c), "the models as given on their fastest processors" + framed});
  for (int p = 0; p < static_cast<int>(space.processors.size()) && !out.empty(); ++p)
    if (auto c = pin(modelsAsGivenChoice(space, slo, p)))
      out.push_back({std::move(*c), "the models as given on " + space.processors[static_cast<size_t>(p)].name + framed});
  return out;
}

}  // namespace

int memberIndex(const SharedGroup& group, size_t t) {
  auto it = std::find(group.members.begin(), group.members.end(), static_cast<int>(t));
  return it == group.members.end() ? -1 : static_cast<int>(it - group.members.begin());
}

std::string decisionId(const StitchSpace& space, size_t t, int64_t candidate) {
  if (auto g = sharedGroupOf(candidate)) return plan::UnitId::group(space.groups.at(*g).name).str();
  if (auto m = placedModelOf(candidate)) return space.placed.at(*m).placement.unit.str();
  return space.tasks[t].idOf(static_cast<uint64_t>(candidate));
}

double decisionJudgedAccuracy(const StitchSpace& space, size_t t, int64_t candidate) {
  if (auto g = sharedGroupOf(candidate)) {
    const SharedGroup& group = space.groups.at(*g);
    const int m = memberIndex(group, t);
    assert(m >= 0 && "a group answers its members only");
    return group.accuracy[static_cast<size_t>(m)];
  }
  if (auto m = placedModelOf(candidate)) {  // the variant's own answers
    assert(space.placed.at(*m).task == static_cast<int>(t) && "a placed model answers its own task only");
    return space.tasks[t].accuracy->judged(space.placed.at(*m).original);
  }
  return space.tasks[t].accuracy->judged(static_cast<uint64_t>(candidate));
}

double decisionLatencyMs(const StitchSpace& space, size_t t, int64_t candidate, const std::vector<std::string>& placement) {
  if (auto g = sharedGroupOf(candidate)) {
    const auto& runMs = space.groups.at(*g).runMs;
    auto it = placement.size() == 1 ? runMs.find(placement.front()) : runMs.end();
    return it == runMs.end() ? kInf : it->second;
  }
  if (auto m = placedModelOf(candidate)) {
    const plan::OpPlacement& o = space.placed.at(*m).placement;
    return placement == o.processors ? o.latencyMs : kInf;
  }
  const auto& ts = space.tasks[t];
  return ts.latencyMs(ts.candidate(static_cast<uint64_t>(candidate)), placement);
}

bool decisionMeetsSlo(const StitchSpace& space, const plan::SloConfiguration& slo, size_t t, int64_t candidate,
                      const std::vector<std::string>& placement) {
  const auto& s = slo.tasks.at(space.tasks[t].name);
  return decisionJudgedAccuracy(space, t, candidate) >= s.accuracy &&
         decisionLatencyMs(space, t, candidate, placement) <= s.latencyMs;
}

double decisionAccuracy(const Candidate& c, const SelectParams& params) {
  if (c.original || params.measuredAccuracyForDecisions) return c.accuracy(true);
  return c.predictedAccuracy;
}

std::vector<std::vector<int>> orderIndices(const StitchSpace& space, const std::vector<std::vector<std::string>>& orders) {
  std::vector<std::vector<int>> out;
  for (const auto& o : orders) {
    std::vector<int> idx;
    for (const auto& p : o) idx.push_back(processorIndex(space, p));
    out.push_back(std::move(idx));
  }
  return out;
}

std::vector<TaskSearch> taskSearches(const StitchSpace& space, const plan::SloConfiguration& slo,
                                     const std::vector<std::vector<int>>& orders, const SelectParams& params,
                                     bool originalsOnly) {
  std::vector<TaskSearch> out;
  for (const auto& ts : space.tasks)
    out.emplace_back(ts, slo.tasks.at(ts.name), params.measuredAccuracyForDecisions, originalsOnly, orders);
  return out;
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
    for (uint64_t k : originals(t)) {
      const Candidate c = t.candidate(k);
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

std::string sloSetLegend(SloSet set) {
  switch (set) {
    case SloSet::Grid:
      return "C01..C25: SparseLoom's SLO grid (§5.1): 5 accuracy floors x 5 latency bounds over the original "
             "variants' ranges; C01-C05 the lowest floor, each row from the tightest bound to the loosest";
    case SloSet::AccuracyGuaranteed:
      return "ACC1..ACC5: the best original's accuracy, latency bounds from the fastest original's to the slowest's";
    case SloSet::LatencyGuaranteed:
      return "LAT1..LAT5: the fastest original's latency, accuracy floors from the lowest original's to the best's";
  }
  return {};
}

std::vector<double> fastestQueryMs(const StitchSpace& space) {
  std::vector<double> out;
  for (const auto& t : space.tasks) {
    double best = kInf;
    if (t.combinations().size() <= kMaxFastestScan) {
      const auto placements = allPlacements(space, t.positions);
      for (uint64_t k : t.validCombinations()) {
        const Candidate c = t.candidate(k);
        for (const auto& pl : placements) best = std::min(best, t.latencyMs(c, pl));
      }
    }
    out.push_back(best);
  }
  // A weight-shared group's unit and an operator placement answer queries too.
  for (const auto& g : space.groups)
    for (const auto& [proc, ms] : g.runMs)
      for (int m : g.members) out[static_cast<size_t>(m)] = std::min(out[static_cast<size_t>(m)], ms);
  for (const auto& pm : space.placed)
    out[static_cast<size_t>(pm.task)] = std::min(out[static_cast<size_t>(pm.task)], pm.placement.latencyMs);
  return out;
}

std::vector<std::string> unreachableSloWarnings(const StitchSpace& space, const std::vector<plan::SloConfiguration>& slos,
                                                double overheadMs) {
  const auto fastest = fastestQueryMs(space);
  std::vector<std::string> out;
  for (size_t t = 0; t < space.tasks.size(); ++t) {
    if (!std::isfinite(fastest[t])) continue;
    const double floor = fastest[t] + overheadMs;
    std::vector<std::string> ids;
    double lo = kInf, hi = 0;
    for (const auto& c : slos) {
      const double l = c.tasks.at(space.tasks[t].name).latencyMs;
      if (l >= floor) continue;
      ids.push_back(c.id);
      lo = std::min(lo, l);
      hi = std::max(hi, l);
    }
    if (ids.empty()) continue;
    const std::string which = ids.size() == slos.size() ? fmt::format("every configuration ({})", ids.size())
                              : ids.size() <= 3 ? fmt::format("{}", fmt::join(ids, ", "))
                                                : fmt::format("{} of {} configurations ({}..{})", ids.size(),
                                                              slos.size(), ids.front(), ids.back());
    out.push_back(fmt::format(
        "task '{}': the latency SLO of {} ({:.4g}-{:.4g} ms) lies below its fastest query, {:.4g} ms ({}): every "
        "query misses it whatever the plan; write SLOs this host can meet (slo.json, one per task: "
        "{{\"tasks\": {{\"{}\": {{\"accuracy\": A, \"latency_ms\": L}}}}}})",
        space.tasks[t].name, which, lo, hi, floor,
        overheadMs > 0 ? fmt::format("{:.4g} ms profiled + {:.4g} ms dispatch measured", fastest[t], overheadMs)
                       : "profiled, without the serving dispatch plan-solve --rate measures",
        space.tasks[t].name));
  }
  return out;
}

Algorithm1Result algorithm1(const StitchSpace& space, const plan::SloConfiguration& slo,
                            const std::vector<std::vector<std::string>>& orders, const SelectParams& params,
                            bool originalsOnly, const std::string& system) {
  const auto orderIdx = orderIndices(space, orders);
  auto tasks = taskSearches(space, slo, orderIdx, params, originalsOnly);
  return algorithm1With(space, orders, orderIdx, tasks, system);
}

std::vector<sim::TaskQueries> queriesOf(const StitchSpace& space, const Choice& choice, int queries) {
  std::vector<sim::TaskQueries> out;
  for (size_t t = 0; t < space.tasks.size(); ++t) {
    const auto& ts = space.tasks[t];
    const auto& pl = choice.placement[t];
    sim::TaskQueries q;
    q.name = ts.name;
    q.queries = queries;
    if (choice.candidate[t] < 0) {  // a group's unit or a placed model: one run, dispatched on its first processor
      q.stages.push_back(sim::QueryStage{processorIndex(space, pl.front()),
                                         decisionLatencyMs(space, t, choice.candidate[t], pl), 0.0});
      out.push_back(std::move(q));
      continue;
    }
    const auto variants = ts.variantsOf(static_cast<uint64_t>(choice.candidate[t]));
    // A run of consecutive positions on one processor is one stage: it pays the
    // per-run overhead once (the latency model's rule).
    for (int p = 0; p < ts.positions;) {
      int e = p;
      while (e + 1 < ts.positions && pl[static_cast<size_t>(e + 1)] == pl[static_cast<size_t>(p)]) ++e;
      double ms = ts.latency.overhead(pl[static_cast<size_t>(p)]);
      for (int j = p; j <= e; ++j)  // unprofiled: never finishes in time
        ms += ts.latency.subgraph(j, variants[static_cast<size_t>(j)], pl[static_cast<size_t>(j)]).value_or(kInf) -
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
      const double accuracy = decisionJudgedAccuracy(space, t, choice.candidate[t]);
      const auto& s = slo.tasks.at(ts.name);
      // Written so that a NaN (an unprofiled placement, an SLO no number meets) is a violation.
      bool violated = !(accuracy >= s.accuracy) || !(r.meanLatencyMs[t] <= s.latencyMs);
      violations += violated;
      o.taskLatencyMs[t] += r.meanLatencyMs[t];
      if (orders == 0) {
        o.taskViolated.push_back(violated);
        o.accuracyMisses += !(accuracy >= s.accuracy);
      }
    }
    throughput += r.throughputQps;
    ++orders;
  } while (std::next_permutation(arrival.begin(), arrival.end()));
  o.violationRate = violations / static_cast<double>(orders * static_cast<int>(T));
  o.throughputQps = throughput / orders;
  for (auto& l : o.taskLatencyMs) l /= orders;
  for (double l : o.taskLatencyMs) o.meanLatencyMs += l / static_cast<double>(T);
  return o;
}

std::vector<Choice> baselineChoices(const StitchSpace& space, const plan::SloConfiguration& slo,
                                    const SelectParams& params) {
  std::vector<Choice> out;
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
      std::vector<Candidate> orig;
      std::vector<uint64_t> numbers = originals(ts);
      for (uint64_t k : numbers) orig.push_back(ts.candidate(k));
      auto placementFor = [&](const Candidate& c) {
        return partitioned ? baselineOrder(space, ts.positions, params) : npPlacement(ts, c);
      };
      int pick = -1;  // index into orig
      bool feasible = false;
      if (system.rfind("SV-AO", 0) == 0) {
        for (size_t i = 0; i < orig.size(); ++i)
          if (pick < 0 || orig[i].accuracy(true) > orig[static_cast<size_t>(pick)].accuracy(true)) pick = static_cast<int>(i);
      } else if (system.rfind("SV-LO", 0) == 0) {
        double best = kInf;
        for (size_t i = 0; i < orig.size(); ++i) {
          double l = ts.latencyMs(orig[i], placementFor(orig[i]));
          if (pick < 0 || l < best) { best = l; pick = static_cast<int>(i); }
        }
      } else {  // AV: the fastest original meeting both SLOs, else the closest
        double best = kInf, bestMiss = kInf;
        int closest = -1;
        for (size_t i = 0; i < orig.size(); ++i) {
          const auto& c = orig[i];
          double l = ts.latencyMs(c, placementFor(c));
          double acc = c.accuracy(true);
          if (acc >= s.accuracy && l <= s.latencyMs && l < best) { best = l; pick = static_cast<int>(i); }
          double m = missScore(acc, l, s);
          if (closest < 0 || m < bestMiss) { bestMiss = m; closest = static_cast<int>(i); }
        }
        feasible = pick >= 0;
        if (!feasible) pick = closest;
      }
      const auto& c = orig[static_cast<size_t>(pick)];
      auto pl = placementFor(c);
      if (system.rfind("SV", 0) == 0) feasible = c.accuracy(true) >= s.accuracy && ts.latencyMs(c, pl) <= s.latencyMs;
      ch.candidate.push_back(static_cast<int64_t>(numbers[static_cast<size_t>(pick)]));
      ch.placement.push_back(pl);
      ch.feasible.push_back(feasible);
    }
    if (partitioned) ch.order = baselineOrder(space, space.tasks.empty() ? 0 : space.tasks[0].positions, params);
    out.push_back(std::move(ch));
  }
  return out;
}

bool pastStop(const SelectParams& params) {
  return params.stopAt && std::chrono::steady_clock::now() >= *params.stopAt;
}

bool betterOutcome(const Outcome& a, const Outcome& b) {
  const double va = a.judgedViolationRate(), vb = b.judgedViolationRate();
  if (std::abs(va - vb) > 1e-12) return va < vb;
  if (a.accuracyMisses != b.accuracyMisses) return a.accuracyMisses < b.accuracyMisses;
  if (std::abs(a.throughputQps - b.throughputQps) > 1e-3 * std::max(a.throughputQps, b.throughputQps))
    return a.throughputQps > b.throughputQps;
  return a.meanLatencyMs < b.meanLatencyMs * (1 - 1e-9);
}

plan::PredictedServing predictedOf(const Outcome& o, int64_t judged, bool provenBest, double bound) {
  return plan::PredictedServing{o.violationRate, o.throughputQps, judged, provenBest, bound, o.slowedViolationRate};
}

Choice zooplanChoice(const StitchSpace& space, const plan::SloConfiguration& slo, const SelectParams& params,
                     Algorithm1Result* algorithm1Out, ZooplanSearch* search) {
  auto tasks = taskSearches(space, slo, orderIndices(space, globalOrders(space)), params, false);
  return zooplanChoice(space, slo, params, tasks, algorithm1Out, search);
}

namespace {

// From `best`, one task at a time, the task's decision of another candidate
// while it serves better, until a round changes nothing (at most `rounds`).
// Returns false when `stop` said to stop first.
bool improveTaskByTask(const std::vector<Choice>& candidates, const std::function<const Outcome&(const Choice&)>& outcome,
                       const std::function<bool()>& stop, Choice& best, std::string& winner, int rounds) {
  for (int round = 0; round < rounds; ++round) {
    bool changed = false;
    for (size_t t = 0; t < best.candidate.size(); ++t)
      for (const auto& c : candidates) {
        if (c.candidate[t] == best.candidate[t] && c.placement[t] == best.placement[t]) continue;
        if (stop()) return false;
        Choice next = best;
        next.candidate[t] = c.candidate[t];
        next.placement[t] = c.placement[t];
        next.feasible[t] = c.feasible[t];
        if (betterOutcome(outcome(next), outcome(best))) {
          best = std::move(next);
          winner = "task by task from the candidates' decisions";
          changed = true;
        }
      }
    if (!changed) return true;
  }
  return true;
}

// Per task, the distinct decisions the candidates take, in candidate order:
// each as the candidate it first came from.
std::vector<std::vector<size_t>> distinctDecisions(const std::vector<Choice>& candidates, size_t tasks) {
  std::vector<std::vector<size_t>> out(tasks);
  for (size_t t = 0; t < tasks; ++t)
    for (size_t c = 0; c < candidates.size(); ++c) {
      bool seen = false;
      for (size_t d : out[t])
        seen = seen || (candidates[d].candidate[t] == candidates[c].candidate[t] &&
                        candidates[d].placement[t] == candidates[c].placement[t]);
      if (!seen) out[t].push_back(c);
    }
  return out;
}

// Every mix of the candidates' per-task decisions, in a fixed order (the first
// task's decision changing slowest); the best by betterOutcome wins, ties
// keeping the one judged first. Returns false when `stop` said to stop first.
bool judgeEveryMix(const std::vector<Choice>& candidates, const std::vector<std::vector<size_t>>& decisions,
                   const std::function<const Outcome&(const Choice&)>& outcome, const std::function<bool()>& stop,
                   Choice& best, std::string& winner) {
  const size_t T = decisions.size();
  std::vector<size_t> at(T, 0);
  Choice mix = best;
  while (true) {
    if (stop()) return false;
    for (size_t t = 0; t < T; ++t) {
      const Choice& from = candidates[decisions[t][at[t]]];
      mix.candidate[t] = from.candidate[t];
      mix.placement[t] = from.placement[t];
      mix.feasible[t] = from.feasible[t];
    }
    if (betterOutcome(outcome(mix), outcome(best))) {
      best = mix;
      winner = "the best mix of the candidates' decisions, task by task";
    }
    size_t t = T;
    while (t > 0 && ++at[t - 1] == decisions[t - 1].size()) at[--t] = 0;
    if (t == 0) return true;
  }
}

}  // namespace

namespace {

// The previous plan's decision for task t as this space numbers it; none when
// its variants or processors are not in the space any more.
std::optional<std::pair<int64_t, std::vector<std::string>>> previousDecision(const StitchSpace& space, size_t t,
                                                                             const PreviousChoices::Decision& d) {
  const auto& ts = space.tasks[t];
  for (size_t g = 0; g < space.groups.size(); ++g)
    if (d.combination == plan::UnitId::group(space.groups[g].name).str() && memberIndex(space.groups[g], t) >= 0 &&
        d.placement.size() == 1 && space.groups[g].runMs.count(d.placement.front()))
      return std::make_pair(groupDecision(g), d.placement);
  for (size_t m = 0; m < space.placed.size(); ++m)
    if (d.combination == space.placed[m].placement.unit.str() && space.placed[m].task == static_cast<int>(t) &&
        d.placement == space.placed[m].placement.processors)
      return std::make_pair(placedDecision(m), d.placement);
  const std::vector<std::string> ids = zoo::combinationVariants(d.combination);
  if (static_cast<int>(ids.size()) != ts.positions || static_cast<int>(d.placement.size()) != ts.positions) return {};
  std::vector<int> digits;
  for (const auto& id : ids) {
    auto it = std::find(ts.variants.begin(), ts.variants.end(), id);
    if (it == ts.variants.end()) return {};
    digits.push_back(static_cast<int>(it - ts.variants.begin()));
  }
  for (const auto& p : d.placement)
    if (processorIndex(space, p) < 0) return {};
  const uint64_t k = ts.combinations().number(digits);
  if (!ts.valid(k)) return {};
  return std::make_pair(static_cast<int64_t>(k), d.placement);
}

// Each task whose previous pick, put in place of the new one, is judged as good
// within the noise keeps it (tasks in order, each on top of the ones kept).
int keepPreviousPicks(const StitchSpace& space, const plan::SloConfiguration& slo, const PreviousChoices& previous,
                      const std::function<const Outcome&(const Choice&)>& outcome, Choice& best) {
  auto sloIt = previous.bySlo.find(slo.id);
  if (sloIt == previous.bySlo.end()) return 0;
  int kept = 0;
  for (size_t t = 0; t < space.tasks.size(); ++t) {
    auto d = sloIt->second.find(space.tasks[t].name);
    if (d == sloIt->second.end()) continue;
    const auto decision = previousDecision(space, t, d->second);
    if (!decision || (decision->first == best.candidate[t] && decision->second == best.placement[t])) continue;
    Choice next = best;
    next.candidate[t] = decision->first;
    next.placement[t] = decision->second;
    next.feasible[t] = decisionMeetsSlo(space, slo, t, next.candidate[t], next.placement[t]);
    const Outcome& now = outcome(best);
    const Outcome& then = outcome(next);
    if (then.judgedViolationRate() <= now.judgedViolationRate() + previous.violationNoise &&
        then.accuracyMisses <= now.accuracyMisses &&
        then.meanLatencyMs <= now.meanLatencyMs * (1 + previous.latencyNoise)) {
      best = next;
      ++kept;
    }
  }
  return kept;
}

}  // namespace

Choice zooplanChoice(const StitchSpace& space, const plan::SloConfiguration& slo, const SelectParams& params,
                     std::vector<TaskSearch>& tasks, Algorithm1Result* algorithm1Out, ZooplanSearch* search) {
  const auto orders = globalOrders(space);
  const auto orderIdx = orderIndices(space, orders);
  Algorithm1Result a1 = algorithm1With(space, orders, orderIdx, tasks, "zooplan");
  if (algorithm1Out) *algorithm1Out = a1;
  std::optional<runtime::serve::ArrivalTrace> trace;
  if (params.workload) {
    auto t = workloadTrace(space, *params.workload);
    assert(t.ok() && "the driver checks the workload names every task");
    trace = std::move(*t);
  }
  // Many orders lead to the same choice: each distinct one is judged once.
  std::map<std::pair<std::vector<int64_t>, std::vector<std::vector<std::string>>>, Outcome> judged;
  std::function<const Outcome&(const Choice&)> outcome = [&](const Choice& c) -> const Outcome& {
    auto key = std::make_pair(c.candidate, c.placement);
    auto it = judged.find(key);
    if (it == judged.end())
      it = judged.emplace(key, trace ? evaluateServing(space, slo, c, *params.workload, *trace)
                                     : evaluate(space, slo, c, params)).first;
    return it->second;
  };
  Choice best = a1.choice;
  std::string winner = "Algorithm 1";
  if (params.only == SingleTechnique::SparseLoom) {
    best.system = "zooplan";
    if (search) *search = ZooplanSearch{winner + " (SparseLoom alone)", outcome(best), 0, false, 0};
    return best;
  }
  const bool sparoaAlone = params.only == SingleTechnique::SparOA;
  const bool nnv12Alone = params.only == SingleTechnique::Nnv12;
  const bool haxconnAlone = params.only == SingleTechnique::HaxConn;
  // MTS, SparOA, NNV12 or HaX-CoNN alone: the models as given (its reference
  // variant), each technique's own units beside them; no stitched variants, no baselines.
  const bool mtsAlone = params.only == SingleTechnique::Mts || sparoaAlone || nnv12Alone || haxconnAlone;
  // They start from the models as given (else, a reference that did not
  // stitch with itself, Algorithm 1's choice stands in); HaX-CoNN alone runs a
  // frame's DNNs where the frame's schedule maps them.
  const auto starts = mtsAlone ? modelsAsGivenChoices(space, slo, haxconnAlone) : std::vector<LabelledChoice>{};
  if (!starts.empty()) {
    best = starts.front().choice;
    winner = starts.front().label;
  }
  std::vector<Choice> candidates{best};
  auto consider = [&](Choice c, const std::string& label) {
    if (betterOutcome(outcome(c), outcome(best))) {
      best = c;
      best.system = "zooplan";
      winner = label;
    }
    candidates.push_back(std::move(c));
  };
  for (size_t i = 1; i < starts.size(); ++i) consider(starts[i].choice, starts[i].label);
  for (size_t oi = 0; oi < orders.size() && !mtsAlone; ++oi) {
    std::string label;
    for (const auto& p : orders[oi]) {
      if (!label.empty()) label += ">";
      label += p;
    }
    consider(singleOrderChoice(space, orders[oi], orderIdx[oi], tasks), "Algorithm 1 with order " + label);
  }
  // For light tasks, one processor per task can beat a shared pipeline.
  if (!mtsAlone) {
    consider(wholeOnFastestChoice(space, slo, params), "stitched variants run whole on their fastest processor");
    for (const auto& b : baselineChoices(space, slo, params)) consider(b, "the " + b.system + " choice");
  }
  if (trace && !mtsAlone)
    for (int p = 0; p < static_cast<int>(space.processors.size()); ++p)
      if (auto c = wholeOnProcessorChoice(space, slo, params, p))
        consider(std::move(*c), "every task whole on " + space.processors[static_cast<size_t>(p)].name);
  // What a single technique starts from is a candidate of the composed search
  // too: the models as given, on their fastest processors, on each one, and a
  // frame's DNNs where the frame's concurrent schedule maps them.
  if (trace && params.only == SingleTechnique::None) {
    const auto pinned = space.scheduledWhole.empty() ? std::vector<LabelledChoice>{}
                                                     : modelsAsGivenChoices(space, slo, true);
    if (!pinned.empty()) consider(pinned.front().choice, pinned.front().label);
    for (const auto& c : modelsAsGivenChoices(space, slo, false)) consider(c.choice, c.label);
  }
  // A weight-shared group's unit answering every member, on each processor it
  // runs on, over the best so far: the mixes below then judge it member by member.
  if (trace && !sparoaAlone && !nnv12Alone && !haxconnAlone)
    for (size_t g = 0; g < space.groups.size(); ++g)
      for (const auto& run : space.groups[g].runMs) {
        const std::string& proc = run.first;
        Choice c = best;
        for (int member : space.groups[g].members) {
          const auto m = static_cast<size_t>(member);
          c.candidate[m] = groupDecision(g);
          c.placement[m] = {proc};
          c.feasible[m] = decisionMeetsSlo(space, slo, m, c.candidate[m], c.placement[m]);
        }
        consider(std::move(c), "the shared group " + space.groups[g].name + "'s unit on " + proc);
      }
  // A task's variant under its operator placement, over the best so far (SparOA
  // and HaX-CoNN alone place the model as given only, each by its own
  // technique; MTS and NNV12 alone place none).
  if (trace && params.only != SingleTechnique::Mts && !nnv12Alone)
    for (size_t m = 0; m < space.placed.size(); ++m) {
      const PlacedModel& pm = space.placed[m];
      const auto t = static_cast<size_t>(pm.task);
      const bool asGiven = space.tasks[t].stitch && pm.variant == space.tasks[t].stitch->reference;
      if ((sparoaAlone || haxconnAlone) && !asGiven) continue;
      if ((sparoaAlone && pm.by != PlacedBy::SparOA) || (haxconnAlone && pm.by != PlacedBy::HaxConn)) continue;
      Choice c = best;
      c.candidate[t] = placedDecision(m);
      c.placement[t] = pm.placement.processors;
      c.feasible[t] = decisionMeetsSlo(space, slo, t, c.candidate[t], c.placement[t]);
      consider(std::move(c), "task " + space.tasks[t].name + "'s variant " + pm.variant +
                                 (pm.by == PlacedBy::HaxConn ? " under its frame's layer-group schedule"
                                                             : " under its operator placement"));
    }
  // Served at the workload's rates, tasks compete for the processors: mixing
  // the candidates' decisions task by task can beat every candidate whole.
  ZooplanSearch found;
  if (trace) {
    const auto decisions = distinctDecisions(candidates, space.tasks.size());
    double mixes = 1;
    for (const auto& d : decisions) mixes *= static_cast<double>(d.size());
    const auto stop = [&] { return pastStop(params); };
    found.provenBest = mixes <= static_cast<double>(params.maxMixesJudged);
    const bool finished = found.provenBest ? judgeEveryMix(candidates, decisions, outcome, stop, best, winner)
                                           : improveTaskByTask(candidates, outcome, stop, best, winner, 2);
    found.stopped = !finished;
    found.provenBest = found.provenBest && finished;
    std::vector<std::vector<TaskDecision>> options(space.tasks.size());
    for (size_t t = 0; t < space.tasks.size(); ++t)
      for (size_t c : decisions[t]) options[t].push_back({candidates[c].candidate[t], candidates[c].placement[t]});
    found.violationBound = servingViolationBound(space, slo, options, *params.workload, *trace);
    // A choice at the bound is optimal whether or not every mix was judged.
    found.provenBest = found.provenBest || outcome(best).judgedViolationRate() <= found.violationBound + 1e-12;
  }
  if (params.previous) {
    found.keptPrevious = keepPreviousPicks(space, slo, *params.previous, outcome, best);
    if (found.keptPrevious > 0) {
      winner += fmt::format(", {} task(s) keeping the previous plan's pick (a tie within the noise: {:.1f} points of "
                            "violations, {:.0f}% of mean latency)",
                            found.keptPrevious, 100 * params.previous->violationNoise, 100 * params.previous->latencyNoise);
      found.provenBest = found.provenBest && outcome(best).judgedViolationRate() <= found.violationBound + 1e-12;
    }
  }
  best.system = "zooplan";
  if (search) {
    found.winner = winner;
    found.predicted = outcome(best);
    found.judged = static_cast<int64_t>(judged.size());
    *search = std::move(found);
  }
  return best;
}

}  // namespace zp::select
