// A workload's group rows CSV: a DNN's layer groups, one row per (group, accelerator),
//   group,accelerator,time_ms,transition_out_ms,transition_in_ms,mem_throughput
// groups in order of first appearance; '#' lines and blank lines are skipped.
// A group has a row for each accelerator it may run on (time_ms > 0).
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "libplan/sim/concurrent/problem.h"
#include "libplan/util/error.h"

namespace zp::artifacts {

Expected<std::vector<sim::GroupCost>> parseGroupRowsCsv(const std::string& text, const std::string& label,
                                                        const std::vector<std::string>& accelerators);
Expected<std::vector<sim::GroupCost>> readGroupRowsCsv(const std::filesystem::path& path,
                                                       const std::vector<std::string>& accelerators);
// The rows of `groups` (per accelerator of `accelerators`), numbers in full.
std::string formatGroupRowsCsv(const std::vector<sim::GroupCost>& groups, const std::vector<std::string>& accelerators);

}  // namespace zp::artifacts
