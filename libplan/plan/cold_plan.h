// The cold-start section of a plan (NNV12 §3.2-3.5): for one model, the kernel
// each node runs in the cold inference, whether its post-transformed weights are
// read from a cache or transformed at load, the core the transform runs on, the
// predicted pipeline of read / transform / execute, the warm kernel it switches
// to afterwards, and the predicted cold latency of each knob combination.
// Made by passes/coldstart; plan.json / plan.pb hold it.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "libplan/plan/unit.h"

namespace zp::plan {

struct ColdNodePlan {
  int step = 0;
  std::string node;
  std::string kernel;        // cold kernel; empty: a node without heavy weights
  std::string gemm;          // GEMM library of the cold kernel's products ("onednn", "blis"); empty: none
  std::string weights;       // "cache" | "transform" | "none"
  int transformCore = -1;    // core of the transform (-1: none)
  double readStartMs = 0, readEndMs = 0;
  double transformStartMs = 0, transformEndMs = 0;
  double execStartMs = 0, execEndMs = 0;
  // Warm switching (§3.5): the kernel later runs use; equal to `kernel` when there is no switch.
  std::string warmKernel;
  std::string warmGemm;      // GEMM library later runs use (may differ from `gemm` with the same kernel)
  std::string warmWeights;   // of the warm kernel when it differs: "cache" | "transform"; else "none"
  int warmCore = -1;         // core preparing the warm kernel's weights (-1: none or read only)
  double warmReadyMs = 0;    // when the warm kernel's weights are ready (0: no switch)
  bool operator==(const ColdNodePlan&) const = default;
};

// One knob combination's predicted cold latency (the K/C/P ablation).
struct ColdConfiguration {
  std::string name;               // "none", "K", "C", "P", "K+C", "K+P", "C+P", "K+C+P"
  bool kernelSelection = false, caching = false, pipelining = false;
  std::string gemm;               // GEMM libraries its best plan starts, '+'-joined
  double predictedMs = 0;
  std::string status;             // "optimal" (proven within the cost model) | "heuristic"
  bool operator==(const ColdConfiguration&) const = default;
};

struct ColdPlan {
  UnitId unit;  // the unit it cold-starts (its profile key names it in cold_profile.csv)
  std::string configuration = "K+C+P";  // the knob combination of the plan's nodes (a name of `configurations`)
  bool pipelined = true;          // P: read, transform and execute overlap; else one after another
  std::string gemm;               // the GEMM libraries the cold run starts, '+'-joined in start order
  bool gemmStartup = false;       // some cold kernel uses one: its start-up is in the schedule
  int cores = 1;                  // cores the schedule uses (core 0 executes)
  double storageMBps = 0;         // read bandwidth of the cost model (calibrated when calibrationRuns > 0)
  // Measured cold runs the cost model was calibrated against (0: the profile's costs
  // as measured), and what was fitted to them: each cold first execution of the
  // profile times executeFactor, each transform transformOverheadMs plus
  // transformFactor times the profiled, each read readLatencyMs plus bytes / storageMBps,
  // each GEMM library start-up startupFactor times the profiled.
  int calibrationRuns = 0;
  double executeFactor = 1;
  double startupFactor = 1;
  double setupFactor = 1;         // the load before the first read: setupMs is the profiled times this
  // First executions of these kernels ("kernel" or "kernel/gemm") scaled by their own
  // factor instead of executeFactor.
  std::map<std::string, double> kernelExecuteFactors;
  double transformFactor = 1;
  double transformOverheadMs = 0;
  double readLatencyMs = 0;
  double setupMs = 0;
  double predictedColdMs = 0;     // end of the last execute
  double predictedWarmReadyMs = 0;  // every warm kernel's weights ready (the cold latency when none switches)
  double predictedWarmMs = 0;     // one warm run with the warm kernels (sum of warm execute times)
  std::string solver;             // "pareto-dp" | "nnv12-heuristic" | "serial" (not pipelined)
  std::string status;             // "optimal" (proven within the cost model) | "heuristic"
  std::string searchSpace;        // what "optimal" is proven over
  double lowerBoundMs = 0;        // proven bound on the optimum
  uint64_t states = 0;            // search effort
  std::vector<ColdNodePlan> nodes;
  std::vector<ColdConfiguration> configurations;
  bool operator==(const ColdPlan&) const = default;
};

}  // namespace zp::plan
