// The plan's choice (zooplan's, what plan-run runs) against planted spaces: it
// never misses an accuracy SLO another choice meets, and it decides with the
// accuracy zoo-profile measured wherever it measured one.
#include <gtest/gtest.h>

#include "passes/select/plan_stitch.h"
#include "passes/select/select.h"
#include "tests/select/planted_space.h"

namespace zp::select {
namespace {

using testing::plantedSpace;

TEST(PlanChoice, NeverMissesAnAccuracySloAnotherChoiceMeets) {
  // No choice meets the latency SLO, so every one violates every query: by
  // violations and throughput alone, the fastest (u90+u90, below the accuracy
  // SLO) would win. The baselines' SV-LO picks it.
  StitchSpace sp = plantedSpace({{0.99, 0.99}, {0.97, -1}, {0.96, -1}, {0.80, 0.80}}, {{1.0, 0.3}, {1.0, 0.3}});
  plan::SloConfiguration cfg{"C01", {{"digits", {0.95, 1e-6}}}};
  SelectParams params;
  params.queriesPerTask = 5;
  bool someMiss = false;
  for (const auto& b : baselineChoices(sp, cfg, params)) someMiss |= evaluate(sp, cfg, b, params).accuracyMisses > 0;
  ASSERT_TRUE(someMiss) << "planted: some baseline's pick misses the accuracy SLO";
  const Choice z = zooplanChoice(sp, cfg, params, nullptr, nullptr);
  const Outcome o = evaluate(sp, cfg, z, params);
  EXPECT_EQ(o.accuracyMisses, 0) << "chose " << sp.tasks[0].idOf(static_cast<uint64_t>(z.candidate[0]));
  EXPECT_GE(sp.tasks[0].accuracy->judged(static_cast<uint64_t>(z.candidate[0])), 0.95);
}

TEST(PlanChoice, DecidesWithMeasuredAccuracyAndRecordsItsSource) {
  // dense+u90 is predicted at 0.97 (meets 0.95) and is the fastest such, but
  // zoo-profile measured 0.90; u90+dense measured 0.955 meets it, slightly slower.
  StitchSpace sp = plantedSpace({{0.99, 0.99}, {0.97, 0.90}, {0.96, 0.955}, {0.80, 0.80}}, {{1.0, 0.3}, {1.05, 0.3}});
  plan::SloConfiguration cfg{"C01", {{"digits", {0.95, 1.5}}}};
  SelectParams params;
  params.queriesPerTask = 5;
  ASSERT_TRUE(params.measuredAccuracyForDecisions) << "measured accuracy is the default";
  auto measured = planStitch(sp, {cfg}, {}, params);
  ASSERT_TRUE(measured.ok()) << measured.error().message;
  const plan::StitchPlan& p = measured->plan;
  EXPECT_EQ(p.chosenSystem, "zooplan");
  // The plan's answer is its chosen system's choice, whatever Algorithm 1 alone says.
  const auto& zooplan = plan::chosenSystem(p);
  ASSERT_EQ(zooplan.name, "zooplan");
  ASSERT_EQ(zooplan.selections.size(), 1u);
  const plan::SystemTaskChoice& sel = zooplan.selections[0].tasks.at(0);
  EXPECT_EQ(sel.combination, "u90+dense");
  EXPECT_TRUE(sel.feasible);
  EXPECT_FALSE(sel.miss);
  EXPECT_DOUBLE_EQ(sel.accuracy, 0.955);
  EXPECT_EQ(sel.accuracySource, "measured");
  EXPECT_EQ(sel.placement.size(), 2u);

  // With the estimator's figures (SparseLoom's way), Algorithm 1 takes the
  // predicted 0.97 of dense+u90; judged by its measurement it misses, so the
  // plan still avoids it.
  params.measuredAccuracyForDecisions = false;
  auto estimated = planStitch(sp, {cfg}, {}, params);
  ASSERT_TRUE(estimated.ok());
  const auto& a1 = estimated->plan.systems.at(1);
  ASSERT_EQ(a1.name, "Algorithm-1");
  EXPECT_EQ(a1.selections[0].tasks[0].combination, "dense+u90");
  EXPECT_NE(plan::chosenSystem(estimated->plan).selections[0].tasks[0].combination, "dense+u90");
}

// Re-profiling moves microsecond latencies by noise: a task whose earlier pick
// is predicted within the noise of the new one keeps it; one clearly worse does not.
TEST(PlanChoice, ATieWithinTheNoiseKeepsThePreviousPlansPick) {
  // dense+dense 1.0 + 1.0 ms; u90+u90 0.98 + 1.0 ms (2% faster: a tie); both accurate enough.
  StitchSpace sp = plantedSpace({{0.99, 0.99}, {0.97, -1}, {0.96, -1}, {0.98, 0.98}}, {{1.0, 0.98}, {1.0, 1.0}});
  plan::SloConfiguration cfg{"C01", {{"digits", {0.95, 10}}}};
  SelectParams params;
  params.queriesPerTask = 5;
  const Choice fresh = zooplanChoice(sp, cfg, params, nullptr, nullptr);
  const std::string freshPick = sp.tasks[0].idOf(static_cast<uint64_t>(fresh.candidate[0]));
  ASSERT_NE(freshPick, "dense+dense") << "planted: without an earlier plan the faster mix wins";
  auto previous = std::make_shared<PreviousChoices>();
  previous->bySlo["C01"]["digits"] = {"dense+dense", fresh.placement[0]};
  params.previous = previous;
  ZooplanSearch search;
  const Choice kept = zooplanChoice(sp, cfg, params, nullptr, &search);
  EXPECT_EQ(sp.tasks[0].idOf(static_cast<uint64_t>(kept.candidate[0])), "dense+dense");
  EXPECT_EQ(search.keptPrevious, 1);
  // Beyond the noise (the earlier pick 30% slower) the new pick stands.
  StitchSpace slow = plantedSpace({{0.99, 0.99}, {0.97, -1}, {0.96, -1}, {0.98, 0.98}}, {{1.0, 0.5}, {1.0, 0.5}});
  const Choice moved = zooplanChoice(slow, cfg, params, nullptr, &search);
  EXPECT_NE(slow.tasks[0].idOf(static_cast<uint64_t>(moved.candidate[0])), "dense+dense");
  EXPECT_EQ(search.keptPrevious, 0);
}

}  // namespace
}  // namespace zp::select
