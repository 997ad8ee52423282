// plan-solve's pictures of a stitch plan (stitch flow, drivers only: they
// render, the passes decide).
#pragma once
#include <string>
#include <vector>

#include "libplan/plan/stitch_plan.h"
#include "libplan/sim/queries/query_sim.h"
#include "libplan/util/json.h"
#include "passes/select/stitch_space.h"

namespace zp::drivers {

// Chrome-trace / Perfetto JSON of the simulated query schedule `r` of `q`.
Json queryScheduleTrace(const select::StitchSpace& space, const sim::QuerySimResult& r,
                        const std::vector<sim::TaskQueries>& q, const std::string& label);

// The task's stitched variants under `order` (latency, accuracy) with the
// Pareto front, the originals and the `chosen` candidate marked.
std::string accuracyLatencySvg(const select::TaskSpace& ts, const std::vector<std::string>& order, int64_t chosen);

// Every system's choice served at the plan's workload, as predicted, mean over
// the configurations, and how zooplan's search went ("" without a workload).
std::string predictedServingTable(const plan::StitchPlan& plan);

}  // namespace zp::drivers
