// A cold-start plan as the runtime follows it (NNV12 §3): per executed node the
// kernel of the cold run and the GEMM library of its products, whether its
// weights are read post-transformed from the weight cache or read from the model
// file and transformed at load (and on which core), and the kernel, library and
// weights later runs switch to (§3.5). The drivers make it from a plan's cold
// section (libplan/plan/cold_plan.h); the session runs it (Session::load with
// SessionOptions::coldSchedule, the pipeline in cold_pipeline.h).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "libplan/runtime/kernels/gemm.h"

namespace zp::runtime {

enum class ColdWeights { None, Cache, Transform };
const char* coldWeightsName(ColdWeights w);  // "none", "cache", "transform"

struct ColdStep {
  std::string node;
  std::string kernel;                // empty: no heavy weights
  std::optional<GemmLibrary> gemm;   // the library its products go through (none: the kernel has none;
                                     // products of activations then run on BLIS, which starts at once)
  ColdWeights weights = ColdWeights::None;
  int transformCore = -1;            // Transform: the core that runs it
  // Later runs (§3.5). A kernel equal to `kernel` keeps the weights; a library
  // other than `gemm` is switched to once it has started.
  std::string warmKernel;
  std::optional<GemmLibrary> warmGemm;
  ColdWeights warmWeights = ColdWeights::None;  // of the warm kernel when it differs from `kernel`
  int warmCore = -1;
  bool switchesKernel() const { return !kernel.empty() && !warmKernel.empty() && warmKernel != kernel; }
  bool operator==(const ColdStep&) const = default;
};

struct ColdSchedule {
  int cores = 1;          // core 0 executes; the others are worker threads
  bool pipelined = true;  // false: every read and transform, then the execution (no helper threads)
  std::vector<GemmLibrary> startups;  // started by the cold run, in order, on core cores - 1 at setup
  std::vector<ColdStep> steps;        // every executed node, in execution order
  double workerDelayMs = 0;           // see ColdPipelineParams::workerDelayMs (0 in normal runs)
  bool operator==(const ColdSchedule&) const = default;
};

}  // namespace zp::runtime
