// zooplan's choice made for a workload (serving_objective.h): served at the
// workload's rates it is never predicted worse than any system it considers
// (the baselines, Algorithm 1, every task whole on one processor), on seeded
// random spaces; and on a planted space whose fastest choice thrashes under the
// memory budget, it keeps what fits where the burst objective takes the fastest.
#include <gtest/gtest.h>

#include <algorithm>

#include "libplan/artifacts/plan_json.h"
#include "libplan/artifacts/plan_pb.h"
#include "passes/select/plan_stitch.h"
#include "passes/select/serving_objective.h"
#include "tests/select/planted_space.h"
#include "tests/select/random_space.h"

namespace zp::select {
namespace {

std::shared_ptr<ServingWorkload> workloadFor(const StitchSpace& sp, double rateQps) {
  auto w = std::make_shared<ServingWorkload>();
  for (const auto& t : sp.tasks) w->rateQps[t.name] = rateQps;
  w->durationMs = 2000;
  w->seed = 3;
  return w;
}

// A random space of `tasks` tasks (two positions, variants and processors),
// every subgraph profiled.
StitchSpace profiledSpace(std::mt19937_64& rng, int tasks) {
  testing::SpaceOptions options;
  options.unprofiled = 0;
  return testing::randomSpace(rng, testing::Shape{tasks, 2, 2, 2}, options);
}

// A random choice: per task a combination and a processor per position; each
// task's decision is also appended to `decisions[t]`.
Choice randomChoice(std::mt19937_64& rng, const StitchSpace& sp, std::vector<std::vector<TaskDecision>>& decisions) {
  Choice c;
  decisions.resize(sp.tasks.size());
  for (size_t t = 0; t < sp.tasks.size(); ++t) {
    const auto& ts = sp.tasks[t];
    c.candidate.push_back(static_cast<int64_t>(rng() % ts.combinations().size()));
    std::vector<std::string> placement;
    for (int j = 0; j < ts.positions; ++j) placement.push_back(sp.processors[rng() % sp.processors.size()].name);
    c.placement.push_back(placement);
    c.feasible.push_back(true);
    decisions[t].push_back({c.candidate.back(), placement});
  }
  return c;
}

TEST(ServingObjective, ZooplanIsNeverPredictedWorseThanASystemItConsiders) {
  std::mt19937_64 rng(77);
  int strictlyBetter = 0;
  for (int round = 0; round < 24; ++round) {
    const testing::Shape shape{2 + round % 2, 1 + round % 3, 2, 2};
    testing::SpaceOptions options;
    options.unprofiled = 0;
    StitchSpace sp = testing::randomSpace(rng, shape, options);
    const auto slo = testing::randomSlo(rng, sp, "C");
    SelectParams params;
    params.workload = workloadFor(sp, 20 + 40 * (round % 3));
    const auto trace = workloadTrace(sp, *params.workload);
    ASSERT_TRUE(trace.ok()) << trace.error().message;
    Algorithm1Result a1;
    const Choice z = zooplanChoice(sp, slo, params, &a1, nullptr);
    const Outcome oz = evaluateServing(sp, slo, z, *params.workload, *trace);
    std::vector<Choice> others = baselineChoices(sp, slo, params);
    others.push_back(a1.choice);
    bool better = true;
    for (const auto& c : others) {
      const Outcome oc = evaluateServing(sp, slo, c, *params.workload, *trace);
      EXPECT_FALSE(betterOutcome(oc, oz)) << "round " << round << ": " << c.system << " is predicted better ("
                                          << oc.violationRate << " vs " << oz.violationRate << ")";
      better = better && oz.violationRate < oc.violationRate;
    }
    strictlyBetter += better;
  }
  EXPECT_GT(strictlyBetter, 0) << "zooplan never beat every other system: the test shows nothing";
}

// The planted space with "dense" at 1 ms and 1 KB, "u90" at 0.3 ms and 10 MB
// per subgraph; every combination meets the accuracy floor.
StitchSpace thrashingSpace() {
  return testing::plantedSpace({{0.99, 0.99}, {0.99, 0.99}, {0.99, 0.99}, {0.99, 0.99}}, {{1.0, 0.3}, {1.0, 0.3}},
                               {1000, 10'000'000});
}

TEST(ServingObjective, KeepsWhatFitsTheMemoryBudgetWhereTheBurstTakesTheFastest) {
  StitchSpace sp = thrashingSpace();
  const plan::SloConfiguration cfg{"C01", {{"digits", {0.9, 5.0}}}};
  SelectParams burst;
  burst.queriesPerTask = 5;
  const Choice fastest = zooplanChoice(sp, cfg, burst, nullptr, nullptr);
  ASSERT_EQ(sp.tasks[0].idOf(static_cast<uint64_t>(fastest.candidate[0])), "u90+u90")
      << "planted: in a burst the fastest choice wins";

  // 15 MB hold one u90 subgraph, not two: u90+u90 loads a subgraph (10 ms) on every query.
  auto w = workloadFor(sp, 100);
  w->budgetBytes = 15'000'000;
  w->calibration.loadMsPerMB = 1.0;
  SelectParams served = burst;
  served.workload = w;
  const auto trace = workloadTrace(sp, *w);
  ASSERT_TRUE(trace.ok());
  const Choice z = zooplanChoice(sp, cfg, served, nullptr, nullptr);
  EXPECT_NE(sp.tasks[0].idOf(static_cast<uint64_t>(z.candidate[0])), "u90+u90");
  const Outcome thrashing = evaluateServing(sp, cfg, fastest, *w, *trace);
  const Outcome kept = evaluateServing(sp, cfg, z, *w, *trace);
  EXPECT_GT(thrashing.violationRate, 0.9);
  EXPECT_LT(kept.violationRate, 0.05);
}

// Composition against one technique on a planted space: SparseLoom alone
// (--only sparseloom) takes Algorithm 1's fastest feasible choice, whose units
// thrash under the device budget; the composed choice (candidates mixed, its own
// units resident by load cost) keeps what fits: violations on at least 15% fewer
// of all queries (planted: 20% against none).
TEST(ServingObjective, TheComposedChoiceBeatsSparseLoomAloneUnderTheDeviceBudget) {
  StitchSpace sp = thrashingSpace();
  const plan::SloConfiguration cfg{"C01", {{"digits", {0.9, 5.0}}}};
  // 20 q/s: queries rarely overlap, so a unit is never in use when the other evicts it.
  auto w = workloadFor(sp, 20);
  w->budgetBytes = 15'000'000;
  w->residentByLoadCost = true;
  w->calibration.loadMsPerMB = 1.0;
  const auto trace = workloadTrace(sp, *w);
  ASSERT_TRUE(trace.ok());
  SelectParams alone;
  alone.workload = w;
  alone.only = SingleTechnique::SparseLoom;
  Algorithm1Result a1;
  ZooplanSearch aloneSearch, composedSearch;
  const Choice sparseLoom = zooplanChoice(sp, cfg, alone, &a1, &aloneSearch);
  EXPECT_EQ(sparseLoom.candidate, a1.choice.candidate) << "SparseLoom alone is Algorithm 1's choice";
  EXPECT_EQ(aloneSearch.judged, 0);
  SelectParams composed = alone;
  composed.only = SingleTechnique::None;
  zooplanChoice(sp, cfg, composed, nullptr, &composedSearch);
  EXPECT_TRUE(composedSearch.provenBest);
  EXPECT_GT(aloneSearch.predicted.violationRate - composedSearch.predicted.violationRate, 0.15)
      << "SparseLoom alone " << aloneSearch.predicted.violationRate << ", composed "
      << composedSearch.predicted.violationRate;
}

// A unit measured on its own replaces the per-processor ratios and the per-MB
// load cost: here u90's runs measured at 20 ms (profiled 0.3 ms) make the
// choice that ran fastest as profiled the one that misses its bound, and a
// load measured at 40 ms turns a resident-budget miss into violations.
TEST(ServingObjective, AUnitsOwnCalibrationReplacesTheRatiosAndThePerMegabyteLoadCost) {
  StitchSpace sp = thrashingSpace();
  const plan::SloConfiguration cfg{"C01", {{"digits", {0.9, 5.0}}}};
  auto w = workloadFor(sp, 20);
  w->calibration.hotRatios = {{1.0}};
  w->calibration.idleRatios = {{1.0}};
  auto trace = workloadTrace(sp, *w);
  ASSERT_TRUE(trace.ok());
  Choice u90;
  int64_t k = 0;
  while (sp.tasks[0].idOf(static_cast<uint64_t>(k)) != "u90+u90") ++k;
  u90.candidate = {k};
  u90.placement = {{sp.processors[0].name, sp.processors[0].name}};
  u90.feasible = {true};
  const Outcome asProfiled = evaluateServing(sp, cfg, u90, *w, *trace);
  EXPECT_LT(asProfiled.violationRate, 0.05);
  const std::string proc = "@" + sp.processors[0].name;
  w->calibration.units["subgraph:digits/0/u90" + proc] = UnitCalibration{{20.0}, {20.0}, 0};
  const Outcome measured = evaluateServing(sp, cfg, u90, *w, *trace);
  EXPECT_GT(measured.violationRate, 0.95);

  // Loads: 1 ms per MB says 10 ms for a u90 subgraph; its own measurement, 40 ms.
  w->calibration.units.clear();
  w->budgetBytes = 15'000'000;  // one u90 subgraph resident at a time
  w->calibration.loadMsPerMB = 1.0;
  const Outcome perMB = evaluateServing(sp, cfg, u90, *w, *trace);
  for (int pos : {0, 1})
    w->calibration.units["subgraph:digits/" + std::to_string(pos) + "/u90" + proc] = UnitCalibration{{0.3}, {0.3}, 40};
  const Outcome ownLoads = evaluateServing(sp, cfg, u90, *w, *trace);
  EXPECT_GT(ownLoads.taskLatencyMs[0], perMB.taskLatencyMs[0] + 50) << "two 40 ms loads instead of two 10 ms ones";
}

TEST(ServingObjective, AUnitsLoadsFollowItsColdSectionWhereThatMeasuredFasterOnEveryProcessor) {
  ServingCalibration cal;
  // a: cold (load 1 + free 0.1 + first run 2) beats its weight cache (2 + 0.1 + 1.5) on both processors;
  // b: faster cold on cpu only; c: calibrated only from its weight cache.
  cal.units["subgraph:a/0/dense@cpu"] = UnitCalibration{{1.0}, {1.2}, 2.0, 0.1, {1.5}};
  cal.units["subgraph:a/0/dense@npu"] = UnitCalibration{{1.0}, {1.2}, 2.0, 0.1, {1.5}};
  cal.coldLoaded["subgraph:a/0/dense@cpu"] = UnitCalibration{{1.1}, {1.3}, 1.0, 0.1, {2.0}};
  cal.coldLoaded["subgraph:a/0/dense@npu"] = UnitCalibration{{1.1}, {1.3}, 1.0, 0.1, {2.0}};
  cal.units["subgraph:b/0/dense@cpu"] = UnitCalibration{{1.0}, {1.0}, 2.0, 0.1, {1.0}};
  cal.units["subgraph:b/0/dense@npu"] = UnitCalibration{{1.0}, {1.0}, 2.0, 0.1, {1.0}};
  cal.coldLoaded["subgraph:b/0/dense@cpu"] = UnitCalibration{{1.0}, {1.0}, 0.5, 0.1, {1.0}};
  cal.coldLoaded["subgraph:b/0/dense@npu"] = UnitCalibration{{1.0}, {1.0}, 2.5, 0.1, {1.0}};
  cal.units["subgraph:c/0/dense@cpu"] = UnitCalibration{{1.0}, {1.0}, 2.0, 0.1, {1.0}};
  ServingCalibration always = cal;
  const ColdLoadChoice choice = chooseColdSectionLoads(cal, false);
  EXPECT_EQ(choice.units, 2);
  EXPECT_EQ(choice.chosen, 1);
  EXPECT_DOUBLE_EQ(choice.coldMs, 2 * 3.1 + 1.6 + 3.6);
  EXPECT_DOUBLE_EQ(choice.warmCacheMs, 2 * 3.6 + 2 * 3.1);
  EXPECT_EQ(cal.coldSections, (std::set<std::string>{"subgraph:a/0/dense"}));
  // a's loads, first runs and frees are the cold ones; its other runs stay the warm cache's.
  const auto& a = cal.units.at("subgraph:a/0/dense@npu");
  EXPECT_DOUBLE_EQ(a.loadMs, 1.0);
  EXPECT_EQ(a.firstRunMs, std::vector<double>{2.0});
  EXPECT_EQ(a.hotMs, std::vector<double>{1.0});
  EXPECT_DOUBLE_EQ(cal.units.at("subgraph:b/0/dense@cpu").loadMs, 2.0) << "b stays with its weight cache";
  // NNV12 alone: every unit calibrated both ways loads by its cold section.
  chooseColdSectionLoads(always, true);
  EXPECT_EQ(always.coldSections, (std::set<std::string>{"subgraph:a/0/dense", "subgraph:b/0/dense"}));
  EXPECT_DOUBLE_EQ(always.units.at("subgraph:b/0/dense@npu").loadMs, 2.5);
}

TEST(ServingObjective, ThePlanRecordsItsWorkloadAndReadsItBack) {
  StitchSpace sp = thrashingSpace();
  const plan::SloConfiguration cfg{"C01", {{"digits", {0.9, 5.0}}}};
  SelectParams params;
  params.workload = workloadFor(sp, 100);
  auto solution = planStitch(sp, {cfg}, {"50%"}, params);
  ASSERT_TRUE(solution.ok()) << solution.error().message;
  plan::Plan p;
  p.header = {"plan-solve", "0.1.0", {{"profile", std::string(64, 'a')}}};
  p.processors = solution->processors;
  p.units = solution->units;
  p.stitch = solution->plan;
  p.stitch->workload = plan::ServingWorkloadRecord{"poisson", {{"digits", 100}}, 2000, 3, 5, 0.12, 0.03, 1.5,
                                                   {{"cam", 40, 30, {"digits", "track"}, {{"track", "digits"}}}},
                                                   5'000'000, {"C01"}};
  auto json = artifacts::parsePlanJson(artifacts::planToText(p), "plan.json");
  ASSERT_TRUE(json.ok()) << json.error().message;
  EXPECT_EQ(json->stitch->workload, p.stitch->workload);
  ASSERT_TRUE(p.stitch->systems.front().selections.front().predicted) << "every system's choice is predicted";
  EXPECT_GT(p.stitch->systems.front().selections.front().predicted->judged, 0) << "zooplan's search is recorded";
  EXPECT_EQ(artifacts::planToText(*json), artifacts::planToText(p)) << "plan.json keeps what it wrote";
  auto pb = artifacts::parsePlanPb(artifacts::serializePlanPb(p), "plan.pb");
  ASSERT_TRUE(pb.ok()) << pb.error().message;
  EXPECT_EQ(pb->stitch->workload, p.stitch->workload);
  EXPECT_EQ(pb->stitch->systems, p.stitch->systems);
  Json j = artifacts::toJson(p);
  j["stitch"]["workload"]["process"] = "bursty";
  auto bad = artifacts::planFromJson(j, "plan.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "plan.json: $.stitch.workload: process: 'bursty' is not poisson or periodic");
  j = artifacts::toJson(p);
  j["stitch"]["workload"]["served_in_turn"] = Json::array({"C09"});
  bad = artifacts::planFromJson(j, "plan.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "plan.json: $.stitch: workload.served_in_turn: 'C09' is none of its SLO configurations");
  j["stitch"]["workload"]["served_in_turn"] = Json::array({"C01", "C01"});
  bad = artifacts::planFromJson(j, "plan.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "plan.json: $.stitch: workload.served_in_turn: 'C01' is named twice");
}

TEST(ServingObjective, AWorkloadWithoutATasksRateIsAnError) {
  StitchSpace sp = thrashingSpace();
  ServingWorkload w;
  auto trace = workloadTrace(sp, w);
  ASSERT_FALSE(trace.ok());
  EXPECT_EQ(trace.error().message, "workload: task 'digits' has no arrival rate and runs in no frame");
}

// A frame chain is a query per period that runs its DNNs' chosen subgraphs one
// after another and must end within the frame's bound: tightening that bound
// alone adds exactly the frame queries to the violations (the simulation is
// otherwise the same, draw for draw); zooplan's choice with frames is never
// predicted worse than a system it considers.
TEST(ServingObjective, FramesAreQueriesOfTheirChainsWithinTheFrameBound) {
  std::mt19937_64 rng(91);
  for (int round = 0; round < 8; ++round) {
    testing::SpaceOptions options;
    options.unprofiled = 0;
    StitchSpace sp = testing::randomSpace(rng, testing::Shape{3, 2, 2, 2}, options);
    auto slo = testing::randomSlo(rng, sp, "C");
    for (auto& [task, s] : slo.tasks) s.accuracy = 0;  // only latency decides
    auto w = workloadFor(sp, 30);
    w->rateQps.erase(sp.tasks[2].name);  // task 2 runs in frames only
    w->frames = {{"cam.0", 25, 1e9, {1, 2}}};
    auto trace = workloadTrace(sp, *w);
    ASSERT_TRUE(trace.ok()) << trace.error().message;
    const auto frameQueries = std::count_if(trace->arrivals.begin(), trace->arrivals.end(),
                                            [](const auto& a) { return a.task == 3; });
    EXPECT_EQ(frameQueries, 80) << "2 s at one frame per 25 ms";
    EXPECT_EQ(trace->tasks, (std::vector<std::string>{sp.tasks[0].name, sp.tasks[1].name, sp.tasks[2].name, "cam.0"}));
    SelectParams params;
    params.workload = w;
    Algorithm1Result a1;
    const Choice z = zooplanChoice(sp, slo, params, &a1, nullptr);
    const Outcome loose = evaluateServing(sp, slo, z, *w, *trace);
    auto tight = *w;
    tight.frames[0].latencyMs = 1e-9;
    const Outcome strict = evaluateServing(sp, slo, z, tight, *trace);
    EXPECT_NEAR(strict.violationRate - loose.violationRate,
                static_cast<double>(frameQueries) / static_cast<double>(trace->arrivals.size()) *
                    (1 - 0),  // every frame query now violates; none did at a bound of 1e9 ms
                1e-12);
    std::vector<Choice> others = baselineChoices(sp, slo, params);
    others.push_back(a1.choice);
    for (const auto& c : others)
      EXPECT_FALSE(betterOutcome(evaluateServing(sp, slo, c, *w, *trace), loose)) << "round " << round << ": " << c.system;
  }
}

// Judged also slowed down (every calibrated time 1.3x), a choice is compared by
// the mean of its two violation rates: the search finds the choice best so (its
// judged rate no worse than the choice made at the calibration alone), which
// gives up no more than that on the calibration alone; the bound holds for the
// judged rate. Somewhere the two choices differ, else the test shows nothing.
TEST(ServingObjective, JudgedSlowedDownTheChoiceKeepsTheSlackTheCalibratedOneSpends) {
  std::mt19937_64 rng(2024);
  int differ = 0;
  for (int round = 0; round < 24; ++round) {
    StitchSpace sp = profiledSpace(rng, 2 + round % 2);
    // Every accuracy met, bounds a little above each task's fastest query: what slack a choice leaves decides.
    auto slo = testing::randomSlo(rng, sp, "C");
    const auto fastest = fastestQueryMs(sp);
    std::uniform_real_distribution<double> above(1.1, 2.0);
    for (size_t t = 0; t < sp.tasks.size(); ++t) slo.tasks[sp.tasks[t].name] = {0.0, fastest[t] * above(rng)};
    auto calibrated = workloadFor(sp, 5 + 10 * (round % 3));
    auto slowed = std::make_shared<ServingWorkload>(*calibrated);
    slowed->slowdownJudged = 1.3;
    const auto trace = workloadTrace(sp, *calibrated);
    ASSERT_TRUE(trace.ok()) << trace.error().message;
    SelectParams params;
    params.workload = calibrated;
    ZooplanSearch plainSearch, slowSearch;
    const Choice plain = zooplanChoice(sp, slo, params, nullptr, &plainSearch);
    params.workload = slowed;
    const Choice slow = zooplanChoice(sp, slo, params, nullptr, &slowSearch);
    ASSERT_TRUE(plainSearch.provenBest && slowSearch.provenBest) << "small spaces: every mix judged";
    const Outcome plainJudged = evaluateServing(sp, slo, plain, *slowed, *trace);
    const Outcome slowJudged = evaluateServing(sp, slo, slow, *slowed, *trace);
    EXPECT_LT(plainSearch.predicted.slowedViolationRate, 0) << "not judged slowed down";
    EXPECT_GE(slowJudged.slowedViolationRate, 0);
    EXPECT_NEAR(slowJudged.judgedViolationRate(), slowSearch.predicted.judgedViolationRate(), 1e-12);
    EXPECT_LE(slowJudged.judgedViolationRate(), plainJudged.judgedViolationRate() + 1e-12) << "round " << round;
    EXPECT_LE(plainJudged.violationRate, slowJudged.violationRate + 1e-12) << "round " << round;
    EXPECT_LE(slowSearch.violationBound, slowJudged.judgedViolationRate() + 1e-12) << "round " << round;
    differ += plain.candidate != slow.candidate || plain.placement != slow.placement;
  }
  EXPECT_GT(differ, 0) << "judged slowed down, no choice changed: the test shows nothing";
}

// The violation bound holds for any choice (a random decision per task, judged
// against the bound over that decision alone); zooplan's search judges every
// mix of its candidates' decisions when allowed and says so, and its choice is
// never below its bound; allowed fewer mixes, it says it is not proven.
TEST(ServingObjective, TheBoundHoldsForAnyChoiceAndProvenBestMeansEveryMixWasJudged) {
  std::mt19937_64 rng(123);
  int provenRounds = 0, certainViolations = 0;
  for (int round = 0; round < 16; ++round) {
    StitchSpace sp = profiledSpace(rng, 2 + round % 2);
    const auto slo = testing::randomSlo(rng, sp, "C");
    auto w = workloadFor(sp, 30);
    if (round % 2) w->frames = {{"cam.0", 40, 5.0, {0, 1}}};
    const auto trace = workloadTrace(sp, *w);
    ASSERT_TRUE(trace.ok()) << trace.error().message;
    for (int draw = 0; draw < 6; ++draw) {
      std::vector<std::vector<TaskDecision>> own;
      const Choice c = randomChoice(rng, sp, own);
      const double bound = servingViolationBound(sp, slo, own, *w, *trace);
      EXPECT_LE(bound, evaluateServing(sp, slo, c, *w, *trace).violationRate + 1e-12) << "round " << round;
      certainViolations += bound > 0;
    }
    SelectParams params;
    params.workload = w;
    ZooplanSearch search;
    zooplanChoice(sp, slo, params, nullptr, &search);
    EXPECT_LE(search.violationBound, search.predicted.violationRate + 1e-12) << "round " << round;
    EXPECT_GT(search.judged, 0);
    provenRounds += search.provenBest;
    params.maxMixesJudged = 1;
    ZooplanSearch limited;
    zooplanChoice(sp, slo, params, nullptr, &limited);
    if (limited.judged > 1 && limited.predicted.violationRate > limited.violationBound + 1e-12)
      EXPECT_FALSE(limited.provenBest) << "round " << round;
  }
  EXPECT_EQ(provenRounds, 16) << "small spaces: every mix judged";
  EXPECT_GT(certainViolations, 0) << "no draw had a certain violation: the bound was never tested above 0";
}

// Past its time limit the search stops mixing: it says so, claims no proof
// unless its choice meets the bound, and its choice is still the best of the
// candidates it judged whole (every baseline's and Algorithm 1's among them);
// with no limit the same space is searched to the end.
TEST(ServingObjective, PastItsTimeLimitTheSearchStopsAndSaysItIsNotProven) {
  std::mt19937_64 rng(77);
  int stoppedUnproven = 0;
  for (int round = 0; round < 8; ++round) {
    StitchSpace sp = profiledSpace(rng, 3);
    const auto slo = testing::randomSlo(rng, sp, "C");
    auto w = workloadFor(sp, 30);
    const auto trace = workloadTrace(sp, *w);
    ASSERT_TRUE(trace.ok()) << trace.error().message;
    SelectParams params;
    params.workload = w;
    ZooplanSearch full;
    zooplanChoice(sp, slo, params, nullptr, &full);
    EXPECT_FALSE(full.stopped);
    params.stopAt = std::chrono::steady_clock::now();  // already past
    ZooplanSearch cut;
    Algorithm1Result a1;
    const Choice c = zooplanChoice(sp, slo, params, &a1, &cut);
    EXPECT_TRUE(cut.stopped) << "round " << round;
    EXPECT_LE(cut.judged, full.judged);
    // Proven means no fewer violations were reachable (the ties after may still differ).
    if (cut.provenBest) EXPECT_LE(cut.predicted.violationRate, full.predicted.violationRate + 1e-12) << "round " << round;
    if (cut.predicted.violationRate > cut.violationBound + 1e-12) {
      EXPECT_FALSE(cut.provenBest) << "round " << round;
      ++stoppedUnproven;
    }
    std::vector<Choice> whole = baselineChoices(sp, slo, params);
    whole.push_back(a1.choice);
    const Outcome chosen = evaluateServing(sp, slo, c, *w, *trace);
    for (const auto& b : whole)
      EXPECT_FALSE(betterOutcome(evaluateServing(sp, slo, b, *w, *trace), chosen)) << "round " << round << ": " << b.system;
  }
  EXPECT_GT(stoppedUnproven, 0) << "every cut search met its bound: the not-proven case was never tested";
}

// Served in turn (plan-run --serve's phases), the in-turn bound holds for any
// choices among the decisions it is given, and with one configuration it is
// the plain bound. (One configuration served is the in-turn objective with one
// phase: evaluateServing calls it.)
TEST(ServingObjective, TheInTurnBoundHoldsForAnyChoicesAmongItsDecisions) {
  std::mt19937_64 rng(5);
  for (int round = 0; round < 6; ++round) {
    StitchSpace sp = profiledSpace(rng, 2 + round % 2);
    const auto slo = testing::randomSlo(rng, sp, "C");
    auto w = workloadFor(sp, 30);
    w->residentByLoadCost = round % 2;
    w->budgetBytes = 4000;
    if (round % 3 == 0) w->frames = {{"cam.0", 40, 5.0, {0, 1}}};
    const auto trace = workloadTrace(sp, *w);
    ASSERT_TRUE(trace.ok()) << trace.error().message;
    const auto slo2 = testing::randomSlo(rng, sp, "D");
    std::vector<std::vector<TaskDecision>> decisions;
    std::vector<Choice> draws;
    for (int draw = 0; draw < 4; ++draw) draws.push_back(randomChoice(rng, sp, decisions));
    const double bound = servingViolationBoundInTurn(sp, {slo, slo2}, decisions, *w, *trace);
    EXPECT_EQ(servingViolationBoundInTurn(sp, {slo}, decisions, *w, *trace),
              servingViolationBound(sp, slo, decisions, *w, *trace));
    for (size_t a = 0; a < draws.size(); ++a)
      for (size_t b = 0; b < draws.size(); ++b)
        EXPECT_LE(bound, evaluateServingInTurn(sp, {slo, slo2}, {draws[a], draws[b]}, *w, *trace).violationRate + 1e-12)
            << "round " << round;
  }
}

// A slot is one unit on one processor, shared by every decision that runs it, so
// its run time cannot hold what reaching it from another processor costs: with
// such a cost baked into the slot, a decision ran as fast as the first decision
// that brought the unit, and served in turn a query met an SLO the bound said
// it could not. Planted: the original v0, X = its first position on p0, then p1
// (a 5 ms transition in the profile), Z = both on p1 (a slow first position);
// either order in turn.
TEST(ServingObjective, AUnitsSlotIsTheSameWhicheverDecisionBringsIt) {
  std::mt19937_64 rng(9);
  StitchSpace sp = profiledSpace(rng, 1);
  auto& ts = sp.tasks[0];
  const std::string p0 = sp.processors[0].name, p1 = sp.processors[1].name;
  ts.latency.setSubgraph(0, "v0", p0, 1.0);
  ts.latency.setSubgraph(0, "v0", p1, 10.0);
  ts.latency.setSubgraph(1, "v0", p1, 1.0);
  ts.latency.setTransition(p0, p1, {5.0, 0});
  const uint64_t x = ts.combinations().originalNumber(0), z = x;
  ASSERT_TRUE(ts.valid(x));
  plan::SloConfiguration slo{"C", {{ts.name, plan::TaskSlo{0.0, 4.0}}}};
  Choice cx{"x", {static_cast<int64_t>(x)}, {{p0, p1}}, {false}, {}};
  Choice cz{"z", {static_cast<int64_t>(z)}, {{p1, p1}}, {false}, {}};
  auto w = workloadFor(sp, 50);
  const auto trace = workloadTrace(sp, *w);
  ASSERT_TRUE(trace.ok()) << trace.error().message;
  const std::vector<std::vector<TaskDecision>> decisions = {{{cx.candidate[0], cx.placement[0]},
                                                             {cz.candidate[0], cz.placement[0]}}};
  const double bound = servingViolationBoundInTurn(sp, {slo, slo}, decisions, *w, *trace);
  const Outcome zx = evaluateServingInTurn(sp, {slo, slo}, {cz, cx}, *w, *trace);
  const Outcome xz = evaluateServingInTurn(sp, {slo, slo}, {cx, cz}, *w, *trace);
  EXPECT_LE(bound, zx.violationRate + 1e-12);
  EXPECT_LE(bound, xz.violationRate + 1e-12);
  // X alone: the same whether or not Z brought the unit first.
  const Outcome xAlone = evaluateServing(sp, slo, cx, *w, *trace);
  const Outcome xx = evaluateServingInTurn(sp, {slo, slo}, {cx, cx}, *w, *trace);
  EXPECT_DOUBLE_EQ(xAlone.violationRate, xx.violationRate);
}

// The planted space of the in-turn tests: two 10 MB variants per position, 20
// q/s under a 25 MB device budget, loads at 1 ms per MB.
StitchSpace inTurnSpace() {
  return testing::plantedSpace({{0.99, 0.99}, {0.985, 0.985}, {0.95, 0.95}, {0.95, 0.95}}, {{1.0, 0.3}, {1.0, 0.3}},
                               {10'000'000, 10'000'000});
}
std::shared_ptr<ServingWorkload> inTurnWorkload(const StitchSpace& sp) {
  auto w = workloadFor(sp, 20);
  w->budgetBytes = 25'000'000;
  w->residentByLoadCost = true;
  w->calibration.loadMsPerMB = 1.0;
  return w;
}

// Two configurations served in turn under a budget of 2.5 subgraphs. Alone,
// C01 takes the fastest u90+u90 and C02 (a higher accuracy floor) the stitched
// dense+u90; in turn they share only u90 at position 1, so position 0 loads at
// every switch. Judged together, C01 takes C02's dense+u90: both its units stay
// resident, no violations, and faster than the baselines' dense+dense (which
// no violation either, but only stitched variants run faster within the floor).
TEST(ServingObjective, ConfigurationsServedInTurnShareUnitsWhenThatServesBetter) {
  StitchSpace sp = inTurnSpace();
  const std::vector<plan::SloConfiguration> slos{{"C01", {{"digits", {0.9, 5.0}}}},
                                                 {"C02", {{"digits", {0.98, 5.0}}}}};
  auto w = inTurnWorkload(sp);
  SelectParams params;
  params.workload = w;
  auto solution = planStitch(sp, slos, {}, params);
  ASSERT_TRUE(solution.ok()) << solution.error().message;
  const auto& systems = solution->plan.systems;
  const auto& zooplan = systems.front();
  ASSERT_EQ(zooplan.name, "zooplan");
  const auto& a1 = *std::find_if(systems.begin(), systems.end(), [](const auto& s) { return s.name == "Algorithm-1"; });
  EXPECT_EQ(a1.selections[0].tasks[0].combination, "u90+u90") << "planted: alone, C01's fastest pair";
  EXPECT_EQ(a1.selections[1].tasks[0].combination, "dense+u90") << "planted: alone, C02's fastest feasible pair";
  EXPECT_EQ(zooplan.selections[0].tasks[0].combination, "dense+u90");
  EXPECT_EQ(zooplan.selections[1].tasks[0].combination, "dense+u90");
  ASSERT_TRUE(zooplan.predictedInTurn && a1.predictedInTurn);
  EXPECT_EQ(zooplan.predictedInTurn->violationRate, 0.0);
  EXPECT_GT(a1.predictedInTurn->violationRate, 0.0) << "the switches' loads violate";
  EXPECT_GE(zooplan.predictedInTurn->judged, 1);
  EXPECT_TRUE(zooplan.predictedInTurn->provenBest) << "no violation: at the bound of the choices it could reach";
  for (const auto& s : systems) {
    ASSERT_TRUE(s.predictedInTurn) << s.name;
    EXPECT_LE(zooplan.predictedInTurn->violationRate, s.predictedInTurn->violationRate) << s.name;
  }
  // Moved for the whole, C01's choice keeps no claim of its own search.
  ASSERT_TRUE(zooplan.selections[0].predicted);
  EXPECT_EQ(zooplan.selections[0].predicted->judged, 0);
  // Without the moves, zooplan's choices are the best system's served in turn: the baselines' dense+dense.
  params.maxJointJudged = 0;
  auto unmoved = planStitch(sp, slos, {}, params);
  ASSERT_TRUE(unmoved.ok());
  EXPECT_EQ(unmoved->plan.systems.front().selections[0].tasks[0].combination, "dense+dense");
}

// The same planted space with a third configuration, C03, as loose as C01: only
// the configurations named as served in turn are judged together; C03, not
// served with them, keeps its own best choice alone.
TEST(ServingObjective, OnlyTheConfigurationsServedInTurnAreJudgedTogether) {
  StitchSpace sp = inTurnSpace();
  const std::vector<plan::SloConfiguration> slos{{"C01", {{"digits", {0.9, 5.0}}}},
                                                 {"C02", {{"digits", {0.98, 5.0}}}},
                                                 {"C03", {{"digits", {0.9, 5.0}}}}};
  auto w = inTurnWorkload(sp);
  SelectParams params;
  params.workload = w;
  params.servedInTurn = {"C02", "C01"};
  auto named = planStitch(sp, slos, {}, params);
  ASSERT_TRUE(named.ok()) << named.error().message;
  const auto& zooplan = named->plan.systems.front();
  EXPECT_EQ(zooplan.selections[0].tasks[0].combination, "dense+u90") << "served with C02: its units shared";
  EXPECT_EQ(zooplan.selections[1].tasks[0].combination, "dense+u90");
  EXPECT_EQ(zooplan.selections[2].tasks[0].combination, "u90+u90") << "not served in turn: its own best alone";
  ASSERT_TRUE(zooplan.predictedInTurn);
  auto trace = workloadTrace(sp, *w);
  ASSERT_TRUE(trace.ok());
  auto numberOf = [&](const std::string& id) {
    for (uint64_t k : sp.tasks[0].validCombinations())
      if (sp.tasks[0].idOf(k) == id) return static_cast<int64_t>(k);
    ADD_FAILURE() << id << " is no combination";
    return int64_t{0};
  };
  for (const auto& sys : named->plan.systems) {
    std::vector<Choice> turn;
    for (size_t k : {1, 0}) {
      Choice c;
      for (const auto& t : sys.selections[k].tasks) {
        c.candidate.push_back(numberOf(t.combination));
        c.placement.push_back(t.placement);
        c.feasible.push_back(t.feasible);
      }
      turn.push_back(c);
    }
    const Outcome o = evaluateServingInTurn(sp, {slos[1], slos[0]}, turn, *w, *trace);
    EXPECT_DOUBLE_EQ(sys.predictedInTurn->violationRate, o.violationRate) << sys.name << ": C02 then C01 only";
  }
  params.servedInTurn.clear();
  auto every = planStitch(sp, slos, {}, params);
  ASSERT_TRUE(every.ok());
  EXPECT_EQ(every->plan.systems.front().selections[2].tasks[0].combination, "dense+u90")
      << "served with the others, C03 shares their units too";
}

}  // namespace
}  // namespace zp::select

namespace zp::select {
namespace {

// Two slow tasks (two 2 ms positions, a loose 40 ms bound) at 150 q/s load both
// processors to 60%; a quick one (two 0.25 ms positions, a 3 ms bound) at 100
// q/s must share one with them. Served first come first served, a quick query
// waits behind the slow positions queued before it; earliest deadline first,
// only for the position under way (at most 2 ms). `slowQps` 10: the processors
// mostly idle, the order changes nothing and first come stays.
StitchSpace orderSpace() {
  StitchSpace sp;
  sp.processors = {{"cpu", "cpu", "host", "default", 1, {}, "onednn"}, {"gpu", "gpu", "host", "default", 1, {}, "onednn"}};
  sp.manifest.tasks.reserve(3);  // the tasks point into it
  testing::addCpuGpuTask(sp, testing::plainTask(sp, "slow1", 2.0, 1'000'000, 0.9));
  testing::addCpuGpuTask(sp, testing::plainTask(sp, "slow2", 2.0, 1'000'000, 0.9));
  testing::addCpuGpuTask(sp, testing::plainTask(sp, "quick", 0.25, 1'000'000, 0.9));
  return sp;
}

Expected<StitchSolution> planOrderSpace(const StitchSpace& sp, double slowQps, SingleTechnique only) {
  const plan::SloConfiguration slo{"C", {{"slow1", {0.5, 40}}, {"slow2", {0.5, 40}}, {"quick", {0.5, 3}}}};
  auto w = std::make_shared<ServingWorkload>();
  w->rateQps = {{"slow1", slowQps}, {"slow2", slowQps}, {"quick", 100}};
  w->durationMs = 4000;
  w->seed = 3;
  SelectParams params;
  params.workload = w;
  params.only = only;
  return planStitch(sp, {slo}, {}, params);
}

TEST(ServingObjective, TheComposedPlanServesEarliestDeadlineFirstWhereThatServesBetter) {
  const StitchSpace sp = orderSpace();
  auto loaded = planOrderSpace(sp, 150, SingleTechnique::None);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  const auto& zooplan = loaded->plan.systems.front();
  EXPECT_EQ(zooplan.servingOrder, ServingOrder::EarliestDeadline);
  ASSERT_TRUE(zooplan.predictedFirstCome && zooplan.selections[0].predicted);
  const double edf = zooplan.selections[0].predicted->violationRate;
  const double fifo = zooplan.predictedFirstCome->violationRate;
  EXPECT_LT(edf + 0.02, fifo) << "planted: quick's queries wait behind slow positions first come";
  for (const auto& s : loaded->plan.systems) {
    if (&s == &zooplan) continue;
    EXPECT_EQ(s.servingOrder, ServingOrder::FirstCome) << s.name;
    EXPECT_FALSE(s.predictedFirstCome) << s.name;
    EXPECT_LE(edf, s.selections[0].predicted->violationRate) << s.name;
  }
  // The plan says so.
  const Json j = artifacts::toJson(loaded->plan);
  EXPECT_EQ(j["systems"][0]["serving_order"], "earliest-deadline");

  // A single technique serves first come, as its paper's runtime does.
  auto alone = planOrderSpace(sp, 150, SingleTechnique::SparseLoom);
  ASSERT_TRUE(alone.ok());
  EXPECT_EQ(alone->plan.systems.front().servingOrder, ServingOrder::FirstCome);
  EXPECT_FALSE(alone->plan.systems.front().predictedFirstCome);

  // Idle processors: nothing to gain, first come stays.
  auto idle = planOrderSpace(sp, 10, SingleTechnique::None);
  ASSERT_TRUE(idle.ok());
  EXPECT_EQ(idle->plan.systems.front().servingOrder, ServingOrder::FirstCome);
  EXPECT_FALSE(idle->plan.systems.front().predictedFirstCome);
}

}  // namespace
}  // namespace zp::select
