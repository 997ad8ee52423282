#include "libplan/sim/queries/query_sim.h"

#include <algorithm>
#include <cassert>
#include <limits>

namespace zp::sim {

QuerySimResult simulateQueries(const std::vector<TaskQueries>& tasks, int processors, const std::vector<int>& arrival,
                               bool recordSpans) {
  const size_t n = tasks.size();
  assert(arrival.size() == n);
  std::vector<int> rank(n);
  for (size_t k = 0; k < n; ++k) rank[static_cast<size_t>(arrival[k])] = static_cast<int>(k);
  std::vector<double> procFree(static_cast<size_t>(processors), 0.0);
  struct State {
    int query = 0, stage = 0;
    double ready = 0, issued = 0, latencySum = 0;
    bool done = false;
  };
  std::vector<State> st(n);
  for (size_t t = 0; t < n; ++t) st[t].done = tasks[t].queries <= 0 || tasks[t].stages.empty();
  QuerySimResult r;
  r.meanLatencyMs.assign(n, 0.0);
  int completed = 0;
  while (true) {
    // The job that starts first; ties: earlier ready time, then earlier arrival.
    int best = -1;
    double bestStart = std::numeric_limits<double>::infinity(), bestReady = 0;
    for (size_t t = 0; t < n; ++t) {
      if (st[t].done) continue;
      const auto& s = tasks[t].stages[static_cast<size_t>(st[t].stage)];
      double ready = st[t].ready + s.transferMs;
      double start = std::max(ready, procFree[static_cast<size_t>(s.processor)]);
      // The first job is taken whatever its start (an infinite time is still a job
      // that must run, and `best` an index before the tie-break reads rank[best]).
      if (best < 0 || start < bestStart ||
          (start == bestStart && (ready < bestReady || (ready == bestReady && rank[t] < rank[static_cast<size_t>(best)])))) {
        best = static_cast<int>(t);
        bestStart = start;
        bestReady = ready;
      }
    }
    if (best < 0) break;
    auto& s = st[static_cast<size_t>(best)];
    const auto& task = tasks[static_cast<size_t>(best)];
    const auto& stage = task.stages[static_cast<size_t>(s.stage)];
    const double end = bestStart + stage.ms;
    procFree[static_cast<size_t>(stage.processor)] = end;
    if (recordSpans) r.spans.push_back(QuerySpan{best, s.query, s.stage, stage.processor, bestStart, end});
    s.ready = end;
    if (++s.stage == static_cast<int>(task.stages.size())) {
      s.latencySum += end - s.issued;
      ++completed;
      r.makespanMs = std::max(r.makespanMs, end);
      s.stage = 0;
      s.issued = end;  // closed loop: the next query goes out when this one returns
      if (++s.query == task.queries) s.done = true;
    }
  }
  for (size_t t = 0; t < n; ++t)
    r.meanLatencyMs[t] = tasks[t].queries > 0 ? st[t].latencySum / tasks[t].queries : 0.0;
  r.throughputQps = r.makespanMs > 0 ? completed / (r.makespanMs / 1000.0) : 0.0;
  return r;
}

}  // namespace zp::sim
