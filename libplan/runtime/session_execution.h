// How a session's steps become ready to run: one of two execution strategies,
// chosen at load and side by side. The builder asks the strategy which steps it
// readies itself; the run loop asks it before each step.
//  - Warm (session.cpp): every op is built at load; a payload mapped from a
//    weight cache is checked right before its node first runs.
//  - Cold (session_cold.cpp): follows a cold schedule (cold_schedule.h): a
//    pipeline of reads, transforms and GEMM start-ups readies the steps while
//    the first run goes, each step waiting for its own tasks only; later runs
//    switch node by node to the warm kernels as their weights become ready.
// Part of Session's inside (session_impl.h).
#pragma once
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "libplan/runtime/kernels/gemm.h"
#include "libplan/runtime/ops/op.h"
#include "libplan/runtime/session.h"
#include "libplan/runtime/session_cold.h"
#include "libplan/util/stats.h"

namespace zp::runtime {

class Session::Execution {
 public:
  virtual ~Execution() = default;

  // --- building (Session::Builder) ---
  // Whether the initializers a skeleton points at in the model file are read
  // at load (else by the strategy, when a step needs them).
  virtual bool readsModelFileAtLoad() const { return true; }
  // Whether products on oneDNN may reorder their weights for it at build.
  virtual bool reorderForOneDnn() const { return true; }
  // Whether ops may pass values channel-blocked: not where ops are swapped after build.
  virtual bool blocksChannels() const { return true; }
  // A build context for an op the strategy builds later: kernel policy, from
  // the cache alone or not, where its warnings go.
  using ContextFor = std::function<BuildContext(const KernelPolicy& policy, bool fromCache,
                                                std::vector<std::string>& warnings)>;
  struct StepSetup {
    std::unique_ptr<Op> deferredOp;    // stands in until the strategy has built the real op; null: build it now
    std::optional<GemmLibrary> gemm;   // the library the step's products go through (none: the session's)
  };
  // Called once per step in order, after sizeSteps(n).
  virtual void sizeSteps(size_t) {}
  virtual Expected<StepSetup> setupStep(size_t, const onnx::NodeProto&, const ContextFor&) { return StepSetup{}; }

  // --- running (Session::runOnce) ---
  virtual Status beginRun(Session& s, std::string* corruptNode, std::string* why) = 0;
  // Before step i runs: its weights ready and checked, its op installed.
  virtual Status beforeStep(Session& s, size_t i, std::string* corruptNode, std::string* why) = 0;
  virtual bool timesSteps() const { return false; }  // stepRan wants each step's start
  virtual void stepRan(size_t, SteadyClock::time_point) {}
  virtual void endRun() {}  // the run succeeded

  // --- reports and shutdown ---
  virtual std::optional<ColdRunReport> coldReport() const { return std::nullopt; }
  virtual void waitForWarmSwitch() {}
  virtual void stop() {}  // threads of its own end before the session's members go
};

// Every op built at load.
class Session::WarmExecution final : public Session::Execution {
 public:
  Status beginRun(Session& s, std::string* corruptNode, std::string* why) override;
  Status beforeStep(Session& s, size_t i, std::string* corruptNode, std::string* why) override;
};

// Follows a cold schedule (see above); owns the pipeline and its state.
class Session::ColdExecution final : public Session::Execution {
 public:
  explicit ColdExecution(const ColdSchedule& schedule);
  ~ColdExecution() override;

  bool readsModelFileAtLoad() const override { return false; }
  bool reorderForOneDnn() const override { return false; }
  bool blocksChannels() const override { return false; }  // its warm switch swaps ops
  void sizeSteps(size_t n) override;
  Expected<StepSetup> setupStep(size_t index, const onnx::NodeProto& n, const ContextFor& context) override;
  // Starts the pipeline once the session is built; `t0`: when the load began.
  Status start(Session& s, SteadyClock::time_point t0);

  Status beginRun(Session& s, std::string* corruptNode, std::string* why) override;
  Status beforeStep(Session& s, size_t i, std::string* corruptNode, std::string* why) override;
  bool timesSteps() const override { return inColdRun_; }
  void stepRan(size_t i, SteadyClock::time_point start) override;
  void endRun() override;

  std::optional<ColdRunReport> coldReport() const override;
  void waitForWarmSwitch() override;
  void stop() override;

 private:
  Status runTask(int task);
  void requestReadsAhead(size_t fromStep);
  Status beforeColdStep(Session& s, size_t i, std::string* corruptNode, std::string* why);
  void switchToWarm(Session& s, size_t i);

  ColdState c_;
  Session::Impl* impl_ = nullptr;  // the session's inside the pipeline's tasks work on (set by start)
  size_t arenaBytes_ = 0;
  bool inColdRun_ = false;
};

}  // namespace zp::runtime
