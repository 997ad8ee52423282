// The queueing discipline shared by the query simulators: each processor runs
// one job at a time, without preemption. When it is free it takes, of the jobs
// that have joined its queue by then, the one with the earliest deadline (ties:
// the earliest ready, then the smaller key); with every deadline equal that is
// first come first served. With lateLast, a job whose deadline has passed when
// its processor takes its next job waits behind every queued one that can still
// make its own (those it takes earliest deadline first), and runs when none is
// queued: a queue fallen behind does not spend its processor on queries that miss
// their deadline anyway while the ones behind them miss theirs in turn (earliest
// deadline first's domino effect in overload). Taking, over all processors, the job that can start
// first (then the earliest ready, then the smallest key) processes jobs in
// start-time order, so a job's successors are only ever pushed with ready times
// after that start: the order a real per-processor worker would see.
#pragma once
#include <cstdint>
#include <optional>
#include <queue>
#include <vector>

namespace zp::sim {

struct QueuedJob {
  double ready = 0;     // when it joins its processor's queue
  int64_t key = 0;      // tie-break among equal ready times (e.g. arrival rank)
  int id = 0;           // the caller's (task or query)
  int stage = 0;        // the caller's (position)
  double deadline = 0;  // taken before later deadlines among the jobs queued (equal: first come)
};

class ProcessorQueues {
 public:
  explicit ProcessorQueues(int processors, bool lateLast = false);
  void push(int processor, const QueuedJob& job);

  struct Next {
    int processor = 0;
    QueuedJob job;
    double start = 0;  // max(ready, when the processor is free)
  };
  // Removes and returns the job that starts first; nothing when all queues are empty.
  std::optional<Next> pop();
  // The processor runs the popped job until `end`.
  void occupyUntil(int processor, double end) { free_[static_cast<size_t>(processor)] = end; }
  double freeAt(int processor) const { return free_[static_cast<size_t>(processor)]; }

 private:
  struct ReadyLater {
    bool operator()(const QueuedJob& a, const QueuedJob& b) const {
      if (a.ready != b.ready) return a.ready > b.ready;
      return a.deadline != b.deadline ? a.deadline > b.deadline : a.key > b.key;
    }
  };
  struct DeadlineLater {
    bool operator()(const QueuedJob& a, const QueuedJob& b) const {
      if (a.deadline != b.deadline) return a.deadline > b.deadline;
      return a.ready != b.ready ? a.ready > b.ready : a.key > b.key;
    }
  };
  // The job of processor p's not yet joined ones that joins first (nullptr: none), and its removal.
  const QueuedJob* firstArriving(size_t p) const;
  void popArriving(size_t p);
  // Per processor: jobs not yet joined when it was last free, and those that had.
  // Those not yet joined are kept in two places: jobs pushed in joining order
  // (a trace's arrivals, thousands) appended to `inflow_` (read from
  // `inflowHead_`), the others in the heap, so the heap holds only the jobs
  // in flight and the merge of the two is the same order as one heap.
  std::vector<std::vector<QueuedJob>> inflow_;
  std::vector<size_t> inflowHead_;
  std::vector<std::priority_queue<QueuedJob, std::vector<QueuedJob>, ReadyLater>> arriving_;
  std::vector<std::priority_queue<QueuedJob, std::vector<QueuedJob>, DeadlineLater>> queued_;
  // With lateLast_: per processor, the queued jobs whose deadline had passed when
  // it was last free (a free time only grows: they stay late).
  std::vector<std::priority_queue<QueuedJob, std::vector<QueuedJob>, DeadlineLater>> late_;
  std::vector<double> free_;
  bool lateLast_ = false;
};

}  // namespace zp::sim
