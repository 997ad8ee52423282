// The open-loop serving predictor: what the executor (libplan/runtime/serve)
// should measure, simulated. Queries arrive at the trace's times; each runs its
// task's positions in order, each on the processor of its subgraph slot; every
// processor serves its own FIFO queue (processor_queues.h); a slot not resident
// is loaded when a query first needs it (its load time counted in that query),
// evicting least recently used non-preloaded slots that no processor is running,
// under the memory budget (the executor's residency rule, util/budgeted_lru.h).
// Without interference between processors: a position takes its profiled time
// whatever else runs.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "libplan/util/query_summary.h"

namespace zp::sim {

struct ServeSimSlot {
  int processor = 0;
  double runMs = 0;    // one run of the subgraph on its processor (profile median)
  double loadMs = 0;   // loading it when it is not resident
  int64_t bytes = 0;   // counted against the memory budget
  bool preload = false;
};

struct ServeSimTask {
  std::string name;
  std::vector<int> slots;  // per position
  double sloMs = 0;
  bool accuracySloMet = true;
};

struct ServeSimArrival {
  double timeMs = 0;
  int task = 0;
};

struct ServeSimParams {
  int processors = 1;
  int64_t memoryBudgetBytes = 0;
  double handoffMs = 0;  // handing a query's tensors to another processor's worker
};

struct ServeSimQuery {
  int task = 0;
  double arrivalMs = 0, startMs = 0, finishMs = 0, loadMs = 0;
};

struct ServeSimSpan {
  int query = 0, task = 0, position = 0, slot = 0, processor = 0;
  bool load = false;
  double startMs = 0, endMs = 0;
};

struct ServeSimResult {
  std::vector<ServeSimQuery> queries;  // in arrival order
  std::vector<ServeSimSpan> spans;     // in start order
  QuerySummary summary;
  int loads = 0, evictions = 0, overBudgetLoads = 0;
  int64_t peakResidentBytes = 0;
};

// Arrivals must be sorted by time; slots, tasks and processors consistent.
ServeSimResult simulateServing(const std::vector<ServeSimSlot>& slots, const std::vector<ServeSimTask>& tasks,
                               const std::vector<ServeSimArrival>& arrivals, const ServeSimParams& params);

}  // namespace zp::sim
