// The executor: load(model, options) -> run(inputs) -> outputs.
//
// Load parses the model, folds constant subgraphs (Constant, weight
// DequantizeLinear, shape arithmetic on static shapes), folds BatchNormalization
// into the preceding Conv, fuses Relu/Clip into Conv/Gemm/MatMul, builds one op
// per remaining node with its kernel choice and transformed (or cached) weights,
// and plans activation memory: one arena, buffers reused by lifetime. Planning
// uses the static shapes of shape inference, or the sizes seen in the first run.
//
// With a weight cache (SessionOptions::cache) of version 2 or 3 written from the same
// model file (size and mtime), load builds the session from the cache's model
// skeleton without reading the ONNX file (no parse, check or shape inference of
// the full model, no checksums of raw weights): heavy nodes view their payloads in
// the mapped file, the kernel reads them ahead in execution order, and each
// payload's CRC-32C is checked right before its node first runs. A corrupt payload
// makes the session rebuild itself from the ONNX file (that node on its raw
// weights, with a warning) and restart the run. Otherwise load takes the full path
// and uses cache entries whose source checksums match.
#pragma once
#include <filesystem>
#include <functional>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "libplan/runtime/cold_pipeline.h"
#include "libplan/runtime/cold_schedule.h"
#include "libplan/runtime/kernel_policy.h"
#include "libplan/runtime/kernels/gemm.h"
#include "libplan/runtime/tensor.h"
#include "libplan/runtime/cache/weight_cache.h"
#include "libplan/util/error.h"

namespace zp::runtime {

struct SessionOptions {
  int threads = 1;
  KernelPolicy kernels;
  GemmLibrary gemm = GemmLibrary::OneDnn;  // BLIS for a cold start (see GemmLibrary)
  std::filesystem::path cache;          // weight cache to map (empty: none)
  bool computeSourceChecksums = false;  // needed to write a cache later (implied by `cache`)
  bool checkModel = true;               // onnx::checker on load
  bool foldBatchNorm = true;
  bool fuseActivations = true;         // and residual Adds into the Conv before them (graph::FuseOptions)
  // Pass values between pointwise and depthwise convs channel-blocked where both
  // kernels take it (kernels.h BlockedLayouts); warm sessions only. The same bits either way.
  bool channelBlocks = true;
  // Follow a cold-start plan (cold_schedule.h): `cache` must be a cache written for
  // it (Session::writeColdCache) from this model file. The session is built from
  // the cache alone; the first run is the pipelined cold run, and later runs switch
  // node by node to the warm kernels as their weights become ready.
  std::shared_ptr<const ColdSchedule> coldSchedule;
  // The caller vouches that `cache` was written from this model's content (a
  // bundle's pairing, checked by plan-emit): build from it alone although it names
  // no model file. Payload and model-file checksums are still checked.
  bool cacheIsForModel = false;
};

struct LoadStats {
  // Full path: parse + check + shape inference + initializers into tensors.
  // From the cache: map the cache file (header, table and skeleton checks) + parse the skeleton.
  double readMs = 0;
  double cacheReadMs = 0;  // map the cache file and verify the payloads used (full path); look up entries
  double foldMs = 0;       // constant folding (includes INT8 weight dequantization)
  double transformMs = 0;  // weight transforms of heavy nodes (BN fold, pack, Winograd, CSR)
  double planMs = 0;       // op construction rest + memory planning
  double totalMs = 0;
  // From the cache: CRC-32C of the payloads, checked node by node in the first run
  // (so inside that run's time, not load's).
  double verifyMs = 0;
  bool fromCache = false;  // built from the cache's model skeleton, without reading the ONNX file
  // The GEMM library's one-time start-up in this process (oneDNN generates its GEMM
  // kernels), run on a helper thread from the start of load; known after the first
  // run, 0 when an earlier session of the process already paid it.
  double gemmInitMs = 0;
  int cacheHits = 0;
  int cacheFallbacks = 0;
};

struct NodeInfo {
  std::string name, opType, kernel, transform;
  std::string activation;  // fused into the node (graph::kFusedActivation), "" if none
  double transformMs = 0;
  bool fromCache = false;
  size_t packedBytes = 0;
  double weightZeroFraction = 0;
  bool hasWeights = false;
  bool blockedInput = false, blockedOutput = false;  // channel-blocked values (SessionOptions::channelBlocks)
};

struct NodeTiming {
  std::string name, opType, kernel;
  double startMs = 0, durMs = 0;
};

// Called after every node; `outputs` are valid only during the call.
struct NodeEvent {
  int step;
  const NodeInfo& info;
  double durMs;
  const std::vector<const Tensor*>& outputs;
};

struct RunOptions {
  bool profile = false;                            // fill lastProfile()
  std::function<void(const NodeEvent&)> onNode;    // per-node hook (timing, activation sparsity)
};

struct IoInfo {
  std::string name;
  DType dtype = DType::F32;
  Shape shape;  // -1 for a dimension that is not fixed
};

using TensorMap = std::map<std::string, Tensor>;

// What a session following a cold schedule did: every task of the pipeline with
// who ran it and when, and the cold run's execution of each step; times in ms
// since the load began.
struct ColdRunReport {
  int cores = 1;
  bool pipelined = true;
  double setupMs = 0;                  // the pipeline started (load done)
  double runStartMs = 0, runEndMs = 0; // the cold run (0: not run yet)
  std::vector<ColdTask> tasks;
  std::vector<ColdTaskRecord> records; // one per task; warm tasks may still be running
  std::vector<std::pair<double, double>> executeMs;  // per step, in the cold run
  int steals = 0;
  int warmSwitched = 0;                // steps that run their warm kernel or library now
};

class Session {
 public:
  ~Session();
  static Expected<std::unique_ptr<Session>> load(const std::filesystem::path& model, const SessionOptions& options);
  // `label` names the model in errors (a path or a test name).
  static Expected<std::unique_ptr<Session>> fromModel(onnx::ModelProto model, const std::string& label,
                                                      const SessionOptions& options);

