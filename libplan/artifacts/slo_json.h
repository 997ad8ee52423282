// slo.json, the user's SLO configurations and, optionally, the workload they
// are served at (schemas/slo.schema.json):
//   {"schema_version": 1,
//    "configurations": [{"id": "C1", "tasks": {"digits": {"accuracy": 0.97, "latency_ms": 0.2}}}],
//    "workload": {"process": "poisson", "rate_qps": {"digits": 50},
//                 "frames": [{"name": "camera", "period_ms": 50, "dnns": ["det", "track"],
//                             "depends_on": {"track": ["det"]}}],
//                 "memory_budget": "60%"}}
// Or, one SLO per task (a single configuration, named kPerTaskSloId):
//   {"tasks": {"digits": {"accuracy": 0.97, "latency_ms": 5}, ...}, "workload": ...}
// Every configuration names an SLO for each of the profiled tasks and no other;
// a workload queries each of them (a rate, or an arrivals file) or runs it in a frame.
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "libplan/plan/stitch_plan.h"
#include "libplan/plan/workload.h"
#include "libplan/util/error.h"
#include "libplan/util/json.h"

namespace zp::artifacts {

// The one configuration of an slo.json written per task.
inline constexpr const char* kPerTaskSloId = "SLO";

// `taskNames`: the tasks of the profile the SLOs are for.
Expected<std::vector<plan::SloConfiguration>> readSloFile(const std::filesystem::path& path,
                                                          const std::vector<std::string>& taskNames);
// The inverse of readSloFile (as a document), with the workload when given.
Json sloFileJson(const std::vector<plan::SloConfiguration>& configs,
                 const std::optional<plan::WorkloadSpec>& workload = std::nullopt);
// The "workload" member alone.
Json workloadJson(const plan::WorkloadSpec& workload);

// The file's "workload"; nothing when it has none. Every task of `taskNames` is
// queried (a rate, or the arrivals file) or runs in a frame; a rate or a frame
// names only those tasks; frames have a period > 0 and no dependency cycle.
Expected<std::optional<plan::WorkloadSpec>> readSloWorkload(const std::filesystem::path& path,
                                                            const std::vector<std::string>& taskNames);

}  // namespace zp::artifacts
