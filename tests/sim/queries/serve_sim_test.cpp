#include <gtest/gtest.h>

#include <map>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <set>

#include "libplan/sim/queries/serve_sim.h"

namespace zp::sim {
namespace {

TEST(ServeSim, OneProcessorOneStageIsLindleysRecursion) {
  // finish_i = max(arrival_i, finish_{i-1}) + s
  std::vector<ServeSimSlot> slots = {{0, 3.0, 0, 10, true}};
  std::vector<ServeSimTask> tasks = {{"a", {0}, 5.0, true}};
  std::vector<ServeSimArrival> arrivals = {{0, 0}, {1, 0}, {2, 0}, {10, 0}};
  auto r = simulateServing(slots, tasks, arrivals, {1, 100, 0});
  const std::vector<double> finish = {3, 6, 9, 13};
  for (size_t i = 0; i < 4; ++i) EXPECT_DOUBLE_EQ(r.queries[i].finishMs, finish[i]) << i;
  // Latencies 3, 5, 7, 3: SLO 5 ms violated once.
  EXPECT_EQ(r.summary.violations, 1);
  EXPECT_DOUBLE_EQ(r.summary.violationRate, 0.25);
  EXPECT_DOUBLE_EQ(r.summary.p50Ms, 4.0);
  EXPECT_DOUBLE_EQ(r.summary.spanMs, 13.0);
  EXPECT_DOUBLE_EQ(r.summary.throughputQps, 4 / 0.013);
}

TEST(ServeSim, TwoStageTandemPipelinesAcrossProcessors) {
  // Stage 0 on p0 (2 ms), stage 1 on p1 (3 ms), handoff 0.5 ms, arrivals every 1 ms.
  // Stage 0 ends at 2, 4, 6; stage 1 starts max(end0 + 0.5, previous end1): 2.5, 5.5, 8.5.
  std::vector<ServeSimSlot> slots = {{0, 2.0, 0, 0, true}, {1, 3.0, 0, 0, true}};
  std::vector<ServeSimTask> tasks = {{"a", {0, 1}, 100, true}};
  std::vector<ServeSimArrival> arrivals = {{0, 0}, {1, 0}, {2, 0}};
  auto r = simulateServing(slots, tasks, arrivals, {2, 0, 0.5});
  EXPECT_DOUBLE_EQ(r.queries[0].finishMs, 5.5);
  EXPECT_DOUBLE_EQ(r.queries[1].finishMs, 8.5);
  EXPECT_DOUBLE_EQ(r.queries[2].finishMs, 11.5);
  EXPECT_DOUBLE_EQ(r.queries[2].startMs, 4.0);
}

TEST(ServeSim, ARunHoldingAnotherProcessorWaitsForItsTurnThereAndBlocksItsQueue) {
  // Slot 0 on p0 holds p1 for its 2 ms runs (an operator-placed unit); slot 1 on
  // p1 takes 1 ms. b arrives at 0 and runs on p1 over [0, 1]; a arrives at 0.5: its
  // hold joins p1's queue at 0.5 and takes its turn at 1, so a runs over [1, 3] on
  // both. b's second query, ready at 1.5, waits on p1 until 3; a's second, at 2,
  // waits for p0 (blocked while a holds) and then for p1's turn after b: [4, 6].
  std::vector<ServeSimSlot> slots = {{0, 2.0, 0, 0, true, {}, {}, {1}}, {1, 1.0, 0, 0, true}};
  std::vector<ServeSimTask> tasks = {{"a", {0}, 100, true}, {"b", {1}, 100, true}};
  std::vector<ServeSimArrival> arrivals = {{0, 1}, {0.5, 0}, {1.5, 1}, {2, 0}};
  auto r = simulateServing(slots, tasks, arrivals, {2, 0, 0});
  EXPECT_DOUBLE_EQ(r.queries[0].finishMs, 1.0);
  EXPECT_DOUBLE_EQ(r.queries[1].startMs, 0.5);
  EXPECT_DOUBLE_EQ(r.queries[1].finishMs, 3.0);
  EXPECT_DOUBLE_EQ(r.queries[2].finishMs, 4.0);
  EXPECT_DOUBLE_EQ(r.queries[3].finishMs, 6.0);
  // Each of a's runs shows on p1 as a hold over the run's own span.
  int holds = 0;
  for (const auto& s : r.spans)
    if (s.hold) {
      ++holds;
      EXPECT_EQ(s.processor, 1);
      EXPECT_EQ(s.task, 0);
      EXPECT_DOUBLE_EQ(s.endMs - s.startMs, 2.0);
    }
  EXPECT_EQ(holds, 2);
  // A hold is posted as a hand-over is: alone, a's run starts a hand-over after it is picked.
  auto alone = simulateServing(slots, tasks, {{0, 0}}, {2, 0, 0.25});
  EXPECT_DOUBLE_EQ(alone.queries[0].finishMs, 2.25);
  // No two runs overlap on a processor, holds included.
  for (const auto& x : r.spans)
    for (const auto& y : r.spans)
      if (&x != &y && x.processor == y.processor)
        EXPECT_TRUE(x.endMs <= y.startMs || y.endMs <= x.startMs) << x.query << " " << y.query;
}

TEST(ServeSim, RunsAfterIdleDrawTheirOwnSamplesAndQueriesWaitForDispatch) {
  // One processor, one stage: back to back runs take 1 ms, runs after at least
  // 2 ms of idle take 5 ms (a single sample each, so the draws are known).
  std::vector<ServeSimSlot> slots = {{0, 3.0, 0, 10, true, {1.0}, {5.0}}};
  std::vector<ServeSimTask> tasks = {{"a", {0}, 100, true}};
  std::vector<ServeSimArrival> arrivals = {{0, 0}, {0, 0}, {6.5, 0}, {20, 0}};
  ServeSimParams params{1, 100, 0};
  params.dispatchMs = 0.5;
  auto r = simulateServing(slots, tasks, arrivals, params);
  // Ready at 0.5 (never ran: idle) -> 5.5; then back to back -> 6.5; ready at 7.0,
  // 0.5 ms after the last end (under the threshold) -> 8.0; ready at 20.5 -> 25.5.
  const std::vector<double> finish = {5.5, 6.5, 8.0, 25.5};
  for (size_t i = 0; i < finish.size(); ++i) EXPECT_DOUBLE_EQ(r.queries[i].finishMs, finish[i]) << i;
  // Without samples the profiled time (3 ms) is taken whatever the idle time.
  slots[0].runSamplesMs.clear();
  slots[0].idleRunSamplesMs.clear();
  r = simulateServing(slots, tasks, arrivals, params);
  EXPECT_DOUBLE_EQ(r.queries[3].finishMs, 23.5);
}

TEST(ServeSim, ARunAfterIdleDrawsAmongTheSamplesWhoseIdleWasLikeItsOwn) {
  // After-idle samples with their idle: 1 ms after 3 ms of idle, 2 ms after 5,
  // 9 ms after 40. One query at a time, each after a known idle.
  ServeSimSlot slot{0, 3.0, 0, 10, true, {1.0}, {1.0, 9.0, 2.0}};
  slot.idleRunGapsMs = {3.0, 40.0, 5.0};
  std::vector<ServeSimTask> tasks = {{"a", {0}, 100, true}};
  ServeSimParams params{1, 100, 0};
  auto finishAfterIdle = [&](double idleMs, uint64_t seed) {
    // The first query runs from 0 (never ran before: the longest idle, 9 ms);
    // the second arrives idleMs after it ends.
    std::vector<ServeSimArrival> arrivals = {{0, 0}, {9.0 + idleMs, 0}};
    params.seed = seed;
    const auto r = simulateServing({slot}, tasks, arrivals, params);
    if (!slot.idleRunGapsMs.empty()) EXPECT_DOUBLE_EQ(r.queries[0].finishMs, 9.0);
    return r.queries[1].finishMs - r.queries[1].arrivalMs;
  };
  for (uint64_t seed = 0; seed < 8; ++seed) {
    // 30 ms: within a factor of two only the 40 ms sample.
    EXPECT_DOUBLE_EQ(finishAfterIdle(30, seed), 9.0) << seed;
    // 4 ms: the 3 ms and the 5 ms samples.
    const double ms = finishAfterIdle(4, seed);
    EXPECT_TRUE(ms == 1.0 || ms == 2.0) << seed << " " << ms;
    // 12 ms: none within a factor of two; the nearest (5 ms, not 40).
    EXPECT_DOUBLE_EQ(finishAfterIdle(12, seed), 2.0) << seed;
  }
  // Both samples near 4 ms are drawn over the seeds.
  std::set<double> drawn;
  for (uint64_t seed = 0; seed < 32; ++seed) drawn.insert(finishAfterIdle(4, seed));
  EXPECT_EQ(drawn, (std::set<double>{1.0, 2.0}));
  // Without idles (sizes differ) every after-idle sample is a candidate, whatever the idle.
  slot.idleRunGapsMs.clear();
  std::set<double> any;
  for (uint64_t seed = 0; seed < 64; ++seed) any.insert(finishAfterIdle(30, seed));
  EXPECT_EQ(any, (std::set<double>{1.0, 2.0, 9.0}));
}

TEST(ServeSim, DrawsFromRunSamplesAreSeeded) {
  std::vector<ServeSimSlot> slots = {{0, 3.0, 0, 10, true, {1.0, 2.0, 3.0, 4.0}, {}}};
  std::vector<ServeSimTask> tasks = {{"a", {0}, 100, true}};
  std::vector<ServeSimArrival> arrivals;
  for (int i = 0; i < 200; ++i) arrivals.push_back({0, 0});
  ServeSimParams params{1, 100, 0};
  params.seed = 7;
  const auto a = simulateServing(slots, tasks, arrivals, params);
  const auto b = simulateServing(slots, tasks, arrivals, params);
  params.seed = 8;
  const auto c = simulateServing(slots, tasks, arrivals, params);
  EXPECT_EQ(a.queries.back().finishMs, b.queries.back().finishMs);
  EXPECT_NE(a.queries.back().finishMs, c.queries.back().finishMs);
  // 200 draws from {1, 2, 3, 4}: the total lies well inside [200, 800].
  EXPECT_GT(a.queries.back().finishMs, 400);
  EXPECT_LT(a.queries.back().finishMs, 600);
}

TEST(ServeSim, LoadsAreCountedInTheQueryAndEvictLeastRecentlyUsed) {
  // Slot 0 preloaded; slots 1 and 2 (load 4 ms) share one more unit of budget.
  std::vector<ServeSimSlot> slots = {{0, 1, 0, 10, true}, {0, 1, 4, 10, false}, {0, 1, 4, 10, false}};
  std::vector<ServeSimTask> tasks = {{"a", {0, 1}, 5, true}, {"b", {0, 2}, 5, true}};
  std::vector<ServeSimArrival> arrivals = {{0, 0}, {20, 0}, {40, 1}, {60, 0}};
  auto r = simulateServing(slots, tasks, arrivals, {1, 20, 0});
  // a: 1 + 4 + 1 = 6 (load); a again: 2 (resident); b: 6 (evicts 1); a: 6 (evicts 2).
  EXPECT_DOUBLE_EQ(r.queries[0].finishMs - r.queries[0].arrivalMs, 6);
  EXPECT_DOUBLE_EQ(r.queries[1].finishMs - r.queries[1].arrivalMs, 2);
  EXPECT_DOUBLE_EQ(r.queries[2].loadMs, 4);
  EXPECT_DOUBLE_EQ(r.queries[3].loadMs, 4);
  EXPECT_EQ(r.loads, 3);
  EXPECT_EQ(r.evictions, 2);
  EXPECT_EQ(r.overBudgetLoads, 0);
  EXPECT_EQ(r.peakResidentBytes, 20);
  EXPECT_EQ(r.summary.violations, 3);  // 6 > 5 three times
  int loadSpans = 0;
  for (const auto& s : r.spans) loadSpans += s.load;
  EXPECT_EQ(loadSpans, 3);
}

TEST(ServeSim, ALoadPaysForFreeingTheUnitsItEvicts) {
  // As above, slot 1 freed in 3 ms, slot 2 in 0.5 ms: b's load evicts 1 (4 + 3),
  // a's last evicts 2 (4 + 0.5); the first load evicts nothing.
  std::vector<ServeSimSlot> slots = {{0, 1, 0, 10, true}, {0, 1, 4, 10, false}, {0, 1, 4, 10, false}};
  slots[1].freeMs = 3;
  slots[2].freeMs = 0.5;
  std::vector<ServeSimTask> tasks = {{"a", {0, 1}, 5, true}, {"b", {0, 2}, 5, true}};
  auto r = simulateServing(slots, tasks, {{0, 0}, {20, 0}, {40, 1}, {60, 0}}, {1, 20, 0});
  EXPECT_DOUBLE_EQ(r.queries[0].loadMs, 4);
  EXPECT_DOUBLE_EQ(r.queries[1].loadMs, 0);
  EXPECT_DOUBLE_EQ(r.queries[2].loadMs, 7);
  EXPECT_DOUBLE_EQ(r.queries[3].loadMs, 4.5);
  EXPECT_DOUBLE_EQ(r.queries[2].finishMs - r.queries[2].arrivalMs, 1 + 7 + 1);
}

TEST(ServeSim, TheRunRightAfterALoadDrawsTheFirstRunSamples) {
  // Slot 1 (load 4 ms) runs 1 ms resident and 6 ms right after its load; it
  // fits the budget, so only the first query loads it.
  std::vector<ServeSimSlot> slots = {{0, 1, 4, 10, false}};
  slots[0].runSamplesMs = {1};
  slots[0].firstRunSamplesMs = {6};
  std::vector<ServeSimTask> tasks = {{"a", {0}, 100, true}};
  auto r = simulateServing(slots, tasks, {{0, 0}, {20, 0}}, {1, 10, 0});
  EXPECT_EQ(r.loads, 1);
  EXPECT_DOUBLE_EQ(r.queries[0].finishMs, 4 + 6);
  EXPECT_DOUBLE_EQ(r.queries[1].finishMs, 20 + 1);
  // Without first-run samples the run after a load draws the others.
  slots[0].firstRunSamplesMs.clear();
  r = simulateServing(slots, tasks, {{0, 0}, {20, 0}}, {1, 10, 0});
  EXPECT_DOUBLE_EQ(r.queries[0].finishMs, 4 + 1);
}

TEST(ServeSim, AReplayedRunOrLoadTakesItsMeasuredTime) {
  // As in the load test above: slot 0 preloaded, slots 1 and 2 (load 4 ms) share
  // one more unit of budget. The replay holds query 0's load of slot 1 (9 ms) and
  // query 2's run of slot 2 (3 ms); the rest keep their slots' times.
  std::vector<ServeSimSlot> slots = {{0, 1, 0, 10, true}, {0, 1, 4, 10, false}, {0, 1, 4, 10, false}};
  std::vector<ServeSimTask> tasks = {{"a", {0, 1}, 5, true}, {"b", {0, 2}, 5, true}};
  const std::vector<ServeSimArrival> arrivals = {{0, 0}, {20, 0}, {40, 1}};
  ServeSimReplay replay;
  replay.loadMs[{0, 1}] = 9;
  replay.runMs[{2, 1}] = 3;
  replay.loadMs[{1, 1}] = 50;  // the executor loaded here, the simulator finds the slot resident
  ServeSimParams params{1, 20, 0};
  params.replay = &replay;
  auto r = simulateServing(slots, tasks, arrivals, params);
  EXPECT_DOUBLE_EQ(r.queries[0].loadMs, 9);
  EXPECT_DOUBLE_EQ(r.queries[0].finishMs, 1 + 9 + 1);
  EXPECT_DOUBLE_EQ(r.queries[1].loadMs, 0);
  EXPECT_DOUBLE_EQ(r.queries[1].finishMs, 20 + 2);
  EXPECT_DOUBLE_EQ(r.queries[2].loadMs, 4);  // not in the replay: the slot's own load time
  EXPECT_DOUBLE_EQ(r.queries[2].finishMs, 40 + 1 + 4 + 3);
  // Without the replay, the slots' times.
  params.replay = nullptr;
  r = simulateServing(slots, tasks, arrivals, params);
  EXPECT_DOUBLE_EQ(r.queries[0].finishMs, 1 + 4 + 1);
  EXPECT_DOUBLE_EQ(r.queries[2].finishMs, 40 + 1 + 4 + 1);
}

TEST(ServeSim, AReplayedDispatchDelaysItsQueryWhenLaterThanTheCalibratedOne) {
  // One processor, runs of 2 ms, dispatch 0.5 ms. The replay has query 0 handed to
  // its worker 3 ms after arrival (its dispatcher waited for a core), query 1 after
  // 0.1 ms: the calibrated 0.5 ms holds for it, the worker's wake-up being in there too.
  std::vector<ServeSimSlot> slots = {{0, 2, 0, 10, true}};
  std::vector<ServeSimTask> tasks = {{"a", {0}, 10, true}};
  const std::vector<ServeSimArrival> arrivals = {{0, 0}, {10, 0}};
  ServeSimReplay replay;
  replay.dispatchMs[0] = 3;
  replay.dispatchMs[1] = 0.1;
  ServeSimParams params{1, 10, 0};
  params.dispatchMs = 0.5;
  params.replay = &replay;
  auto r = simulateServing(slots, tasks, arrivals, params);
  EXPECT_DOUBLE_EQ(r.queries[0].startMs, 3);
  EXPECT_DOUBLE_EQ(r.queries[0].finishMs, 5);
  EXPECT_DOUBLE_EQ(r.queries[1].startMs, 10.5);
  params.replay = nullptr;
  r = simulateServing(slots, tasks, arrivals, params);
  EXPECT_DOUBLE_EQ(r.queries[0].finishMs, 2.5);
}

TEST(ServeSim, AWorkersTurnaroundDelaysOnlyTheJobThatWaitsForIt) {
  // One processor, runs of 2 ms, a turnaround of 0.5 ms after each run: the
  // query queued behind the first starts at 2.5; one arriving after that does not wait.
  std::vector<ServeSimSlot> slots = {{0, 2, 0, 10, true}};
  std::vector<ServeSimTask> tasks = {{"a", {0}, 100, true}};
  ServeSimParams params{1, 10, 0};
  params.turnaroundMs = 0.5;
  auto r = simulateServing(slots, tasks, {{0, 0}, {0, 0}, {10, 0}}, params);
  EXPECT_DOUBLE_EQ(r.queries[0].finishMs, 2);  // the query moves on at its run's end
  EXPECT_DOUBLE_EQ(r.queries[1].startMs, 2.5);
  EXPECT_DOUBLE_EQ(r.queries[1].finishMs, 4.5);
  EXPECT_DOUBLE_EQ(r.queries[2].finishMs, 12);
}

TEST(ServeSim, ASlotRunningElsewhereIsNotEvicted) {
  // p1 runs slot 1 for 10 ms from t=0; p0 needs slot 2 at t=1 with room for one:
  // slot 1 is in use, so the load goes over the budget.
  std::vector<ServeSimSlot> slots = {{1, 10, 1, 10, false}, {0, 1, 1, 10, false}};
  std::vector<ServeSimTask> tasks = {{"a", {0}, 100, true}, {"b", {1}, 100, true}};
  auto r = simulateServing(slots, tasks, {{0, 0}, {1, 1}}, {2, 10, 0});
  EXPECT_EQ(r.evictions, 0);
  EXPECT_EQ(r.overBudgetLoads, 1);
  EXPECT_EQ(r.peakResidentBytes, 20);
}

TEST(ServeSim, AnOverBudgetLoadHoldsTheBudgetOnlyWhileItRuns) {
  // Slot 0 preloaded fills the budget: slot 1 (load 4 ms) loads over it for each
  // query that needs it, as the executor drops it when its run ends.
  std::vector<ServeSimSlot> slots = {{0, 1, 0, 10, true}, {0, 1, 4, 10, false}};
  std::vector<ServeSimTask> tasks = {{"a", {0, 1}, 100, true}};
  auto r = simulateServing(slots, tasks, {{0, 0}, {20, 0}, {40, 0}}, {1, 10, 0});
  EXPECT_EQ(r.loads, 3);
  EXPECT_EQ(r.overBudgetLoads, 3);
  EXPECT_EQ(r.evictions, 2);  // before the second and third loads
  for (const auto& q : r.queries) EXPECT_DOUBLE_EQ(q.loadMs, 4);
}

// The state both brute forces below step through: per query the position it
// is at and when that position is ready, per processor when it is free.
struct BruteForceRun {
  const std::vector<ServeSimSlot>& slots;
  const std::vector<ServeSimTask>& tasks;
  const std::vector<ServeSimArrival>& arrivals;
  double handoff = 0;
  std::vector<int> next;
  std::vector<double> ready, finish, freeAt;

