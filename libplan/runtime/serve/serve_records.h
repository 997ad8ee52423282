// What serving measured: one record per query, the timeline of every load and
// run on every processor, and the run's summary (SparseLoom §5.1 metrics plus
// memory).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "libplan/runtime/tensor.h"
#include "libplan/util/json.h"
#include "libplan/util/query_summary.h"

namespace zp::runtime::serve {

struct QueryRecord {
  int query = 0;     // index in the arrival trace
  int task = 0;      // index into ServeResult::tasks
  int sample = 0;
  double arrivalMs = 0, startMs = 0, finishMs = 0, latencyMs = 0;  // from the start of serving
  // A worker handed its first position on: arrivalMs plus that worker's delay (its
  // wake-up when idle, else the end of the job it was running when the query fell due).
  double postedMs = 0;
  double loadMs = 0;       // loading subgraphs this query needed (inside its latency)
  bool completed = false;
  bool dropped = false;    // refused at arrival: its task's queue was full (never run; a violation)
  bool sloMet = false;     // latency within the task's SLO and its variant meets the accuracy SLO
  int64_t predicted = -1;  // argmax of the last position's first output
  int64_t label = -1;      // the sample's true label (-1: not known)
  bool correct = false;
};

struct ExecSlice {
  enum class Kind { Run, Load };
  Kind kind = Kind::Run;
  int processor = 0, query = 0, task = 0, position = 0, slot = 0;
  double startMs = 0, endMs = 0;
  // CPU time of the worker thread over the slice: below endMs - startMs when the
  // thread was descheduled (other processes on its cores), at it when it ran throughout.
  double cpuMs = 0;
};

struct ServeResult {
  std::vector<std::string> processors, tasks, slots;  // names, for the trace and reports
  std::vector<QueryRecord> queries;                   // in arrival order
  std::vector<ExecSlice> slices;                      // by start time, then processor
  QuerySummary summary;
  int labelled = 0, correct = 0;                      // queries with a known label / right
  int dropped = 0;                                    // refused by admission control
  int64_t peakRssBytes = 0;                           // the process's, from serving's start
  int64_t peakResidentBytes = 0;                      // the residency manager's count (slot bytes)
  int loads = 0, evictions = 0, overBudgetLoads = 0;  // while serving (preloads not counted)
  double preloadMs = 0;                               // loading the preload set, before serving
  // With ServeParams::keepOutputs, per query: the outputs of its last position (empty: it did not complete).
  std::vector<TensorMap> outputs;
};

// The summary of the records (the same definition as the simulator's prediction).
QuerySummary summarize(const std::vector<QueryRecord>& queries, const std::vector<double>& sloMsOfTask,
                       const std::vector<bool>& accuracySloMetOfTask);

// Each worker's turnarounds between jobs (a job: one query's position, its load
// and run): from the end of a job's last slice to the start of the next job's
// first, where that next job was ready before (its query had arrived, or its
// previous position had ended). That is the executor's own work between runs:
// handing outputs on, freeing a finished query's tensors, taking the next job
// and preparing its inputs. Per processor in order, processors in turn.
std::vector<double> workerTurnaroundsMs(const ServeResult& result);

// Everything but the timeline, as JSON: per query and the summary.
Json toJson(const ServeResult& result);

// Perfetto / Chrome trace of the measured timeline: one track per processor,
// slices "task/p<position>" for runs and "load <slot>" for loads.
Json serveTrace(const ServeResult& result, const std::string& title);

}  // namespace zp::runtime::serve
