// The list-schedule cost model on graphs small enough to compute by hand.
#include <gtest/gtest.h>

#include "passes/opplace/baselines.h"
#include "passes/opplace/problem.h"

namespace zp::opplace {
namespace {

// a -> b, a -> c, (b, c) -> d on two processors; hand-off 1 ms + 1 ms per MB.
Problem diamond() {
  Problem p;
  p.processors = {"cpu", "gpu"};
  for (const char* n : {"a", "b", "c", "d"}) p.nodes.push_back(OpNode{n, "Conv", 0, 0});
  p.ms = {{1, 2}, {4, 3}, {4, 3}, {1, 1}};
  p.edges = {{0, 1, 1e6}, {0, 2, 0}, {1, 3, 0}, {2, 3, 2e6}};
  p.handoff = {{estimate::TransitionCost{}, estimate::TransitionCost{1, 1e-6}}, {estimate::TransitionCost{1, 1e-6}, estimate::TransitionCost{}}};
  return p;
}

TEST(OpPlaceCostModel, AllOnOneProcessorIsTheSum) {
  auto p = diamond();
  ASSERT_TRUE(validate(p).ok());
  EXPECT_DOUBLE_EQ(latencyOf(p, {0, 0, 0, 0}), 10);
  EXPECT_DOUBLE_EQ(latencyOf(p, {1, 1, 1, 1}), 9);
}

TEST(OpPlaceCostModel, BranchesOnTwoProcessorsOverlapAndPayHandOffs) {
  auto p = diamond();
  // a on cpu [0,1]; b on gpu: ready 1 + (1 + 1) = 3, runs [3,6]; c on cpu [1,5];
  // d on cpu: b's output needs 1 + 0 = 1 ms -> ready 7, c ready 5 -> [7,8].
  auto t = listSchedule(p, {0, 1, 0, 0});
  EXPECT_DOUBLE_EQ(t.startMs[1], 3);
  EXPECT_DOUBLE_EQ(t.finishMs[2], 5);
  EXPECT_DOUBLE_EQ(t.startMs[3], 7);
  EXPECT_DOUBLE_EQ(t.latencyMs, 8);
  EXPECT_EQ(t.handoffs, 2);
}

TEST(OpPlaceCostModel, AProcessorRunsOneOperatorAtATime) {
  auto p = diamond();
  // Everything but d on gpu: b [2,5], c waits for the gpu [5,8].
  auto t = listSchedule(p, {1, 1, 1, 0});
  EXPECT_DOUBLE_EQ(t.startMs[2], 5);
  // d on cpu: b's output 1 ms, c's 1 + 2 = 3 ms -> ready 11.
  EXPECT_DOUBLE_EQ(t.latencyMs, 12);
}

TEST(OpPlaceCostModel, AProcessorOnSharedCoresWaitsForAllOfThem) {
  // A third processor "all" on both cores: each of its operators needs cpu and gpu free.
  auto p = diamond();
  p.processors.push_back("all");
  for (auto& row : p.ms) row.push_back(0.5);
  for (auto& row : p.handoff) row.push_back(estimate::TransitionCost{1, 0});
  p.handoff.push_back({estimate::TransitionCost{1, 0}, estimate::TransitionCost{1, 0}, estimate::TransitionCost{}});
  p.cores = {{0}, {1}, {0, 1}};
  ASSERT_TRUE(validate(p).ok());
  // a on cpu [0,1]; b on gpu: 1 + 2 = 3 -> [3,6]; c on all: ready 1 + 1 = 2, but the gpu
  // is busy until 6 -> [6,6.5]; d on all: ready max(6 + 1, 6.5 + 0) = 7 -> [7,7.5].
  auto t = listSchedule(p, {0, 1, 2, 2});
  EXPECT_DOUBLE_EQ(t.startMs[2], 6);
  EXPECT_DOUBLE_EQ(t.startMs[3], 7);
  EXPECT_DOUBLE_EQ(t.latencyMs, 7.5);
  // Everything on all: the sum, as one processor with all cores.
  EXPECT_DOUBLE_EQ(latencyOf(p, {2, 2, 2, 2}), 2);
  // Greedy sees the cores too: it never starts an operator on a busy core.
  const auto g = greedyAssignment(p);
  const auto tg = listSchedule(p, g);
  EXPECT_LE(tg.latencyMs, 2 + 1e-12);
  p.cores = {{0}, {1}};
  EXPECT_FALSE(validate(p).ok());
  p.cores = {{0}, {1}, {}};
  EXPECT_FALSE(validate(p).ok());
}

TEST(OpPlaceCostModel, ChainsAreRecognised) {
  auto p = diamond();
  EXPECT_FALSE(isChain(p));
  p.edges = {{0, 1, 0}, {1, 2, 0}, {2, 3, 0}};
  EXPECT_TRUE(isChain(p));
  p.edges = {{0, 1, 0}, {1, 2, 0}, {1, 3, 0}};
  EXPECT_FALSE(isChain(p));
}

TEST(OpPlaceCostModel, BadProblemsAreErrors) {
  auto p = diamond();
  p.edges.push_back({3, 1, 0});
  EXPECT_FALSE(validate(p).ok());
  p = diamond();
  p.ms[2] = {1};
  EXPECT_FALSE(validate(p).ok());
  p = diamond();
  p.ms[2][0] = -1;
  EXPECT_FALSE(validate(p).ok());
}

TEST(OpPlaceBaselines, ThresholdRuleSendsSparseLightOperatorsToTheSparseProcessor) {
  auto p = diamond();
  p.nodes[1].activationSparsity = 0.9;
  p.nodes[1].intensity = 10;
  p.nodes[2].activationSparsity = 0.9;
  p.nodes[2].intensity = 1e9;
  auto a = applyThresholdRule(p, ThresholdRule{0, 1, 0.5, 1e6});
  EXPECT_EQ(a, (Assignment{1, 0, 1, 1}));
}

TEST(OpPlaceBaselines, GreedyPicksTheEarliestFinish) {
  auto p = diamond();
  // a: gpu 2 vs cpu 1 -> cpu. b: cpu 5, gpu 1+2+3 = 6 -> cpu. c: cpu free at 5 -> 9, gpu 1+1+3 = 5 -> gpu.
  // d: cpu max(5, 5 + 1 + 2) + 1 = 9; gpu max(5 + 1 + 0, 5) + 1 = 7 -> gpu.
  EXPECT_EQ(greedyAssignment(p), (Assignment{0, 0, 1, 1}));
  auto b = baselines(p);
  ASSERT_EQ(b.size(), 4u);
  EXPECT_EQ(b[0].name, "cpu-only");
  EXPECT_DOUBLE_EQ(b[0].latencyMs, 10);
  EXPECT_EQ(b[2].name, "greedy");
  EXPECT_DOUBLE_EQ(b[2].latencyMs, 7);
}

}  // namespace
}  // namespace zp::opplace
