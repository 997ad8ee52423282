// What the executor serves: subgraphs placed on processors ("slots"), and the
// one thing it needs from where they are stored: load slot i into a runnable
// session. The executor does not know the storage format (bundle weight caches,
// ONNX files, models built in memory).
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "libplan/runtime/session.h"

namespace zp::runtime::serve {

// One subgraph on the processor that runs it. The same subgraph placed on two
// processors is two slots (each has its own session, built for its engine).
struct ServeSlot {
  std::string name;        // e.g. "digits/p1/u80": names load slices and errors
  int processor = 0;       // index into ServeSetup::processors
  int64_t bytes = 0;       // resident size counted against the memory budget (plan's memory_bytes)
  bool preload = false;    // in the preload set: loaded before serving, never evicted
};

struct LoadedSubgraph {
  std::unique_ptr<Session> session;
  int64_t bytes = 0;  // what the session really holds (weights + arena + scratch), for the record
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

}  // namespace zp::runtime::serve
