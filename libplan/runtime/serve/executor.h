// The multi-DNN executor (SparseLoom §3.3-3.4 runtime phase, measured): queries
// arrive in real time from a trace (open loop, steady_clock; the workers hand
// on the arrivals that fall due, so no other thread competes for their cores); each runs its
// task's stitched variant position by position, each position on the processor
// the plan places it on. One pinned worker per processor serves its own queue,
// first come first served or earliest deadline first (ServeParams::order); a
// position's outputs are handed to the next position's worker. A
// residency manager keeps the preload set resident and loads, and evicts, the
// other subgraphs under the memory budget, the load time counted in the query
// that needed it.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "libplan/runtime/serve/arrivals.h"
#include "libplan/runtime/serve/processor.h"
#include "libplan/runtime/serve/serve_records.h"
#include "libplan/runtime/serve/subgraph_loader.h"
#include "libplan/util/serving_order.h"

namespace zp::runtime::serve {

struct ServeTask {
  std::string name;
  std::vector<int> slots;           // per position: the slot that runs it (index into ServeSetup::slots)
  double sloMs = 0;                 // latency SLO of one query
  bool accuracySloMet = true;       // the chosen variant meets the task's accuracy SLO
  std::vector<TensorMap> samples;   // the first position's inputs, per dataset sample
  std::vector<int64_t> labels;      // true label per sample (empty: not known)
  // The admission queue it shares (the user's task, whose SLO configurations are
  // setup tasks of their own): its queries count against one bound. Empty: its name.
  std::string queue;
  // A frame's chain of DNNs: at each stage's position a later DNN starts, and its
  // own input (its sample of the arrival's sample index, modulo its count) joins
  // the query's tensors; its outputs then come from that DNN's subgraphs.
  struct Stage {
    int position = 0;
    std::vector<TensorMap> samples;
  };
  std::vector<Stage> stages = {};
  // The output whose argmax is the query's answer; empty: the last unit's first
  // output (a weight-shared group's unit answers a member from the member's own).
  std::string answerOutput = {};
};

struct ServeSetup {
  std::vector<Processor> processors;
  std::vector<ServeSlot> slots;
  std::vector<ServeTask> tasks;
  int64_t memoryBudgetBytes = 0;
};

// The queries one serving run accepts: what memory is bounded by (each query's
// record, and the timeline of those that ran).
inline constexpr size_t kMaxServedArrivals = 1'000'000;
// A trace of at most kMaxServedArrivals, else a one-line error (what serve()
// checks, for callers that would otherwise calibrate and predict first).
Status checkTraceSize(const ArrivalTrace& trace);
// A query queued behind this many of its task's waits seconds on a small model, far past any
// latency SLO, and each holds its tensors: deeper queues only cost memory.
inline constexpr int kDefaultMaxQueuedPerTask = 256;

struct ServeParams {
  double startLeadMs = 2;      // serving's clock starts this long after the workers are ready
  bool warmPreloaded = true;   // run each preloaded session once on random inputs before serving
  // Admission control: a query that arrives while this many queries of its
  // queue (ServeTask::queue) are queued or running is dropped (not run; a
  // violation), so an overload holds a bounded number of queries' tensors, not
  // the whole backlog.
  int maxQueuedPerTask = kDefaultMaxQueuedPerTask;
  // A run rather than a workload (plan-run BUNDLE checks and times units this
  // way): each query is dispatched once the one before it has ended, no earlier
  // than its trace time, and arrives when it is dispatched.
  bool closedLoop = false;
  // ServeResult::outputs: each completed query's last outputs.
  bool keepOutputs = false;
  // Every run profiled (its unit's lastProfile(), e.g. for afterRun to read).
  bool profileRuns = false;
  // Called on the processor's worker after each run, with the unit that ran
  // while it is still resident (e.g. to read a cold-loaded session's report).
  std::function<void(const ExecSlice& run, LoadedUnit& unit)> afterRun = {};
  // How each worker takes its queued runs; a query's deadline is its arrival
  // plus its task's sloMs (with closedLoop, when it was dispatched).
  ServingOrder order = ServingOrder::FirstCome;
};

// Indices, processors, cores and the preload budget; a one-line error otherwise.
Status checkSetup(const ServeSetup& setup);

// Serves every arrival of `trace` (its task names must be setup tasks, its sample
// indices within their samples; at most kMaxServedArrivals) and returns what was
// measured, dropped queries included. An error in any load or run stops serving
// and is returned.
Expected<ServeResult> serve(const ServeSetup& setup, SubgraphLoader& loader, const ArrivalTrace& trace,
                            const ServeParams& params = {});

}  // namespace zp::runtime::serve
