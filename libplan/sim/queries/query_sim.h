// A discrete-event simulator of concurrent tasks issuing queries to the
// processors of an SoC (SparseLoom §5.1 evaluation). Each processor runs one
// subgraph at a time, without preemption, serving ready work first-come
// first-served (ties: the task that arrived first): the queueing of
// processor_queues.h, shared with the open-loop serving predictor. Each task runs its queries
// back to back at batch 1 (closed loop): a query's positions run in order,
// possibly on different processors (partitioned variants pipeline across
// tasks), with a transfer before a position that changes processor.
#pragma once
#include <string>
#include <vector>

namespace zp::sim {

struct QueryStage {
  int processor = 0;       // index into the processor list
  double ms = 0;           // execution time of this position on that processor
  double transferMs = 0;   // hand-over before it (0 on the same processor)
};

struct TaskQueries {
  std::string name;
  std::vector<QueryStage> stages;
  int queries = 100;
};

struct QuerySpan {
  int task = 0, query = 0, stage = 0, processor = 0;
  double startMs = 0, endMs = 0;
};

struct QuerySimResult {
  std::vector<double> meanLatencyMs;  // per task, over its queries
  double makespanMs = 0;
  double throughputQps = 0;           // completed queries / makespan
  std::vector<QuerySpan> spans;       // when asked for
};

// `arrival[k]` is the task that arrives k-th (a permutation of task indices).
QuerySimResult simulateQueries(const std::vector<TaskQueries>& tasks, int processors, const std::vector<int>& arrival,
                               bool recordSpans = false);

}  // namespace zp::sim
