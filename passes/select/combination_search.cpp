#include "passes/select/combination_search.h"
#include "libplan/util/infinity.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace zp::select {
namespace {

enum class Goal { Fastest, Miss, Any, Count };

// One depth-first search; the goal decides what a leaf does and which bound prunes.
class Search {
 public:
  Search(const TaskSpace& ts, Goal goal, const CombinationFilter& filter, const PlacementSet* objective,
         const plan::TaskSlo* slo)
      : ts_(ts), model_(*ts.accuracy), c_(model_.combinations()), goal_(goal), filter_(filter),
        objective_(objective), slo_(slo), S_(c_.positions()), V_(c_.variants()), P_(ts.processorCount()) {
    digits_.assign(static_cast<size_t>(S_), 0);
    prefix_.assign(static_cast<size_t>(S_) + 1, 0);
    if (objective_) objectiveStates_.assign((static_cast<size_t>(S_) + 1) * objective_->states(), 0.0);
    if (filter_.within) withinStates_.assign((static_cast<size_t>(S_) + 1) * filter_.within->states(), 0.0);
    size_t most = std::max(objective_ ? objective_->states() : 0, filter_.within ? filter_.within->states() : 0);
    scratch_.assign(2 * std::max<size_t>(most, 1), 0.0);
    costBounds();
    childOrders();
    if (goal_ == Goal::Count) count_.byPosition.assign(static_cast<size_t>(S_), std::vector<uint64_t>(static_cast<size_t>(V_), 0));
  }

  void run() { visit(0); }
  const Pick& best() const { return best_; }
  bool found() const { return found_; }
  PassCount& count() { return count_; }

 private:
  double* objectiveAt(int depth) { return objectiveStates_.data() + static_cast<size_t>(depth) * objective_->states(); }
  double* withinAt(int depth) { return withinStates_.data() + static_cast<size_t>(depth) * filter_.within->states(); }

  // Per position and processor the cheapest and dearest variant's work.
  void costBounds() {
    lowest_.assign(static_cast<size_t>(S_) * static_cast<size_t>(P_), kInf);
    highest_.assign(lowest_.size(), -kInf);
    for (int j = 0; j < S_; ++j)
      for (int v = 0; v < V_; ++v)
        for (int p = 0; p < P_; ++p) {
          const size_t i = static_cast<size_t>(j) * static_cast<size_t>(P_) + static_cast<size_t>(p);
          lowest_[i] = std::min(lowest_[i], ts_.works(j, v)[p]);
          highest_[i] = std::max(highest_[i], ts_.works(j, v)[p]);
        }
  }

  // Children cheapest first (on the processors the placements use there), so
  // that the first leaves reached are good incumbents; ties by variant.
  void childOrders() {
    const PlacementSet* guide = objective_ ? objective_ : filter_.within;
    order_.assign(static_cast<size_t>(S_), {});
    for (int j = 0; j < S_; ++j) {
      std::vector<bool> used(static_cast<size_t>(P_), guide == nullptr || guide->listed().empty());
      if (guide)
        for (const auto& pl : guide->listed()) used[static_cast<size_t>(pl[static_cast<size_t>(j)])] = true;
      std::vector<std::pair<double, int>> keyed;
      for (int v = 0; v < V_; ++v) {
        double key = kInf;
        for (int p = 0; p < P_; ++p)
          if (used[static_cast<size_t>(p)]) key = std::min(key, ts_.works(j, v)[p]);
        keyed.push_back({goal_ == Goal::Count ? 0.0 : key, v});
      }
      std::sort(keyed.begin(), keyed.end());
      for (const auto& [key, v] : keyed) order_[static_cast<size_t>(j)].push_back(v);
    }
  }

  // Whether no combination of the subtree at `depth` with a value >= lb can beat the best so far.
  bool beaten(double lb, int depth) const {
    if (lb > best_.value) return true;
    return lb == best_.value && best_.found() &&
           prefix_[static_cast<size_t>(depth)] * c_.subtreeSize(depth) > static_cast<uint64_t>(best_.combination);
  }

  void keep(double value, uint64_t k) {
    if (value < best_.value || (value == best_.value && (!best_.found() || static_cast<int64_t>(k) < best_.combination)))
      best_ = Pick{value, static_cast<int64_t>(k)};
  }

  void countSubtree(int depth) {
    const uint64_t n = c_.subtreeSize(depth);
    count_.total += n;
    for (int p = 0; p < S_; ++p) {
      auto& row = count_.byPosition[static_cast<size_t>(p)];
      if (p < depth) row[static_cast<size_t>(digits_[static_cast<size_t>(p)])] += n;
      else
        for (auto& x : row) x += n / static_cast<uint64_t>(V_);
    }
  }

  // Whether the subtree at `depth` can hold an answer (and, for counting, whether it was counted whole).
  bool worthVisiting(int depth) {
    const AccuracyBounds b = model_.bounds(digits_.data(), prefix_[static_cast<size_t>(depth)], depth,
                                           filter_.measuredForDecisions);
    if (b.empty() || b.hi < filter_.accuracyFloor) return false;
    if (filter_.within && !(filter_.within->complete(ts_, depth, withinAt(depth), lowest_, scratch_.data()) <= filter_.withinMs))
      return false;
    if (goal_ == Goal::Fastest || goal_ == Goal::Miss) {
      const double latency = objective_->complete(ts_, depth, objectiveAt(depth), lowest_, scratch_.data());
      if (goal_ == Goal::Fastest && latency == kInf) return false;
      const double lb = goal_ == Goal::Fastest ? latency : missScore(b.hi, latency, *slo_);
      return !beaten(lb, depth);
    }
    if (goal_ == Goal::Count && b.complete && !(b.lo < filter_.accuracyFloor) &&
        (!filter_.within || filter_.within->complete(ts_, depth, withinAt(depth), highest_, scratch_.data()) <= filter_.withinMs)) {
      countSubtree(depth);
      return false;
    }
    return true;
  }

