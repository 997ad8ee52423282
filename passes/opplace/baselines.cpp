#include "passes/opplace/baselines.h"

#include <algorithm>
#include <limits>
#include <numeric>

#include <fmt/format.h>

namespace zp::opplace {

Assignment greedyAssignment(const Problem& p) {
  const auto in = inEdges(p);
  const size_t k = p.processors.size();
  const CoreMap cores = coreMap(p);
  Assignment a(p.nodes.size(), 0);
  std::vector<double> finish(p.nodes.size(), 0), freeAt(static_cast<size_t>(cores.count), 0);
  for (size_t v = 0; v < p.nodes.size(); ++v) {
    double bestFinish = std::numeric_limits<double>::infinity();
    for (size_t q = 0; q < k; ++q) {
      double ready = 0;
      for (int c : cores.of[q]) ready = std::max(ready, freeAt[static_cast<size_t>(c)]);
      for (int ei : in[v]) {
        const auto& e = p.edges[static_cast<size_t>(ei)];
        const auto u = static_cast<size_t>(e.from);
        double r = finish[u];
        if (a[u] != static_cast<int>(q)) r += p.handoff[static_cast<size_t>(a[u])][q].ms(e.bytes);
        ready = std::max(ready, r);
      }
      if (ready + p.ms[v][q] < bestFinish) bestFinish = ready + p.ms[v][q], a[v] = static_cast<int>(q);
    }
    finish[v] = bestFinish;
    for (int c : cores.of[static_cast<size_t>(a[v])]) freeAt[static_cast<size_t>(c)] = bestFinish;
  }
  return a;
}

Assignment applyThresholdRule(const Problem& p, const ThresholdRule& r) {
  Assignment a(p.nodes.size());
  for (size_t v = 0; v < p.nodes.size(); ++v) {
    const auto& n = p.nodes[v];
    a[v] = n.activationSparsity >= r.sparsityAtLeast && n.intensity < r.intensityBelow ? r.sparseProcessor
                                                                                         : r.denseProcessor;
  }
  return a;
}

namespace {

// Candidate thresholds: every value the graph has, and one above the largest.
std::vector<double> cuts(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  values.push_back(values.empty() ? 1.0 : values.back() * 2 + 1);
  return values;
}

}  // namespace

ThresholdRule bestThresholdRule(const Problem& p) {
  std::vector<double> rho, intensity;
  for (const auto& n : p.nodes) rho.push_back(n.activationSparsity), intensity.push_back(n.intensity);
  const auto sCuts = cuts(rho), cCuts = cuts(intensity);
  const int k = static_cast<int>(p.processors.size());
  ThresholdRule best;
  double bestMs = std::numeric_limits<double>::infinity();
  for (int sp = 0; sp < k; ++sp)
    for (int dp = 0; dp < k; ++dp) {
      if (sp == dp && k > 1) continue;
      for (double s : sCuts)
        for (double c : cCuts) {
          ThresholdRule r{sp, dp, s, c};
          double ms = latencyOf(p, applyThresholdRule(p, r));
          if (ms < bestMs) bestMs = ms, best = r;
        }
    }
  return best;
}

std::vector<Baseline> baselines(const Problem& p) {
  std::vector<Baseline> out;
  auto add = [&](std::string name, Assignment a, std::string detail) {
    auto t = listSchedule(p, a);
    out.push_back(Baseline{std::move(name), t.latencyMs, t.handoffs, std::move(a), std::move(detail)});
  };
  for (size_t q = 0; q < p.processors.size(); ++q)
    add(p.processors[q] + "-only", Assignment(p.nodes.size(), static_cast<int>(q)), "");
  for (const auto& c : p.alone)
    out.push_back(Baseline{c.name + "-alone", std::accumulate(c.ms.begin(), c.ms.end(), 0.0), 0, {}, ""});
  add("greedy", greedyAssignment(p), "");
  const auto rule = bestThresholdRule(p);
  add("sparoa-threshold", applyThresholdRule(p, rule),
      fmt::format("sparsity >= {:.4g} and intensity < {:.4g} -> {}, else {}", rule.sparsityAtLeast, rule.intensityBelow,
                  p.processors[static_cast<size_t>(rule.sparseProcessor)],
                  p.processors[static_cast<size_t>(rule.denseProcessor)]));
  return out;
}

}  // namespace zp::opplace
