// Placing stitched groups as whole units on processors: one query of every unit
// is released at once, each processor runs its units one after another, and the
// makespan (the busiest processor's total) is minimised. Every assignment is
// evaluated when there are few enough (the optimum is then proven); otherwise
// longest-processing-time-first gives a placement and a lower bound.
#pragma once
#include <cstdint>
#include <vector>

namespace zp::mts {

struct UnitPlacementParams {
  uint64_t maxAssignments = uint64_t{1} << 20;  // enumerate when processors^units is at most this
};

struct UnitPlacement {
  std::vector<int> processor;  // per unit
  double makespanMs = 0;
  double lowerBoundMs = 0;     // proven bound on the optimum (= makespanMs when optimal)
  bool optimal = false;        // every assignment was evaluated
  uint64_t assignments = 0;    // evaluated
  bool enumerated = false;     // by enumeration (else longest-processing-time-first)
};

// The busiest processor's total when unit u runs on placement[u] (costMs[u][p]).
double makespanOf(const std::vector<std::vector<double>>& costMs, const std::vector<int>& placement);

// costMs[u][p]: unit u's time on processor p (every row the same length, at
// least one processor). Ties go to the lexicographically smallest placement.
UnitPlacement placeUnits(const std::vector<std::vector<double>>& costMs, const UnitPlacementParams& params = {});

}  // namespace zp::mts