  Expected<TensorMap> run(const TensorMap& inputs, const RunOptions& options = {});

  const std::vector<IoInfo>& inputs() const { return inputs_; }
  const std::vector<IoInfo>& outputs() const { return outputs_; }
  const std::vector<NodeInfo>& nodes() const { return nodeInfos_; }  // one per executed node, in order
  const std::vector<NodeTiming>& lastProfile() const { return profile_; }
  const std::vector<std::string>& warnings() const { return warnings_; }
  const LoadStats& loadStats() const { return stats_; }
  const std::string& label() const { return label_; }

  size_t arenaBytes() const { return arenaBytes_; }
  size_t weightBytes() const;     // transformed weights + remaining constants
  size_t scratchBytes() const;
  bool memoryPlanned() const { return planned_; }

  void setThreads(int threads) { threads_ = std::max(1, threads); }
  int threads() const { return threads_; }

  // Writes the weights of every heavy node (for its chosen kernel) and the model
  // skeleton. With `identifyModelFile` the cache also records the size and mtime of
  // the file this session was loaded from, so that loading that same file later
  // builds the session from the cache alone. Without it the bytes depend only on
  // the model's content and the options (reproducible artifacts such as bundles),
  // and loads read the model and use the entries whose checksums match, silently.
  Status writeCache(const std::filesystem::path& path, bool identifyModelFile = false) const;

  // Writes the weight cache `model` loads from under `options`' kernel policy
  // (the weights are the same whatever the thread count): loaded with them,
  // its sources' checksums computed, then written as by writeCache (not
  // identifying the model file: a bundle's caches, reproducible).
  static Status writeModelCache(const std::filesystem::path& model, SessionOptions options,
                                const std::filesystem::path& path);

  // Writes the weight cache a cold schedule runs from: post-transformed payloads
  // only of the nodes it caches (cold kernels in execution order, then the warm
  // kernels' entries it reads for later runs), and a skeleton that points at the
  // model file's bytes for the weights it transforms at load. `options` gives the
  // threads and GEMM library to load with; its kernels and cache are ignored.
  static Status writeColdCache(const std::filesystem::path& model, const ColdSchedule& schedule,
                               const SessionOptions& options, const std::filesystem::path& path,
                               bool identifyModelFile);

  // Sessions following a cold schedule: what the pipeline did (nothing otherwise).
  std::optional<ColdRunReport> coldReport() const;
  // Blocks until every warm task has ended (tests, benchmarks): later runs then
  // use every warm kernel.
  void waitForWarmSwitch();

  struct Impl;          // session_impl.h
  struct WeightSource;  // where heavy weights come from: a cache, alone or checked, or the model (session_impl.h)
  class Builder;        // builds a session section by section (session_build.cpp)
  class Execution;      // how steps become ready to run: warm or cold, side by side (session_execution.h)
  class WarmExecution;
  class ColdExecution;
  friend class PlacedProgram;  // runs the steps of several sessions on their processors (placed_program.h)

 private:
  explicit Session(std::unique_ptr<Impl> impl);
  // `execution` null: warm.
  static Expected<std::unique_ptr<Session>> build(onnx::ModelProto model, const std::string& label,
                                                  const SessionOptions& options, WeightSource& weights,
                                                  std::unique_ptr<Execution> execution = nullptr);
  static Expected<std::unique_ptr<Session>> loadModelFile(const std::filesystem::path& path,
                                                          const SessionOptions& options, WeightSource& weights);
  static Expected<std::unique_ptr<Session>> loadCold(const std::filesystem::path& path, const SessionOptions& options);
  Expected<TensorMap> runOnce(const TensorMap& inputs, const RunOptions& options, std::string* corruptNode,
                              std::string* why);
  Status bindInputs(const TensorMap& inputs);
  Status verifyPayloads(size_t step, std::string* corruptNode, std::string* why);
  TensorMap takeOutputs(bool failed);
  Status rebuildFromModel();
  std::unique_ptr<Impl> impl_;
  std::filesystem::path modelPath_;    // empty for fromModel
  SessionOptions options_;
  ModelIdentity identity_;             // of modelPath_ when loaded
  std::map<std::string, std::string> corruptNodes_;  // cache entries found corrupt while running, why
  std::string label_;
  std::vector<IoInfo> inputs_, outputs_;
  std::vector<NodeInfo> nodeInfos_;
  std::vector<NodeTiming> profile_;
  std::vector<std::string> warnings_;
  LoadStats stats_;
  size_t arenaBytes_ = 0;
  bool planned_ = false;
  int threads_ = 1;
};

// The inputs a session of `model` takes (its graph inputs that no initializer
// feeds), read from the graph without building a session. `label` names the
// model in errors.
Expected<std::vector<IoInfo>> modelInputs(const onnx::ModelProto& model, const std::string& label);

// A random input for `info` with a fixed seed: floats uniform in [-1, 1),
// integers in [0, 10), booleans fair; dynamic dimensions become 1.
Tensor randomInput(const IoInfo& info, uint64_t seed);

}  // namespace zp::runtime
