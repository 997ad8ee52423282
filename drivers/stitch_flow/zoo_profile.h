// zoo-profile's driver (the stitch flow's second tool): measure every subgraph
// on the host processors, import device profiles for the others, measure
// accuracy, train the estimators and predict every valid stitched variant
// (SparseLoom §3.2), calibrate the latency model, and account for the
// profiling cost against exhaustive profiling (SparseLoom Table 1, Eq. 6).
// The steps live in zoo_profile_*.cpp, one per section of the run.
#pragma once
#include <atomic>
#include <filesystem>
#include <string>
#include <vector>

#include "libplan/estimate/accuracy_estimator.h"
#include "libplan/util/error.h"
#include "libplan/util/json.h"

namespace zp::drivers {

// --import NAME=FORMAT:FILE[@TASK/VARIANT]: the processor NAME's rows come from
// a profiler output of one original variant (for csv: the rows say which).
struct ImportSpec {
  std::string processor, format, file, layerInfo, task, variant;
};
Expected<ImportSpec> parseImportSpec(const std::string& arg);

// --processor NAME=host[:POLICY[@THREADS]]: measure NAME on the host.
struct HostOverride {
  std::string processor, policy = "default";
  int threads = 1;
};
Expected<HostOverride> parseHostOverride(const std::string& arg);

struct ProfileParams {
  int repeat = 20;
  int warmup = 3;
  int jobs = 1;                       // threads for accuracy evaluation (latency is measured alone)
  std::vector<HostOverride> hostOverrides;
  std::vector<ImportSpec> imports;
  double trainingFraction = 0.15;     // of each task's valid stitched variants, originals included
  size_t exhaustiveLimit = 4'000'000; // measure every stitched variant's accuracy when the subgraph runs stay below this
  size_t latencyValidation = 24;      // stitched variants per task measured end to end to score the latency estimator
  size_t calibrationSamples = 16;     // inputs for the accuracy estimator's stitching signals
  // What accuracy.csv predicts for stitched variants: "contested" (tasks with a
  // dataset: composed from the samples the sources disagree on,
  // estimate/contested_accuracy.h, and fed to the feature estimator when the
  // training sample holds stitched variants) or "features" (SparseLoom's
  // XGBoost estimator alone; fewer subgraph runs).
  std::string accuracyEstimator = "contested";
  double auditFraction = 0.03;        // contested: share of the samples every source gets right also run
  // Contested: then measure, on every sample, the variants predicted in the top
  // `activeTop` that are not measured yet, round after round until the
  // predicted top is all measured or the accuracy work (contested runs, the
  // training sample, these) would pass `accuracyBudget` of the exhaustive runs.
  size_t activeTop = 10;
  double accuracyBudget = 0.15;
  uint64_t seed = 0;
  int64_t batch = 0;                  // latency measured at this batch; 0: the one stitch.json records
  bool force = false;                 // re-measure even when inputs are unchanged
  bool coldProfile = false;           // also measure cold_profile.csv for every subgraph (before anything else:
                                      // GEMM start-up is timed once per process)
  int coldWarmRepeat = 3;             // warm runs per kernel policy in the cold profile
  estimate::XgbParams xgb;
  std::string tool = "zoo-profile";
  const std::atomic<bool>* stop = nullptr;  // set by the caller (Ctrl-C): stop, keep measured rows for the next run
};

// The parameters a shard records and its merge runs with (every ProfileParams
// field that changes what is measured or computed), as JSON and back; the
// reader checks each value as the options are checked.
Json profileParamsJson(const ProfileParams& params);
Expected<ProfileParams> profileParamsFromJson(const Json& j, const std::string& label);
std::string formatHostOverride(const HostOverride& o);
std::string formatImportSpec(const ImportSpec& s);

struct ProfileResult {
  Json report;           // what report.json holds
  std::string summary;   // a short table for the terminal
  bool interrupted = false;
};

// STITCH_DIR -> PROFILE_DIR/{profile.csv, node_profile.csv, accuracy.csv, latency_model.json,
// report.json}. PROFILE_DIR is staged and
// replaced as a whole (OutputDir: only an earlier zoo-profile output is
// replaced); report.json records the hashes of the files beside it. Rows an
// earlier run measured from the same inputs are reused, from the output being
// replaced and from interrupted runs: a stopped run keeps its staged tree
// beside PROFILE_DIR (result.interrupted) and leaves PROFILE_DIR as it was.
Expected<ProfileResult> runZooProfile(const std::filesystem::path& stitchDir, const std::filesystem::path& outDir,
                                      const ProfileParams& params);

// --shard K/N: shard K (from 0) of N.
struct ShardSpec {
  int index = 0, count = 1;
};
Expected<ShardSpec> parseShardSpec(const std::string& arg);

// STITCH_DIR -> SHARD_DIR/shard.json (artifacts/profile_shard.h): the
// measurements of shard K of N of the run runZooProfile would make with these
// parameters (zoo_profile_shard.cpp says which). SHARD_DIR is a guarded output
// like PROFILE_DIR. Returns a line for the terminal.
Expected<std::string> runZooProfileShard(const std::filesystem::path& stitchDir, const std::filesystem::path& outDir,
                                         const ProfileParams& params, ShardSpec shard);

// SHARD_DIR... -> PROFILE_DIR: the shards of one run (all N of them, of the
// same stitch directory, inputs and parameters, else an error naming two of
// the files) merged into the directory a single run writes — the run is made
// again with the shards' measurements instead of measuring, so every file is
// the single run's but for measured times. Parameters come from the shards;
// `params` gives only jobs, the tool's name and the stop flag.
Expected<ProfileResult> mergeZooProfileShards(const std::vector<std::filesystem::path>& shardDirs,
                                              const std::filesystem::path& outDir, const ProfileParams& params);

}  // namespace zp::drivers
