// plan-run BUNDLE's runs, as opposed to --serve's workload: a plan's units on
// the processors it places them on, run by the serving executor one query at a
// time (closed loop), each position on its processor's pinned worker. Every
// query's last outputs are kept (to check against a reference and score), and
// what loading each unit found (weight-cache hits, fallbacks, warnings).
#pragma once
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "libplan/runtime/serve/executor.h"
#include "libplan/runtime/serve/model_file_loader.h"

namespace zp::drivers {

struct UnitRunSetup {
  std::vector<Processor> processors;
  std::vector<runtime::serve::ServeSlot> slots;   // a slot per unit and processor
  std::vector<runtime::serve::SubgraphFiles> files;  // per slot
  std::vector<runtime::serve::ServeTask> tasks;   // their slots index into `slots`
};

// One query: a task of the setup and the index of its sample.
struct UnitQuery {
  int task = 0;
  int sample = 0;
};

struct UnitRunParams {
  // Every slot loaded and run once before the queries; false: each is loaded by
  // the first query that needs it, its files first evicted from the page cache
  // (a cold start).
  bool preload = true;
  // Called on the worker after each run, the unit still resident.
  std::function<void(const runtime::serve::ExecSlice&, runtime::serve::LoadedUnit&)> afterRun = {};
};

struct SlotLoadStats {  // summed over an operator-placed unit's sessions
  int cacheHits = 0, cacheFallbacks = 0;
  std::vector<std::string> warnings;
};

struct UnitRuns {
  runtime::serve::ServeResult served;  // a record per query, with its outputs
  std::vector<SlotLoadStats> loads;    // per slot, of its last load
};

Expected<UnitRuns> runUnits(const UnitRunSetup& setup, const std::vector<UnitQuery>& queries,
                            const UnitRunParams& params = {});

// The latencies of the queries [from, to) (warm runs timed after the checked ones).
std::vector<double> latenciesMs(const runtime::serve::ServeResult& served, size_t from, size_t to);
double medianLatencyMs(const runtime::serve::ServeResult& served, size_t from);

// A task's latency bound in these runs: none (they measure, they do not judge).
inline constexpr double kUnboundedMs = 1e9;

}  // namespace zp::drivers
