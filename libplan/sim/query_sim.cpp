#include "libplan/sim/query_sim.h"

#include <algorithm>
#include <cassert>

#include "libplan/sim/processor_queues.h"

namespace zp::sim {

QuerySimResult simulateQueries(const std::vector<TaskQueries>& tasks, int processors, const std::vector<int>& arrival,
                               bool recordSpans) {
  const size_t n = tasks.size();
  assert(arrival.size() == n);
  std::vector<int> rank(n);
  for (size_t k = 0; k < n; ++k) rank[static_cast<size_t>(arrival[k])] = static_cast<int>(k);
  struct State {
    int query = 0;
    double issued = 0, latencySum = 0;
  };
  std::vector<State> st(n);
  ProcessorQueues queues(processors);
  // A task's stage joins its processor's queue when the previous stage ends, after the transfer.
  auto enqueue = [&](size_t t, int stage, double prevEnd) {
    const auto& s = tasks[t].stages[static_cast<size_t>(stage)];
    queues.push(s.processor, QueuedJob{prevEnd + s.transferMs, rank[t], static_cast<int>(t), stage});
  };
  for (size_t t = 0; t < n; ++t)
    if (tasks[t].queries > 0 && !tasks[t].stages.empty()) enqueue(t, 0, 0.0);
  QuerySimResult r;
  r.meanLatencyMs.assign(n, 0.0);
  int completed = 0;
  while (auto next = queues.pop()) {
    const auto t = static_cast<size_t>(next->job.id);
    const int stage = next->job.stage;
    auto& s = st[t];
    const auto& task = tasks[t];
    const double end = next->start + task.stages[static_cast<size_t>(stage)].ms;
    queues.occupyUntil(next->processor, end);
    if (recordSpans) r.spans.push_back(QuerySpan{static_cast<int>(t), s.query, stage, next->processor, next->start, end});
    if (stage + 1 < static_cast<int>(task.stages.size())) {
      enqueue(t, stage + 1, end);
      continue;
    }
    s.latencySum += end - s.issued;
    ++completed;
    r.makespanMs = std::max(r.makespanMs, end);
    s.issued = end;  // closed loop: the next query goes out when this one returns
    if (++s.query < task.queries) enqueue(t, 0, end);
  }
  for (size_t t = 0; t < n; ++t)
    r.meanLatencyMs[t] = tasks[t].queries > 0 ? st[t].latencySum / tasks[t].queries : 0.0;
  r.throughputQps = r.makespanMs > 0 ? completed / (r.makespanMs / 1000.0) : 0.0;
  return r;
}

}  // namespace zp::sim
