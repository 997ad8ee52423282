// NNV12's kernel scheduler (Algorithm 1, §3.3), for problems the exact DP cannot
// afford. Inner layer, for one kernel combination: execution stays on core 0
// (the "big" core); the first transform and then, while the other ("little")
// cores finish later than core 0, further transforms move to core 0 (the
// big-core loop, lines 6-11); the rest start round-robin on the other cores and
// are balanced by moving a transform from the most to the least loaded core
// while it is shorter than half their difference (lines 12-20). Reads are the
// storage's, not a core's, in this cost model, so loads count transforms only.
// Outer layer: the paper enumerates the combinations left after line 1's filter;
// here that is a local search over them (each step's option in turn, while the
// simulated latency improves), started from every step at its least
// read + transform + execute — enumeration is exponential in the steps — once
// per subset of GEMM libraries the plan may start.
#pragma once
#include <cstdint>

#include "passes/coldstart/pipeline.h"

namespace zp::coldstart {

struct HeuristicParams {
  int maxPasses = 4;     // local-search sweeps over the steps
  double epsilonMs = 0;  // Alg. 1's ε: balance loads to within this
};

// The core of each transform for the options `c` already names (Alg. 1, lines 3-20).
void assignCores(const Problem& p, Choice& c, const HeuristicParams& params);

struct HeuristicResult {
  Choice choice;
  double latencyMs = 0;
  uint64_t evaluations = 0;
};
HeuristicResult solveHeuristic(const Problem& p, const HeuristicParams& params);

}  // namespace zp::coldstart
