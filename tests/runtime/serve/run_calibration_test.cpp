#include <gtest/gtest.h>

#include <algorithm>

#include "libplan/runtime/measure.h"
#include "libplan/runtime/serve/run_calibration.h"
#include "libplan/util/stats.h"
#include "tests/runtime/serve/test_models.h"
#include "tests/common/processors.h"

namespace zp::runtime::serve {
namespace {

// Slot 0: one MatMul on p0; slot 1: twelve on p0; slot 2: four on p1.
struct Calibrated {
  std::vector<std::string> texts = {testing::chainText("x", "y", 32, 128, 1, 0.01f),
                                    testing::chainText("x", "y", 32, 128, 12, 0.01f),
                                    testing::chainText("x", "y", 32, 128, 4, 0.01f)};
  ServeSetup setup;
  Calibrated() {
    const int c0 = availableCores().front(), c1 = availableCores().back();
    setup.processors = {zp::testing::pinned("p0", {c0}), zp::testing::pinned("p1", {c1})};
    setup.slots = {{"shallow", 0, 1000, true}, {"deep", 0, 1000, true}, {"other", 1, 1000, true}};
    setup.tasks = {{"a", {0, 1}, 100, true, {TensorMap{}}, {}}, {"b", {2}, 100, true, {TensorMap{}}, {}}};
    setup.memoryBudgetBytes = 3000;
  }
};

RunCalibrationParams quickParams(int rounds, double idleGapMs, int wakeSamples) {
  RunCalibrationParams params;
  params.rounds = rounds;
  params.idleGapsMs = {idleGapMs, 2 * idleGapMs};
  params.wakeSamples = wakeSamples;
  params.turnaroundQueriesPerTask = 0;  // no burst served: each slot loaded once, by the rounds
  return params;
}

TEST(RunCalibration, EverySlotIsTimedBackToBackAndAfterIdleAndTheWakeUpsAreTimed) {
  Calibrated c;
  testing::InMemoryLoader loader(c.texts);
  auto r = calibrateServing(c.setup, loader, quickParams(6, 3, 5));
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->hotMs.size(), 3u);
  for (size_t s = 0; s < 3; ++s) {
    EXPECT_EQ(r->hotMs[s].size(), 6u) << s;
    EXPECT_EQ(r->idleMs[s].size(), 6u) << s;
    ASSERT_EQ(r->idleGapsMs[s].size(), 6u) << s;
    for (double ms : r->hotMs[s]) EXPECT_GT(ms, 0) << s;
    // Each after-idle run follows its worker's sleep of 3 or 6 ms.
    for (double gap : r->idleGapsMs[s]) EXPECT_GE(gap, 3.0) << s;
    const auto gaps = r->idleGapsMs[s];
    EXPECT_TRUE(std::any_of(gaps.begin(), gaps.end(), [](double g) { return g >= 6.0; })) << s;
    EXPECT_EQ(loader.loads(static_cast<int>(s)), 1) << s;
  }
  // Twelve MatMuls take longer than one, however noisy the host.
  EXPECT_GT(median(r->hotMs[1]), median(r->hotMs[0]));
  EXPECT_GT(r->dispatchMs, 0);
  EXPECT_GT(r->handoffMs, 0);
}

TEST(RunCalibration, ASlotHoldingAnotherProcessorIsTimedToo) {
  Calibrated c;
  c.setup.slots[1].holds = {1};  // "deep" runs with p1 to itself, as an operator-placed unit does
  testing::InMemoryLoader loader(c.texts);
  auto r = calibrateServing(c.setup, loader, quickParams(4, 1, 3));
  ASSERT_TRUE(r.ok()) << r.error().message;
  for (size_t s = 0; s < 3; ++s) {
    EXPECT_EQ(r->hotMs[s].size(), 4u) << s;
    EXPECT_EQ(r->idleMs[s].size(), 4u) << s;
  }
  EXPECT_GT(median(r->hotMs[1]), median(r->hotMs[0]));
}

TEST(RunCalibration, LoadsAreTimedAmongTheBackToBackRounds) {
  Calibrated c;
  testing::InMemoryLoader loader(c.texts);
  RunCalibrationParams params = quickParams(2, 1, 2);
  auto once = calibrateServing(c.setup, loader, params);
  ASSERT_TRUE(once.ok()) << once.error().message;
  EXPECT_TRUE(once->loadMs.empty()) << "no load timed unless asked";
  for (size_t s = 0; s < 3; ++s) EXPECT_EQ(loader.loads(static_cast<int>(s)), 1) << s;
  params.timeLoads = true;
  testing::InMemoryLoader counted(c.texts);
  auto r = calibrateServing(c.setup, counted, params);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->loadMs.size(), 3u);
  for (size_t s = 0; s < 3; ++s) {
    // One load per back-to-back round, the warm-up's untimed, beside the slot's first load.
    ASSERT_EQ(r->loadMs[s].size(), 2u) << s;
    for (double ms : r->loadMs[s]) EXPECT_GT(ms, 0) << s;
    EXPECT_EQ(counted.loads(static_cast<int>(s)), 1 + params.warmup + params.rounds) << s;
    EXPECT_EQ(r->hotMs[s].size(), 2u);
    EXPECT_EQ(r->idleMs[s].size(), 2u);
    // Each timed load first frees the slot's own copy: once per timed round.
    ASSERT_EQ(r->freeMs.size(), 3u);
    EXPECT_EQ(r->freeMs[s].size(), 2u) << s;
    for (double ms : r->freeMs[s]) EXPECT_GE(ms, 0) << s;
    // And each timed load's copy runs once, timed as the slot's first run.
    ASSERT_EQ(r->firstRunMs.size(), 3u);
    EXPECT_EQ(r->firstRunMs[s].size(), 2u) << s;
    for (double ms : r->firstRunMs[s]) EXPECT_GT(ms, 0) << s;
  }
}

