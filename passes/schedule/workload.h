// workload.json (schemas/workload.schema.json): the DNNs to run concurrently
// as chains of layer-group rows, the accelerators, how the DNNs relate
// (independent, pipeline via dependsOn, several instances), the per-SoC
// contention CSV and the objective. Errors name the file and the JSON path.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "libplan/sim/concurrent/problem.h"
#include "libplan/util/error.h"
#include "libplan/util/json.h"

namespace zp::schedule {

struct Workload {
  std::string name;
  sim::Problem problem;
  sim::Objective objective = sim::Objective::Latency;
  // Files read (workload first), for the plan header's input hashes.
  std::vector<std::filesystem::path> inputFiles;
};

Expected<Workload> loadWorkload(const std::filesystem::path& path);
// `label` names the document in errors; relative paths resolve against `baseDir`.
Expected<Workload> parseWorkload(const std::string& text, const std::string& label,
                                 const std::filesystem::path& baseDir);

// Group rows CSV: "group,accelerator,time_ms,transition_out_ms,transition_in_ms,mem_throughput",
// one row per (group, accelerator); groups in order of first appearance.
Expected<std::vector<sim::GroupCost>> parseGroupRowsCsv(const std::string& text, const std::string& label,
                                                        const std::vector<std::string>& accelerators);

}  // namespace zp::schedule
