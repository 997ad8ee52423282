#include "libplan/sim/queries/query_sim.h"

#include <algorithm>
#include <cassert>

#include "libplan/sim/queries/processor_queues.h"

namespace zp::sim {

// Each task has exactly one job queued at a time (its current query's next
// stage), keyed by its arrival rank, with the hand-over before the stage
// counted in its ready time: ProcessorQueues' start-time order is then the
// order "earliest start, then earliest ready, then earliest arrival" over tasks.
QuerySimResult simulateQueries(const std::vector<TaskQueries>& tasks, int processors, const std::vector<int>& arrival,
                               bool recordSpans) {
  const size_t n = tasks.size();
  assert(arrival.size() == n);
  struct State {
    int query = 0;
    double issued = 0, latencySum = 0;
  };
  std::vector<State> st(n);
  ProcessorQueues queues(processors);
  auto enqueue = [&](int task, int stage, double ready, int64_t rank) {
    const auto& s = tasks[static_cast<size_t>(task)].stages[static_cast<size_t>(stage)];
    queues.push(s.processor, QueuedJob{ready + s.transferMs, rank, task, stage});
  };
  for (size_t k = 0; k < n; ++k) {
    const int t = arrival[k];
    const auto& task = tasks[static_cast<size_t>(t)];
    if (task.queries > 0 && !task.stages.empty()) enqueue(t, 0, 0.0, static_cast<int64_t>(k));
  }
  QuerySimResult r;
  r.meanLatencyMs.assign(n, 0.0);
  int completed = 0;
  while (auto next = queues.pop()) {
    const int t = next->job.id, stage = next->job.stage;
    auto& s = st[static_cast<size_t>(t)];
    const auto& task = tasks[static_cast<size_t>(t)];
    const double end = next->start + task.stages[static_cast<size_t>(stage)].ms;
    queues.occupyUntil(next->processor, end);
    if (recordSpans) r.spans.push_back(QuerySpan{t, s.query, stage, next->processor, next->start, end});
    if (stage + 1 < static_cast<int>(task.stages.size())) {
      enqueue(t, stage + 1, end, next->job.key);
      continue;
    }
    s.latencySum += end - s.issued;
    ++completed;
    r.makespanMs = std::max(r.makespanMs, end);
    s.issued = end;  // closed loop: the next query goes out when this one returns
    if (++s.query < task.queries) enqueue(t, 0, end, next->job.key);
  }
  for (size_t t = 0; t < n; ++t)
    r.meanLatencyMs[t] = tasks[t].queries > 0 ? st[t].latencySum / tasks[t].queries : 0.0;
  r.throughputQps = r.makespanMs > 0 ? completed / (r.makespanMs / 1000.0) : 0.0;
  return r;
}

}  // namespace zp::sim
