// The exact search's lower bounds and optimality claims: the contention-aware
// work weightings are valid and never exceed a simulated makespan; the search
// equals brute force with every bound on and off, on 2 and 3 accelerators;
// metamorphic properties; a time-out reports "not proven optimal" with its gap.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "tests/common/concurrent_brute_force.h"
#include "tests/common/random_schedule.h"
#include "passes/schedule/baselines.h"
#include "passes/schedule/concurrent.h"
#include "passes/schedule/exact.h"
#include "passes/schedule/random_instance.h"
#include "passes/schedule/work_weights.h"
#include "passes/schedule/workload.h"
#include "drivers/concurrent_flow/workload.h"
#include "tests/common/test_paths.h"

using namespace zp;
using namespace zp::schedule;
using sim::Objective;
using zp::testing::bruteForce;
using zp::testing::near;
using zp::testing::randomSchedule;

namespace {

// Every weighting (the family and a combination) is valid and below the
// simulated makespan of random schedules.
void checkWeightings(const sim::Problem& p, std::mt19937_64& rng, const std::string& what) {
  WorkWeightBuilder builder(p);
  auto ws = builder.family(6);
  ASSERT_FALSE(ws.empty()) << what;
  std::vector<double> theta(ws.size(), 0.0);
  theta[0] = 0.3;
  theta.back() = 0.7;
  ws.push_back(builder.combine(ws, theta));
  ws.push_back(builder.targeted(randomSchedule(p, rng), 50));
  sim::Simulator simr(p);
  for (const auto& w : ws) {
    EXPECT_LE(builder.violation(w), 0.0) << what;
    for (int rep = 0; rep < 40; ++rep) {
      auto s = randomSchedule(p, rng);
      double mk = simr.run(s, {.recordSpans = false}).latencyMs;
      EXPECT_LE(weightedWork(p, w, s), mk * (1 + 1e-12)) << what;
    }
  }
}

double solve(const sim::Problem& p, Objective obj, int k, bool bounds, bool* optimal = nullptr) {
  ExactParams ep;
  ep.objective = obj;
  ep.maxTransitionsPerDnn = k;
  ep.timeLimitS = 120;
  ep.contentionBoundSteps = bounds ? 10 : 0;
  ep.relaxationRounds = bounds ? 6 : 0;
  ep.relaxationMinAssignments = 0;  // the rounds on these small spaces too
  ep.targetIncumbent = bounds;
  ep.deepenTransitions = bounds;
  auto r = exactSearch(p, ep);
  EXPECT_TRUE(r.ok());
  EXPECT_TRUE(r->optimal);
  if (optimal) *optimal = r->optimal;
  EXPECT_TRUE(near(sim::simulate(p, r->best).value(obj), r->value));
  return r->value;
}

// The instance with a third accelerator appended to every group (and the
// synthetic contention model of three accelerators, whose first two surfaces
// are the two-accelerator ones).
sim::Problem withExtraAccelerator(const sim::Problem& p, uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto q = p;
  q.accelerators.push_back("ACC2");
  for (auto& d : q.dnns)
    for (auto& g : d.groups) {
      g.timeMs.push_back(std::round(g.timeMs[0] * (1.0 + static_cast<double>(rng() % 1000) / 1000.0) * 1000) / 1000);
      g.transitionOutMs.push_back(0.02);
      g.transitionInMs.push_back(0.01);
      g.demand.push_back(g.demand[1]);
    }
  q.contention = syntheticContention(3);
  return q;
}

}  // namespace

TEST(concurrentWorkWeights, ValidAndNeverAboveASimulatedMakespan) {
  std::mt19937_64 rng(99);
  for (uint64_t seed = 600; seed < 606; ++seed) {
    auto p = randomInstance({.dnns = 2 + static_cast<int>(seed % 2), .groups = 5, .accelerators = 2, .seed = seed,
                             .pipeline = seed % 3 == 2});
    checkWeightings(p, rng, "seed " + std::to_string(seed));
    auto q = p;
    q.contention = p.contention.scaled(3);  // heavy contention: overlap can cost more than it saves
    checkWeightings(q, rng, "scaled seed " + std::to_string(seed));
  }
  auto w = drivers::loadWorkload(std::string(zp::testing::kSourceDir) + "/testdata/concurrent/googlenet-table2-pipeline.json");
  ASSERT_TRUE(w.ok()) << w.error().message;
  checkWeightings(w->problem, rng, "googlenet pipeline");
}

TEST(concurrentWorkWeights, WithoutContentionTheyAreTheLoadBounds) {
  auto p = randomInstance({.dnns = 2, .groups = 4, .accelerators = 2, .seed = 5});
  p.contention = sim::ContentionModel::none(2);
  auto ws = WorkWeightBuilder(p).family(4);
  // Side 0 at mu, side 1 raised to 1 - mu: the family lambda * load_0 + (1 - lambda) * load_1.
  sim::Schedule s{{{0, 1, 0, 0}, {1, 1, 0, 1}}};
  double l0 = 0, l1 = 0;
  for (size_t n = 0; n < 2; ++n)
    for (size_t i = 0; i < 4; ++i) (s.assign[n][i] ? l1 : l0) += p.dnns[n].groups[i].timeMs[static_cast<size_t>(s.assign[n][i])];
  double best = 0;
  for (const auto& w : ws) best = std::max(best, weightedWork(p, w, s));
  EXPECT_TRUE(near(best, std::max(l0, l1), 1e-9)) << best << " vs " << l0 << ", " << l1;
}

