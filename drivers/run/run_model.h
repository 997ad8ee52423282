// plan-run MODEL.onnx: run one model with the thin runtime and report its
// cold and warm timings, load statistics, heavy nodes, memory and outputs
// (optionally saved as .npy, traced, or its transformed weights cached).
#pragma once
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "libplan/util/error.h"
#include "libplan/util/json.h"

namespace zp::drivers {

struct RunModelOptions {
  std::filesystem::path model;
  std::vector<std::pair<std::string, std::filesystem::path>> inputs;  // NAME=FILE.npy
  std::filesystem::path saveOutputs;                                  // directory for NAME.npy
  std::string kernels = "default";
  std::string gemm = "onednn";       // GEMM library: onednn (fastest warm) or blis (no start-up)
  bool channelBlocks = true;         // runtime::SessionOptions::channelBlocks
  std::filesystem::path cache;       // read (mmap) transformed weights from here
  std::filesystem::path writeCache;  // write transformed weights here after loading
  // A plan with a cold section for this model (plan-solve --mode cold): --write-cache
  // writes the cache it runs from, and a load with --cache follows it (with --cold:
  // the pipelined cold run, reported per node; later runs switch to the warm kernels).
  std::filesystem::path coldPlan;
  bool cold = false;
  int repeat = 10;
  int threads = 1;
  std::filesystem::path trace;       // Chrome trace of a profiled run (with `cold`: of the cold run)
  uint64_t seed = 0;
  int64_t batch = 1;   // random inputs: the size of a symbolic leading dim (other symbolic dims get 1)
};

struct RunModelResult {
  Json report;       // everything measured (what --json prints)
  std::string text;  // the human-readable summary
  std::vector<std::string> warnings;
};
Expected<RunModelResult> runModel(const RunModelOptions& options);

}  // namespace zp::drivers
