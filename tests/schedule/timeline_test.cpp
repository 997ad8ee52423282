// The branch and bound over the simulated timeline (timeline_search.h) and
// the simulator's step-wise runs it rests on: stepping through a schedule
// (with snapshots) reproduces run() exactly; the search equals brute force on
// seeded random small instances, with and without contention weightings,
// for every transition limit, both objectives, pipelines and three
// accelerators, also when it starts from an incumbent just above the optimum
// (so every bound prunes from the first node: one bound above the optimum's
// completion loses the optimum and fails the comparison).
#include <gtest/gtest.h>

#include <chrono>
#include <random>

#include "tests/common/concurrent_brute_force.h"
#include "tests/common/random_schedule.h"
#include "passes/schedule/exact.h"
#include "passes/schedule/random_instance.h"
#include "passes/schedule/timeline_search.h"
#include "passes/schedule/work_weights.h"

using namespace zp;
using namespace zp::schedule;
using sim::Objective;
using zp::testing::bruteForce;
using zp::testing::near;
using zp::testing::randomSchedule;

namespace {

TimelineResult search(const sim::Problem& p, Objective obj, int k, const std::vector<WorkWeighting>& ws,
                      std::optional<double> incumbent) {
  TimelineParams tp;
  tp.objective = obj;
  tp.maxTransitionsPerDnn = k;
  tp.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  tp.weightings = &ws;
  tp.incumbentValue = incumbent;
  return timelineSearch(p, tp);
}

// Just above (latency) or below (throughput) the optimum v.
double justWorse(Objective obj, double v) { return obj == Objective::Latency ? v * (1 + 1e-7) : v * (1 - 1e-7); }

}  // namespace

TEST(concurrentTimelineSearch, SteppingReproducesRunWithSnapshots) {
  std::mt19937_64 rng(99);
  for (uint64_t seed : {31u, 32u, 33u}) {
    auto p = randomInstance({.dnns = 3, .groups = 8, .accelerators = seed == 33 ? 3 : 2, .seed = seed, .pipeline = seed == 32});
    sim::Simulator full(p), step(p);
    for (int rep = 0; rep < 30; ++rep) {
      const auto s = randomSchedule(p, rng);
      const auto& want = full.run(s, {.recordSpans = false});
      const double wantLat = want.latencyMs, wantThr = want.throughput;
      // Reveal the schedule only when asked; at every pause, save, run one
      // detour with the wrong choice, and restore.
      sim::Schedule partial = s;
      for (auto& a : partial.assign) std::fill(a.begin(), a.end(), -1);
      step.beginSteps();
      sim::Simulator::StepState snap;
      int n;
      while ((n = step.advanceToDecision(partial)) >= 0) {
        int i = step.neededGroup(partial, n);
        ASSERT_GE(i, 0);
        step.saveSteps(snap);
        sim::Schedule detour = partial;
        for (size_t j = static_cast<size_t>(i); j < detour.assign[static_cast<size_t>(n)].size(); ++j)
          detour.assign[static_cast<size_t>(n)][j] = (s.assign[static_cast<size_t>(n)][j] + 1) % p.numAccelerators();
        for (auto& a : detour.assign)
          for (int& x : a) x = x < 0 ? 0 : x;
        step.advanceToDecision(detour);
        step.restoreSteps(snap);
        partial.assign[static_cast<size_t>(n)][static_cast<size_t>(i)] = s.assign[static_cast<size_t>(n)][static_cast<size_t>(i)];
      }
      EXPECT_EQ(step.partialResult().latencyMs, wantLat) << "seed " << seed << " rep " << rep;
      EXPECT_EQ(step.partialResult().throughput, wantThr) << "seed " << seed << " rep " << rep;
    }
  }
}

TEST(concurrentTimelineSearch, EqualsBruteForceOnRandomSmallInstances) {
  uint64_t seed = 5000;
  for (int dnns : {2, 3})
    for (int groups : {3, 5}) {
      for (bool pipeline : {false, true}) {
        auto p = randomInstance({.dnns = dnns, .groups = groups, .accelerators = 2, .seed = seed++, .pipeline = pipeline});
        // Strong contention too, where the weighted bounds bind most.
        if (seed % 2 == 0) p.contention = p.contention.scaled(3.0);
        WorkWeightBuilder builder(p);
        std::vector<WorkWeighting> ws = builder.family(4);
        for (Objective obj : {Objective::Latency, Objective::Throughput})
          for (int k : {-1, 0, 1, 2}) {
            sim::Schedule best;
            const double bf = bruteForce(p, obj, k, &best);
            const std::string what = "seed " + std::to_string(seed - 1) + " " + sim::objectiveName(obj) + " k " + std::to_string(k);
            for (bool weighted : {false, true}) {
              const auto& w = weighted && obj == Objective::Latency ? ws : std::vector<WorkWeighting>{};
              auto free = search(p, obj, k, w, std::nullopt);
              ASSERT_TRUE(free.complete && free.best) << what;
              EXPECT_TRUE(near(free.value, bf)) << what << ": brute " << bf << " timeline " << free.value;
              auto tight = search(p, obj, k, w, justWorse(obj, bf));
              ASSERT_TRUE(tight.complete) << what;
              ASSERT_TRUE(tight.best) << what << (weighted ? " weighted" : "") << ": lost the optimum " << bf;
              EXPECT_TRUE(near(tight.value, bf)) << what;
              EXPECT_TRUE(near(sim::simulate(p, *tight.best).value(obj), tight.value)) << what;
            }
          }
      }
    }
}

TEST(concurrentTimelineSearch, ThreeAcceleratorsEqualsBruteForce) {
  for (uint64_t seed : {61u, 62u}) {
    auto p = randomInstance({.dnns = 2, .groups = 4, .accelerators = 3, .seed = seed, .pipeline = seed == 62});
    for (Objective obj : {Objective::Latency, Objective::Throughput})
      for (int k : {-1, 1}) {
        const double bf = bruteForce(p, obj, k);
        auto r = search(p, obj, k, {}, justWorse(obj, bf));
        ASSERT_TRUE(r.complete && r.best) << "seed " << seed;
        EXPECT_TRUE(near(r.value, bf)) << "seed " << seed << " brute " << bf << " timeline " << r.value;
      }
  }
}

TEST(concurrentTimelineSearch, BothTreesOfTheExactSearchAgree) {
  // The timeline tree and the enumeration of whole assignments, each with
  // every bound of the exact search, on instances too large for brute force.
  for (uint64_t seed : {71u, 72u, 73u}) {
    auto p = randomInstance({.dnns = 3, .groups = 10, .accelerators = 2, .seed = seed, .pipeline = seed == 73});
    for (Objective obj : {Objective::Latency, Objective::Throughput}) {
      double v[2];
      for (int tree = 0; tree < 2; ++tree) {
        ExactParams ep;
        ep.objective = obj;
        ep.maxTransitionsPerDnn = 2;
        ep.timeLimitS = 120;
        ep.timelineTree = tree == 1;
        auto r = exactSearch(p, ep);
        ASSERT_TRUE(r.ok() && r->optimal) << "seed " << seed;
        v[tree] = r->value;
      }
      EXPECT_TRUE(near(v[0], v[1])) << "seed " << seed << " " << sim::objectiveName(obj) << ": assignments " << v[0]
                                    << " timeline " << v[1];
    }
  }
}
