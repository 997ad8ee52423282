#include "passes/select/plan_stitch.h"

#include "passes/select/serving_objective.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <tuple>
#include <limits>
#include <set>

#include <fmt/format.h>

#include "passes/preload/preload.h"
#include "passes/select/served_systems.h"
#include "libplan/util/infinity.h"

namespace zp::select {
namespace {

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + v[i];
  return s;
}


// Adds (position, variant) on `proc` to the task's subgraphs unless there,
// keeping them sorted by (position, variant, processor).
void addSubgraph(const TaskSpace& ts, int pos, const std::string& variant, const std::string& proc, plan::TaskPlan& tp) {
  auto key = [](const plan::PlannedSubgraph& g) { return std::tie(g.position, g.variant, g.processor); };
  plan::PlannedSubgraph g{pos, variant, proc, ts.memoryBytes(pos, variant, proc),
                          ts.latency.subgraph(pos, variant, proc).value_or(0.0)};
  auto at = std::lower_bound(tp.subgraphs.begin(), tp.subgraphs.end(), g,
                             [&](const auto& a, const auto& b) { return key(a) < key(b); });
  if (at == tp.subgraphs.end() || key(*at) != key(g)) tp.subgraphs.insert(at, std::move(g));
}

// One task under the global order: per configuration the fastest feasible
// variant (or the closest miss), and the subgraphs those selections use. The
// fastest of Θ^t under p* meets the latency SLO exactly when the fastest
// accurate combination q(p*) does (Θ^t holds q(p*) then, and only slower ones otherwise).
plan::TaskPlan taskPlan(const StitchSpace& space, size_t t, const std::vector<std::string>& order,
                        const std::vector<plan::SloConfiguration>& slos,
                        std::vector<std::vector<TaskSearch>>& searches, const SelectParams& params, int64_t* firstChosen) {
  const auto& ts = space.tasks[t];
  plan::TaskPlan tp;
  tp.name = ts.name;
  tp.positions = ts.positions;
  const std::vector<int> orderIdx = orderIndices(space, {order}).front();
  std::set<std::pair<int, std::string>> used;
  for (size_t c = 0; c < slos.size(); ++c) {
    const auto& s = slos[c].tasks.at(ts.name);
    const Pick& q = searches[c][t].fastestAccurate(orderIdx);
    // Algorithm 1's pick under p*: the fastest accurate one when it meets the
    // latency SLO (infeasible under p* although feasible under another order
    // counts as infeasible here), else the closest miss.
    int64_t pick = -1;
    if (q.found() && q.value <= s.latencyMs) {
      pick = q.combination;
      if (*firstChosen < 0) *firstChosen = pick;
    } else {
      pick = searches[c][t].closestMiss(orderIdx).combination;
    }
    for (int p = 0; p < ts.positions; ++p)
      used.insert({p, ts.variants[static_cast<size_t>(ts.combinations().digit(static_cast<uint64_t>(pick), p))]});
  }
  for (const auto& [pos, variant] : used) addSubgraph(ts, pos, variant, order[static_cast<size_t>(pos)], tp);
  return tp;
}

// Every subgraph the served systems run, on the processor each runs it on.
void addSystemsSubgraphs(const StitchSpace& space, const ServedSystems& served, plan::StitchPlan& sp) {
  for (const auto& perSlo : served.choices)
    for (const auto& choice : perSlo)
      for (size_t t = 0; t < space.tasks.size(); ++t) {
        if (choice.candidate[t] < 0) continue;  // a group's unit or a placed model: wholeUnits
        const auto& ts = space.tasks[t];
        const auto variants = ts.variantsOf(static_cast<uint64_t>(choice.candidate[t]));
        for (int p = 0; p < ts.positions; ++p)
          addSubgraph(ts, p, variants[static_cast<size_t>(p)], choice.placement[t][static_cast<size_t>(p)], sp.tasks[t]);
      }
}

// Every subgraph with its hotness (Eq. 7) over the configurations: per
// configuration the share of Θ^t that uses it, from counts of Θ^t.
std::vector<preload::Item> preloadItems(const StitchSpace& space, const std::vector<std::string>& order,
                                        std::vector<std::vector<TaskSearch>>& searches) {
  std::vector<preload::Item> items;
  for (size_t t = 0; t < space.tasks.size(); ++t) {
    const auto& ts = space.tasks[t];
    for (int pos = 0; pos < ts.positions; ++pos)
      for (size_t vi = 0; vi < ts.variants.size(); ++vi) {
        const std::string& v = ts.variants[vi];
        preload::Item it;
        it.id = plan::UnitId::subgraph(ts.name, pos, v).str();
        it.task = static_cast<int>(t);
        it.position = pos;
        it.bytes = ts.memoryBytes(pos, v, order[static_cast<size_t>(pos)]);
        for (auto& perTask : searches) {
          const PassCount& n = perTask[t].thetaCount();
          if (n.total == 0) continue;
          it.hotness += static_cast<double>(n.byPosition[static_cast<size_t>(pos)][vi]) / static_cast<double>(n.total);
        }
        items.push_back(it);
      }
  }
  return items;
}

// Greedy and exact preload sets under one budget.
Expected<plan::PreloadSet> preloadSet(const std::vector<preload::Item>& items, const std::string& budgetText,
                                      int64_t totalBytes, std::string& summary) {
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
  summary += fmt::format("  budget {:>5} ({} of {} bytes): greedy hotness {:.3f} ({} subgraphs), exact {:.3f}{} ({} subgraphs), gap {:.1f}%\n",
                         budgetText, budget, totalBytes, ps.greedyHotness, ps.greedy.size(), ps.exactHotness,
                         ps.exactOptimal ? " (optimal)" : " (not proven optimal)", ps.exact.size(), 100.0 * ps.gap);
  return ps;
}

// A lower bound on multiConfigurationOrder's mean under `order` without the
// searches within Θ^t; returns whether every term was known (then the bound is
// not needed). Unknown terms are at least q(p) — or infinite, and then left
// out of the mean — so the least mean over which of them count is a bound;
// computed in another order than the mean, it is lowered by a margin far above
// rounding.
bool meanBound(const std::vector<int>& order, std::vector<std::vector<TaskSearch>>& searches, double* bound) {
  double sum = 0;
  int n = 0;
  std::vector<double> unknown;
  for (auto& perTask : searches)
    for (auto& task : perTask) {
      if (task.thetaEmpty()) continue;
      const Pick& q = task.fastestAccurate(order);
      if (!q.found()) continue;  // m(p) infinite: not counted
      if (q.value <= task.slo().latencyMs) { sum += q.value; ++n; }
      else unknown.push_back(q.value);
    }
  if (unknown.empty()) return true;
  std::sort(unknown.begin(), unknown.end());
  double least = n ? sum / n : 0.0;
  for (double u : unknown) {
    sum += u;
    ++n;
    least = std::min(least, sum / n);
  }
  *bound = least - 1e-9 * std::abs(least) - 1e-12;
  return false;
}

}  // namespace

