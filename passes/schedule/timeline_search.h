// Exact branch and bound over the simulated timeline: the simulator runs the
// schedule forward and the search decides each DNN's next group's accelerator
// only when the simulation needs it (sim::Simulator's step-wise runs), so the
// partial schedules sharing a prefix share its simulation, and every node is
// bounded by its exact time so far plus a relaxation of what is left:
//  - per DNN, its end is at least now + the standalone time of its running
//    group's rest and its cheapest completion with the transitions it has left;
//  - latency with two accelerators: now + the remaining work weighted by each
//    contention-aware weighting (work_weights.h; the weighted progress rate is
//    at most 1 at every instant from now on, as it is from time 0), each DNN
//    completing the cheapest way under that weighting.
// The relaxation only covers the future, so its gap shrinks as the timeline
// fills, unlike a bound on complete assignments. The space is the same as the
// assignment enumeration's (at most k transitions per DNN), searched in the
// same semantics (the simulator's own event loop), so it is exact.
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "libplan/sim/concurrent/simulator.h"
#include "passes/schedule/work_weights.h"

namespace zp::schedule {

struct TimelineParams {
  sim::Objective objective = sim::Objective::Latency;
  int maxTransitionsPerDnn = 2;  // -1: unrestricted
  std::chrono::steady_clock::time_point deadline;  // required: the search stops there
  // Valid weightings (latency, two accelerators); may be empty.
  const std::vector<WorkWeighting>* weightings = nullptr;
  // The incumbent to beat (its value); the search returns only better schedules.
  std::optional<double> incumbentValue;
  // Tried first at every decision when given (any schedule of the problem).
  const sim::Schedule* guide = nullptr;
  // Called with each improving schedule and its simulated value.
  std::function<void(const sim::Schedule&, double)> onImprove;
};

struct TimelineResult {
  std::optional<sim::Schedule> best;  // better than the incumbent, if found
  double value = 0;
  bool complete = false;  // the whole space was searched (or pruned)
  // When not complete: the least bound of what was left unexplored (latency)
  // or the largest (throughput); +-infinity when nothing was left.
  double unexploredBound = 0;
  uint64_t nodes = 0, leaves = 0;
};

TimelineResult timelineSearch(const sim::Problem& problem, const TimelineParams& params);

}  // namespace zp::schedule
