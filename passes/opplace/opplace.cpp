#include "passes/opplace/opplace.h"

#include <algorithm>
#include <functional>

namespace zp::opplace {
namespace {

bool mixes(const Assignment& a) {
  return std::adjacent_find(a.begin(), a.end(), std::not_equal_to<>()) != a.end();
}

// The fastest "<processor>-only" baseline (every operator on one processor).
const Baseline* bestSingle(const std::vector<Baseline>& baselines) {
  const Baseline* best = nullptr;
  for (const auto& b : baselines)
    if (!b.assignment.empty() && !mixes(b.assignment) && (!best || b.latencyMs < best->latencyMs)) best = &b;
  return best;
}

}  // namespace

Expected<PlacementResult> placeOperators(const Problem& problem, const SolveParams& params) {
  ZP_TRY(validate(problem));
  PlacementResult r;
  r.baselines = baselines(problem);
  const Baseline* best = nullptr;
  for (const auto& b : r.baselines)
    if (!b.assignment.empty() && (!best || b.latencyMs < best->latencyMs)) best = &b;
  r.solution = solvePlacement(problem, best ? best->assignment : Assignment{}, params);
  const Baseline* single = bestSingle(r.baselines);
  const double needed = single ? std::max(params.minMixGain * single->latencyMs, params.minMixGainMs) : 0.0;
  if (single && mixes(r.solution.assignment) && single->latencyMs - r.solution.latencyMs < needed) {
    r.mixedLatencyMs = r.solution.latencyMs;
    r.solution.assignment = single->assignment;
    r.solution.latencyMs = single->latencyMs;
    r.solution.optimal = false;
    r.solution.gap = single->latencyMs > 0 ? (single->latencyMs - r.solution.bound) / single->latencyMs : 0.0;
  }
  r.timeline = listSchedule(problem, r.solution.assignment);
  return r;
}

}  // namespace zp::opplace
