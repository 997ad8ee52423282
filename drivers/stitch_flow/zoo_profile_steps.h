// The sections of a zoo-profile run and the state they share (internal to
// drivers/stitch_flow). runZooProfile (zoo_profile.cpp) reads the sources and
// opens the output; the steps then run in this order:
//   1. host latency per subgraph and configuration, hand-over costs  (zoo_profile_latency.cpp)
//   2. imported device profiles merged; profile.csv checkpoint        (zoo_profile.cpp)
//   3. per-node profiles of the variant models, node_profile.csv      (zoo_profile_node_profile.cpp)
//   4. per task: accuracy, the accuracy estimator                     (zoo_profile_accuracy.cpp)
//      and the calibrated, validated latency model                    (zoo_profile_latency_model.cpp)
//   5. profiling cost (SparseLoom Table 1, Eq. 6), report.json        (zoo_profile.cpp)
#pragma once
#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "drivers/stitch_flow/zoo_profile.h"
#include "libplan/artifacts/accuracy_csv.h"
#include "libplan/artifacts/node_profile_csv.h"
#include "libplan/estimate/latency_model.h"
#include "libplan/graph/model_io.h"
#include "libplan/profile/profile_db.h"
#include "libplan/util/json.h"
#include "libplan/util/output_dir.h"
#include "libplan/util/stats.h"
#include "libplan/zoo/mts_manifest.h"
#include "libplan/zoo/stitch_manifest.h"
#include "libplan/zoo/zoo.h"
#include "passes/measure/accuracy_eval.h"
#include "passes/measure/host_measure.h"
#include "passes/stitch/stitch.h"

