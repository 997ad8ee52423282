// plan-solve's stitch section as it was computed before its searches (the
// reference for planStitch): Θ^t listed per configuration and scanned for the
// order, the selections, the served systems and the preload hotness.
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "passes/preload/preload.h"
#include "passes/select/plan_stitch.h"
#include "passes/select/served_systems.h"
#include "tests/select/enumeration_reference.h"
#include "libplan/util/infinity.h"

namespace zp::select::reference {
namespace {

void addSubgraph(const TaskSpace& ts, int pos, const std::string& variant, const std::string& proc, plan::TaskPlan& tp) {
  auto key = [](const plan::PlannedSubgraph& g) { return std::tie(g.position, g.variant, g.processor); };
  plan::PlannedSubgraph g{pos, variant, proc, ts.memoryBytes(pos, variant, proc),
                          ts.latency.subgraph(pos, variant, proc).value_or(0.0)};
  auto at = std::lower_bound(tp.subgraphs.begin(), tp.subgraphs.end(), g,
                             [&](const auto& a, const auto& b) { return key(a) < key(b); });
  if (at == tp.subgraphs.end() || key(*at) != key(g)) tp.subgraphs.insert(at, std::move(g));
}

plan::TaskPlan taskPlan(const StitchSpace& space, size_t t, const std::vector<std::string>& order,
                        const std::vector<plan::SloConfiguration>& slos,
                        const std::vector<std::vector<std::vector<int>>>& theta, const SelectParams& params,
                        int64_t* firstChosen) {
  const auto& ts = space.tasks[t];
  const Listed l = listOf(ts);
  plan::TaskPlan tp;
  tp.name = ts.name;
  tp.positions = ts.positions;
  std::vector<std::string> pl(order.begin(), order.begin() + ts.positions);
  std::set<std::pair<int, std::string>> used;
  for (size_t c = 0; c < slos.size(); ++c) {
    const auto& s = slos[c].tasks.at(ts.name);
    int pick = -1;
    double bestLat = kInf;
    for (int k : theta[c][t]) {
      double lat = ts.latencyMs(l.candidates[static_cast<size_t>(k)], pl);
      if (lat < bestLat) { bestLat = lat; pick = k; }
    }
    // Algorithm 1's pick under the order: the fastest of Θ^t when it meets the
    // latency SLO, else the closest miss; the subgraphs it uses are the plan's.
    if (pick >= 0 && bestLat <= s.latencyMs) {
      if (*firstChosen < 0) *firstChosen = static_cast<int64_t>(l.numbers[static_cast<size_t>(pick)]);
    } else {
      double bestMiss = kInf;
      pick = -1;
      for (size_t k = 0; k < l.candidates.size(); ++k) {
        double m = missScore(decisionAccuracy(l.candidates[k], params), ts.latencyMs(l.candidates[k], pl), s);
        if (pick < 0 || m < bestMiss) { bestMiss = m; pick = static_cast<int>(k); }
      }
    }
    const auto& cand = l.candidates[static_cast<size_t>(pick)];
    for (int p = 0; p < ts.positions; ++p) used.insert({p, cand.variants[static_cast<size_t>(p)]});
  }
  for (const auto& [pos, variant] : used) addSubgraph(ts, pos, variant, order[static_cast<size_t>(pos)], tp);
  return tp;
}

std::vector<plan::ServedSystem> servedSystems(const StitchSpace& space, const std::vector<plan::SloConfiguration>& slos,
                                              const SelectParams& params) {
  auto selectionOf = [&](const std::string& slo, const Choice& c) {
    plan::SystemSelection sel;
    sel.slo = slo;
    for (size_t t = 0; t < space.tasks.size(); ++t) {
      const Candidate cand = space.tasks[t].candidate(static_cast<uint64_t>(c.candidate[t]));
      sel.tasks.push_back(plan::SystemTaskChoice{space.tasks[t].name, cand.id, c.placement[t],
                                                 static_cast<bool>(c.feasible[t]), cand.accuracy(true),
                                                 cand.measuredAccuracy >= 0 ? "measured" : "estimated",
                                                 space.tasks[t].latencyMs(cand, c.placement[t])});
    }
    return sel;
  };
  std::vector<plan::ServedSystem> out;
  for (const auto& [name, description] : servedSystemCatalog()) out.push_back({name, description, {}, std::nullopt});
  for (const auto& slo : slos) {
    Algorithm1Result a1;
    Choice best = reference::zooplanChoice(space, slo, params, &a1, nullptr);
    out[0].selections.push_back(selectionOf(slo.id, best));
    out[1].selections.push_back(selectionOf(slo.id, a1.choice));
    const auto baselines = reference::baselineChoices(space, slo, params);
    for (size_t b = 0; b < baselines.size(); ++b) out[2 + b].selections.push_back(selectionOf(slo.id, baselines[b]));
  }
  return out;
}

void addSystemsSubgraphs(const StitchSpace& space, const std::vector<plan::ServedSystem>& systems, plan::StitchPlan& sp) {
  for (const auto& sys : systems)
    for (const auto& sel : sys.selections)
      for (size_t t = 0; t < sel.tasks.size(); ++t) {
        const auto& c = sel.tasks[t];
        const Listed l = listOf(space.tasks[t]);
        const auto& cand = *std::find_if(l.candidates.begin(), l.candidates.end(),
                                         [&](const Candidate& k) { return k.id == c.combination; });
        for (int p = 0; p < space.tasks[t].positions; ++p)
          addSubgraph(space.tasks[t], p, cand.variants[static_cast<size_t>(p)], c.placement[static_cast<size_t>(p)],
                      sp.tasks[t]);
      }
}

std::vector<preload::Item> preloadItems(const StitchSpace& space, const std::vector<std::string>& order,
                                        const std::vector<std::vector<std::vector<int>>>& theta) {
  std::vector<preload::Item> items;
  for (size_t t = 0; t < space.tasks.size(); ++t) {
    const auto& ts = space.tasks[t];
    const Listed l = listOf(ts);
    for (int pos = 0; pos < ts.positions; ++pos)
      for (const auto& v : ts.stitch->variants) {
        preload::Item it;
        it.id = plan::UnitId::subgraph(ts.name, pos, v.id).str();
        it.task = static_cast<int>(t);
        it.position = pos;
        it.bytes = ts.memoryBytes(pos, v.id, order[static_cast<size_t>(pos)]);
        for (const auto& perTask : theta) {
          const auto& set = perTask[t];
          if (set.empty()) continue;
          int occur = 0;
          for (int k : set) occur += l.candidates[static_cast<size_t>(k)].variants[static_cast<size_t>(pos)] == v.id;
          it.hotness += static_cast<double>(occur) / static_cast<double>(set.size());
        }
        items.push_back(it);
      }
  }
  return items;
}

Expected<plan::PreloadSet> preloadSet(const std::vector<preload::Item>& items, const std::string& budgetText,
                                      int64_t totalBytes) {
  ZP_ASSIGN_OR_RETURN(int64_t budget, parseBudget(budgetText, totalBytes));
  plan::PreloadSet ps;
  ps.budget = budgetText;
  ps.budgetBytes = budget;
  for (size_t i : preload::greedyPreload(items, budget)) {
    ps.greedy.push_back(items[i].id);
    ps.greedyBytes += items[i].bytes;
    ps.greedyHotness += items[i].hotness;
  }
  auto exact = preload::exactPreload(items, budget);
  for (size_t i : exact.chosen) {
    ps.exact.push_back(items[i].id);
    ps.exactBytes += items[i].bytes;
  }
  ps.exactHotness = exact.hotness;
  ps.exactOptimal = exact.optimal;
  ps.gap = exact.hotness > 0 ? (exact.hotness - ps.greedyHotness) / exact.hotness : 0.0;
  return ps;
}

}  // namespace

Expected<StitchSolution> planStitch(const StitchSpace& space, const std::vector<plan::SloConfiguration>& slos,
                                    const std::vector<std::string>& budgets, const SelectParams& params) {
  const auto orders = globalOrders(space);
  std::vector<std::vector<std::vector<int>>> theta;
  for (const auto& slo : slos) theta.push_back(reference::feasibleSets(space, slo, orders, params));
  const GlobalOrder g = reference::multiConfigurationOrder(space, orders, theta);
  StitchSolution s;
  s.ordersEvaluated = orders.size();
  auto& sp = s.plan;
  sp.accuracySource = params.measuredAccuracyForDecisions ? "measured where available" : "estimated (originals measured)";
  s.processors = space.processors;
  for (const auto& p : space.processors) sp.processors.push_back(p.name);
  sp.placementOrder = g.order;
  sp.ordersEvaluated = static_cast<int>(orders.size());
  sp.meanLatencyMs = std::isfinite(g.meanLatencyMs) ? g.meanLatencyMs : 0.0;
  sp.slos = slos;
  s.firstChosen.assign(space.tasks.size(), -1);
  for (size_t t = 0; t < space.tasks.size(); ++t)
    sp.tasks.push_back(taskPlan(space, t, g.order, slos, theta, params, &s.firstChosen[t]));
  sp.systems = servedSystems(space, slos, params);
  addSystemsSubgraphs(space, sp.systems, sp);
  select::adoptChosenSystem(space, sp);
  const auto items = preloadItems(space, g.order, theta);
  const int64_t totalBytes = allSubgraphBytes(space);  // what percentages are of
  for (const auto& b : budgets) {
    ZP_ASSIGN_OR_RETURN(auto ps, preloadSet(items, b, totalBytes));
    sp.preload.push_back(std::move(ps));
  }
  return s;
}

}  // namespace zp::select::reference