void adoptChosenSystem(const StitchSpace& space, plan::StitchPlan& sp) {
  assert(!sp.systems.empty() && sp.systems.front().name == "zooplan");
  plan::ServedSystem& chosen = sp.systems.front();
  sp.chosenSystem = chosen.name;
  for (size_t c = 0; c < chosen.selections.size(); ++c)
    for (size_t t = 0; t < space.tasks.size(); ++t) {
      plan::SystemTaskChoice& ch = chosen.selections[c].tasks.at(t);
      const plan::TaskSlo& slo = sp.slos.at(c).tasks.at(space.tasks[t].name);
      if (!ch.feasible)
        ch.miss = plan::SloMiss{ch.combination, std::max(0.0, slo.accuracy - ch.accuracy),
                                std::max(0.0, ch.latencyMs - slo.latencyMs)};
    }
}

int64_t allSubgraphBytes(const StitchSpace& space) {
  int64_t total = 0;
  for (const auto& ts : space.tasks)
    for (int pos = 0; pos < ts.positions; ++pos)
      for (const auto& v : ts.variants) {
        int64_t largest = 0;
        for (const auto& p : space.processors) largest = std::max(largest, ts.memoryBytes(pos, v, p.name));
        total += largest;
      }
  return total;
}

Expected<int64_t> parseBudget(const std::string& text, int64_t total) {
  try {
    if (!text.empty() && text.back() == '%') {
      double pct = std::stod(text.substr(0, text.size() - 1));
      if (!(pct >= 0 && pct <= 100)) return makeError("--memory-budget '{}': a percentage in [0, 100]", text);
      return static_cast<int64_t>(std::floor(static_cast<double>(total) * pct / 100.0));
    }
    size_t used = 0;
    long long bytes = std::stoll(text, &used);
    if (used != text.size() || bytes < 0) throw std::invalid_argument(text);
    return static_cast<int64_t>(bytes);
  } catch (const std::exception&) {
    return makeError("--memory-budget '{}': expected BYTES or PCT%", text);
  }
}

