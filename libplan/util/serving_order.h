// The order a processor's worker takes its queued runs in: first come first
// served, or earliest deadline first (a query's deadline: its arrival plus its
// task's latency bound) among the runs whose deadline has not passed, the late
// ones after them (in overload, serving the queries that miss anyway first makes
// the ones behind them miss too), never preempting a run. The executor serves by it and
// the serving simulator predicts by it, so both read this one type; a plan
// names it per system.
#pragma once
#include <optional>
#include <string_view>

namespace zp {

enum class ServingOrder { FirstCome, EarliestDeadline };

inline constexpr std::string_view servingOrderName(ServingOrder o) {
  return o == ServingOrder::EarliestDeadline ? "earliest-deadline" : "first-come";
}

inline std::optional<ServingOrder> parseServingOrder(std::string_view s) {
  if (s == "first-come") return ServingOrder::FirstCome;
  if (s == "earliest-deadline") return ServingOrder::EarliestDeadline;
  return std::nullopt;
}

}  // namespace zp
