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
  Solution solution;
  Timeline timeline;
  std::vector<Baseline> baselines;
};

// The solver starts from the best baseline that is a placement; the result is
// never worse than it.
Expected<PlacementResult> placeOperators(const Problem& problem, const SolveParams& params);

}  // namespace zp::opplace
