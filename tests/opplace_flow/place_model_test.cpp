// Placing the digits model's operators on the zoo's two host processors from
// a measured per-node profile and from predictions; the plan section it gives
// reads back from plan.json and plan.pb unchanged, and plan.pb is deterministic.
#include <gtest/gtest.h>

#include "drivers/opplace_flow/node_profiles.h"
#include "drivers/opplace_flow/place_model.h"
#include "libplan/artifacts/plan_json.h"
#include "libplan/artifacts/plan_pb.h"
#include "libplan/artifacts/zoo_json.h"
#include "libplan/graph/model_io.h"
#include "tests/common/test_paths.h"

namespace zp::drivers::opplace_flow {
namespace {

// The optimum under the cost model, every mix kept however small its gain.
opplace::SolveParams exactParams() {
  opplace::SolveParams p;
  p.minMixGain = 0;
  return p;
}

struct Fixture {
  zoo::Zoo zoo;
  std::vector<ModelSource> models;
  PlaceInputs inputs;
};

Fixture digits() {
  Fixture f;
  auto zoo = artifacts::loadZoo(std::string(zp::testing::kSourceDir) + "/testdata/digits/zoo.json");
  EXPECT_TRUE(zoo.ok());
  f.zoo = *zoo;
  f.models = zooModels(f.zoo);
  f.inputs.processors = placeProcessors(f.zoo);
  const size_t k = f.inputs.processors.size();
  f.inputs.handoff.assign(k, std::vector<estimate::TransitionCost>(k, estimate::TransitionCost{0.002, 1e-7}));
  f.inputs.predictor.rounds = 60;
  return f;
}

TEST(opplaceFlowPlaceModel, MeasuredPlacementBeatsOrTiesEveryBaselineAndRoundTrips) {
  auto f = digits();
  std::vector<ModelSource> profiled = {f.models[0], f.models[3]};  // dense, u90
  auto configs = hostConfigs(f.zoo);
  Processor twoThreads;
  twoThreads.threads = 2;
  configs.push_back(twoThreads);
  auto rows = profileModels(profiled, configs, ProfileParams{{3, 1}, 0});
  ASSERT_TRUE(rows.ok()) << rows.error().message;
  f.inputs.profile = *rows;
  f.inputs.modelKey = f.models[0].name;
  f.inputs.alone = {twoThreads};
  auto model = graph::loadModel(f.models[0].file);
  ASSERT_TRUE(model.ok());
  auto pp = buildPlaceProblem(*model, f.inputs);
  ASSERT_TRUE(pp.ok()) << pp.error().message;
  EXPECT_EQ(pp->costSource, "measured");
  const size_t k = f.zoo.processors.size();
  EXPECT_EQ(pp->problem.processors.size(), k);
  EXPECT_GE(pp->problem.nodes.size(), 2u);
  EXPECT_GE(pp->problem.edges.size(), pp->problem.nodes.size() - 1);
  auto r = opplace::placeOperators(pp->problem, exactParams());
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->solution.optimal);
  for (const auto& b : r->baselines) {
    if (!b.assignment.empty()) {
      EXPECT_LE(r->solution.latencyMs, b.latencyMs + 1e-12) << b.name;
    }
  }
  // after each processor alone: the whole model on the two-thread configuration
  ASSERT_GT(r->baselines.size(), k);
  EXPECT_EQ(r->baselines[k].name, "default@2-alone");

  plan::Plan p;
  p.header = {"plan-solve", "0.1.0", {{"dense.onnx", std::string(64, 'a')}}};
  p.units.push_back(plan::Unit{plan::UnitId::model("dense"), "dense.onnx", std::string(64, 'a'), "", true,
                               plan::kResidentUnit, std::nullopt});
  std::vector<Processor> procs;
  for (size_t i = 0; i < k; ++i) procs.push_back(f.inputs.processors[i]);
  p.opplace.push_back(placementSection(pp->problem, *r, procs, plan::UnitId::model("dense"), pp->costSource, exactParams()));
  EXPECT_EQ(p.opplace.front().minMixGain, 0);
  p.opplace.front().minMixGain = 0.05;
  p.opplace.front().minMixGainMs = 0.1;
  p.opplace.front().mixedLatencyMs = 1.25;  // as if a mix had been given up: the fields round-trip
  EXPECT_EQ(p.opplace.front().nodes.size(), pp->problem.nodes.size());
  // Each processor as plan-run will pin and run it: the zoo's cores, policy and GEMM library.
  ASSERT_EQ(p.opplace.front().processors.size(), k);
  EXPECT_EQ(p.opplace.front().processors[1], "npu");
  p.processors = procs;
  const std::string text = artifacts::planToText(p);
  auto back = artifacts::planFromJson(Json::parse(text), "plan.json");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(artifacts::planToText(*back), text);
  const std::string pb = artifacts::serializePlanPb(p);
  EXPECT_EQ(artifacts::serializePlanPb(p), pb);
  auto fromPb = artifacts::parsePlanPb(pb, "plan.pb");
  ASSERT_TRUE(fromPb.ok()) << fromPb.error().message;
  EXPECT_EQ(*fromPb, p);

