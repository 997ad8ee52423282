// Concurrent schedules of real models executed on this host (HaX-CoNN's
// schedules measured, not only simulated). The realistic zoo's dense ResNet,
// MobileNetV2 and ViT, profiled node by node on the zoo's two processors
// (cpu: core A, default kernels, oneDNN; npu: core B, sparse kernels, BLIS),
// grouped into layer groups (passes/grouping) with transitions at the hand-off
// cost measured between the two (passes/measure/placed_handoff.h); the contention between the two
// processors measured (every model and a triad pass beside a triad co-runner
// at three intensities, passes/measure/contention_probe.h) and fitted into
// surfaces (sim/concurrent/contention_fit.h); then for every pair and the
// triple: zooplan's schedule (the exact search, latency, contention-aware) and
// every baseline's, each simulated with and without the measured contention
// and executed (drivers/concurrent_flow/executed_schedule.h) in interleaved
// rounds; measured makespan = median of the rounds' medians.
#pragma once
#include <cstdint>
#include <string>

#include "libplan/util/json.h"

namespace zp::bench {

struct ExecutedOptions {
  int coreA = 0, coreB = 1;
  int warmup = 3, repeat = 15, rounds = 5;  // per schedule and round
  int profileRepeat = 20;
  int maxTransitions = 2;
  double timeLimitS = 5;
  uint64_t seed = 1;
  std::string traceDir;  // where trace_<scenario>.json (zooplan's schedule, measured) go; empty: none
  std::string workloadDir;    // write the scenarios' workload.json files (and their profile) here; empty: none
};

struct ExecutedResult {
  Json instances = Json::array();  // a row per (scenario, schedule)
  Json summary = Json::object();
};

// Prints a table per scenario; exits the process on errors (a bench).
ExecutedResult executedScenarios(const ExecutedOptions& options);

}  // namespace zp::bench
