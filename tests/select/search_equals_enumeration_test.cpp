// The selection's searches against the scans they replace
// (enumeration_reference.h) on seeded random instances: Algorithm 1's choice
// and mean latency, every system zooplan considers, the baselines, the order
// over several configurations and the whole stitch section of the plan
// (selections, served systems, preload sets) — equal, ties broken the same
// way, objective values to the bit. With `ties`, latencies and accuracies come
// from a few small numbers so that many combinations tie exactly.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "passes/select/combination_search.h"
#include "passes/select/plan_stitch.h"
#include "tests/select/enumeration_reference.h"
#include "tests/select/random_space.h"

namespace zp::select {
namespace {
using testing::randomSlo;
using testing::randomSpace;
using testing::Shape;
using testing::SpaceOptions;

std::string describe(const Choice& c) {
  std::string s = c.system + " order";
  for (const auto& p : c.order) s += " " + p;
  for (size_t t = 0; t < c.candidate.size(); ++t) {
    s += fmt::format(" | {} {}", c.candidate[t], c.feasible[t] ? "feasible" : "infeasible");
    for (const auto& p : c.placement[t]) s += " " + p;
  }
  return s;
}

void expectSame(const Choice& a, const Choice& b, const std::string& what) {
  EXPECT_EQ(describe(a), describe(b)) << what;
}

// Shapes from one position to four, one variant to four, one processor to four.
Shape shapeOf(int round) {
  return Shape{1 + round % 3, 1 + (round / 3) % 4, 1 + (round / 12) % 4, 1 + (round / 48) % 4};
}

SpaceOptions optionsOf(int round) {
  SpaceOptions o;
  o.ties = round % 2 == 0;
  o.meanAccuracy = round % 5 == 0;
  o.unprofiled = round % 7 == 0 ? 0.4 : 0.05;
  return o;
}

TEST(SearchEqualsEnumeration, Algorithm1AndEverySystemZooplanConsiders) {
  std::mt19937_64 rng(2024);
  int feasibleTasks = 0, infeasibleTasks = 0;
  for (int round = 0; round < 192; ++round) {
    const Shape shape = shapeOf(round);
    StitchSpace sp = randomSpace(rng, shape, optionsOf(round));
    const auto slo = randomSlo(rng, sp, "C");
    SelectParams params;
    params.queriesPerTask = 5;
    params.measuredAccuracyForDecisions = round % 3 == 0;
    const std::string what = fmt::format("round {} T={} S={} V={} P={}", round, shape.T, shape.S, shape.V, shape.P);
    const auto orders = globalOrders(sp);
    for (bool originalsOnly : {false, true}) {
      const auto a = algorithm1(sp, slo, orders, params, originalsOnly, "zooplan");
      const auto b = reference::algorithm1(sp, slo, orders, params, originalsOnly, "zooplan");
      expectSame(a.choice, b.choice, what);
      EXPECT_EQ(a.meanLatencyMs, b.meanLatencyMs) << what;
      EXPECT_EQ(a.ordersEvaluated, b.ordersEvaluated) << what;
      for (bool f : a.choice.feasible) (f ? feasibleTasks : infeasibleTasks) += !originalsOnly;
    }
    for (const auto& o : orders)
      expectSame(algorithm1(sp, slo, {o}, params, false, "zooplan").choice,
                 reference::algorithm1(sp, slo, {o}, params, false, "zooplan").choice, what + " single order");
    Algorithm1Result a1, b1;
    ZooplanSearch searchA;
    std::string noteB;
    expectSame(zooplanChoice(sp, slo, params, &a1, &searchA), reference::zooplanChoice(sp, slo, params, &b1, &noteB), what);
    EXPECT_EQ(searchA.winner, noteB) << what;
    const auto ba = baselineChoices(sp, slo, params), bb = reference::baselineChoices(sp, slo, params);
    ASSERT_EQ(ba.size(), bb.size());
    for (size_t i = 0; i < ba.size(); ++i) expectSame(ba[i], bb[i], what);
  }
  // Both branches of Algorithm 1's lines 5-7 ran many times.
  EXPECT_GT(feasibleTasks, 60);
  EXPECT_GT(infeasibleTasks, 60);
}

TEST(SearchEqualsEnumeration, ThetaCountsAndTheOrderOverConfigurations) {
  std::mt19937_64 rng(77);
  for (int round = 0; round < 96; ++round) {
    const Shape shape = shapeOf(round * 2 + 1);
    StitchSpace sp = randomSpace(rng, shape, optionsOf(round));
    std::vector<plan::SloConfiguration> slos;
    for (int c = 0; c < 3; ++c) slos.push_back(randomSlo(rng, sp, fmt::format("C{}", c)));
    SelectParams params;
    const auto orders = globalOrders(sp);
    const auto orderIdx = orderIndices(sp, orders);
    std::vector<std::vector<TaskSearch>> searches;
    std::vector<std::vector<std::vector<int>>> theta;
    for (const auto& s : slos) {
      searches.push_back(taskSearches(sp, s, orderIdx, params, false));
      theta.push_back(reference::feasibleSets(sp, s, orders, params));
    }
    const std::string what = fmt::format("round {}", round);
    for (size_t c = 0; c < slos.size(); ++c)
      for (size_t t = 0; t < sp.tasks.size(); ++t) {
        const auto& ts = sp.tasks[t];
        const PassCount& n = searches[c][t].thetaCount();
        EXPECT_EQ(n.total, theta[c][t].size()) << what;
        EXPECT_EQ(searches[c][t].thetaEmpty(), theta[c][t].empty()) << what;
        for (int pos = 0; pos < ts.positions; ++pos)
          for (int v = 0; v < static_cast<int>(ts.variants.size()); ++v) {
            uint64_t expected = 0;
            for (int k : theta[c][t]) expected += ts.combinations().digit(reference::numberOf(sp, t, k), pos) == v;
            EXPECT_EQ(n.byPosition[static_cast<size_t>(pos)][static_cast<size_t>(v)], expected) << what;
          }
      }
    const GlobalOrder a = multiConfigurationOrder(sp, orders, searches);
    const GlobalOrder b = reference::multiConfigurationOrder(sp, orders, theta);
    EXPECT_EQ(a.order, b.order) << what;
    EXPECT_EQ(a.meanLatencyMs, b.meanLatencyMs) << what;
  }
}

TEST(SearchEqualsEnumeration, TheWholeStitchSectionOfThePlan) {
  std::mt19937_64 rng(31);
  for (int round = 0; round < 48; ++round) {
    const Shape shape = shapeOf(round * 4 + 3);
    StitchSpace sp = randomSpace(rng, shape, optionsOf(round));
    std::vector<plan::SloConfiguration> slos;
    for (int c = 0; c < 4; ++c) slos.push_back(randomSlo(rng, sp, fmt::format("C{}", c)));
    SelectParams params;
    params.queriesPerTask = 4;
    params.measuredAccuracyForDecisions = round % 4 == 1;
    const std::vector<std::string> budgets = {"15%", "55%", "100%"};
    auto a = planStitch(sp, slos, budgets, params);
    auto b = reference::planStitch(sp, slos, budgets, params);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_TRUE(a->plan == b->plan) << "round " << round;
    EXPECT_EQ(a->firstChosen, b->firstChosen) << "round " << round;
  }
}

// SLOs no number meets (NaN), that everything meets (infinite latency) and
// that nothing meets, on spaces with every subgraph unprofiled or none.
TEST(SearchEqualsEnumeration, DegenerateSlos) {
  std::mt19937_64 rng(5);
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  for (double unprofiled : {0.0, 0.5, 1.0})
    for (plan::TaskSlo s : {plan::TaskSlo{nan, nan}, plan::TaskSlo{0.7, nan}, plan::TaskSlo{nan, 5.0},
                            plan::TaskSlo{0.7, inf}, plan::TaskSlo{0.0, 0.0}, plan::TaskSlo{2.0, 1e9}}) {
      SpaceOptions o;
      o.unprofiled = unprofiled;
      StitchSpace sp = randomSpace(rng, Shape{2, 3, 3, 2}, o);
      plan::SloConfiguration cfg{"c", {}};
      for (const auto& t : sp.tasks) cfg.tasks[t.name] = s;
      SelectParams params;
      params.queriesPerTask = 3;
      const std::string what = fmt::format("unprofiled {} slo ({}, {})", unprofiled, s.accuracy, s.latencyMs);
      const auto orders = globalOrders(sp);
      const auto a = algorithm1(sp, cfg, orders, params, false, "zooplan");
      const auto b = reference::algorithm1(sp, cfg, orders, params, false, "zooplan");
      expectSame(a.choice, b.choice, what);
      EXPECT_TRUE(a.meanLatencyMs == b.meanLatencyMs || (std::isnan(a.meanLatencyMs) && std::isnan(b.meanLatencyMs))) << what;
      ZooplanSearch searchA;
      std::string noteB;
      expectSame(zooplanChoice(sp, cfg, params, nullptr, &searchA), reference::zooplanChoice(sp, cfg, params, nullptr, &noteB), what);
      EXPECT_EQ(searchA.winner, noteB) << what;
    }
}

}  // namespace
}  // namespace zp::select
