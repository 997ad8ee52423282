#include "passes/select/plan_stitch.h"

#include <algorithm>
#include <cmath>
#include <tuple>
#include <limits>
#include <set>

#include <fmt/format.h>

#include "passes/preload/preload.h"
#include "passes/select/served_systems.h"

namespace zp::select {
namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + v[i];
  return s;
}

// The variant closest to missing the SLO `s` under placement `pl`, and by how much it misses.
plan::Selection closestMiss(const TaskSpace& ts, const std::vector<std::string>& pl, const plan::TaskSlo& s,
                            const SelectParams& params, int* pick) {
  double bestMiss = kInf;
  int closest = -1;
  for (size_t k = 0; k < ts.candidates.size(); ++k) {
    const auto& cand = ts.candidates[k];
    double m = missScore(decisionAccuracy(cand, params), ts.latencyMs(cand, pl), s);
    // The first candidate when no score compares (infinite or NaN): always an index.
    if (closest < 0 || m < bestMiss) { bestMiss = m; closest = static_cast<int>(k); }
  }
  const auto& cand = ts.candidates[static_cast<size_t>(closest)];
  double acc = decisionAccuracy(cand, params);
  double lat = ts.latencyMs(cand, pl);
  plan::Selection sel;
  sel.feasible = false;
  sel.combination = cand.id;
  sel.accuracy = acc;
  sel.latencyMs = lat;
  sel.miss = plan::SloMiss{cand.id, std::max(0.0, s.accuracy - acc), std::max(0.0, lat - s.latencyMs)};
  *pick = closest;
  return sel;
}

// Adds (position, variant) on `proc` to the task's subgraphs unless there,
// keeping them sorted by (position, variant, processor).
void addSubgraph(const TaskSpace& ts, int pos, const std::string& variant, const std::string& proc, plan::TaskPlan& tp) {
  auto key = [](const plan::PlannedSubgraph& g) { return std::tie(g.position, g.variant, g.processor); };
  const auto& sg = ts.stitch->subgraph(pos, variant);
  plan::PlannedSubgraph g{pos, variant, sg.hash, sg.file, proc, ts.memoryBytes(pos, variant, proc),
                          ts.latency.subgraph(pos, variant, proc).value_or(0.0)};
  auto at = std::lower_bound(tp.subgraphs.begin(), tp.subgraphs.end(), g,
                             [&](const auto& a, const auto& b) { return key(a) < key(b); });
  if (at == tp.subgraphs.end() || key(*at) != key(g)) tp.subgraphs.insert(at, std::move(g));
}

// One task under the global order: per configuration the fastest feasible
// variant (or the closest miss), and the subgraphs those selections use.
plan::TaskPlan taskPlan(const StitchSpace& space, size_t t, const std::vector<std::string>& order,
                        const std::vector<plan::SloConfiguration>& slos,
                        const std::vector<std::vector<std::vector<int>>>& theta, const SelectParams& params,
                        int* firstChosen) {
  const auto& ts = space.tasks[t];
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
      double l = ts.latencyMs(ts.candidates[static_cast<size_t>(k)], pl);
      if (l < bestLat) { bestLat = l; pick = k; }
    }
    plan::Selection sel;
    // Infeasible under p* although feasible under another order counts as infeasible here.
    if (pick >= 0 && bestLat <= s.latencyMs) {
      sel.feasible = true;
      const auto& cand = ts.candidates[static_cast<size_t>(pick)];
      sel.combination = cand.id;
      sel.accuracy = decisionAccuracy(cand, params);
      sel.latencyMs = bestLat;
      if (*firstChosen < 0) *firstChosen = pick;
    } else {
      sel = closestMiss(ts, pl, s, params, &pick);
    }
    sel.slo = slos[c].id;
    const auto& cand = ts.candidates[static_cast<size_t>(pick)];
    for (int p = 0; p < ts.positions; ++p) used.insert({p, cand.variants[static_cast<size_t>(p)]});
    tp.selections.push_back(std::move(sel));
  }
  for (const auto& [pos, variant] : used) addSubgraph(ts, pos, variant, order[static_cast<size_t>(pos)], tp);
  return tp;
}

// Every subgraph the served systems run, on the processor each runs it on.
void addSystemsSubgraphs(const StitchSpace& space, const std::vector<plan::ServedSystem>& systems, plan::StitchPlan& sp) {
  for (const auto& sys : systems)
    for (const auto& sel : sys.selections)
      for (size_t t = 0; t < sel.tasks.size(); ++t) {
        const auto& c = sel.tasks[t];
        const auto& cand = *std::find_if(space.tasks[t].candidates.begin(), space.tasks[t].candidates.end(),
                                         [&](const Candidate& k) { return k.id == c.combination; });
        for (int p = 0; p < space.tasks[t].positions; ++p)
          addSubgraph(space.tasks[t], p, cand.variants[static_cast<size_t>(p)], c.placement[static_cast<size_t>(p)],
                      sp.tasks[t]);
      }
}