GlobalOrder multiConfigurationOrder(const StitchSpace& space, const std::vector<std::vector<std::string>>& orders,
                                    std::vector<std::vector<TaskSearch>>& searches) {
  const auto orderIdx = orderIndices(space, orders);
  GlobalOrder g{orders.front(), kInf};
  for (size_t oi = 0; oi < orders.size(); ++oi) {
    // The mean over (configuration, task) of the finite m(p), summed in that
    // order. A term whose q(p) misses the latency SLO needs a search within
    // Θ^t; first the bound says whether this order can improve at all.
    double bound = 0;
    if (!meanBound(orderIdx[oi], searches, &bound) && !(bound < g.meanLatencyMs - 1e-12)) continue;
    double sum = 0;
    int n = 0;
    for (auto& perTask : searches)
      for (auto& task : perTask) {
        if (task.thetaEmpty()) continue;
        const double m = task.fastestInTheta(orderIdx[oi]).value;
        if (std::isfinite(m)) { sum += m; ++n; }
      }
    double mean = n ? sum / n : 0.0;
    if (mean < g.meanLatencyMs - 1e-12) { g.meanLatencyMs = mean; g.order = orders[oi]; }
  }
  return g;
}

std::vector<plan::Unit> subgraphUnits(const StitchSpace& space, const plan::StitchPlan& plan) {
  std::set<plan::UnitId> named;
  for (const auto& t : plan.tasks)
    for (const auto& g : t.subgraphs) named.insert(plan::UnitId::subgraph(t.name, g.position, g.variant));
  for (const auto& ps : plan.preload)
    for (const auto* set : {&ps.greedy, &ps.exact})
      for (const auto& id : *set) named.insert(*plan::parseUnitId(id));
  std::vector<plan::Unit> units;
  for (const auto& ts : space.tasks)
    for (const auto& id : named) {
      if (id.name != ts.name) continue;
      const auto& sg = ts.stitch->subgraph(id.position, id.variant);
      plan::Unit u;
      u.id = id;
      u.file = sg.file;
      u.sha256 = sg.hash;
      u.residency = plan::kPreloadSetUnit;  // the processor is chosen per SLO configuration
      units.push_back(std::move(u));
    }
  return units;
}

size_t groupIndex(const StitchSpace& space, const std::string& name) {
  for (size_t g = 0; g < space.groups.size(); ++g)
    if (space.groups[g].name == name) return g;
  assert(false && "groupIndex: not a group of the space");
  return 0;
}

// The shared groups and placed models some served system's choice runs, as
// units (groups in group order, then placed models in the space's order).
std::vector<plan::Unit> wholeUnits(const StitchSpace& space, const ServedSystems& served) {
  std::set<size_t> groups, placed;
  for (const auto& perSlo : served.choices)
    for (const auto& choice : perSlo)
      for (int64_t k : choice.candidate) {
        if (auto g = sharedGroupOf(k)) groups.insert(*g);
        if (auto m = placedModelOf(k)) placed.insert(*m);
      }
  std::vector<plan::Unit> units;
  for (size_t g : groups) {
    plan::Unit u;
    u.id = plan::UnitId::group(space.groups[g].name);
    u.file = space.groups[g].file;
    u.sha256 = space.groups[g].sha256;
    u.residency = plan::kPreloadSetUnit;  // the processor is chosen per SLO configuration
    units.push_back(std::move(u));
  }
  for (size_t m : placed) {
    plan::Unit u;
    u.id = space.placed[m].placement.unit;
    u.file = space.placed[m].file;
    u.sha256 = space.placed[m].sha256;
    u.operatorPlaced = true;
    u.residency = plan::kPreloadSetUnit;
    units.push_back(std::move(u));
  }
  return units;
}