TEST(concurrentExactSearch, EqualsBruteForceWithAndWithoutTheNewBounds) {
  // 2-3 DNNs x 3-5 groups on 2 accelerators, and smaller ones on 3.
  struct C { int dnns, groups, accs; uint64_t seed; bool pipeline; };
  std::vector<C> cases;
  uint64_t seed = 700;
  for (int dnns : {2, 3})
    for (int groups : {3, 4, 5}) cases.push_back({dnns, groups, 2, seed++, seed % 3 == 0});
  cases.push_back({2, 3, 3, seed++, false});
  cases.push_back({2, 4, 3, seed++, true});
  cases.push_back({3, 3, 3, seed++, false});
  for (const auto& c : cases) {
    auto p = randomInstance({.dnns = c.dnns, .groups = c.groups, .accelerators = c.accs, .seed = c.seed, .pipeline = c.pipeline});
    for (Objective obj : {Objective::Latency, Objective::Throughput})
      for (int k : {-1, 2}) {
        double bf = bruteForce(p, obj, k);
        for (bool bounds : {true, false}) {
          double ex = solve(p, obj, k, bounds);
          EXPECT_TRUE(near(bf, ex)) << "seed " << c.seed << " " << sim::objectiveName(obj) << " k " << k
                                    << (bounds ? " with" : " without") << " the new bounds: brute " << bf
                                    << " exact " << ex;
        }
      }
  }
}

TEST(concurrentMetamorphic, AddingAnAcceleratorNeverWorsensTheOptimum) {
  for (uint64_t seed = 800; seed < 806; ++seed) {
    auto p = randomInstance({.dnns = 2 + static_cast<int>(seed % 2), .groups = 3, .accelerators = 2, .seed = seed});
    auto q = withExtraAccelerator(p, seed);
    // The two-accelerator schedules keep their simulated values on q.
    auto b = makeBaselines(p, Objective::Latency)[0].schedule;
    EXPECT_DOUBLE_EQ(sim::simulate(p, b).latencyMs, sim::simulate(q, b).latencyMs);
    for (Objective obj : {Objective::Latency, Objective::Throughput}) {
      double two = solve(p, obj, -1, true), three = solve(q, obj, -1, true);
      EXPECT_FALSE(sim::better(obj, two, three)) << "seed " << seed << " " << sim::objectiveName(obj) << ": "
                                                 << two << " with 2, " << three << " with 3";
    }
  }
}

TEST(concurrentMetamorphic, ScalingAllTimesScalesTheObjectiveOfThreeDnns) {
  for (uint64_t seed = 900; seed < 904; ++seed) {
    auto p = randomInstance({.dnns = 3, .groups = 4, .accelerators = 2, .seed = seed, .pipeline = seed == 903});
    const double f = 3.0;
    auto q = p;
    for (auto& d : q.dnns)
      for (auto& g : d.groups) {
        for (auto& v : g.timeMs) v *= f;
        for (auto& v : g.transitionOutMs) v *= f;
        for (auto& v : g.transitionInMs) v *= f;
      }
    EXPECT_TRUE(near(solve(q, Objective::Latency, 2, true), f * solve(p, Objective::Latency, 2, true), 1e-9)) << seed;
    EXPECT_TRUE(near(solve(q, Objective::Throughput, 2, true), solve(p, Objective::Throughput, 2, true) / f, 1e-9))
        << seed;
  }
}

TEST(concurrentExactSearch, TimeOutReportsNotProvenOptimalWithTheGap) {
  // 3 DNNs x 60 groups with up to 2 transitions each: far beyond what 50 ms
  // can prove.
  Workload w;
  w.problem = randomInstance({.dnns = 3, .groups = 60, .accelerators = 2, .seed = 5});
  ConcurrentParams prm;
  prm.objective = Objective::Latency;
  prm.maxTransitionsPerDnn = 2;
  prm.timeLimitS = 0.05;
  auto o = solveConcurrent(w, "random-3x60", prm);
  ASSERT_TRUE(o.ok()) << o.error().message;
  const auto& s = o->section.solver;
  EXPECT_EQ(s.status, "feasible");
  EXPECT_GT(s.gap, 0.0);
  EXPECT_LT(s.bound, s.objective);
  EXPECT_NEAR(s.gap, (s.objective - s.bound) / s.objective, 1e-12);
  // The bound is the contention-aware relaxation at least: above total work / 2.
  double minWork = 0;
  for (const auto& d : w.problem.dnns)
    for (const auto& g : d.groups) minWork += std::min(g.timeMs[0], g.timeMs[1]);
  EXPECT_GT(s.bound, minWork / 2);
  // Never worse than the best baseline.
  for (const auto& b : o->section.baselines) EXPECT_FALSE(sim::better(Objective::Latency, b.latencyMs, s.objective));
}

TEST(concurrentExactSearch, SameInputsSamePlanForThreeDnns) {
  Workload w;
  w.problem = randomInstance({.dnns = 3, .groups = 10, .accelerators = 2, .seed = 3111});
  ConcurrentParams prm;
  prm.objective = Objective::Latency;
  prm.timeLimitS = 60;
  auto a = solveConcurrent(w, "random-3x10", prm);
  auto b = solveConcurrent(w, "random-3x10", prm);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->section.solver.status, "optimal");
  EXPECT_EQ(a->schedule, b->schedule);
  EXPECT_EQ(a->section.objectiveValue, b->section.objectiveValue);
  EXPECT_EQ(a->section.solver.bound, b->section.solver.bound);
}
