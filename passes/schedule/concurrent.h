// The concurrent-schedule pass (HaX-CoNN): baselines, the optimal solver
// (exact branch and bound, or Z3), the simulator as judge, and the plan section.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "libplan/plan/plan.h"
#include "libplan/sim/concurrent/simulator.h"
#include "passes/schedule/exact.h"
#include "passes/schedule/workload.h"

namespace zp::schedule {

enum class SolverKind { Exact, Z3 };

struct ConcurrentParams {
  std::optional<sim::Objective> objective;  // overrides the workload's
  SolverKind solver = SolverKind::Exact;
  int maxTransitionsPerDnn = 2;  // -1: unrestricted (exact search: small instances only)
  double timeLimitS = 60;
  bool crossCheckZ3 = false;     // also solve with Z3 in the same space and compare
  uint64_t seed = 0;             // recorded; seeds Z3
  ImproveCallback onImprove;     // each improving schedule (anytime mode)
};

struct ConcurrentOutcome {
  sim::Objective objective = sim::Objective::Latency;
  sim::Schedule schedule;  // the plan's schedule
  sim::SimResult result;   // its simulation (with contention spans)
  plan::ConcurrentSchedule section;
  std::vector<Processor> processors;  // the accelerators' host processors (the plan's), if the workload named them
  double solveMs = 0;      // wall time of baselines + solver (not in the plan: plans are byte-identical)
  double firstFeasibleMs = 0;
};

Expected<ConcurrentOutcome> solveConcurrent(const Workload& workload, const std::string& workloadLabel,
                                            const ConcurrentParams& params);

// Transitions of every DNN of a schedule.
int totalTransitions(const sim::Schedule& s);

// Fills a plan section from a simulated schedule.
std::vector<plan::ConcurrentDnn> describeSchedule(const sim::Problem& p, const sim::SimResult& r);

}  // namespace zp::schedule