namespace zp::drivers::zoo_profile {

// What zoo-profile reads before it opens its output.
struct Sources {
  std::filesystem::path stitchDir;
  zoo::StitchManifest manifest;
  std::string stitchBytes;
  zoo::Zoo zoo;
  // The zoo's processors with --processor and --import applied: each measured
  // on the host under its engine, or its rows imported (importSpecs, by name).
  std::vector<Processor> processors;
  std::map<std::string, ImportSpec> importSpecs;
  Json imports;                             // report.json's "imports": what each imported profile matched
  std::vector<profile::ProfileDb> imported; // their rows, in processor order
  // The weight-shared groups zoo-stitch stitched (groups/mts.json), when the zoo declares any.
  std::optional<zoo::MtsManifest> groups;
  std::string groupsBytes;
};

// An earlier run's rows that this run may reuse (same inputs, its profile.csv
// the one its report recorded).
struct Reusable {
  profile::ProfileDb db;
  Json report;
};

// Counts for report.json's profiling cost.
struct Counters {
  size_t reused = 0, measuredSubgraphs = 0, timedRuns = 0;
  size_t accuracySubgraphRuns = 0, accuracyModelRuns = 0, measuredCombinations = 0;
  size_t nodeProfileRows = 0;
  double estimatorSeconds = 0, nodeProfileSeconds = 0;
};

// Measurements other runs made (zoo-profile --shard), handed to the run that
// merges them: each measuring step takes its value from here when it is there
// and counts it as if it had measured it, so the merged profile is the one a
// single run writes.
struct ShardMeasurements {
  std::map<std::string, double> overheadMs;  // host configuration label
  std::map<std::pair<std::string, std::string>, measure::LatencyMeasurement> subgraphs;  // (content hash, label)
  std::map<std::pair<std::string, int>, double> transitionMs;  // (task, boundary)
  std::map<std::tuple<std::string, std::string, std::string>, std::vector<artifacts::NodeProfileRow>> nodes;  // (task, variant, label)
  std::map<std::pair<std::string, std::string>, std::pair<double, std::vector<uint8_t>>> originals;  // (task, variant)
  std::map<std::pair<std::string, std::string>, double> combinations;  // (task, combination id)
  std::map<std::tuple<std::string, std::string, std::string>, double> wholeMs;  // (task, combination id, processor)
};

// The value under `key`, or null.
template <typename Map, typename Key>
const typename Map::mapped_type* findIn(const Map& m, const Key& key) {
  auto it = m.find(key);
  return it == m.end() ? nullptr : &it->second;
}

// The state the steps share.
struct Run {
  const Sources& src;
  const ProfileParams& params;
  measure::MeasureParams mp;
  std::vector<Reusable> previous;             // earlier runs with the same inputs (not with --force)
  profile::ProfileDb db;                      // rows measured and imported so far
  std::map<std::string, double> overheadMs;   // host config label -> one-node probe, ms
  Counters counts;
  int64_t batch = 1;                          // latency is measured at this batch (--batch, else stitch.json's)
  const ShardMeasurements* given = nullptr;   // --merge: what the shards measured
  bool stopRequested() const { return params.stop && params.stop->load(); }
  void countTimedRuns() { counts.timedRuns += static_cast<size_t>(params.repeat + params.warmup + 1); }
};

// The sources of a run, read and checked before any output is opened, and
// the paths the output must keep clear of.
struct SourcesRead {
  Sources sources;
  std::vector<GuardedPath> inputs;
};
Expected<SourcesRead> readSources(const std::filesystem::path& stitchDir, const ProfileParams& params);
// What a run's output depends on (report.json's "inputs"): an earlier output
// with the same inputs may give its rows, and shards merge only with them.
Expected<Json> runInputs(const Sources& src, const ProfileParams& params);
// The batch latency is measured at: --batch, else the one zoo-stitch bound.
int64_t measuredBatch(const Sources& src, const ProfileParams& params);

// What zoo-profile --merge hands the run: the shards' measurements, the inputs
// they were made from (the run refuses other ones), a label for messages and
// the shard directories (inputs the output must keep clear of).
struct Given {
  ShardMeasurements measurements;
  Json inputs;
  std::string label;
  std::vector<GuardedPath> guarded;
};
// runZooProfile, with the measurements `given` (may be null) taken, not made.
Expected<ProfileResult> runProfile(const std::filesystem::path& stitchDir, const std::filesystem::path& outDir,
                                   const ProfileParams& params, const Given* given);
// The first JSON path at which `a` and `b` differ ("$.processors[1].config"), for messages.
std::string firstDifference(const Json& a, const Json& b, const std::string& path = "$");

// The shape an input of a subgraph or stitched variant runs at: a symbolic
// leading dim takes `batch`, another symbolic dim the value stitch.json's
// signature `sig` gives it (zoo-stitch bound it).
runtime::Shape runShape(const runtime::IoInfo& io, const zoo::TensorSig* sig, int64_t batch);
// Seeded random inputs of `session` at those shapes; `sigs` are the
// signatures of its inputs (matched by name, else by order).
runtime::TensorMap randomInputsAt(const runtime::Session& session, const std::vector<zoo::TensorSig>& sigs,
                                  int64_t batch, uint64_t seed);
// Whether subgraph `sg`'s file takes its first input at any batch.
Expected<bool> batchSymbolic(const Run& run, const zoo::SubgraphInfo& sg);
// Bytes of the boundary tensor after position `pos` at this run's batch
// (stitch.json's signature is at the batch zoo-stitch bound).
Expected<int64_t> boundaryBytes(const Run& run, const zoo::TaskStitch& task, int pos);
// The shape of one dataset sample of `task` (its first input at batch 1 when
// the batch is symbolic; as stitch.json gives it otherwise).
Expected<runtime::Shape> sampleShape(const Run& run, const zoo::TaskStitch& task);

// How the accuracy and latency-model steps load subgraph models: unchecked (zoo-stitch
// checked them), shapes inferred as Session::load infers them for the subgraph
// latencies, so a stitched variant runs with the static shapes its parts ran with.
inline constexpr graph::LoadOptions kSubgraphLoad{false, true};
// The task's subgraph models from the stitch directory, each file once.
Expected<stitch::SubgraphModels> readSubgraphModels(const Run& run, const zoo::TaskStitch& task,
                                                    const graph::LoadOptions& options);

Status resolveProcessors(Sources& src, const ProfileParams& params);
// The processor's rows from its imported profile; `imports` gets one entry for it.
Expected<profile::ProfileDb> importProcessor(const Processor& proc, const ImportSpec& spec, const zoo::Zoo& zoo,
                                             const zoo::StitchManifest& manifest, const std::filesystem::path& stitchDir,
                                             Json& imports);

// Step 1: every subgraph under every host configuration (rows an earlier run
// measured from the same inputs are reused) and the hand-over between every
// two processors. Returns whether the run was stopped on the way.
Expected<bool> measureHostLatency(Run& run);

// One unit of step 1's work each (what a shard measures, zoo_profile_shard.cpp):
// a host configuration's one-node probe; a subgraph under a configuration, on
// `processor`'s cores; the hand-over of the boundary tensor after position `boundary`.
Expected<double> measureOverhead(const Run& run, const Processor& config);
Expected<measure::LatencyMeasurement> measureSubgraphLatency(const Run& run, const zoo::SubgraphInfo& sg,
                                                             const Processor& config,
                                                             const std::string& processor);
Expected<double> measureTransitionMs(const Run& run, const zoo::TaskStitch& task, int boundary);

// Step 3: per executed node of every variant model of the zoo, under every host
// processor (one per policy and thread count), on seeded random inputs at the
// measured batch; none when there is no host processor.
Expected<std::vector<artifacts::NodeProfileRow>> measureNodeProfiles(const Run& run);
// The host processors' configurations, one per (policy, threads): node_profile.csv's key.
std::vector<Processor> nodeProfileConfigs(const Run& run);
// One unit of step 3: variant `v`'s model under one of those configurations.
Expected<std::vector<artifacts::NodeProfileRow>> profileVariantNodes(const Run& run, const zoo::TaskStitch& task,
                                                                      const zoo::VariantInfo& v,
                                                                      const Processor& config);

// Step 4, accuracy: the original variants' accuracy, the measured stitched
// variants, the training sample and the estimator's predictions of one task.
struct TaskAccuracy {
  std::vector<size_t> valid;    // indices into task.combinations
  std::vector<size_t> uniform;  // indices into `valid`: the original variants
  std::map<std::string, double> originalAccuracy;
  std::map<size_t, double> measured;  // combination index -> measured accuracy
  std::optional<measure::Dataset> data;
  stitch::SubgraphModels subgraphs;  // with a dataset: the models the accuracy is measured on (and the
                                     // latency-model step stitches)
  std::map<std::string, std::vector<uint8_t>> correctness;  // per original variant, per test sample
  bool exhaustive = false;
  std::vector<size_t> trainRows;
  size_t firstRoundRows = 0;
  std::vector<double> predicted;         // per combination: what accuracy.csv gives plan-solve (composed where composed)
  std::vector<double> featurePredicted;  // per combination: SparseLoom's feature-based estimator
  std::map<size_t, double> composed;     // combination index -> accuracy composed from contested samples
  bool composedAsFeature = false;        // contested: the composed accuracy fed the feature estimator
  size_t contestedRuns = 0;              // contested: subgraph runs on the contested samples
};
// The task's valid combinations and originals, and with a dataset the samples
// and the subgraph models the accuracy is measured on; nothing measured.
Status prepareTaskAccuracy(const Run& run, const zoo::TaskStitch& task, TaskAccuracy& acc);
// Measuring every combination is affordable when the subgraph runs of the
// depth-first walk stay under the limit (`acc` prepared).
bool affordsExhaustive(const zoo::TaskStitch& task, const TaskAccuracy& acc, size_t limit);
// How many combinations train the estimator, and the first half of them (drawn
// at random, originals always in): combination indices.
size_t trainingCount(const Run& run, const TaskAccuracy& acc);
std::vector<size_t> firstRoundRows(const Run& run, const TaskAccuracy& acc);
// Units of step 4's accuracy work: an original variant's accuracy and
// per-sample correctness; the accuracy of stitched combinations (indices into
// task.combinations), subgraph by subgraph.
Expected<std::pair<double, std::vector<uint8_t>>> measureVariantAccuracy(const Run& run, const TaskAccuracy& acc,
                                                                         const zoo::VariantSpec& v);
Expected<std::vector<double>> measureCombinationAccuracy(const Run& run, const zoo::TaskStitch& task,
                                                         const TaskAccuracy& acc, const std::vector<size_t>& combos,
                                                         measure::EvalStats* stats);
Expected<TaskAccuracy> profileTaskAccuracy(Run& run, const zoo::TaskStitch& task, Json& taskReport);
// accuracy.csv's rows of the task.
std::vector<artifacts::AccuracyCsvRow> accuracyRows(const zoo::TaskStitch& task, const TaskAccuracy& acc);

// Stitched variants built once each (from the subgraph models the accuracy
// step read, else read here the same way) and run whole.
class StitchedModels {
 public:
  StitchedModels(const Run& run, const zoo::TaskStitch& task, const TaskAccuracy& acc)
      : run_(run), task_(task), acc_(acc) {}
  Expected<const onnx::ModelProto*> get(size_t validIndex);

