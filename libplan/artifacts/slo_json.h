// slo.json, the user's SLO configurations and, optionally, the workload they
// are served at (schemas/slo.schema.json):
//   {"schema_version": 1,
//    "configurations": [{"id": "C1", "tasks": {"digits": {"accuracy": 0.97, "latency_ms": 0.2}}}],
//    "workload": {"process": "poisson", "rate_qps": {"digits": 50}}}
// Every configuration names an SLO for each of the profiled tasks and no other;
// a workload names a rate for each of them.
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "libplan/plan/stitch_plan.h"
#include "libplan/util/error.h"
#include "libplan/util/json.h"

namespace zp::artifacts {

// `taskNames`: the tasks of the profile the SLOs are for.
Expected<std::vector<plan::SloConfiguration>> readSloFile(const std::filesystem::path& path,
                                                          const std::vector<std::string>& taskNames);
// The inverse of readSloFile (as a document), with the workload when given.
Json sloFileJson(const std::vector<plan::SloConfiguration>& configs,
                 const std::optional<plan::ServingWorkloadRecord>& workload = std::nullopt);

// The file's "workload" (process and per-task rates only); nothing when it has none.
Expected<std::optional<plan::ServingWorkloadRecord>> readSloWorkload(const std::filesystem::path& path,
                                                                     const std::vector<std::string>& taskNames);

}  // namespace zp::artifacts
