// What Algorithm 1 (SparseLoom §3.3) asks about one task under one SLO,
// answered by searches over its combinations (combination_search.h), never by
// listing Θ^t, and remembered per placement:
//   F      the combinations whose decision accuracy is not below the SLO's;
//   Θ^t    those of F meeting the latency SLO under some placement order (line 2);
//   q(p)   the fastest of F under order p;
//   m(p)   the fastest of Θ^t under p (line 4's term, line 6's pick).
// Since Θ^t ⊆ F, m(p) >= q(p), and m(p) = q(p) whenever q(p) meets the latency
// SLO (then q(p) is in Θ^t); only otherwise does m(p) need a search of its
// own, constrained to Θ^t. The lowest combination number wins every tie, as a
// scan of stitch.json's list does.
#pragma once
#include <map>
#include <optional>
#include <vector>

#include "libplan/plan/stitch_plan.h"
#include "passes/select/combination_search.h"
#include "passes/select/placement_set.h"
#include "passes/select/stitch_space.h"

namespace zp::select {

class TaskSearch {
 public:
  // `orders`: the placement orders Θ^t is defined over (processor indices; the
  // task uses the first `positions` of each).
  TaskSearch(const TaskSpace& ts, const plan::TaskSlo& slo, bool measuredForDecisions, bool originalsOnly,
              const std::vector<std::vector<int>>& orders);

  const TaskSpace& task() const { return ts_; }
  const plan::TaskSlo& slo() const { return slo_; }

  // q(order): not found when no combination of F has a finite latency under it.
  const Pick& fastestAccurate(const std::vector<int>& order);
  bool thetaEmpty();
  // m(order): value infinite (and not found) when no member of Θ^t has a finite latency under it.
  const Pick& fastestInTheta(const std::vector<int>& order);
  // The combination (or original) closest to the SLO under `order` (missScore).
  const Pick& closestMiss(const std::vector<int>& order);
  // |Θ^t| and how many members take each variant at each position.
  const PassCount& thetaCount();

 private:
  std::vector<int> placementOf(const std::vector<int>& order) const;
  CombinationFilter accurate() const;
  CombinationFilter inTheta() const;

  const TaskSpace& ts_;
  plan::TaskSlo slo_;
  bool measuredForDecisions_, originalsOnly_;
  PlacementSet theta_;
  std::map<std::vector<int>, Pick> fastest_, inTheta_, miss_;
  std::optional<bool> thetaEmpty_;
  std::optional<PassCount> thetaCount_;
};

}  // namespace zp::select