  void leaf() {
    const uint64_t k = prefix_[static_cast<size_t>(S_)];
    if (!model_.valid(k)) return;
    const double accuracy = model_.decision(k, filter_.measuredForDecisions);
    if (accuracy < filter_.accuracyFloor) return;
    if (filter_.within && !(filter_.within->least(withinAt(S_)) <= filter_.withinMs)) return;
    switch (goal_) {
      case Goal::Fastest: {
        const double latency = objective_->least(objectiveAt(S_));
        if (latency < kInf) keep(latency, k);
        return;
      }
      case Goal::Miss: keep(missScore(accuracy, objective_->least(objectiveAt(S_)), *slo_), k); return;
      case Goal::Any: found_ = true; return;
      case Goal::Count:
        ++count_.total;
        for (int p = 0; p < S_; ++p) ++count_.byPosition[static_cast<size_t>(p)][static_cast<size_t>(digits_[static_cast<size_t>(p)])];
        return;
    }
  }

  // Returns true to stop the whole search.
  bool visit(int depth) {
    if (!worthVisiting(depth)) return false;
    if (depth == S_) {
      leaf();
      return found_;
    }
    for (int v : order_[static_cast<size_t>(depth)]) {
      if (filter_.originalsOnly && depth > 0 && v != digits_[0]) continue;
      digits_[static_cast<size_t>(depth)] = v;
      prefix_[static_cast<size_t>(depth) + 1] = prefix_[static_cast<size_t>(depth)] * static_cast<uint64_t>(V_) + static_cast<uint64_t>(v);
      if (objective_) objective_->step(ts_, depth, v, objectiveAt(depth), objectiveAt(depth + 1));
      if (filter_.within) filter_.within->step(ts_, depth, v, withinAt(depth), withinAt(depth + 1));
      if (visit(depth + 1)) return true;
    }
    return false;
  }

  const TaskSpace& ts_;
  const AccuracyModel& model_;
  const Combinations& c_;
  const Goal goal_;
  const CombinationFilter filter_;
  const PlacementSet* objective_;
  const plan::TaskSlo* slo_;
  const int S_, V_, P_;
  std::vector<int> digits_;
  std::vector<uint64_t> prefix_;  // per depth: the digits so far as a number
  std::vector<double> objectiveStates_, withinStates_, scratch_, lowest_, highest_;
  std::vector<std::vector<int>> order_;
  Pick best_;
  bool found_ = false;
  PassCount count_;
};

}  // namespace

double missScore(double acc, double lat, const plan::TaskSlo& slo) {
  double a = std::max(0.0, slo.accuracy - acc) / std::max(slo.accuracy, 1e-9);
  double l = std::max(0.0, lat - slo.latencyMs) / std::max(slo.latencyMs, 1e-9);
  return a + l;
}

Pick fastest(const TaskSpace& ts, const PlacementSet& objective, const CombinationFilter& filter) {
  if (filter.within && std::isnan(filter.withinMs)) return {};
  Search s(ts, Goal::Fastest, filter, &objective, nullptr);
  s.run();
  return s.best();
}

bool anyPasses(const TaskSpace& ts, const CombinationFilter& filter) {
  if (filter.within && std::isnan(filter.withinMs)) return false;
  Search s(ts, Goal::Any, filter, nullptr, nullptr);
  s.run();
  return s.found();
}

Pick closestMiss(const TaskSpace& ts, const PlacementSet& placement, const plan::TaskSlo& slo,
                 bool measuredForDecisions, bool originalsOnly) {
  CombinationFilter filter;
  filter.measuredForDecisions = measuredForDecisions;
  filter.originalsOnly = originalsOnly;
  if (std::isnan(slo.accuracy) || std::isnan(slo.latencyMs)) {
    // Every score is NaN and compares false: a scan keeps its first combination.
    const auto& c = ts.accuracy->combinations();
    if (originalsOnly) return Pick{std::numeric_limits<double>::quiet_NaN(), 0};
    for (uint64_t k = 0; k < c.size(); ++k)
      if (ts.accuracy->valid(k)) return Pick{std::numeric_limits<double>::quiet_NaN(), static_cast<int64_t>(k)};
    return {};
  }
  Search s(ts, Goal::Miss, filter, &placement, &slo);
  s.run();
  return s.best();
}

PassCount countPassing(const TaskSpace& ts, const CombinationFilter& filter) {
  assert(!filter.originalsOnly && "counts are over every combination");
  if (filter.within && std::isnan(filter.withinMs)) {
    PassCount none;
    none.byPosition.assign(static_cast<size_t>(ts.positions), std::vector<uint64_t>(ts.variants.size(), 0));
    return none;
  }
  Search s(ts, Goal::Count, filter, nullptr, nullptr);
  s.run();
  return std::move(s.count());
}

}  // namespace zp::select
