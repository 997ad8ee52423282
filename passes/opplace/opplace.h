// The operator placement pass: one DNN graph and its processors in, the
// placement minimising one inference's latency under the cost model of
// problem.h, with the baselines it is compared to.
#pragma once
#include <vector>

#include "passes/opplace/baselines.h"
#include "passes/opplace/problem.h"
#include "passes/opplace/solve.h"

namespace zp::opplace {

struct PlacementResult {
  Solution solution;  // what is placed: the solver's, or a single processor kept over it
  Timeline timeline;
  std::vector<Baseline> baselines;
  // The best mixing placement the solver found when a single processor was
  // kept over it (its gain below params.minMixGain or params.minMixGainMs); 0 otherwise.
  double mixedLatencyMs = 0;
};

// The solver starts from the best baseline that is a placement; its result is
// never worse than that. A mixing result whose gain over the best single
// processor is below params.minMixGain (a fraction) or params.minMixGainMs
// gives way to that processor (the
// solution then reports not optimal, with the gap to the solver's bound).
Expected<PlacementResult> placeOperators(const Problem& problem, const SolveParams& params);

}  // namespace zp::opplace
