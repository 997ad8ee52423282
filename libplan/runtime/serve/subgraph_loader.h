// What the executor serves: units placed on processors ("slots"), and the one
// thing it needs from where they are stored: load slot i into a runnable unit.
// The executor does not know the storage format (bundle weight caches, ONNX
// files, models built in memory).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "libplan/runtime/serve/placed_executor.h"
#include "libplan/runtime/session.h"

namespace zp::runtime::serve {

// One unit on the processor that runs it. The same unit placed on two
// processors is two slots (each has its own session, built for its engine). An
// operator-placed unit's slot is on the processor whose worker runs it; its
// operators run on its own workers, pinned to the processors it places them on.
struct ServeSlot {
  std::string name;        // e.g. "digits/p1/u80": names load slices and errors
  int processor = 0;       // index into ServeSetup::processors
  int64_t bytes = 0;       // resident size counted against the memory budget (plan's memory_bytes)
  bool preload = false;    // in the preload set: loaded before serving, never evicted
  // Other processors a run of it occupies (an operator-placed unit's), each of a
  // higher index than `processor`: their workers wait while it runs, so no other
  // query's run shares their cores with its operators.
  std::vector<int> holds = {};
};

// A slot's unit once loaded: a session, or an operator-placed program with its
// pinned workers (its slot's worker waits while they run it). Either runs the same way.
class LoadedUnit {
 public:
  LoadedUnit() = default;
  LoadedUnit(std::unique_ptr<Session> session) : session_(std::move(session)) {}          // NOLINT: implicit
  LoadedUnit(std::unique_ptr<PlacedExecutor> placed) : placed_(std::move(placed)) {}      // NOLINT: implicit
  explicit operator bool() const { return session_ || placed_; }

  const std::vector<IoInfo>& inputs() const { return placed_ ? placed_->program().inputs() : session_->inputs(); }
  const std::vector<IoInfo>& outputs() const { return placed_ ? placed_->program().outputs() : session_->outputs(); }
  // `profile`: the run fills the session's (the program's) lastProfile().
  Expected<TensorMap> run(const TensorMap& inputs, bool profile = false) {
    return placed_ ? placed_->run(inputs, profile) : session_->run(inputs, RunOptions{profile, {}});
  }
  // The session whose inputs and outputs the unit has (an operator-placed one: its first processor's).
  const Session& session() const { return placed_ ? placed_->program().session(0) : *session_; }
  Session* plainSession() { return session_.get(); }  // null for an operator-placed unit
  PlacedExecutor* placed() const { return placed_.get(); }

 private:
  std::unique_ptr<Session> session_;
  std::unique_ptr<PlacedExecutor> placed_;
};

struct LoadedSubgraph {
  LoadedUnit unit;
  int64_t bytes = 0;  // what the unit really holds (weights + arena + scratch), for the record
};

class SubgraphLoader {
 public:
  virtual ~SubgraphLoader() = default;
  // Loads `slot` with the options of its processor. Called on the processor's
  // pinned worker, so the load runs on the processor's cores.
  virtual Expected<LoadedSubgraph> load(int slot, const ServeSlot& info, const SessionOptions& options) = 0;
};

// The bytes a loaded session holds: transformed weights, activation arena, scratch.
int64_t sessionBytes(const Session& session);
// The same of an operator-placed program: every processor's session and the shared arena.
int64_t placedBytes(const PlacedProgram& program);

}  // namespace zp::runtime::serve