  BruteForceRun(const std::vector<ServeSimSlot>& s, const std::vector<ServeSimTask>& t,
                const std::vector<ServeSimArrival>& a, int processors, double h)
      : slots(s), tasks(t), arrivals(a), handoff(h), next(a.size(), 0), ready(a.size()), finish(a.size(), -1),
        freeAt(static_cast<size_t>(processors), 0) {
    for (size_t q = 0; q < a.size(); ++q) ready[q] = a[q].timeMs;
  }
  const ServeSimTask& taskOf(size_t q) const { return tasks[static_cast<size_t>(arrivals[q].task)]; }
  bool pending(size_t q) const { return next[q] < static_cast<int>(taskOf(q).slots.size()); }
  const ServeSimSlot& slotOf(size_t q) const {
    return slots[static_cast<size_t>(taskOf(q).slots[static_cast<size_t>(next[q])])];
  }
  // Query q's position runs from `start` on its processor; the next one is ready after it (and a hand-over).
  void run(size_t q, double start) {
    const ServeSimSlot& slot = slotOf(q);
    const double end = start + slot.runMs;
    freeAt[static_cast<size_t>(slot.processor)] = end;
    if (++next[q] == static_cast<int>(taskOf(q).slots.size())) finish[q] = end;
    else ready[q] = end + (slotOf(q).processor != slot.processor ? handoff : 0);
  }
};

// Brute force: repeatedly take, over every pending (query, position) whose
// previous position has finished, the one that starts first (then earliest
// ready, then earliest arrival). No loads (everything preloaded).
std::vector<double> bruteForceFinish(const std::vector<ServeSimSlot>& slots, const std::vector<ServeSimTask>& tasks,
                                     const std::vector<ServeSimArrival>& arrivals, int processors, double handoff) {
  BruteForceRun b(slots, tasks, arrivals, processors, handoff);
  while (true) {
    int best = -1;
    double bestStart = std::numeric_limits<double>::infinity();
    for (size_t q = 0; q < arrivals.size(); ++q) {
      if (!b.pending(q)) continue;
      const double start = std::max(b.ready[q], b.freeAt[static_cast<size_t>(b.slotOf(q).processor)]);
      if (best < 0 || start < bestStart || (start == bestStart && b.ready[q] < b.ready[static_cast<size_t>(best)])) {
        best = static_cast<int>(q);
        bestStart = start;
      }
    }
    if (best < 0) break;
    b.run(static_cast<size_t>(best), bestStart);
  }
  return b.finish;
}

// A small random instance: 1-3 processors, 1-3 tasks of 1-3 positions, up to 8
// arrivals. Integer times make ties common, so the tie rules are exercised.
// randomBounds: each task's latency bound 1-12 ms (else 10).
struct RandomInstance {
  int processors = 1;
  std::vector<ServeSimSlot> slots;
  std::vector<ServeSimTask> tasks;
  std::vector<ServeSimArrival> arrivals;
  double handoff = 0;
};
RandomInstance randomInstance(std::mt19937& rng, bool randomBounds) {
  RandomInstance in;
  const int P = 1 + static_cast<int>(rng() % 3), T = 1 + static_cast<int>(rng() % 3);
  in.processors = P;
  for (int t = 0; t < T; ++t) {
    const double bound = randomBounds ? static_cast<double>(1 + rng() % 12) : 10.0;
    ServeSimTask task{"t" + std::to_string(t), {}, bound, true};
    for (int pos = 0, n = 1 + static_cast<int>(rng() % 3); pos < n; ++pos) {
      task.slots.push_back(static_cast<int>(in.slots.size()));
      in.slots.push_back({static_cast<int>(rng() % P), static_cast<double>(1 + rng() % 4), 0, 1, true});
    }
    in.tasks.push_back(task);
  }
  double time = 0;
  for (int q = 0, n = 1 + static_cast<int>(rng() % 8); q < n; ++q) {
    time += static_cast<double>(rng() % 3);
    in.arrivals.push_back({time, static_cast<int>(rng() % T)});
  }
  in.handoff = (rng() % 2) * 0.5;
  return in;
}

TEST(ServeSim, MatchesBruteForceOnRandomSmallInstances) {
  std::mt19937 rng(42);
  for (int instance = 0; instance < 200; ++instance) {
    const auto in = randomInstance(rng, false);
    auto r = simulateServing(in.slots, in.tasks, in.arrivals, {in.processors, 1000, in.handoff});
    auto expect = bruteForceFinish(in.slots, in.tasks, in.arrivals, in.processors, in.handoff);
    for (size_t q = 0; q < in.arrivals.size(); ++q) ASSERT_DOUBLE_EQ(r.queries[q].finishMs, expect[q]) << instance;
    EXPECT_EQ(r.loads, 0);
  }
}

// Brute force by processor: each processor, when free, takes of the runs
// waiting for it by then one whose query's deadline (arrival plus its task's
// bound) has not passed, else a late one; of those the earliest deadline, then
// the earliest ready, then the earliest arrival; the processor that can start
// first goes first (then the earliest ready, then the earliest arrival). No
// loads, no holds.
std::vector<double> bruteForceEarliestDeadline(const std::vector<ServeSimSlot>& slots,
                                               const std::vector<ServeSimTask>& tasks,
                                               const std::vector<ServeSimArrival>& arrivals, int processors,
                                               double handoff) {
  BruteForceRun b(slots, tasks, arrivals, processors, handoff);
  const size_t n = arrivals.size();
  auto deadline = [&](size_t q) { return arrivals[q].timeMs + b.taskOf(q).sloMs; };
  auto waitsFor = [&](size_t q, int p) { return b.pending(q) && b.slotOf(q).processor == p; };
  while (true) {
    int best = -1;
    double bestStart = 0;
    for (int p = 0; p < processors; ++p) {
      double earliest = std::numeric_limits<double>::infinity();
      for (size_t q = 0; q < n; ++q)
        if (waitsFor(q, p)) earliest = std::min(earliest, b.ready[q]);
      if (!std::isfinite(earliest)) continue;
      const double start = std::max(earliest, b.freeAt[static_cast<size_t>(p)]);
      int pick = -1;
      for (size_t q = 0; q < n; ++q) {
        if (!waitsFor(q, p) || b.ready[q] > start) continue;
        const auto k = static_cast<size_t>(pick);
        const bool late = deadline(q) < start, pickLate = pick >= 0 && deadline(k) < start;
        if (pick < 0 || (pickLate && !late) ||
            (late == pickLate &&
             (deadline(q) < deadline(k) || (deadline(q) == deadline(k) && b.ready[q] < b.ready[k]))))
          pick = static_cast<int>(q);
      }
      const auto k = static_cast<size_t>(pick), o = static_cast<size_t>(best);
      auto earlier = [&] {
        return start < bestStart ||
               (start == bestStart && (b.ready[k] < b.ready[o] || (b.ready[k] == b.ready[o] && k < o)));
      };
      if (best < 0 || earlier()) {
        best = pick;
        bestStart = start;
      }
    }
    if (best < 0) break;
    b.run(static_cast<size_t>(best), bestStart);
  }
  return b.finish;
}

TEST(ServeSim, EarliestDeadlineFirstLetsATightQueryPassALooseOne) {
  // One processor: "loose" (3 ms runs, bound 100) arrives at 0 and 0.5, "tight"
  // (1 ms, bound 4) at 1. First come: loose [0, 3], loose [3, 6], tight [6, 7],
  // 6 ms late for its bound of 4. Earliest deadline: at 3 tight's deadline (5)
  // is before the second loose one's (100.5): tight [3, 4], loose [4, 7].
  std::vector<ServeSimSlot> slots = {{0, 3.0, 0, 0, true}, {0, 1.0, 0, 0, true}};
  std::vector<ServeSimTask> tasks = {{"loose", {0}, 100, true}, {"tight", {1}, 4, true}};
  std::vector<ServeSimArrival> arrivals = {{0, 0}, {0.5, 0}, {1, 1}};
  ServeSimParams params{1, 0, 0};
  const auto fifo = simulateServing(slots, tasks, arrivals, params);
  EXPECT_DOUBLE_EQ(fifo.queries[2].finishMs, 7.0);
  EXPECT_EQ(fifo.summary.violations, 1);
  params.order = ServingOrder::EarliestDeadline;
  const auto edf = simulateServing(slots, tasks, arrivals, params);
  EXPECT_DOUBLE_EQ(edf.queries[0].finishMs, 3.0);  // never preempted
  EXPECT_DOUBLE_EQ(edf.queries[2].finishMs, 4.0);
  EXPECT_DOUBLE_EQ(edf.queries[1].finishMs, 7.0);
  EXPECT_EQ(edf.summary.violations, 0);
}

TEST(ServeSim, EarliestDeadlineFirstTakesALateQueryAfterTheOnesThatCanStillMakeIt) {
  // One processor: "long" (5 ms, bound 100) at 0, then "tight" (1 ms, bound 2) at
  // 1 and "mid" (1 ms, bound 4.5) at 2. At 5 tight's deadline (3) has passed and
  // mid's (6.5) has not: mid [5, 6] within its bound, tight [6, 7] late anyway.
  // Taking tight first, as its deadline is the earliest (and as first come
  // does), would end mid at 7: both missed.
  std::vector<ServeSimSlot> slots = {{0, 5.0, 0, 0, true}, {0, 1.0, 0, 0, true}, {0, 1.0, 0, 0, true}};
  std::vector<ServeSimTask> tasks = {{"long", {0}, 100, true}, {"tight", {1}, 2, true}, {"mid", {2}, 4.5, true}};
  std::vector<ServeSimArrival> arrivals = {{0, 0}, {1, 1}, {2, 2}};
  ServeSimParams params{1, 0, 0};
  params.order = ServingOrder::EarliestDeadline;
  const auto r = simulateServing(slots, tasks, arrivals, params);
  EXPECT_DOUBLE_EQ(r.queries[2].finishMs, 6.0);
  EXPECT_DOUBLE_EQ(r.queries[1].finishMs, 7.0);
  EXPECT_EQ(r.summary.violations, 1);  // tight only; tight first would miss mid's bound too
  const auto fifo = simulateServing(slots, tasks, arrivals, {1, 0, 0});
  EXPECT_EQ(fifo.summary.violations, 2);
}

TEST(ServeSim, EarliestDeadlineFirstMatchesBruteForceOnRandomSmallInstances) {
  std::mt19937 rng(7);
  int reordered = 0;  // instances where the order changed some finish time
  for (int instance = 0; instance < 300; ++instance) {
    const auto in = randomInstance(rng, true);
    ServeSimParams params{in.processors, 1000, in.handoff};
    params.order = ServingOrder::EarliestDeadline;
    const auto r = simulateServing(in.slots, in.tasks, in.arrivals, params);
    const auto expect = bruteForceEarliestDeadline(in.slots, in.tasks, in.arrivals, in.processors, in.handoff);
    const auto fifo = bruteForceFinish(in.slots, in.tasks, in.arrivals, in.processors, in.handoff);
    for (size_t q = 0; q < in.arrivals.size(); ++q) ASSERT_DOUBLE_EQ(r.queries[q].finishMs, expect[q]) << instance;
    reordered += expect != fifo;
  }
  EXPECT_GT(reordered, 20) << "the instances hardly exercise the order";
}

TEST(ServeSim, IsDeterministic) {
  std::vector<ServeSimSlot> slots = {{0, 1.5, 2, 10, false}, {1, 2.5, 3, 10, false}, {0, 0.5, 1, 10, true}};
  std::vector<ServeSimTask> tasks = {{"a", {0, 1}, 4, true}, {"b", {2, 1}, 4, true}};
  std::vector<ServeSimArrival> arrivals;
  for (int i = 0; i < 50; ++i) arrivals.push_back({i * 0.7, i % 2});
  auto a = simulateServing(slots, tasks, arrivals, {2, 20, 0.1});
  auto b = simulateServing(slots, tasks, arrivals, {2, 20, 0.1});
  ASSERT_EQ(a.spans.size(), b.spans.size());
  for (size_t i = 0; i < a.spans.size(); ++i) {
    EXPECT_EQ(a.spans[i].startMs, b.spans[i].startMs);
    EXPECT_EQ(a.spans[i].slot, b.spans[i].slot);
  }
  EXPECT_EQ(a.summary.p99Ms, b.summary.p99Ms);
  EXPECT_EQ(a.loads, b.loads);
}

// Under the device's memory budget the units whose loads would cost the most
// per byte stay resident, a busy small unit before a rarely queried large one,
// as long as the largest unit left out still loads beside them; checked against
// every subset on this instance.
// Served in turn, resident throughout are the units every phase's own
// residency keeps: a unit one phase does not use, or does not keep, is loaded
// on demand in the phases that use it.
TEST(ServeSim, PhasesServedInTurnKeepResidentOnlyWhatEveryPhaseKeeps) {
  const std::vector<int64_t> bytes{1'000'000, 1'000'000, 1'000'000, 8'000'000};
  std::vector<double> loadMs;
  for (auto b : bytes) loadMs.push_back(5.0 * static_cast<double>(b) / 1e6);
  // Unit 0 in both phases, 1 only in the first, 2 only in the second, 3 in both but rarely run.
  const std::vector<std::map<int, double>> phases{{{0, 100}, {1, 50}, {3, 0.1}}, {{0, 100}, {2, 50}, {3, 0.1}}};
  EXPECT_EQ(residentInEveryPhase(phases, loadMs, bytes, 100'000'000), (std::vector<bool>{true, false, false, true}));
  // 9.5 MB: each phase keeps its busiest unit beside room for unit 3 (8 MB); both keep unit 0 only.
  EXPECT_EQ(residentInEveryPhase(phases, loadMs, bytes, 9'500'000), (std::vector<bool>{true, false, false, false}));
  const std::map<int, double> every{{0, 100}, {1, 50}, {2, 0}, {3, 0.1}};
  EXPECT_EQ(residentInEveryPhase({every}, loadMs, bytes, 10'500'000),
            residentByLoadCost({100, 50, 0, 0.1}, loadMs, bytes, 10'500'000))
      << "one phase using every unit is its own residency";
}

TEST(ServeSim, TheBudgetKeepsTheUnitsWhoseLoadsWouldCostMost) {
  // busy 200 q/s 1 MB, rare 0.5 q/s 8 MB, medium 20 q/s 2 MB; loads 5 ms per MB.
  const std::vector<double> qps{200, 0.5, 20};
  const std::vector<int64_t> bytes{1'000'000, 8'000'000, 2'000'000};
  std::vector<double> loadMs;
  for (auto b : bytes) loadMs.push_back(5.0 * static_cast<double>(b) / 1e6);
  EXPECT_EQ(residentByLoadCost(qps, loadMs, bytes, 9'000'000), (std::vector<bool>{true, false, false}));
  EXPECT_EQ(residentByLoadCost(qps, loadMs, bytes, 10'999'999), (std::vector<bool>{true, false, false}))
      << "busy and medium (3 MB) beside rare loaded on demand (8 MB) need 11 MB";
  EXPECT_EQ(residentByLoadCost(qps, loadMs, bytes, 11'000'000), (std::vector<bool>{true, true, true}));
  // The best subset S (load time saved per second, qps x load) with S's bytes plus
  // the largest unit outside S within the budget: the greedy finds it here (it is
  // not optimal in general).
  for (int64_t budget : {8'000'000LL, 9'000'000LL, 9'999'999LL, 10'000'000LL, 10'999'999LL, 11'000'000LL}) {
    const auto got = residentByLoadCost(qps, loadMs, bytes, budget);
    double gotSaved = 0, best = 0;
    for (size_t u = 0; u < qps.size(); ++u) gotSaved += got[u] ? qps[u] * loadMs[u] : 0;
    for (int mask = 0; mask < 8; ++mask) {
      int64_t used = 0, leftOut = 0;
      double saved = 0;
      for (size_t u = 0; u < qps.size(); ++u)
        if (mask >> u & 1) used += bytes[u], saved += qps[u] * loadMs[u];
        else leftOut = std::max(leftOut, bytes[u]);
      if (used + leftOut <= budget) best = std::max(best, saved);
    }
    EXPECT_DOUBLE_EQ(gotSaved, best) << "budget " << budget;
  }
}

}  // namespace
}  // namespace zp::sim
