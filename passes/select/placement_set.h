// A set of placements of one task's positions onto processors (indices), and
// the dynamic program over positions that gives a combination's least latency
// over the set — the latency TaskSpace::latencyMs computes, to the bit, since
// each position adds the same terms in the same order and adding is monotone
// under rounding, so the least partial sum per last processor is all that
// matters. Run on a prefix of a combination with the remaining positions at
// per-processor cost bounds (their cheapest or dearest variants), the same
// program bounds the least latency of every completion of the prefix.
//
// A set that is every sequence of processors, or every sequence without a
// repeated processor (the placement orders of estimate::searchOrders), is
// kept as that family: P states (or 2^P x P) instead of one per placement.
#pragma once
#include <cstddef>
#include <vector>

#include "passes/select/stitch_space.h"

namespace zp::select {

class PlacementSet {
 public:
  // The distinct placements among `placements` (each of `positions` processor
  // indices below `processors`).
  static PlacementSet of(const std::vector<std::vector<int>>& placements, int processors, int positions);
  static PlacementSet single(const std::vector<int>& placement, int processors);

  // States of the program (the partial latencies it keeps).
  size_t states() const { return states_; }
  int positions() const { return positions_; }
  // The placements, when the set is kept as a list (empty for a family).
  const std::vector<std::vector<int>>& listed() const { return listed_; }

  // `out` := the states after `position` takes `variant` (`in`: the states
  // after position - 1; ignored at position 0).
  void step(const TaskSpace& ts, int position, int variant, const double* in, double* out) const;
  // The least latency over the set from the states after position - 1 when
  // each position j >= `position` costs cost[j * P + p] on processor p in place
  // of a variant's work; `scratch` holds 2 * states() values.
  double complete(const TaskSpace& ts, int position, const double* in, const std::vector<double>& cost,
                  double* scratch) const;
  // The least latency over the set of a complete combination.
  double least(const double* states) const;

 private:
  enum class Kind { Listed, EverySequence, NoRepeat };
  // One position's terms, as TaskSpace::latencyMs adds them.
  static double add(const TaskSpace& ts, double partial, int position, int from, int to, double work);
  // `out` := the states after `position` with work[p] on processor p.
  void advance(const TaskSpace& ts, int position, const double* work, const double* in, double* out) const;

  Kind kind_ = Kind::Listed;
  int processors_ = 0, positions_ = 0;
  size_t states_ = 0;
  std::vector<std::vector<int>> listed_;
};

}  // namespace zp::select