// Every subgraph with its hotness (Eq. 7) over the configurations.
std::vector<preload::Item> preloadItems(const StitchSpace& space, const std::vector<std::string>& order,
                                        const std::vector<std::vector<std::vector<int>>>& theta) {
  std::vector<preload::Item> items;
  for (size_t t = 0; t < space.tasks.size(); ++t) {
    const auto& ts = space.tasks[t];
    for (int pos = 0; pos < ts.positions; ++pos)
      for (const auto& v : ts.stitch->variants) {
        preload::Item it;
        it.id = fmt::format("{}/{}/{}", ts.name, pos, v.id);
        it.task = static_cast<int>(t);
        it.position = pos;
        it.bytes = ts.memoryBytes(pos, v.id, order[static_cast<size_t>(pos)]);
        for (const auto& perTask : theta) {
          const auto& set = perTask[t];
          if (set.empty()) continue;
          int occur = 0;
          for (int k : set) occur += ts.candidates[static_cast<size_t>(k)].variants[static_cast<size_t>(pos)] == v.id;
          it.hotness += static_cast<double>(occur) / static_cast<double>(set.size());
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

}  // namespace

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
                                    const std::vector<std::vector<std::vector<int>>>& theta) {
  GlobalOrder g{orders.front(), kInf};
  for (const auto& o : orders) {
    double sum = 0;
    int n = 0;
    for (const auto& perTask : theta)
      for (size_t t = 0; t < space.tasks.size(); ++t) {
        const auto& ts = space.tasks[t];
        double m = kInf;
        for (int k : perTask[t])
          m = std::min(m, ts.latencyMs(ts.candidates[static_cast<size_t>(k)],
                                       std::vector<std::string>(o.begin(), o.begin() + ts.positions)));
        if (std::isfinite(m)) { sum += m; ++n; }
      }
    double mean = n ? sum / n : 0.0;
    if (mean < g.meanLatencyMs - 1e-12) { g.meanLatencyMs = mean; g.order = o; }
  }
  return g;
}

Expected<StitchSolution> planStitch(const StitchSpace& space, const std::vector<plan::SloConfiguration>& slos,
                                    const std::vector<std::string>& budgets, const SelectParams& params) {
  const auto orders = globalOrders(space);
  std::vector<std::vector<std::vector<int>>> theta;  // [config][task]: Algorithm 1 line 2
  for (const auto& slo : slos) theta.push_back(feasibleSets(space, slo, orders, params));
  const GlobalOrder g = multiConfigurationOrder(space, orders, theta);

  StitchSolution s;
  s.ordersEvaluated = orders.size();
  auto& sp = s.plan;
  sp.accuracySource = params.measuredAccuracyForDecisions ? "measured" : "estimated (originals measured)";
  sp.processors = space.processors;
  sp.placementOrder = g.order;
  sp.ordersEvaluated = static_cast<int>(orders.size());
  sp.meanLatencyMs = std::isfinite(g.meanLatencyMs) ? g.meanLatencyMs : 0.0;
  sp.slos = slos;
  s.firstChosen.assign(space.tasks.size(), -1);
  for (size_t t = 0; t < space.tasks.size(); ++t)
    sp.tasks.push_back(taskPlan(space, t, g.order, slos, theta, params, &s.firstChosen[t]));

  sp.systems = servedSystems(space, slos, params);
  addSystemsSubgraphs(space, sp.systems, sp);

  const auto items = preloadItems(space, g.order, theta);
  int64_t totalBytes = 0;
  for (const auto& it : items) totalBytes += it.bytes;
  for (const auto& b : budgets) {
    ZP_ASSIGN_OR_RETURN(auto ps, preloadSet(items, b, totalBytes, s.preloadSummary));
    sp.preload.push_back(std::move(ps));
  }
  return s;
}

std::string stitchSummary(const StitchSolution& s) {
  std::string feasibleCount;
  for (const auto& tp : s.plan.tasks) {
    int f = 0;
    for (const auto& sel : tp.selections) f += sel.feasible;
    feasibleCount += fmt::format("{}{}: {}/{}", feasibleCount.empty() ? "" : ", ", tp.name, f, tp.selections.size());
  }
  std::string out = fmt::format(
      "placement order {} (best of {} orders, mean latency {:.4f} ms)\nfeasible SLO configurations per task: {}\npreloading:\n{}",
      join(s.plan.placementOrder, ">"), s.ordersEvaluated, s.plan.meanLatencyMs, feasibleCount, s.preloadSummary);
  for (const auto& tp : s.plan.tasks)
    for (const auto& sel : tp.selections)
      if (!sel.feasible && sel.miss)
        out += fmt::format("  infeasible: {} under {}: closest {} misses accuracy by {:.4f}, latency by {:.4f} ms\n",
                           tp.name, sel.slo, sel.miss->combination, sel.miss->accuracyShort, sel.miss->latencyOverMs);
  return out;
}

}  // namespace zp::select
