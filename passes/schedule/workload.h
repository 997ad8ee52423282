// A concurrent workload as the scheduler takes it: the problem (accelerators,
// DNNs as chains of layer groups, dependencies, contention) and the objective;
// and what executing a schedule needs: each model DNN's ONNX file and the nodes
// of its layer groups, and the host processor of each accelerator.
// drivers/concurrent_flow/workload.h builds it from workload.json.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "libplan/plan/stitch_plan.h"
#include "libplan/sim/concurrent/problem.h"

namespace zp::schedule {

struct Workload {
  std::string name;
  sim::Problem problem;
  sim::Objective objective = sim::Objective::Latency;
  struct ModelSource {
    std::string model;  // the ONNX file, as inputFiles holds it (empty: the DNN is given as group rows)
    std::vector<std::vector<std::string>> groupNodes;  // node names of each layer group
  };
  std::vector<ModelSource> sources;  // per DNN of `problem` (empty: no DNN is a model)
  std::vector<Processor> processors;  // per accelerator (empty: none given)
  // Files read (workload first), for the plan header's input hashes.
  std::vector<std::filesystem::path> inputFiles;
};

}  // namespace zp::schedule
