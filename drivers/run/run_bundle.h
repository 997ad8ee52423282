// plan-run BUNDLE_DIR: runs a bundle's stitch section on the host through the
// runtime (a bundle of an operator-placement plan: run_placed.h; of a concurrent
// schedule: run_concurrent.h). For each task, the plan's selection for an SLO
// configuration (and, with --compare, other systems' choices) runs as a chain
// of sessions, one per position on the processor it chose, each with the kernel policy
// and threads of the processor the position is placed on and its weight cache
// from the bundle (mapped; a cache that fails its checks falls back to the raw
// ONNX weights and the runtime says so). Its outputs are checked against the
// same subgraphs run without caches; measured latency (median of warm runs of
// the chain) is reported against the plan's prediction, and top-1 accuracy on
// the task's dataset samples when the zoo (found through stitch.json) has one.
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "drivers/run/run_concurrent.h"
#include "drivers/run/run_placed.h"
#include "libplan/util/error.h"
#include "libplan/util/json.h"

namespace zp::drivers {

struct BundleRunParams {
  std::filesystem::path bundle;
  std::string slo;           // configuration id; empty: per task the first feasible one
  std::string task;          // empty: every task
  int repeat = 10;           // warm runs of the chain to time (after one untimed run)
  int samples = 0;           // dataset inputs to check and score (0: the task's whole dataset; 8 random without one)
  uint64_t seed = 0;         // random inputs when there is no dataset
  double tolerance = 1e-5;   // max |cached - reference| <= tolerance * max(1, max |reference|)
  std::filesystem::path trace;  // operator-placement and concurrent bundles: Perfetto trace of one run
  // The user's inputs, TASK -> FILE.npy (one input of the task's first subgraph's
  // shape): those tasks run on them instead of the dataset; with saveOutputs,
  // the plan's choice writes each output there as TASK.OUTPUT.npy.
  std::vector<std::pair<std::string, std::filesystem::path>> inputs;
  std::filesystem::path saveOutputs;
  // Systems (concurrent bundles: schedules) run after the plan's own, "all": every one the plan carries.
  std::vector<std::string> compare;
  // Concurrent bundles: rounds in which every schedule runs once.
  int rounds = 3;
  // Cold start first (plan-run BUNDLE --cold): each position's subgraph evicted from the
  // page cache with its cold cache, loaded following its cold section and run on the first
  // sample, one position after the other; then the run after it (second run). The
  // sessions then serve the checks and warm timing below (on their warm kernels).
  bool cold = false;
};

struct TaskRunReport {
  std::string system;              // the plan's chosen system, or one --compare named
  std::string task, slo, combination;
  bool feasible = false;           // false: no selection to run (reason in `skipped`)
  std::string skipped;
  std::vector<std::string> processors;  // per position
  std::string inputs;              // "dataset" | "random" | the --input file
  int samples = 0;
  int cacheHits = 0, cacheFallbacks = 0;
  double maxAbsDiff = 0, refScale = 0;
  bool match = false;
  double measuredMs = 0, predictedMs = 0;
  double accuracy = -1;            // measured top-1 on the samples; -1: no labels
  double plannedAccuracy = 0;
  // With `cold`: load + first run of every position, summed; the plan's predicted
  // cold latency summed the same way; the chain's next run; per position what the
  // cold run did (drivers/run/cold_run.h).
  double coldMs = 0, predictedColdMs = 0, secondRunMs = 0;
  Json coldPositions;
  std::string coldTable;
};

struct BundleRunResult {
  std::vector<TaskRunReport> tasks;
  std::vector<std::pair<std::string, std::string>> systems;  // run, the plan's first: name and description
  std::optional<PlacedRunReport> placed;  // the bundle of an operator-placement plan
  std::optional<ConcurrentRunReport> concurrent;  // the bundle of a concurrent plan
  std::vector<std::string> warnings;  // from the runtime (cache fallbacks) and the bundle
  std::vector<std::string> notes;     // e.g. why inputs are random
  std::vector<std::string> legend;    // what the table's columns mean for the plan's kind
  bool ok() const;                    // every run task (and the placed run) matched its reference
  Json json() const;
  std::string table() const;
};

Expected<BundleRunResult> runBundle(const BundleRunParams& params);

class Bundle;
// The run of an MTS plan's bundle (run_mts.cpp): a row per system and member task.
Expected<BundleRunResult> runMtsBundle(const BundleRunParams& params, Bundle& bundle);

}  // namespace zp::drivers