 private:
  const Run& run_;
  const zoo::TaskStitch& task_;
  const TaskAccuracy& acc_;
  const stitch::SubgraphModels* subgraphs_ = nullptr;  // acc_.subgraphs or read_
  stitch::SubgraphModels read_;
  std::map<size_t, onnx::ModelProto> models_;  // valid index -> materialized model
};
// A unit of step 4's latency work: the warm median of the valid combination
// `validIndex` run whole on processor `p`, on its own cores as its subgraphs
// were measured (the calibration of the overhead compares the two).
Expected<double> measureWholeMs(const Run& run, StitchedModels& models, const zoo::TaskStitch& task,
                                const TaskAccuracy& acc, size_t validIndex, const Processor& p);
// The stitched variants (valid indices, originals excluded) measured whole to score the latency model.
std::vector<size_t> validationSample(const Run& run, const TaskAccuracy& acc);

// Step 4, latency: the task's latency model from the profile rows with the
// per-run overhead calibrated on the originals, scored against stitched
// variants measured end to end. `taskReport` gets "placements",
// "lookup_rows_without_profile" and "latency_estimator".
Expected<estimate::TaskLatencyModel> calibrateTaskLatency(Run& run, const zoo::TaskStitch& task,
                                                          const TaskAccuracy& acc, Json& taskReport);

}  // namespace zp::drivers::zoo_profile
