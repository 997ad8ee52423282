// zooplan against the six baselines of SparseLoom §5.1 in the query
// simulator: for each SLO set (grid, accuracy-guaranteed, latency-guaranteed)
// every configuration's choices, their violation rates and throughput, and
// the table plan-solve prints.
#pragma once
#include "libplan/util/json.h"
#include "passes/select/select.h"

namespace zp::select {

// {"queries_per_task", "arrival_orders", "sets": [{"name", "configurations",
// "summary", "violation_reduction_vs_best_baseline"}], "table"}.
Json evaluateAgainstBaselines(const StitchSpace& space, const SelectParams& params);

}  // namespace zp::select
