// slo.json, the user's SLO configurations:
//   {"schema_version": 1, "configurations": [{"id": "C1", "tasks": {"digits": {"accuracy": 0.97, "latency_ms": 0.2}}}]}
// Every configuration names an SLO for each of the profiled tasks and no other.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "libplan/plan/stitch_plan.h"
#include "libplan/util/error.h"
#include "libplan/util/json.h"

namespace zp::artifacts {

// `taskNames`: the tasks of the profile the SLOs are for.
Expected<std::vector<plan::SloConfiguration>> readSloFile(const std::filesystem::path& path,
                                                          const std::vector<std::string>& taskNames);
// The inverse of readSloFile (as a document).
Json sloFileJson(const std::vector<plan::SloConfiguration>& configs);

}  // namespace zp::artifacts
