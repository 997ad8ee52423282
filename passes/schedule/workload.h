// A concurrent workload as the scheduler takes it: the problem (accelerators,
// DNNs as chains of layer groups, dependencies, contention) and the objective.
// drivers/concurrent_flow/workload.h builds it from workload.json.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "libplan/sim/concurrent/problem.h"

namespace zp::schedule {

struct Workload {
  std::string name;
  sim::Problem problem;
  sim::Objective objective = sim::Objective::Latency;
  // Files read (workload first), for the plan header's input hashes.
  std::vector<std::filesystem::path> inputFiles;
};

}  // namespace zp::schedule