TEST(RunCalibration, TheExecutorsTurnaroundBetweenQueuedJobsIsTimedAsItServesABurst) {
  Calibrated c;
  testing::InMemoryLoader loader(c.texts);
  RunCalibrationParams params = quickParams(2, 1, 2);
  params.turnaroundQueriesPerTask = 4;
  for (auto& t : c.setup.tasks) t.samples = {{{"x", randomInput({"x", DType::F32, {32, 128}}, 7)}}};
  auto r = calibrateServing(c.setup, loader, params);
  ASSERT_TRUE(r.ok()) << r.error().message;
  // Eight queries at once: p0 takes a's jobs one after another, p1 b's.
  EXPECT_GT(r->turnaroundMs, 0);
  EXPECT_LT(r->turnaroundMs, 50);
  // The burst is served as a workload is: its preloads loaded again by the executor.
  for (size_t s = 0; s < 3; ++s) EXPECT_EQ(loader.loads(static_cast<int>(s)), 2) << s;
  // A setup without tasks (a planner's candidate units): each slot served as a
  // task of its own, on its calibration's random inputs.
  c.setup.tasks.clear();
  testing::InMemoryLoader alone(c.texts);
  auto own = calibrateServing(c.setup, alone, params);
  ASSERT_TRUE(own.ok()) << own.error().message;
  EXPECT_GT(own->turnaroundMs, 0);
  EXPECT_LT(own->turnaroundMs, 50);
  for (size_t s = 0; s < 3; ++s) EXPECT_EQ(alone.loads(static_cast<int>(s)), 2) << s;
  // No burst asked for: no turnaround.
  params.turnaroundQueriesPerTask = 0;
  testing::InMemoryLoader none(c.texts);
  auto r0 = calibrateServing(c.setup, none, params);
  ASSERT_TRUE(r0.ok()) << r0.error().message;
  EXPECT_EQ(r0->turnaroundMs, 0);
}