Expected<StitchSolution> planStitch(const StitchSpace& space, const std::vector<plan::SloConfiguration>& slos,
                                    const std::vector<std::string>& budgets, const SelectParams& params) {
  const auto orders = globalOrders(space);
  const auto orderIdx = orderIndices(space, orders);
  std::vector<std::vector<TaskSearch>> searches;  // [config][task]: Algorithm 1's questions, Θ^t over every order
  for (const auto& slo : slos) searches.push_back(taskSearches(space, slo, orderIdx, params, false));
  const GlobalOrder g = multiConfigurationOrder(space, orders, searches);

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
    sp.tasks.push_back(taskPlan(space, t, g.order, slos, searches, params, &s.firstChosen[t]));

  const auto items = preloadItems(space, g.order, searches);
  const int64_t totalBytes = allSubgraphBytes(space);  // what percentages are of, as the workload's budget
  for (const auto& b : budgets) {
    ZP_ASSIGN_OR_RETURN(auto ps, preloadSet(items, b, totalBytes, s.preloadSummary));
    sp.preload.push_back(std::move(ps));
  }

  // Served, the first preload set is resident and the rest loads on demand under
  // its budget (plan-run --serve's default): zooplan's choice is judged so,
  // unless the workload names the device's budget (then residency is the choice's).
  SelectParams served = params;
  if (params.workload && !params.workload->residentByLoadCost && !sp.preload.empty()) {
    auto w = std::make_shared<ServingWorkload>(*params.workload);
    w->budgetBytes = sp.preload.front().budgetBytes;
    w->preload = sp.preload.front().greedy;
    served.workload = std::move(w);
  }
  const ServedSystems systems = servedSystems(space, slos, served, searches);
  sp.systems = systems.systems;
  if (systems.stopped)
    s.searchNote += "the choice search stopped at the time limit: zooplan's choices are the best judged by then\n";
  if (systems.stoppedEarliestDeadline)
    s.searchNote += "the search served earliest deadline first stopped at the time limit, judged in part\n";
  if (systems.earliestDeadlineSkipped)
    s.searchNote += "the time limit was reached before zooplan's choices were searched served earliest deadline "
                    "first: served first come first served\n";
  s.chosenFirst = systems.choices.front().front();
  addSystemsSubgraphs(space, systems, sp);
  adoptChosenSystem(space, sp);
  s.units = subgraphUnits(space, sp);
  for (auto& u : wholeUnits(space, systems)) {
    if (u.operatorPlaced) {
      auto m = std::find_if(space.placed.begin(), space.placed.end(),
                            [&](const PlacedModel& pm) { return pm.placement.unit == u.id; });
      s.placements.push_back(m->placement);
      s.units.push_back(std::move(u));
      continue;
    }
    const SharedGroup& g = space.groups[groupIndex(space, u.id.name)];
    plan::PlannedGroup pg{g.name, g.sharedInput, g.io, {}};
    for (const auto& p : space.processors)
      if (g.runMs.count(p.name)) pg.runs.push_back(plan::PlannedGroupRun{p.name, g.bytes.at(p.name), g.runMs.at(p.name)});
    sp.groups.push_back(std::move(pg));
    s.units.push_back(std::move(u));
  }
  return s;
}

std::string stitchSummary(const StitchSolution& s) {
  const plan::ServedSystem& chosen = plan::chosenSystem(s.plan);
  std::string feasibleCount;
  for (size_t t = 0; t < s.plan.tasks.size(); ++t) {
    int f = 0;
    for (const auto& sel : chosen.selections) f += sel.tasks.at(t).feasible;
    feasibleCount += fmt::format("{}{}: {}/{}", feasibleCount.empty() ? "" : ", ", s.plan.tasks[t].name, f,
                                 chosen.selections.size());
  }
  std::string out = fmt::format(
      "placement order {} (best of {} orders, mean latency {:.4f} ms)\nfeasible SLO configurations per task: {}\npreloading:\n{}",
      join(s.plan.placementOrder, ">"), s.ordersEvaluated, s.plan.meanLatencyMs, feasibleCount, s.preloadSummary);
  for (size_t t = 0; t < s.plan.tasks.size(); ++t)
    for (const auto& sel : chosen.selections)
      if (const auto& miss = sel.tasks.at(t).miss)
        out += fmt::format("  infeasible: {} under {}: closest {} misses accuracy by {:.4f}, latency by {:.4f} ms\n",
                           s.plan.tasks[t].name, sel.slo, miss->combination, miss->accuracyShort, miss->latencyOverMs);
  return out + s.searchNote;
}

}  // namespace zp::select
