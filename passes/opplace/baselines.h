// The baselines of SparOA §6.2 under the same cost model:
//  - "<processor>-only": every operator on one processor;
//  - "<config>-alone": a configuration that only runs the whole graph (e.g.
//    one processor with all cores and intra-operator threads), latency = sum;
//  - "greedy": in dispatch order, each operator on the processor where it
//    finishes first given the operators placed before it;
//  - "sparoa-threshold": SparOA's rule (§3) — an operator whose activation
//    sparsity is at least s and whose intensity is below c goes to the
//    "sparse-friendly" processor, every other to the "dense" one. SparOA
//    predicts s and c; here they are the best pair in hindsight over the
//    values the graph has, for the best ordered pair of processors, so the
//    rule is shown at its best.
#pragma once
#include <string>
#include <vector>

#include "passes/opplace/problem.h"

namespace zp::opplace {

struct Baseline {
  std::string name;
  double latencyMs = 0;
  int handoffs = 0;
  Assignment assignment;  // empty for "-alone" configurations
  std::string detail;     // e.g. the thresholds of the rule
};

Assignment greedyAssignment(const Problem& problem);

struct ThresholdRule {
  int sparseProcessor = 0, denseProcessor = 0;
  double sparsityAtLeast = 0, intensityBelow = 0;
};
Assignment applyThresholdRule(const Problem& problem, const ThresholdRule& rule);
// The best rule in hindsight (ties: the first found in a fixed order).
ThresholdRule bestThresholdRule(const Problem& problem);

// Every baseline, in the order above.
std::vector<Baseline> baselines(const Problem& problem);

}  // namespace zp::opplace
