#include <gtest/gtest.h>

#include <limits>

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

}  // namespace
}  // namespace zp::sim