TEST(RunCalibration, SetsServedTogetherAreTimedEachOnItsOwn) {
  Calibrated c;
  RunCalibrationParams params = quickParams(2, 1, 2);
  // "shallow" is served in both sets: timed in each; "deep" in the first only.
  params.servedTogether = {{1, 0}, {0, 2, 2}};
  testing::InMemoryLoader loader(c.texts);
  auto r = calibrateServing(c.setup, loader, params);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->hotMs[0].size(), 4u);
  EXPECT_EQ(r->idleMs[0].size(), 4u);
  for (size_t s : {1, 2}) {
    EXPECT_EQ(r->hotMs[s].size(), 2u) << s;
    EXPECT_EQ(r->idleMs[s].size(), 2u) << s;
  }
  // A slot in no set is timed all the same, in a set of the others left out.
  params.servedTogether = {{1}};
  testing::InMemoryLoader rest(c.texts);
  auto left = calibrateServing(c.setup, rest, params);
  ASSERT_TRUE(left.ok()) << left.error().message;
  for (size_t s = 0; s < 3; ++s) EXPECT_EQ(left->hotMs[s].size(), 2u) << s;
  params.servedTogether = {{0, 3}};
  auto bad = calibrateServing(c.setup, rest, params);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("slot 3"), std::string::npos) << bad.error().message;
}

TEST(RunCalibration, APieceOfACalibrationGoesOnThroughTheIdleGapsWhereTheLastStopped) {
  Calibrated c;
  RunCalibrationParams params = quickParams(1, 1, 2);
  params.idleGapsMs = {1, 40};
  testing::InMemoryLoader loader(c.texts);
  auto first = calibrateServing(c.setup, loader, params);
  params.idleGapStart = 1;
  auto next = calibrateServing(c.setup, loader, params);
  ASSERT_TRUE(first.ok() && next.ok());
  // The first slot of each processor meets the 1 ms gap first, then the 40 ms one.
  for (size_t s : {0, 2}) {
    ASSERT_EQ(first->idleGapsMs[s].size(), 1u);
    ASSERT_EQ(next->idleGapsMs[s].size(), 1u);
    EXPECT_LT(first->idleGapsMs[s][0], 40) << s;
    EXPECT_GE(next->idleGapsMs[s][0], 40) << s;
  }
  params.idleGapStart = -1;
  EXPECT_FALSE(calibrateServing(c.setup, loader, params).ok());
}

// A loader that fails for one slot.
class FailingLoader : public SubgraphLoader {
 public:
  FailingLoader(std::vector<std::string> texts, int failing) : inner_(std::move(texts)), failing_(failing) {}
  Expected<LoadedSubgraph> load(int slot, const ServeSlot& info, const SessionOptions& options) override {
    if (slot == failing_) return makeError("cache corrupt");
    return inner_.load(slot, info, options);
  }

 private:
  testing::InMemoryLoader inner_;
  int failing_;
};

TEST(RunCalibration, ALoadFailureOnOneProcessorIsReturnedAndTheOthersStop) {
  Calibrated c;
  for (int failing : {0, 2}) {
    FailingLoader loader(c.texts, failing);
    auto r = calibrateServing(c.setup, loader, {});
    ASSERT_FALSE(r.ok()) << failing;
    EXPECT_NE(r.error().message.find("cache corrupt"), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().message.find(c.setup.slots[static_cast<size_t>(failing)].name), std::string::npos);
  }
}

TEST(RunCalibration, BadParametersAreRefused) {
  Calibrated c;
  testing::InMemoryLoader loader(c.texts);
  RunCalibrationParams params;
  params.rounds = 0;
  EXPECT_FALSE(calibrateServing(c.setup, loader, params).ok());
}

}  // namespace
}  // namespace zp::runtime::serve
