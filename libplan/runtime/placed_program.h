// One model whose steps are placed on several processors (operator placement):
// one session per processor (the model loaded with that processor's kernel
// policy, GEMM library and threads), each step run by the op of the session of
// the processor it is placed on.
//
// A run has three parts so that the caller owns the threads (and their pinning):
// start(inputs), then runProcessor(p) once for every processor, all at the same
// time on their own threads, then finish() once they have all returned. Each
// processor runs its steps in the model's step order; a step waits only for the
// steps on other processors whose outputs it reads. Tensors are handed over in
// shared memory: the consumer reads the producer's buffer once the producer has
// published it (release/acquire), without a copy. A waiting processor spins
// (a hand-off is then a cache line's round trip) and then sleeps on the step's
// futex. Processors that share cores (PlacedProgramParams::exclusive) take turns
// in step order.
//
// Activations live in one arena. A slot is reused only by a value written by a
// step ordered after every step touching the slot's previous value in every
// execution (memory_plan.h: orderedLastUse over the data and processor-order
// edges), so processors running at the same time never share a live slot.
#pragma once
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "libplan/runtime/memory_plan.h"
#include "libplan/runtime/session.h"

namespace zp::runtime {

struct PlacedProgramParams {
  // How long a processor waiting for another's tensor spins before it sleeps.
  // Waking a sleeping worker costs far more than a spinning one's hand-off (on
  // a VM, several percent of a placement with tens of hand-offs), and a
  // processor whose cores no other one of the program uses loses nothing by
  // spinning; one sharing cores (`exclusive`) spins briefly, as its spin takes a
  // core the other processor may be running on.
  double spinUs = 5000;
  double sharedCoreSpinUs = 200;
  // Processors that share hardware (one on cores {0}, another on cores {0, 1}) and
  // so never run at the same time: a step on one waits for the steps placed
  // before it on the other, without spinning (the core it would spin on is busy).
  std::vector<std::pair<int, int>> exclusive;
  // (step, earlier step): the step also waits for the earlier one, an order no
  // tensor carries (e.g. a pipeline: a DNN starts once the one it follows ended).
  std::vector<std::pair<int, int>> orderAfter;
};

struct PlacedStepTiming {
  int step = 0, processor = 0;
  double waitStartMs = 0;  // when it began waiting for inputs from other processors (= startMs: none)
  double startMs = 0, durMs = 0;  // from start()
};

class PlacedProgram {
 public:
  // sessions[p]: the model loaded for processor p (the same model and folding
  // options: the same steps); placement[s]: the processor of step s in the
  // sessions' step order. Errors: sessions that differ, a placement of the wrong
  // size or naming no session, weight cache payloads that fail their checks.
  static Expected<std::unique_ptr<PlacedProgram>> create(std::vector<std::unique_ptr<Session>> sessions,
                                                         std::vector<int> placement,
                                                         const PlacedProgramParams& params = {});
  ~PlacedProgram();
  PlacedProgram(const PlacedProgram&) = delete;
  PlacedProgram& operator=(const PlacedProgram&) = delete;

  int processors() const { return static_cast<int>(sessions_.size()); }
  size_t steps() const { return placement_.size(); }
  const std::vector<int>& placement() const { return placement_; }
  const PlacedProgramParams& params() const { return params_; }
  // The node of step s as its processor's session built it (name, op type, kernel).
  const NodeInfo& node(size_t s) const;
  const Session& session(int p) const { return *sessions_[static_cast<size_t>(p)]; }
  const std::vector<IoInfo>& inputs() const { return sessions_.front()->inputs(); }
  const std::vector<IoInfo>& outputs() const { return sessions_.front()->outputs(); }
  // Steps whose inputs come from another processor (edges crossing processors).
  int handoffs() const { return handoffs_; }
  size_t arenaBytes() const { return layout_.bytes; }

  // Binds the inputs (checked as Session::run checks them) and starts the clock.
  Status start(const TensorMap& inputs, bool profile = false);
  // Processor p's steps; returns early when a step on any processor failed.
  void runProcessor(int p);
  // The outputs (owned tensors), or the first step's error.
  Expected<TensorMap> finish();
  // The processor every step is placed on, or -1 (steps on several).
  int soleProcessor() const;
  // With every step on one processor: the model run by that processor's session
  // alone, on the calling thread (nothing to hand over, so no step waits or
  // publishes; the same run as the processor's single-processor baseline).
  Expected<TensorMap> runSole(const TensorMap& inputs);
  // How long processor p spins waiting for another's tensor (PlacedProgramParams::spinUs).
  double spinUs(int p) const { return spinUs_[static_cast<size_t>(p)]; }
  // Per step (in step order) when the last run was profiled.
  const std::vector<PlacedStepTiming>& lastProfile() const { return timings_; }

 private:
  class Context;
  struct InputRef {
    int value = -1;                  // shared value id, or -1
    const Tensor* constant = nullptr;  // a constant of the step's session
  };
  struct StepPlan {
    std::vector<InputRef> in;
    std::vector<int> out;            // shared value ids; -1: an unnamed output nobody reads
    std::vector<int> waitFor;        // steps on other processors it reads from
    std::vector<int> waitForCores;   // steps before it on processors sharing its cores
    bool remoteConsumers = false;    // another processor waits for it
  };
  PlacedProgram() = default;
  Status build();
  void agreeOnLayouts();
  void planArena(const std::vector<size_t>& bytes);
  bool waitDone(int step, double spinUs) const;
  void fail(Status error);
  double sinceStartMs(std::chrono::steady_clock::time_point t) const;

  std::vector<std::unique_ptr<Session>> sessions_;
  std::vector<int> placement_;
  PlacedProgramParams params_;
  std::vector<StepPlan> plan_;
  std::vector<std::vector<int>> order_;  // per processor: its steps in order
  std::vector<double> spinUs_;           // per processor
  std::vector<StepValues> flow_;         // in shared value ids
  ValueKinds kinds_;
  std::vector<int> lastUse_;             // orderedLastUse: kept for re-planning with the sizes a run saw
  ArenaLayout layout_;
  std::shared_ptr<void> arena_;
  std::vector<size_t> plannedBytes_, seenBytes_;
  std::atomic<bool> planDirty_{false};
  int handoffs_ = 0;

  // Per run.
  std::vector<Tensor> vals_;  // shared value id -> tensor
  std::unique_ptr<std::atomic<uint32_t>[]> done_;  // per step: the run (epoch) it last finished in
  uint32_t epoch_ = 0;
  std::atomic<bool> failed_{false};
  std::mutex errorMutex_;
  Status error_;
  bool profile_ = false;
  std::chrono::steady_clock::time_point t0_;
  std::vector<PlacedStepTiming> timings_;
};

}  // namespace zp::runtime
