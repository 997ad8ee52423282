// The inside of a Session, shared by session.cpp (load, run), session_build.cpp
// (building a session section by section) and session_cache.cpp (writing a cache).
#pragma once
#include <atomic>
#include <deque>
#include <filesystem>
#include <mutex>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "libplan/graph/rewrite/fuse.h"
#include "libplan/runtime/cache/weight_cache.h"
#include "libplan/runtime/memory_plan.h"
#include "libplan/runtime/ops/op.h"
#include "libplan/runtime/session.h"
#include "libplan/runtime/session_execution.h"
#include "libplan/runtime/values.h"

namespace zp::runtime {

// A GEMM library starts up on the first product of a process: oneDNN generates
// its GEMM kernels (JIT), which takes tens of milliseconds; BLIS sets up its
// contexts. The first session of a process that uses a library starts it on a
// helper thread as load begins, so it overlaps reading the model or the cache; a
// product that needs it sooner waits for it (each library initializes once).
struct GemmWarmup {
  std::thread thread;
  std::atomic<bool> done{false};
  double ms = 0;  // how long the start-up took (valid once done)
  ~GemmWarmup() {
    if (thread.joinable()) thread.join();
  }
};

struct Step {
  std::unique_ptr<Op> op;
  const onnx::NodeProto* node = nullptr;  // in Impl::program
  int source = -1;                        // the model's node it stands for (a fused group's anchor)
  GemmLibrary gemm = GemmLibrary::OneDnn; // the library its products go through
};

// Whether this process may start `gemm` now: true once, for the first caller (a
// session's helper thread, or a cold start's task that starts it on its core),
// which calls markGemmReady when the start-up has ended. Others wait for that with
// awaitGemmReady (a product meanwhile would generate the kernels a second time).
bool claimGemmStartup(GemmLibrary gemm);
void markGemmReady(GemmLibrary gemm);
void awaitGemmReady(GemmLibrary gemm);
bool gemmReady(GemmLibrary gemm);

// An initializer a weight cache's skeleton points at the model file: read (and
// checked) into its own aligned buffer before a transform uses it.
struct ModelRead {
  int value = -1;
  ModelFileRef where;
  std::mutex mu;
  bool read = false;
};

NodeInfo nodeInfoOf(const onnx::NodeProto& n, const Op& op);

// A cold schedule names the session's steps in order, with the kernels they were built with.
Status checkScheduleMatches(const ColdSchedule& schedule, const std::vector<Step>& steps,
                            const std::vector<NodeInfo>& infos, const std::string& label);

struct Session::Impl {
  onnx::ModelProto model;          // keeps alive the initializers the constants view
  graph::FusedNodes program;       // the nodes that run: those constant folding left, fused
  ValueTable values;
  std::vector<int> inputIds, outputIds;
  std::vector<Step> steps;
  std::vector<StepValues> flow;    // per step: the values it reads and writes
  Liveness liveness;
  std::vector<size_t> staticBytes, seenBytes;
  ArenaLayout layout;
  std::shared_ptr<void> arena;
  bool planDirty = false;          // a run saw a planned value larger than its slot (or none planned)
  Scratch scratch;
  std::unique_ptr<WeightCache> cache;
  std::vector<char> pendingVerify; // per step: payloads not yet checked (sessions from the cache)
  size_t pending = 0;
  std::shared_ptr<GemmWarmup> warmup;  // held by the session that started it
  std::filesystem::path modelPath;     // where model-file references point
  std::deque<ModelRead> modelReads;
  // Warm or cold (session_execution.h); last: a cold one's threads stop first.
  std::unique_ptr<Session::Execution> execution;

  ValueKinds valueKinds() const;
  // Reads modelReads[i] from the model file into its value (once; its checksum
  // checked); `why` says what did not match.
  Status readModelRef(size_t i, std::string* why);
  // Lays out the arena for these value sizes and allocates it; returns its size.
  size_t plan(const std::vector<size_t>& bytes);
};

// Where a session's heavy weights come from: a weight cache (its entries checked
// against the model's weights, or alone with its skeleton) or the model.
struct Session::WeightSource {
  std::unique_ptr<WeightCache> cache;
  std::string cacheRejected;   // the cache file was rejected, why
  double cacheOpenMs = 0;
  bool fromCacheOnly = false;  // building from the cache's model skeleton
  const std::map<std::string, std::string>* corruptNodes = nullptr;
  std::filesystem::path modelPath;  // the model file the skeleton's references point at
};

// The inputs of one run against the model's: every input given, with its dtype
// and a shape that fits; no input the model does not have.
Status checkRunInputs(const std::string& label, const std::vector<IoInfo>& expected, const TensorMap& inputs);

}  // namespace zp::runtime
