// The per-SoC contention CSV (schemas/README.md): one row per grid point,
//   accelerator,own_demand,external_demand,slowdown
// Every accelerator of the workload needs a complete own x external grid;
// slowdowns are >= 1. '#' lines and blank lines are skipped.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "libplan/sim/concurrent/contention.h"
#include "libplan/util/error.h"

namespace zp::artifacts {

Expected<sim::ContentionModel> readContentionCsv(const std::filesystem::path& path,
                                                 const std::vector<std::string>& accelerators);
Expected<sim::ContentionModel> parseContentionCsv(const std::string& text, const std::string& label,
                                                  const std::vector<std::string>& accelerators);
// Every grid point of every surface of `model` (one per accelerator, in order),
// numbers in full. `model` must not be ContentionModel::none (that is no file).
std::string formatContentionCsv(const sim::ContentionModel& model, const std::vector<std::string>& accelerators);

}  // namespace zp::artifacts
