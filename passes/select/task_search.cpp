#include "passes/select/task_search.h"

namespace zp::select {

TaskSearch::TaskSearch(const TaskSpace& ts, const plan::TaskSlo& slo, bool measuredForDecisions, bool originalsOnly,
                         const std::vector<std::vector<int>>& orders)
    : ts_(ts), slo_(slo), measuredForDecisions_(measuredForDecisions), originalsOnly_(originalsOnly) {
  std::vector<std::vector<int>> placements;
  for (const auto& o : orders) placements.push_back(placementOf(o));
  theta_ = PlacementSet::of(placements, ts.processorCount(), ts.positions);
}

std::vector<int> TaskSearch::placementOf(const std::vector<int>& order) const {
  return std::vector<int>(order.begin(), order.begin() + ts_.positions);
}

CombinationFilter TaskSearch::accurate() const {
  CombinationFilter f;
  f.accuracyFloor = slo_.accuracy;
  f.measuredForDecisions = measuredForDecisions_;
  f.originalsOnly = originalsOnly_;
  return f;
}

CombinationFilter TaskSearch::inTheta() const {
  CombinationFilter f = accurate();
  f.within = &theta_;
  f.withinMs = slo_.latencyMs;
  return f;
}

const Pick& TaskSearch::fastestAccurate(const std::vector<int>& order) {
  auto pl = placementOf(order);
  auto it = fastest_.find(pl);
  if (it == fastest_.end())
    it = fastest_.emplace(pl, fastest(ts_, PlacementSet::single(pl, ts_.processorCount()), accurate())).first;
  return it->second;
}

bool TaskSearch::thetaEmpty() {
  if (!thetaEmpty_) thetaEmpty_ = !anyPasses(ts_, inTheta());
  return *thetaEmpty_;
}

const Pick& TaskSearch::fastestInTheta(const std::vector<int>& order) {
  auto pl = placementOf(order);
  if (auto it = inTheta_.find(pl); it != inTheta_.end()) return it->second;
  const Pick& q = fastestAccurate(order);
  Pick m;  // none, infinite: also when q is none (every member of F, so of Θ, is infinite under the order)
  if (q.found() && q.value <= slo_.latencyMs) m = q;
  else if (q.found() && !thetaEmpty()) m = fastest(ts_, PlacementSet::single(pl, ts_.processorCount()), inTheta());
  return inTheta_.emplace(pl, m).first->second;
}

const Pick& TaskSearch::closestMiss(const std::vector<int>& order) {
  auto pl = placementOf(order);
  auto it = miss_.find(pl);
  if (it == miss_.end())
    it = miss_.emplace(pl, select::closestMiss(ts_, PlacementSet::single(pl, ts_.processorCount()), slo_,
                                               measuredForDecisions_, originalsOnly_)).first;
  return it->second;
}

const PassCount& TaskSearch::thetaCount() {
  if (!thetaCount_) {
    CombinationFilter f = inTheta();
    f.originalsOnly = false;
    thetaCount_ = countPassing(ts_, f);
  }
  return *thetaCount_;
}

}  // namespace zp::select
