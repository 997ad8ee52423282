// The additive latency estimator of SparseLoom §3.2 (Eq. 5), extended with
// what the paper leaves out: a fixed per-invocation cost that a subgraph
// measured on its own pays once per run, and transition costs between
// processors. For a stitched variant placed position p -> processor P[p]:
//
//   latency = sum_p (standalone[p, v_p, P[p]] - overhead[P[p]])
//           + sum over maximal runs of consecutive positions on one processor of overhead[that processor]
//           + sum_p transition(P[p] -> P[p+1], boundary bytes of p)   (when the processors differ)
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "libplan/estimate/transition_cost.h"
#include "libplan/util/error.h"

namespace zp::estimate {


class LatencyModel {
 public:
  void setSubgraph(int position, const std::string& variant, const std::string& processor, double ms);
  void setOverhead(const std::string& processor, double ms);
  void setTransition(const std::string& from, const std::string& to, TransitionCost cost);

  std::optional<double> subgraph(int position, const std::string& variant, const std::string& processor) const;
  double overhead(const std::string& processor) const;
  double transition(const std::string& from, const std::string& to, double bytes) const;

  // nullopt when a subgraph has no measurement on its processor.
  std::optional<double> estimate(const std::vector<std::string>& variants, const std::vector<std::string>& placement,
                                 const std::vector<double>& boundaryBytes) const;

  // Every entry, in key order (latency_model.json's writer and the round-trip test).
  const std::map<std::tuple<int, std::string, std::string>, double>& subgraphs() const { return subgraphMs_; }
  const std::map<std::string, double>& overheads() const { return overheadMs_; }
  const std::map<std::pair<std::string, std::string>, TransitionCost>& transitions() const { return transitions_; }
  bool operator==(const LatencyModel& o) const {
    return subgraphMs_ == o.subgraphMs_ && overheadMs_ == o.overheadMs_ && transitions_ == o.transitions_;
  }

 private:
  std::map<std::tuple<int, std::string, std::string>, double> subgraphMs_;
  std::map<std::string, double> overheadMs_;
  std::map<std::pair<std::string, std::string>, TransitionCost> transitions_;
};

// One task's calibrated model as zoo-profile writes it (latency_model.json)
// and plan-solve reads it: the model and the bytes crossing each boundary
// between consecutive positions (positions - 1 entries).
struct TaskLatencyModel {
  std::string task;
  int positions = 0;
  std::vector<double> boundaryBytes;
  LatencyModel model;
  bool operator==(const TaskLatencyModel&) const = default;
};

// All orders of `processors` taken `positions` at a time without repetition
// (the paper's non-overlapping placement orders). Callers pass positions <= processors.
std::vector<std::vector<std::string>> placementOrders(const std::vector<std::string>& processors, int positions);

// The placement orders to search: non-overlapping orders when there are enough
// processors, otherwise every assignment of positions to processors.
std::vector<std::vector<std::string>> searchOrders(const std::vector<std::string>& processors, int positions);

// How many orders searchOrders gives, or nothing when that exceeds `limit`.
std::optional<uint64_t> searchOrderCount(size_t processors, int positions, uint64_t limit);

// The most (stitched variant, placement order) pairs of one task zoo-profile's
// lookup table evaluates: with kMaxCombinations variants, about 10 placement
// orders each. (plan-solve searches without listing the pairs.)
inline constexpr uint64_t kMaxPlacementSearch = 1'000'000;
// An error naming `label` when `combinations` x the orders of `positions` over
// `processors` exceeds kMaxPlacementSearch.
Status checkPlacementSearch(const std::string& label, const std::string& task, uint64_t combinations,
                            size_t processors, int positions);

}  // namespace zp::estimate
