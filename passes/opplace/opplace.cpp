#include "passes/opplace/opplace.h"

namespace zp::opplace {

Expected<PlacementResult> placeOperators(const Problem& problem, const SolveParams& params) {
  ZP_TRY(validate(problem));
  PlacementResult r;
  r.baselines = baselines(problem);
  const Baseline* best = nullptr;
  for (const auto& b : r.baselines)
    if (!b.assignment.empty() && (!best || b.latencyMs < best->latencyMs)) best = &b;
  r.solution = solvePlacement(problem, best ? best->assignment : Assignment{}, params);
  r.timeline = listSchedule(problem, r.solution.assignment);
  return r;
}

}  // namespace zp::opplace
