// An operator-placed variant (SparOA) as a decision of the composed planner: a
// task's query may be answered by its variant whole, its operators across cpu
// and gpu, one run dispatched on cpu that holds gpu. On a planted deployment
// where the task's bound lies between the placement's latency and any one
// processor's, the composed choice takes the placement; the serving objective
// charges the held processor's other queries for the hold; and the plan lists
// the placed unit once, with its placement, and round-trips.
#include <gtest/gtest.h>

#include <algorithm>

#include "libplan/artifacts/plan_json.h"
#include "libplan/artifacts/plan_pb.h"
#include "libplan/util/infinity.h"
#include "passes/select/plan_stitch.h"
#include "passes/select/serving_objective.h"
#include "tests/select/planted_space.h"

namespace zp::select {
namespace {

constexpr int64_t kMegabyte = 1'000'000;

// "branchy": two positions of 1.5 ms on either processor (3 ms whole on one);
// its placement over cpu and gpu runs in 2 ms. "scene": two positions of 0.5 ms.
StitchSpace placedSpace() {
  StitchSpace sp;
  sp.processors = {{"cpu", "cpu", "host", "default", 1, {}, "onednn"}, {"gpu", "gpu", "host", "default", 1, {}, "onednn"}};
  sp.manifest.tasks.reserve(2);  // the tasks point into it
  testing::addCpuGpuTask(sp, testing::plainTask(sp, "branchy", 1.5, kMegabyte, 0.95));
  testing::addCpuGpuTask(sp, testing::plainTask(sp, "scene", 0.5, kMegabyte, 0.97));
  PlacedModel m;
  m.task = 0;
  m.variant = "dense";
  m.original = 0;
  m.file = "../models/branchy/dense.onnx";
  m.sha256 = std::string(64, 'b');
  m.bytes = 2 * kMegabyte;
  m.placement.memoryBytes = m.bytes;
  m.placement.unit = plan::UnitId::model("z/branchy/dense");
  m.placement.costSource = "measured";
  m.placement.processors = {"cpu", "gpu"};
  m.placement.latencyMs = 2.0;
  m.placement.solver = plan::SolverReport{"chain-dp", "optimal", "all assignments", -1, 2.0, 2.0, 0, 10, 0, 1, 0, ""};
  m.placement.minMixGain = 0.05;
  m.placement.nodes = {{"a", "cpu", 0, 1}, {"b", "gpu", 0, 1}, {"c", "cpu", 1, 2}};
  sp.placed.push_back(m);
  return sp;
}

plan::SloConfiguration placedSlo(double sceneMs) {
  plan::SloConfiguration slo{"C01", {}};
  slo.tasks["branchy"] = {0.9, 2.5};
  slo.tasks["scene"] = {0.9, sceneMs};
  return slo;
}

std::shared_ptr<ServingWorkload> placedWorkload(double sceneQps) {
  auto w = std::make_shared<ServingWorkload>();
  w->rateQps["branchy"] = 50;
  w->rateQps["scene"] = sceneQps;
  w->durationMs = 5000;
  w->seed = 3;
  return w;
}

TEST(PlacedModel, TheComposedChoiceTakesThePlacementWhereNoProcessorAloneMeetsTheBound) {
  const StitchSpace sp = placedSpace();
  const auto slo = placedSlo(5.0);
  SelectParams composed;
  composed.workload = placedWorkload(50);
  ZooplanSearch search;
  const Choice z = zooplanChoice(sp, slo, composed, nullptr, &search);
  EXPECT_EQ(z.candidate[0], placedDecision(0));
  EXPECT_EQ(z.placement[0], (std::vector<std::string>{"cpu", "gpu"}));
  EXPECT_TRUE(z.feasible[0]);
  EXPECT_EQ(decisionId(sp, 0, z.candidate[0]), "model:z/branchy/dense");
  EXPECT_EQ(decisionJudgedAccuracy(sp, 0, z.candidate[0]), 0.95) << "the variant's own answers";
  EXPECT_EQ(decisionLatencyMs(sp, 0, z.candidate[0], {"gpu", "cpu"}), kInf) << "only on its own processors";
  // Queued behind one another at 50 q/s each, a few branchy queries still wait past 2.5 ms.
  EXPECT_LT(search.predicted.violationRate, 0.05);
  // Without the placement, every branchy query misses its bound (3 ms on one
  // processor, or 3 ms split): half of all queries.
  StitchSpace without = sp;
  without.placed.clear();
  ZooplanSearch unplaced;
  zooplanChoice(without, slo, composed, nullptr, &unplaced);
  EXPECT_GT(unplaced.predicted.violationRate, 0.49);
  EXPECT_GT(unplaced.predicted.violationRate - search.predicted.violationRate, 0.45);
  // SparseLoom, MTS and NNV12 alone never place operators; SparOA alone places the model as given.
  SelectParams alone = composed;
  for (auto technique : {SingleTechnique::SparseLoom, SingleTechnique::Mts, SingleTechnique::Nnv12}) {
    alone.only = technique;
    EXPECT_GE(zooplanChoice(sp, slo, alone, nullptr, nullptr).candidate[0], 0);
  }
  alone.only = SingleTechnique::SparOA;
  ZooplanSearch sparoa;
  EXPECT_EQ(zooplanChoice(sp, slo, alone, nullptr, &sparoa).candidate[0], placedDecision(0));
  EXPECT_GE(sparoa.predicted.violationRate, search.predicted.violationRate);
}

// A frame's DNNs as HaX-CoNN's schedule maps them: branchy's layer groups over
// cpu and gpu (a placed candidate of HaX-CoNN's), scene whole on one processor.
// HaX-CoNN alone runs them there, whatever else would serve better; SparOA alone
// never takes HaX-CoNN's placement; the composed choice is never predicted worse.
TEST(PlacedModel, HaxConnAloneRunsAFramesDnnsWhereItsScheduleMapsThem) {
  StitchSpace sp = placedSpace();
  sp.placed[0].by = PlacedBy::HaxConn;
  const auto slo = placedSlo(5.0);
  SelectParams alone;
  alone.workload = placedWorkload(50);
  alone.only = SingleTechnique::SparOA;
  EXPECT_GE(zooplanChoice(sp, slo, alone, nullptr, nullptr).candidate[0], 0) << "SparOA places by its own solver only";
  SelectParams composed = alone;
  composed.only = SingleTechnique::None;
  ZooplanSearch best;
  zooplanChoice(sp, slo, composed, nullptr, &best);
  alone.only = SingleTechnique::HaxConn;
  for (const char* proc : {"gpu", "cpu"}) {
    sp.scheduledWhole[1] = proc;
    ZooplanSearch haxconn;
    const Choice h = zooplanChoice(sp, slo, alone, nullptr, &haxconn);
    EXPECT_EQ(h.candidate[0], placedDecision(0)) << proc;
    EXPECT_EQ(h.placement[1], (std::vector<std::string>{proc, proc}));
    EXPECT_GE(haxconn.predicted.violationRate, best.predicted.violationRate) << proc;
    ZooplanSearch withSchedule;
    zooplanChoice(sp, slo, composed, nullptr, &withSchedule);
    EXPECT_LE(withSchedule.predicted.violationRate, haxconn.predicted.violationRate) << proc;
  }
}

TEST(PlacedModel, AHoldDelaysTheHeldProcessorsOtherQueries) {
  const StitchSpace sp = placedSpace();
  const auto slo = placedSlo(5.0);
  const auto w = placedWorkload(100);
  const auto trace = workloadTrace(sp, *w);
  ASSERT_TRUE(trace.ok()) << trace.error().message;
  // scene whole on gpu; branchy placed (holding gpu) or whole on cpu (gpu left to scene).
  Choice placed{"placed", {placedDecision(0), 0}, {{"cpu", "gpu"}, {"gpu", "gpu"}}, {true, true}, {}};
  Choice onCpu{"on cpu", {0, 0}, {{"cpu", "cpu"}, {"gpu", "gpu"}}, {false, true}, {}};
  const Outcome a = evaluateServing(sp, slo, placed, *w, *trace);
  const Outcome b = evaluateServing(sp, slo, onCpu, *w, *trace);
  EXPECT_GE(b.taskLatencyMs[1], 1.0) << "gpu runs scene alone, queued behind its own queries only";
  EXPECT_GT(a.taskLatencyMs[1], b.taskLatencyMs[1] + 0.1) << "scene also waits for the branchy runs holding gpu";
  EXPECT_LT(a.taskLatencyMs[0], b.taskLatencyMs[0]);
  // With scene's bound at 1.2 ms, holding gpu costs scene queries: the planner weighs both.
  const auto tight = placedSlo(1.2);
  SelectParams params;
  params.workload = w;
  ZooplanSearch search;
  zooplanChoice(sp, tight, params, nullptr, &search);
  EXPECT_LE(search.predicted.violationRate, evaluateServing(sp, tight, placed, *w, *trace).violationRate);
  EXPECT_LE(search.predicted.violationRate, evaluateServing(sp, tight, onCpu, *w, *trace).violationRate);
}

TEST(PlacedModel, ThePlanListsThePlacedUnitOnceWithItsPlacementAndRoundTrips) {
  const StitchSpace sp = placedSpace();
  SelectParams params;
  params.workload = placedWorkload(50);
  auto solution = planStitch(sp, {placedSlo(5.0)}, {}, params);
  ASSERT_TRUE(solution.ok()) << solution.error().message;
  const auto unit = std::find_if(solution->units.begin(), solution->units.end(),
                                 [](const plan::Unit& u) { return u.id.str() == "model:z/branchy/dense"; });
  ASSERT_NE(unit, solution->units.end());
  EXPECT_TRUE(unit->operatorPlaced);
  EXPECT_EQ(unit->file, "../models/branchy/dense.onnx");
  ASSERT_EQ(solution->placements.size(), 1u);
  EXPECT_EQ(solution->placements[0], sp.placed[0].placement);
  const auto& c = solution->plan.systems.front().selections[0].tasks[0];
  EXPECT_EQ(c.combination, "model:z/branchy/dense");
  EXPECT_EQ(c.placement, (std::vector<std::string>{"cpu", "gpu"}));
  EXPECT_EQ(c.latencyMs, 2.0);
  EXPECT_EQ(c.accuracySource, "measured");

  plan::Plan p;
  p.header = {"plan-solve", "0.1.0", {{"profile", std::string(64, 'a')}}};
  p.processors = solution->processors;
  p.units = solution->units;
  p.opplace = solution->placements;
  p.stitch = solution->plan;
  auto back = artifacts::parsePlanJson(artifacts::planToText(p), "plan.json");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(artifacts::planToText(*back), artifacts::planToText(p));
  auto pb = artifacts::parsePlanPb(artifacts::serializePlanPb(p), "plan.pb");
  ASSERT_TRUE(pb.ok()) << pb.error().message;
  EXPECT_EQ(*pb, p);
  // A placed choice on other processors than its placement's, or without a placement, is refused.
  Json j = artifacts::toJson(p);
  j["stitch"]["systems"][0]["selections"][0]["tasks"][0]["placement"] = Json::array({"gpu", "cpu"});
  auto moved = artifacts::planFromJson(j, "plan.json");
  ASSERT_FALSE(moved.ok());
  EXPECT_EQ(moved.error().message,
            "plan.json: $.stitch.systems[0]: task 'branchy' under C01 runs 'model:z/branchy/dense' on gpu,cpu, not "
            "on its placement's processors cpu,gpu");
  plan::Plan unplaced = p;
  unplaced.opplace.clear();
  auto none = artifacts::planFromJson(artifacts::toJson(unplaced), "plan.json");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().message,
            "plan.json: $.stitch.systems[0]: task 'branchy' under C01 runs 'model:z/branchy/dense', which the plan "
            "does not place (no unit with a placement in $.opplace)");
}

}  // namespace
}  // namespace zp::select
