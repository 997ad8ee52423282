// A weight-shared group (MTS) as a decision of the composed planner: a
// member's query may be answered by the group's one unit. On a planted
// deployment whose device budget holds the group's unit beside a rarely
// queried model but not the members' own models, the composed choice takes the
// group and keeps both resident, where SparseLoom alone (its own variants, its
// preload by load cost) thrashes; and the plan lists the group's unit once.
#include <gtest/gtest.h>

#include <algorithm>

#include <fmt/format.h>

#include "libplan/artifacts/plan_json.h"
#include "libplan/artifacts/plan_pb.h"
#include "passes/select/plan_stitch.h"
#include "passes/select/serving_objective.h"
#include "tests/select/planted_space.h"

namespace zp::select {
namespace {

constexpr int64_t kMB = 1'000'000;

// Four heads h0..h3 (each two 2 MB subgraphs of 0.4 ms) that the group
// "attrs" (one 5 MB unit of 0.5 ms) answers at once, and "rare": two 4 MB
// subgraphs of 1 ms, whose 16 ms load breaks its 10 ms bound.
StitchSpace groupAndRareSpace() {
  StitchSpace sp;
  sp.processors = {{"cpu", "cpu", "host", "default", 1, {}, "onednn"}, {"gpu", "gpu", "host", "default", 1, {}, "onednn"}};
  sp.manifest.tasks.reserve(5);  // the tasks point into it
  for (int h = 0; h < 4; ++h) testing::addCpuGpuTask(sp, testing::plainTask(sp, fmt::format("h{}", h), 0.4, 2 * kMB, 0.97));
  testing::addCpuGpuTask(sp, testing::plainTask(sp, "rare", 1.0, 4 * kMB, 0.95));
  SharedGroup g;
  g.name = "attrs";
  g.file = "groups/attrs.onnx";
  g.sha256 = std::string(64, 'e');
  g.members = {0, 1, 2, 3};
  for (int h = 0; h < 4; ++h)
    g.io.push_back(plan::GroupMember{fmt::format("h{}", h), "x", "x", {"y"}, {fmt::format("h{}/y", h)}});
  g.sharedInput = true;
  g.accuracy = {0.97, 0.97, 0.97, 0.97};
  g.runMs = {{"cpu", 0.5}, {"gpu", 0.5}};
  g.bytes = {{"cpu", 5 * kMB}, {"gpu", 5 * kMB}};
  sp.groups.push_back(g);
  return sp;
}

plan::SloConfiguration groupSlo() {
  plan::SloConfiguration slo{"C01", {}};
  for (int h = 0; h < 4; ++h) slo.tasks[fmt::format("h{}", h)] = {0.9, 2.0};
  slo.tasks["rare"] = {0.9, 10.0};
  return slo;
}

// Heads at 40 q/s each, rare at 2 q/s, under a 15 MB device budget (units
// resident by load cost), loads at 2 ms per MB.
std::shared_ptr<ServingWorkload> groupWorkload() {
  auto w = std::make_shared<ServingWorkload>();
  for (int h = 0; h < 4; ++h) w->rateQps[fmt::format("h{}", h)] = 40;
  w->rateQps["rare"] = 2;
  w->durationMs = 5000;
  w->seed = 7;
  w->budgetBytes = 15 * kMB;
  w->residentByLoadCost = true;
  w->calibration.loadMsPerMB = 2.0;
  return w;
}

TEST(SharedGroup, TheComposedChoiceTakesTheGroupAndBeatsEverySingleTechnique) {
  const StitchSpace sp = groupAndRareSpace();
  const plan::SloConfiguration slo = groupSlo();
  const auto w = groupWorkload();
  const auto trace = workloadTrace(sp, *w);
  ASSERT_TRUE(trace.ok()) << trace.error().message;

  SelectParams composed;
  composed.workload = w;
  Algorithm1Result a1;
  ZooplanSearch search;
  const Choice z = zooplanChoice(sp, slo, composed, &a1, &search);
  for (size_t t = 0; t < 4; ++t) {
    EXPECT_EQ(z.candidate[t], groupDecision(0)) << "h" << t << " is answered by the group's unit";
    ASSERT_EQ(z.placement[t].size(), 1u);
    EXPECT_EQ(z.placement[t], z.placement[0]) << "one unit, on one processor";
  }
  EXPECT_GE(z.candidate[4], 0) << "rare runs its own model";
  EXPECT_EQ(search.predicted.violationRate, 0.0) << "the group's 5 MB and rare's 8 MB fit the 15 MB budget";
  EXPECT_TRUE(search.provenBest);

  // SparseLoom alone: its variants, no group; the heads' 16 MB thrash in the budget.
  SelectParams alone = composed;
  alone.only = SingleTechnique::SparseLoom;
  ZooplanSearch aloneSearch;
  zooplanChoice(sp, slo, alone, nullptr, &aloneSearch);
  EXPECT_GT(aloneSearch.predicted.violationRate - search.predicted.violationRate, 0.4)
      << "SparseLoom alone (planted: some 47 points more) " << aloneSearch.predicted.violationRate;
  // MTS alone: each task's model as given (its one variant here) or the group; never predicted below the composed.
  SelectParams mts = composed;
  mts.only = SingleTechnique::Mts;
  ZooplanSearch mtsSearch;
  const Choice m = zooplanChoice(sp, slo, mts, nullptr, &mtsSearch);
  for (size_t t = 0; t < m.candidate.size(); ++t)
    if (m.candidate[t] >= 0)
      EXPECT_TRUE(sp.tasks[t].combinations().original(static_cast<uint64_t>(m.candidate[t]))) << sp.tasks[t].name;
  EXPECT_GE(mtsSearch.predicted.violationRate, search.predicted.violationRate);
  // The group alone without the composed residency: every unit loaded on demand (no budget planning).
  auto unplanned = std::make_shared<ServingWorkload>(*w);
  unplanned->residentByLoadCost = false;
  EXPECT_GT(evaluateServing(sp, slo, z, *unplanned, *trace).violationRate, 0.0)
      << "loaded on demand, the group's and rare's first queries pay their loads";
  // Algorithm 1 and every SparseLoom baseline at the same workload.
  std::vector<Choice> others = baselineChoices(sp, slo, composed);
  others.push_back(a1.choice);
  for (const auto& c : others)
    EXPECT_GT(evaluateServing(sp, slo, c, *w, *trace).violationRate, search.predicted.violationRate + 0.4) << c.system;
}

TEST(SharedGroup, ThePlanNamesTheGroupsUnitOnceAndItsMembersChooseIt) {
  const StitchSpace sp = groupAndRareSpace();
  SelectParams params;
  params.workload = groupWorkload();
  auto solution = planStitch(sp, {groupSlo()}, {}, params);
  ASSERT_TRUE(solution.ok()) << solution.error().message;
  const auto groups = std::count_if(solution->units.begin(), solution->units.end(),
                                    [](const plan::Unit& u) { return u.id.kind == plan::UnitKind::Group; });
  EXPECT_EQ(groups, 1);
  const auto unit = std::find_if(solution->units.begin(), solution->units.end(),
                                 [](const plan::Unit& u) { return u.id.str() == "group:attrs"; });
  ASSERT_NE(unit, solution->units.end());
  EXPECT_EQ(unit->file, "groups/attrs.onnx");
  const auto& zooplan = solution->plan.systems.front();
  for (size_t t = 0; t < 4; ++t) {
    const auto& c = zooplan.selections[0].tasks[t];
    EXPECT_EQ(c.combination, "group:attrs") << c.task;
    EXPECT_EQ(c.placement.size(), 1u);
    EXPECT_TRUE(c.feasible);
    EXPECT_EQ(c.latencyMs, 0.5);
    EXPECT_EQ(c.accuracy, 0.97);
  }
  // No head's own subgraphs are planned for the chosen system alone; the baselines still run them.
  EXPECT_FALSE(solution->plan.tasks[0].subgraphs.empty()) << "the baselines' own subgraphs stay planned";
  ASSERT_TRUE(zooplan.selections[0].predicted);
  EXPECT_EQ(zooplan.selections[0].predicted->violationRate, 0.0);
  // plan.json keeps the group's unit and its members' choices.
  plan::Plan p;
  p.header = {"plan-solve", "0.1.0", {{"profile", std::string(64, 'a')}}};
  p.processors = solution->processors;
  p.units = solution->units;
  p.stitch = solution->plan;
  auto back = artifacts::parsePlanJson(artifacts::planToText(p), "plan.json");
  ASSERT_TRUE(back.ok()) << (back.ok() ? "" : back.error().message);
  EXPECT_EQ(artifacts::planToText(*back), artifacts::planToText(p)) << "plan.json keeps what it wrote";
  EXPECT_EQ(back->units, p.units);
  // The section lists the group with its members' names in it and its runs.
  ASSERT_EQ(back->stitch->groups.size(), 1u);
  const plan::PlannedGroup& g = back->stitch->groups[0];
  EXPECT_EQ(g.name, "attrs");
  EXPECT_EQ(g.members, sp.groups[0].io);
  ASSERT_EQ(g.runs.size(), 2u);
  EXPECT_EQ(g.runs[0], (plan::PlannedGroupRun{"cpu", 5 * kMB, 0.5}));
  auto pb = artifacts::parsePlanPb(artifacts::serializePlanPb(p), "plan.pb");
  ASSERT_TRUE(pb.ok()) << pb.error().message;
  EXPECT_EQ(*pb, p) << "plan.pb keeps the groups too";
  // A choice naming a group the plan does not list is refused, naming it.
  Json j = artifacts::toJson(p);
  j["stitch"]["systems"][0]["selections"][0]["tasks"][0]["combination"] = "group:other";
  auto bad = artifacts::planFromJson(j, "plan.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message,
            "plan.json: $.stitch: systems: 'zooplan' under C01: task 'h0': 'group:other' is none of the section's groups");
  // And a group member that is none of the section's tasks.
  Json stranger = artifacts::toJson(p);
  stranger["stitch"]["groups"][0]["members"][0]["task"] = "nobody";
  auto noTask = artifacts::planFromJson(stranger, "plan.json");
  ASSERT_FALSE(noTask.ok());
  EXPECT_EQ(noTask.error().message, "plan.json: $.stitch.groups[0]: member 'nobody' is not a task of the section");
  // So is a group the section lists whose unit the plan does not.
  plan::Plan noUnit = p;
  std::erase_if(noUnit.units, [](const plan::Unit& u) { return u.id.kind == plan::UnitKind::Group; });
  auto missing = artifacts::planFromJson(artifacts::toJson(noUnit), "plan.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message,
            "plan.json: $.stitch.groups[0]: 'group:attrs' is not a unit of the plan");
}

// Without the group in the space, the composed choice is no better than the
// best single system: the group is what wins here, not the search around it.
TEST(SharedGroup, WithoutTheGroupNoChoiceAvoidsTheThrashing) {
  StitchSpace sp = groupAndRareSpace();
  sp.groups.clear();
  SelectParams params;
  params.workload = groupWorkload();
  ZooplanSearch search;
  zooplanChoice(sp, groupSlo(), params, nullptr, &search);
  EXPECT_GT(search.predicted.violationRate, 0.3) << "planted: some 34% of queries wait for a load";
}

// Planning on some processors only: a group keeps its runs on them, and one
// that runs on none of them is no decision at all.
TEST(SharedGroup, PlanningOnSomeProcessorsKeepsTheGroupsRunsOnThem) {
  StitchSpace sp = groupAndRareSpace();
  ASSERT_TRUE(restrictProcessors(sp, {"gpu"}).ok());
  ASSERT_EQ(sp.groups.size(), 1u);
  EXPECT_EQ(sp.groups[0].runMs, (std::map<std::string, double>{{"gpu", 0.5}}));
  EXPECT_EQ(sp.groups[0].bytes.size(), 1u);
  StitchSpace cpuOnly = groupAndRareSpace();
  cpuOnly.groups[0].runMs.erase("cpu");
  cpuOnly.groups[0].bytes.erase("cpu");
  ASSERT_TRUE(restrictProcessors(cpuOnly, {"cpu"}).ok());
  EXPECT_TRUE(cpuOnly.groups.empty());
}

}  // namespace
}  // namespace zp::select
