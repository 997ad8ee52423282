// Contention-aware lower bounds on the makespan of two-accelerator schedules,
// valid under the simulator's exact cost model (libplan/sim/concurrent/simulator.h).
//
// Argument: at any instant at most one group runs per accelerator; a group g
// on accelerator a running alone progresses at rate 1, and next to a group h
// of another DNN on accelerator b at rate 1/s_a(g|h), where s_a(g|h) is the
// contention model's slowdown for g's demand and h's. Give every (group,
// accelerator) a weight w with
//     w(g,a) <= 1   and   w(g,a) / s_a(g|h) + w(h,b) / s_b(h|g) <= 1
// for every pair that can run at the same time (groups of two DNNs that no
// dependency orders). Then the weighted progress rate is at most 1 at every
// instant, so for every schedule
//     makespan >= sum over groups of w(g, acc(g)) * t(g, acc(g)).
// The bound is additive over DNNs, so the search can combine it per DNN. It
// is the dual of the linear relaxation "how much work can overlap, and at what
// contention"; without contention (s = 1) it reduces to lambda * load_0 +
// (1 - lambda) * load_1, the classic load bounds.
#pragma once
#include <memory>
#include <vector>

#include "libplan/sim/concurrent/problem.h"

namespace zp::schedule {

// weights[globalGroup * 2 + acc], groups numbered DNN by DNN.
using WorkWeighting = std::vector<double>;

// Builds valid weightings for one two-accelerator problem (it keeps the
// table of pair slowdowns, so build it once per problem).
class WorkWeightBuilder {
 public:
  explicit WorkWeightBuilder(const sim::Problem& problem);
  ~WorkWeightBuilder();

  // A family: for each level mu in 0, 1/steps, ..., 1 and each accelerator,
  // that accelerator's weights start at mu and the two sides then take turns
  // raising their weights as far as the pair constraints allow. Empty unless
  // the problem has two accelerators. Deterministic; duplicates removed.
  std::vector<WorkWeighting> family(int steps) const;

  // The convex combination sum_k theta_k ws[k] (valid, since the constraints
  // are linear), with each side then raised as far as the constraints allow.
  WorkWeighting combine(const std::vector<WorkWeighting>& ws, const std::vector<double>& theta) const;

  // A weighting aimed at one schedule: the weights of its placements on
  // accelerator 1 are searched (projected subgradient ascent on its bound,
  // the placements on accelerator 0 answering each with their largest valid
  // weights), then both sides are raised. Approximates the best bound the
  // weights can give that schedule (the linear relaxation's optimum).
  WorkWeighting targeted(const sim::Schedule& schedule, int iterations) const;

  // Largest violation of the weighting's constraints (<= 0 when valid); for tests.
  double violation(const WorkWeighting& w) const;

  struct Table;  // defined in work_weights.cpp

 private:
  const sim::Problem& p_;
  std::unique_ptr<Table> t_;
};

// The bound of one weighting for a complete schedule.
double weightedWork(const sim::Problem& problem, const WorkWeighting& w, const sim::Schedule& schedule);

}  // namespace zp::schedule
