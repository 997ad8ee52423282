// Searches over one task's stitched variants without listing them: depth
// first over positions (a node fixes the variants of the first positions),
// skipping a subtree when the accuracy model's bounds say none of its
// combinations reaches the accuracy floor, when the latency program
// (placement_set.h) with each remaining position at its cheapest variant says
// none can meet a latency bound, or when that lower bound cannot beat the best
// combination found so far. Every bound is computed with the same additions in
// the same order as the value it bounds, so it holds to the bit, and the
// answers are exactly what a scan of every combination in stitch.json's order
// gives — ties included: the lowest combination number wins.
#pragma once
#include <cstdint>
#include <limits>
#include <vector>

#include "libplan/plan/stitch_plan.h"
#include "passes/select/placement_set.h"
#include "passes/select/stitch_space.h"

namespace zp::select {

struct Pick {
  double value = std::numeric_limits<double>::infinity();
  int64_t combination = -1;  // -1: none
  bool found() const { return combination >= 0; }
  bool operator==(const Pick&) const = default;
};

// Which combinations a search considers.
struct CombinationFilter {
  // Those whose decision accuracy is not below this (Algorithm 1's test; NaN
  // passes every one, as the comparison does).
  double accuracyFloor = std::numeric_limits<double>::quiet_NaN();
  bool measuredForDecisions = false;
  bool originalsOnly = false;
  // And, when set, whose least latency over `within`'s placements is at most `withinMs`.
  const PlacementSet* within = nullptr;
  double withinMs = std::numeric_limits<double>::infinity();
};

// How far a candidate misses an SLO, normalised (0 when it meets it).
double missScore(double accuracy, double latencyMs, const plan::TaskSlo& slo);

// Of the combinations passing `filter`, the one with the least latency over
// `objective`'s placements among finite latencies (lowest number on ties);
// not found when none is finite.
Pick fastest(const TaskSpace& ts, const PlacementSet& objective, const CombinationFilter& filter);

// Whether any combination passes `filter`.
bool anyPasses(const TaskSpace& ts, const CombinationFilter& filter);

// Of every valid combination (or original), the least missScore of its
// decision accuracy and its latency under `placement`, lowest number on ties
// (an infinite score counts); with an SLO that is NaN every score is NaN and,
// as in a scan, the first combination is kept.
Pick closestMiss(const TaskSpace& ts, const PlacementSet& placement, const plan::TaskSlo& slo,
                 bool measuredForDecisions, bool originalsOnly);

// How many combinations pass `filter`, and per position how many of them take each variant there.
struct PassCount {
  uint64_t total = 0;
  std::vector<std::vector<uint64_t>> byPosition;  // [position][variant]
};
PassCount countPassing(const TaskSpace& ts, const CombinationFilter& filter);

}  // namespace zp::select
