// Running one model placed operator by operator on the host's processors
// (SparOA's hybrid execution, measured): one pinned worker per processor that
// has steps, each running its processor's steps of a PlacedProgram
// (runtime/placed_program.h: steps wait only for inputs from other processors,
// tensors handed over in shared memory). A run posts one job per worker and
// waits for all; its wall time runs from posting to the last worker's return.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "libplan/runtime/placed_program.h"
#include "libplan/runtime/measure.h"
#include "libplan/runtime/serve/pinned_worker.h"
#include "libplan/runtime/serve/processor.h"
#include "libplan/util/json.h"

namespace zp::runtime::serve {

// Pairs of processors (indices, first < second) whose cores overlap: they must
// take turns (PlacedProgramParams::exclusive).
std::vector<std::pair<int, int>> sharedCorePairs(const std::vector<Processor>& processors);

class PlacedExecutor {
 public:
  // processors[p] describes the program's processor p; each is checked (cores on
  // this machine, known policy, sane threads) and its worker pinned, also for a
  // processor with no steps; processors whose cores overlap must be exclusive in
  // the program. Errors leave no thread behind.
  static Expected<std::unique_ptr<PlacedExecutor>> start(std::unique_ptr<PlacedProgram> program,
                                                         std::vector<Processor> processors);
  ~PlacedExecutor();

  // One run; `wallMs` (when given) receives its wall time.
  Expected<TensorMap> run(const TensorMap& inputs, bool profile = false, double* wallMs = nullptr);
  // `warmup` untimed runs, then `repeat` timed ones: median and p90 of the wall times.
  Expected<WarmStats> measure(const TensorMap& inputs, int warmup, int repeat);

  const PlacedProgram& program() const { return *program_; }
  const std::vector<Processor>& processors() const { return processors_; }

 private:
  PlacedExecutor() = default;
  std::unique_ptr<PlacedProgram> program_;
  std::vector<Processor> processors_;
  std::vector<std::unique_ptr<PinnedWorker>> workers_;  // per processor; null when it has no steps
};

// The whole model on one processor with a plain session, run on a worker pinned
// to the processor's cores and timed from the calling thread as PlacedExecutor
// times a run: `warmup` untimed runs, then `repeat` timed ones.
Expected<WarmStats> measureOnProcessor(Session& session, const Processor& processor, const TensorMap& inputs,
                                       int warmup, int repeat);
// Several models on one processor's pinned worker, in turns: each round is one
// job that runs every session once, in order, each run timed on the worker (the
// run alone, as the worker runs queued work back to back, without the wake-up a
// single dispatch pays), so that a change in the host's load during the
// measurement touches them all alike. inputs[i] are sessions[i]'s; one
// WarmStats per session.
Expected<std::vector<WarmStats>> measureInTurnsOnProcessor(const std::vector<Session*>& sessions,
                                                           const Processor& processor,
                                                           const std::vector<TensorMap>& inputs, int warmup, int repeat);

// Chrome-trace / Perfetto JSON of a profiled placed run: one track per processor,
// each step a slice (name, op type, kernel), time spent waiting for another
// processor's outputs a "wait" slice.
Json placedRunTrace(const PlacedProgram& program, const std::vector<Processor>& processors,
                    const std::string& title);

}  // namespace zp::runtime::serve
