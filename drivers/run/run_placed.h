// plan-run BUNDLE_DIR for a bundle of an operator-placement plan: the placed
// unit runs through the serving executor like any unit (drivers/run/unit_runs.h),
// each operator on its processor's pinned worker (runtime/serve/placed_executor.h:
// independent branches at the same time, tensors handed over in shared memory),
// each processor's session with its kernel policy, GEMM library, threads and the
// bundle's weight cache for that policy. Its outputs are checked against the
// whole model run on the plan's first processor alone; its measured latency
// (median of warm queries) is reported beside the plan's prediction, and so is
// each processor's alone (the plan's "<processor>-only" baselines).
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "libplan/artifacts/bundle_manifest.h"
#include "libplan/plan/plan.h"
#include "libplan/util/error.h"
#include "libplan/util/json.h"

namespace zp::drivers {

struct PlacedRunParams {
  std::filesystem::path bundle;
  int repeat = 10;           // timed warm runs (after `warmup` untimed ones); 0: no timing
  int warmup = 2;
  uint64_t seed = 0;         // of the random inputs (symbolic dims: 1)
  double tolerance = 1e-5;   // max |placed - single| <= tolerance * max(1, max |single|)
  std::filesystem::path trace;  // Perfetto trace of one profiled placed run (empty: none)
};

struct PlacedRunReport {
  std::string model;                    // in the bundle
  std::vector<std::string> processors;  // the plan's, in its order
  std::string reference;                // the processor the single-processor run used
  int nodes = 0, handoffs = 0;          // handoffs: steps reading another processor's output
  int cacheHits = 0, cacheFallbacks = 0;
  double maxAbsDiff = 0, refScale = 0;
  bool match = false;
  double predictedMs = 0;               // the plan's latency of the placement
  double measuredMs = 0, measuredP90Ms = 0;
  int runs = 0;
  struct Alone {
    std::string processor;
    double predictedMs = -1;            // the plan's "<processor>-only" baseline (-1: none)
    double measuredMs = 0;
  };
  std::vector<Alone> alone;
  std::vector<std::string> warnings;
  Json json() const;
  std::string table() const;
};

class Bundle;
// A bundle whose plan has an opplace section: its placed unit is read from it.
Expected<PlacedRunReport> runPlacedBundle(const PlacedRunParams& params, Bundle& bundle);

}  // namespace zp::drivers
