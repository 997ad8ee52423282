// The open-loop serving predictor: what the executor (libplan/runtime/serve)
// should measure, simulated. Queries arrive at the trace's times; each runs its
// task's positions in order, each on the processor of its subgraph slot; every
// processor serves its own queue (processor_queues.h) first come first served
// or earliest deadline first (the params' order); a slot not resident
// is loaded when a query first needs it (its load time counted in that query),
// evicting least recently used non-preloaded slots that no processor is running,
// under the memory budget (the executor's residency rule, util/budgeted_lru.h).
// A load's time is the loaded slot's loadMs plus the freeMs of every slot it
// evicts. A position takes its profiled time (runMs) or, when the slot carries run
// samples measured as serving runs it (runtime/serve/run_calibration.h), a time
// drawn from them with the params' seed: from the after-idle samples when its
// processor was idle for idleThresholdMs or more before the run, else from the
// back-to-back ones (matched by the length of the idle where the samples
// carry it). The draw models the spread that decides tight SLOs. Given a
// replay (the executor's measured times of one served trace, per query and
// position, and each query's dispatch), a run or load it holds takes that time
// instead of a draw, and a query its dispatch where later than dispatchMs: what the
// simulator predicts when every time is known, which separates its queueing
// model's error from its time model's. A query becomes ready dispatchMs after
// its arrival, each hand-over to another processor takes handoffMs, and a
// processor takes its next job turnaroundMs after a run ends. A slot that holds
// other processors runs once each of them has taken a hold from its queue, and
// occupies them all.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "libplan/util/query_summary.h"
#include "libplan/util/serving_order.h"

namespace zp::sim {

struct ServeSimSlot {
  int processor = 0;
  double runMs = 0;    // one run of the subgraph on its processor (profile median)
  double loadMs = 0;   // loading it when it is not resident
  int64_t bytes = 0;   // counted against the memory budget
  bool preload = false;
  std::vector<double> runSamplesMs = {};  // when not empty: a run right after another draws one of these
  std::vector<double> idleRunSamplesMs = {};  // when not empty: a run after its processor idled draws one of these
  // Other processors a run occupies (an operator-placed unit's), each above
  // `processor`: a hold joins each one's queue a hand-over (handoffMs) after the
  // load is done, and the run starts once every hold has its turn (the executor's
  // held workers).
  std::vector<int> holds = {};
  double freeMs = 0;  // freeing it when a load evicts it (counted in that load's time)
  // When not empty: the run right after its load draws one of these (its
  // weights and code out of the caches; a cold section's pipelined cold run).
  std::vector<double> firstRunSamplesMs = {};
  // When the same size as idleRunSamplesMs: how long the processor had idled
  // before each. A run after idling g ms then draws among the samples whose idle
  // lay within a factor of two of g (else the one nearest it): a run's slowdown
  // after idle grows with the idle (measured 1.0x after 2-5 ms, 1.1-1.4x after 20).
  std::vector<double> idleRunGapsMs = {};
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

// The times a served trace took, per (query, position): its run, and the load
// before it where it loaded (the frees of the units that load evicted included,
// as the executor times them). A load the simulator makes that the executor did
// not, or a run it lacks, takes the slot's own time.
struct ServeSimReplay {
  std::map<std::pair<int, int>, double> runMs;
  std::map<std::pair<int, int>, double> loadMs;
  // Per query: its arrival to its first position handed to a worker, as the
  // executor's workers handed it on; the query becomes ready after that or after
  // dispatchMs, whichever is later (dispatchMs also holds the worker's wake-up).
  std::map<int, double> dispatchMs;
};

struct ServeSimParams {
  int processors = 1;
  int64_t memoryBudgetBytes = 0;
  double handoffMs = 0;  // handing a query's tensors to another processor's worker
  double dispatchMs = 0;  // an arrival's timer and its worker's wake-up
  double idleThresholdMs = 2;  // idle time after which a run counts as after-idle (measured: the slowdown
                               // of an idle core sets in between 1 and 5 ms of idle here)
  uint64_t seed = 0;     // draws from the slots' run samples
  ServingOrder order = ServingOrder::FirstCome;  // a query's deadline: its arrival plus its task's sloMs
  bool recordSpans = true;  // false: ServeSimResult::spans stays empty (a search that reads only the queries)
  const ServeSimReplay* replay = nullptr;  // when set: the times it holds replace the slots' (queries by arrival index)
  // A worker's own work after each job, before it takes the next (handing
  // outputs on, freeing a finished query's tensors): the job's query moves on
  // at the run's end, its processor only this much later.
  double turnaroundMs = 0;
};

struct ServeSimQuery {
  int task = 0;
  double arrivalMs = 0, startMs = 0, finishMs = 0, loadMs = 0;
};

struct ServeSimSpan {
  int query = 0, task = 0, position = 0, slot = 0, processor = 0;
  bool load = false;
  double startMs = 0, endMs = 0;
  bool hold = false;  // `processor` held for a run on another (slot's) processor
};

struct ServeSimResult {
  std::vector<ServeSimQuery> queries;  // in arrival order
  std::vector<ServeSimSpan> spans;     // in start order
  QuerySummary summary;
  int loads = 0, evictions = 0, overBudgetLoads = 0;
  int64_t peakResidentBytes = 0;
};

// Which units to keep resident under `budgetBytes`, by load cost per byte: per
// unit the queries per second that run it, its load time and its bytes; highest
// qps x load / bytes first (ties in unit order), each that still fits with room
// left for the largest unit left out (so one unit loaded on demand fits beside
// the resident ones; two loaded at once on two processors may still exceed it). The
// planner's residency decision, and serving's when the plan was made under a
// device memory budget.
std::vector<bool> residentByLoadCost(const std::vector<double>& qps, const std::vector<double>& loadMs,
                                     const std::vector<int64_t>& bytes, int64_t budgetBytes);

// Several SLO configurations served in turn: each phase's own residency
// (residentByLoadCost over the units that phase uses, `phaseQps[k]`: unit ->
// its queries per second in phase k), and resident throughout are the units
// every phase keeps; the rest of the budget is room for each phase's others.
std::vector<bool> residentInEveryPhase(const std::vector<std::map<int, double>>& phaseQps,
                                       const std::vector<double>& loadMs, const std::vector<int64_t>& bytes,
                                       int64_t budgetBytes);

// Arrivals must be sorted by time; slots, tasks and processors consistent.
ServeSimResult simulateServing(const std::vector<ServeSimSlot>& slots, const std::vector<ServeSimTask>& tasks,
                               const std::vector<ServeSimArrival>& arrivals, const ServeSimParams& params);

}  // namespace zp::sim
