#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <random>

#include "libplan/sim/queries/query_sim.h"

namespace zp::sim {
namespace {

TEST(QuerySim, OneTaskAloneTakesTheSumOfItsStages) {
  TaskQueries t{"a", {{0, 1.0, 0.0}, {1, 2.0, 0.5}}, 10};
  auto r = simulateQueries({t}, 2, {0});
  EXPECT_DOUBLE_EQ(r.meanLatencyMs[0], 3.5);
  EXPECT_DOUBLE_EQ(r.makespanMs, 35.0);
  EXPECT_NEAR(r.throughputQps, 10 / 0.035, 1e-9);
}

TEST(QuerySim, AnInfiniteStageIsRunNotDropped) {
  // An unprofiled subgraph (infinite time) still runs: its task never meets a
  // latency SLO, and a task on another processor is not held up.
  const double inf = std::numeric_limits<double>::infinity();
  TaskQueries slow{"slow", {{0, 0.0, 0.0}, {0, inf, 0.0}}, 3}, fast{"fast", {{1, 2.0, 0.0}}, 4};
  for (std::vector<int> arrival : {std::vector<int>{0, 1}, std::vector<int>{1, 0}}) {
    auto r = simulateQueries({slow, fast}, 2, arrival, true);
    EXPECT_FALSE(r.meanLatencyMs[0] <= 1e300) << r.meanLatencyMs[0];
    EXPECT_DOUBLE_EQ(r.meanLatencyMs[1], 2.0);
    EXPECT_EQ(r.spans.size(), 3u * 2 + 4);
  }
}

TEST(QuerySim, PipelinedTasksOverlapAndContendedOnesWait) {
  // Two tasks with the same two-stage pipeline over two processors overlap:
  // one runs stage 0 while the other runs stage 1.
  TaskQueries a{"a", {{0, 1.0, 0.0}, {1, 1.0, 0.0}}, 50}, b = a;
  b.name = "b";
  auto piped = simulateQueries({a, b}, 2, {0, 1}, true);
  EXPECT_LT(piped.makespanMs, 2 * 50 * 2.0);
  // Both whole on processor 0: no overlap at all.
  TaskQueries c{"c", {{0, 2.0, 0.0}}, 50}, d = c;
  auto serial = simulateQueries({c, d}, 2, {0, 1});
  EXPECT_DOUBLE_EQ(serial.makespanMs, 200.0);
  EXPECT_GT(serial.meanLatencyMs[0], 2.0);  // each waits for the other
  // No processor ever runs two spans at once.
  for (size_t i = 0; i < piped.spans.size(); ++i)
    for (size_t j = i + 1; j < piped.spans.size(); ++j)
      if (piped.spans[i].processor == piped.spans[j].processor)
        EXPECT_TRUE(piped.spans[i].endMs <= piped.spans[j].startMs + 1e-12 || piped.spans[j].endMs <= piped.spans[i].startMs + 1e-12);
}

TEST(QuerySim, ArrivalOrderBreaksTies) {
  TaskQueries a{"a", {{0, 1.0, 0.0}}, 1}, b{"b", {{0, 1.0, 0.0}}, 1};
  auto ab = simulateQueries({a, b}, 1, {0, 1});
  auto ba = simulateQueries({a, b}, 1, {1, 0});
  EXPECT_DOUBLE_EQ(ab.meanLatencyMs[0], 1.0);
  EXPECT_DOUBLE_EQ(ba.meanLatencyMs[0], 2.0);
}

// The simulator as first written: every step scans every task for the job
// that starts first (ties: earlier ready time, then earlier arrival). The
// ProcessorQueues version must give the same spans and figures, bit for bit
// (plan-solve's outputs depend on them).
QuerySimResult scanEveryTask(const std::vector<TaskQueries>& tasks, int processors, const std::vector<int>& arrival) {
  const size_t n = tasks.size();
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
    int best = -1;
    double bestStart = 0, bestReady = 0;
    for (size_t t = 0; t < n; ++t) {
      if (st[t].done) continue;
      const auto& s = tasks[t].stages[static_cast<size_t>(st[t].stage)];
      const double ready = st[t].ready + s.transferMs;
      const double start = std::max(ready, procFree[static_cast<size_t>(s.processor)]);
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
    r.spans.push_back(QuerySpan{best, s.query, s.stage, stage.processor, bestStart, end});
    s.ready = end;
    if (++s.stage == static_cast<int>(task.stages.size())) {
      s.latencySum += end - s.issued;
      ++completed;
      r.makespanMs = std::max(r.makespanMs, end);
      s.stage = 0;
      s.issued = end;
      if (++s.query == task.queries) s.done = true;
    }
  }
  for (size_t t = 0; t < n; ++t)
    r.meanLatencyMs[t] = tasks[t].queries > 0 ? st[t].latencySum / tasks[t].queries : 0.0;
  r.throughputQps = r.makespanMs > 0 ? completed / (r.makespanMs / 1000.0) : 0.0;
  return r;
}

TEST(QuerySim, SameAsScanningEveryTaskOnRandomInstances) {
  std::mt19937_64 rng(7);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int trial = 0; trial < 400; ++trial) {
    const int processors = pick(1, 3);
    std::vector<TaskQueries> tasks(static_cast<size_t>(pick(1, 5)));
    for (auto& t : tasks) {
      t.queries = pick(0, 6);
      for (int s = pick(0, 3); s > 0; --s)  // whole and half milliseconds: many ties
        t.stages.push_back({pick(0, processors - 1), 0.5 * pick(0, 6), 0.5 * pick(0, 2)});
    }
    std::vector<int> arrival(tasks.size());
    for (size_t k = 0; k < arrival.size(); ++k) arrival[k] = static_cast<int>(k);
    std::shuffle(arrival.begin(), arrival.end(), rng);
    const auto want = scanEveryTask(tasks, processors, arrival);
    const auto got = simulateQueries(tasks, processors, arrival, true);
    ASSERT_EQ(got.meanLatencyMs, want.meanLatencyMs) << "trial " << trial;
    ASSERT_EQ(got.makespanMs, want.makespanMs) << "trial " << trial;
    ASSERT_EQ(got.throughputQps, want.throughputQps) << "trial " << trial;
    ASSERT_EQ(got.spans.size(), want.spans.size()) << "trial " << trial;
    for (size_t i = 0; i < got.spans.size(); ++i) {
      const auto &a = got.spans[i], &b = want.spans[i];
      ASSERT_TRUE(a.task == b.task && a.query == b.query && a.stage == b.stage && a.processor == b.processor &&
                  a.startMs == b.startMs && a.endMs == b.endMs)
          << "trial " << trial << " span " << i;
    }
  }
}

}  // namespace
}  // namespace zp::sim