  // A placement per placed unit: two units' placements round-trip in order; one unit placed twice is refused.
  p.units.push_back(plan::Unit{plan::UnitId::model("other"), "other.onnx", std::string(64, 'b'), "", true,
                               plan::kResidentUnit, std::nullopt});
  p.opplace.push_back(p.opplace.front());
  p.opplace.back().unit = plan::UnitId::model("other");
  const std::string two = artifacts::planToText(p);
  auto backTwo = artifacts::planFromJson(Json::parse(two), "plan.json");
  ASSERT_TRUE(backTwo.ok()) << backTwo.error().message;
  EXPECT_EQ(artifacts::planToText(*backTwo), two);
  ASSERT_NE(plan::placementOf(*backTwo, plan::UnitId::model("other")), nullptr);
  EXPECT_EQ(plan::placementOf(*backTwo, plan::UnitId::model("missing")), nullptr);
  auto twoPb = artifacts::parsePlanPb(artifacts::serializePlanPb(p), "plan.pb");
  ASSERT_TRUE(twoPb.ok()) << twoPb.error().message;
  EXPECT_EQ(*twoPb, p);
  p.opplace.back().unit = plan::UnitId::model("dense");
  auto twice = artifacts::planFromJson(Json::parse(artifacts::planToText(p)), "plan.json");
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.error().message, "plan.json: $.opplace[1].unit: 'model:dense' is placed twice");
}

TEST(opplaceFlowPlaceModel, ModelOutsideTheProfileIsPlacedOnPredictions) {
  auto f = digits();
  auto rows = profileModels({f.models[0], f.models[3]}, hostConfigs(f.zoo), ProfileParams{{3, 1}, 0});
  ASSERT_TRUE(rows.ok()) << rows.error().message;
  f.inputs.profile = *rows;
  f.inputs.modelKey = f.models[1].name;  // u50: not profiled
  auto model = graph::loadModel(f.models[1].file);
  ASSERT_TRUE(model.ok());
  auto pp = buildPlaceProblem(*model, f.inputs);
  ASSERT_TRUE(pp.ok()) << pp.error().message;
  EXPECT_EQ(pp->costSource, "predicted");
  for (const auto& row : pp->problem.ms)
    for (double ms : row) EXPECT_GT(ms, 0);
}

TEST(opplaceFlowPlaceModel, AProcessorOnAllCoresTakesTurnsWithTheSingleCoreOnes) {
  // Beside cpu (core 0) and npu (core 1), one processor with both cores and two
  // intra-operator threads: it occupies both cores, so none of its operators
  // overlaps an operator on cpu or npu in the placement's timeline.
  auto f = digits();
  Processor all{"all-cores", "cpu", "host", "default", 2, {0, 1}};
  f.inputs.processors.push_back(all);
  const size_t k = f.inputs.processors.size();
  f.inputs.handoff.assign(k, std::vector<estimate::TransitionCost>(k, estimate::TransitionCost{0.002, 1e-7}));
  auto configs = hostConfigs(f.zoo);
  configs.push_back(all.engine());
  auto rows = profileModels({f.models[0]}, configs, ProfileParams{{3, 1}, 0});
  ASSERT_TRUE(rows.ok()) << rows.error().message;
  f.inputs.profile = *rows;
  f.inputs.modelKey = f.models[0].name;
  auto model = graph::loadModel(f.models[0].file);
  ASSERT_TRUE(model.ok());
  auto pp = buildPlaceProblem(*model, f.inputs);
  ASSERT_TRUE(pp.ok()) << pp.error().message;
  EXPECT_EQ(pp->problem.cores, (std::vector<std::vector<int>>{{0}, {1}, {0, 1}}));
  auto r = opplace::placeOperators(pp->problem, exactParams());
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->solution.optimal);
  const auto& a = r->solution.assignment;
  const auto& t = r->timeline;
  for (size_t u = 0; u < a.size(); ++u)
    for (size_t v = u + 1; v < a.size(); ++v) {
      const bool shareCores = a[u] == a[v] || a[u] == 2 || a[v] == 2;
      if (!shareCores) continue;
      EXPECT_TRUE(t.finishMs[u] <= t.startMs[v] + 1e-12 || t.finishMs[v] <= t.startMs[u] + 1e-12)
          << "nodes " << u << " and " << v << " overlap on shared cores";
    }
  // With one processor naming no cores, none is known to share: each is its own.
  f.inputs.processors[1].cores.clear();
  auto unpinned = buildPlaceProblem(*model, f.inputs);
  ASSERT_TRUE(unpinned.ok()) << unpinned.error().message;
  EXPECT_TRUE(unpinned->problem.cores.empty());
}

TEST(opplaceFlowPlaceModel, BadSectionIsAnErrorNamingThePath) {
  Json j = Json::parse(R"({"header": {"tool": "t", "version": "v", "inputs": {}},
    "processors": [{"name": "cpu", "kind": "cpu", "source": "host", "policy": "default", "threads": 1, "cores": [0]}],
    "units": [], "opplace": {"unit": "model:m", "costSource": "measured", "processors": ["cpu"], "latencyMs": 1,
      "solver": {"solver": "chain-dp", "status": "optimal", "searchSpace": "all assignments",
                 "maxTransitionsPerDnn": -1, "objective": 1, "bound": 1, "gap": 0, "timeLimitS": 10,
                 "seed": 0, "nodes": 1, "simulations": 0, "crossCheck": ""},
      "nodes": [{"node": "a", "processor": "gpu", "startMs": 0, "endMs": 1}], "baselines": []}})");
  auto r = artifacts::planFromJson(j, "plan.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "plan.json: $.opplace.nodes[0].processor: unknown processor 'gpu'");
  j["opplace"]["nodes"][0]["processor"] = "cpu";
  j["processors"][0]["threads"] = 0;
  r = artifacts::planFromJson(j, "plan.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message.rfind("plan.json: $.processors[0].threads: ", 0), 0u) << r.error().message;
  j["processors"][0]["threads"] = 1;
  j["opplace"]["processors"] = Json::array({"gpu"});
  j["opplace"]["nodes"][0]["processor"] = "gpu";
  r = artifacts::planFromJson(j, "plan.json");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("'gpu' is not one of the plan's processors"), std::string::npos) << r.error().message;
}

}  // namespace
}  // namespace zp::drivers::opplace_flow
