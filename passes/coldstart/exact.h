// Exact solution of the pipelined cold-start problem (cold_problem.h) by dynamic
// programming over the steps with Pareto fronts: after step i a partial schedule
// is summarised by (disk free, execute end = core 0 free, the other cores' free
// times sorted); the latency only grows with each of them, so a state that is no
// earlier anywhere than another is dropped. Branches per step: each option, and
// for a transform each core with a distinct free time. Optimal over the
// schedules cold_problem.h describes with transforms started in step order on
// each core (the class simulate() evaluates); brute force checks it in tests.
#pragma once
#include <cstdint>
#include <optional>

#include "passes/coldstart/pipeline.h"

namespace zp::coldstart {

struct ExactParams {
  size_t maxFrontStates = 20000;  // one step's front above this: give up (not affordable)
};

struct ExactResult {
  Choice choice;
  double latencyMs = 0;
  uint64_t states = 0;  // states kept over all steps
};

// Nothing when a front outgrew params.maxFrontStates.
std::optional<ExactResult> solveExact(const Problem& p, const ExactParams& params);

// Every option and core of every step, simulated: for tests, on small problems.
ExactResult solveBruteForce(const Problem& p);

// Not pipelined: for each subset of libraries started, each step independently at
// its least read + transform + execute; the best (optimal for simulateSerial).
ExactResult solveSerial(const Problem& p);

}  // namespace zp::coldstart
