// Exact placement under the list-schedule cost model of problem.h.
//  - chains: dynamic programming over (node, processor) — latency is the sum
//    of operator and hand-off costs, so the DP is exact;
//  - DAGs: depth-first branch and bound over nodes in dispatch order. A
//    partial assignment fixes the finish times of its nodes (later nodes never
//    delay earlier ones), and every unassigned node v has the lower bound
//    min over p of (max(free(p), ready_p(v)) + ms[v][p]), with ready_p from
//    assigned predecessors' finish (+ hand-off) and unassigned predecessors'
//    own bounds; a second bound spreads the remaining minimum work over the
//    cores. The incumbent starts as the best baseline (baselines.h).
// Proven optimal means the tree was exhausted; on a time-out (or node limit)
// the bound is the least bound of what was left unexplored.
#pragma once
#include <cstdint>
#include <string>

#include "passes/opplace/problem.h"

namespace zp::opplace {

struct SolveParams {
  double timeLimitS = 10;
  uint64_t maxNodes = 0;  // 0: none; a limit makes a run deterministic where a time limit may not
  // A placement that mixes processors is kept only when its predicted latency
  // beats the best single processor's by at least this fraction (0: always the
  // optimum). Mixing costs what the list schedule does not see: caches refilled
  // on another core, a worker woken from sleep, a thread pool left idle. On this
  // host's bench the best mixes over all cores gained 0.1-0.9% in prediction and
  // measured up to 35% slower than all cores alone.
  double minMixGain = 0.05;
  // ... and by at least this many ms: below it a gain is smaller than what
  // waking a worker and refilling its caches cost on every run, whatever the
  // fraction (a 0.003 ms model's 5%). 0: no floor.
  double minMixGainMs = 0;
};

struct Solution {
  Assignment assignment;
  double latencyMs = 0;
  std::string solver;  // "chain-dp" | "branch-and-bound"
  bool optimal = false;
  double bound = 0;    // proven lower bound on the optimum
  double gap = 0;      // (latency - bound) / latency
  uint64_t nodes = 0;  // search effort
};

Solution solveChainDp(const Problem& problem);
// `incumbent`: a starting assignment (may be empty).
Solution solveBranchAndBound(const Problem& problem, const Assignment& incumbent, const SolveParams& params);
// DP on chains, branch and bound otherwise.
Solution solvePlacement(const Problem& problem, const Assignment& incumbent, const SolveParams& params);

}  // namespace zp::opplace
