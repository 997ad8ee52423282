// A plan is a list of units: their ids read back as written, plan.json and
// plan.pb carry them, and a plan that names a unit it does not list, lists one
// twice, or predates units is refused with the path of what is wrong.
#include <gtest/gtest.h>

#include "libplan/artifacts/plan_json.h"
#include "libplan/artifacts/plan_pb.h"
#include "libplan/plan/plan.h"

using namespace zp;
using plan::UnitId;

namespace {

const std::string kSha(64, 'a');

TEST(UnitId, EachKindReadsBackAsWritten) {
  for (const UnitId& id : {UnitId::subgraph("digits", 2, "u50"), UnitId::group("vision"), UnitId::model("resnet"),
                           UnitId::model("zoo/digits/dense")}) {
    auto back = plan::parseUnitId(id.str());
    ASSERT_TRUE(back.ok()) << back.error().message;
    EXPECT_EQ(*back, id) << id.str();
  }
  EXPECT_EQ(UnitId::subgraph("digits", 2, "u50").str(), "subgraph:digits/2/u50");
  EXPECT_EQ(UnitId::subgraph("digits", 2, "u50").profileKey(), "digits/2/u50");
  EXPECT_EQ(UnitId::model("resnet").profileKey(), "resnet");
  for (const char* bad : {"", "digits/0/u50", "subgraph:digits/x/u50", "subgraph:digits/-1/u50", "subgraph:/0/u50",
                          "subgraph:digits/0/", "subgraph:digits", "layer:x", "model:"}) {
    auto r = plan::parseUnitId(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.error().message.find("expected subgraph:TASK/POSITION/VARIANT"), std::string::npos) << r.error().message;
  }
}

plan::Plan coldPlanOfTwoUnits() {
  plan::Plan p;
  p.header = {"plan-solve", "0.1.0", {{"m.onnx", kSha}}};
  p.processors = {Processor{"cpu", "cpu", "host", "default", 1, {0}, "onednn"}};
  p.units.push_back(plan::Unit{UnitId::group("g"), "g.onnx", kSha, "cpu", false, plan::kResidentUnit, std::nullopt});
  p.units.push_back(plan::Unit{UnitId::model("m"), "m.onnx", std::string(64, 'b'), "", true, plan::kColdUnit, UnitId::group("g")});
  plan::ColdPlan c;
  c.unit = UnitId::model("m");
  c.gemm = "onednn";
  c.storageMBps = 800;
  c.predictedColdMs = c.predictedWarmReadyMs = c.lowerBoundMs = 4;
  c.predictedWarmMs = 4;
  c.solver = "pareto-dp";
  c.status = "optimal";
  c.searchSpace = "all";
  c.nodes = {{0, "relu", "", "", "none", -1, 0, 0, 0, 0, 0, 4, "", "", "none", -1, 0}};
  c.configurations = {{"K+C+P", true, true, true, "onednn", 4, "optimal"}};
  p.cold.push_back(c);
  return p;
}

TEST(PlanUnits, JsonAndProtobufCarryTheUnits) {
  const plan::Plan p = coldPlanOfTwoUnits();
  auto json = artifacts::parsePlanJson(artifacts::planToText(p), "plan.json");
  ASSERT_TRUE(json.ok()) << json.error().message;
  EXPECT_EQ(json->units, p.units);
  EXPECT_EQ(json->processors, p.processors);
  auto pb = artifacts::parsePlanPb(artifacts::serializePlanPb(p), "plan.pb");
  ASSERT_TRUE(pb.ok()) << pb.error().message;
  EXPECT_EQ(pb->units, p.units);
  EXPECT_EQ(pb->processors, p.processors);
  EXPECT_EQ(pb->cold.front().unit, UnitId::model("m"));
}

std::string errorOf(const Json& j) {
  auto r = artifacts::parsePlanJson(j.dump(), "plan.json");
  return r.ok() ? "ok" : r.error().message;
}

TEST(PlanUnits, WhatTheUnitsDoNotHoldIsRefused) {
  const Json good = Json::parse(artifacts::planToText(coldPlanOfTwoUnits()));
  ASSERT_EQ(errorOf(good), "ok");
  Json old = good;
  old.erase("units");
  EXPECT_EQ(errorOf(old), "plan.json: $.units: missing: written by an older plan-solve (a plan is now a list of units); "
                          "re-run plan-solve");
  // The processors are the plan's, listed once; units and sections name them.
  Json oldProcessors = good;
  oldProcessors.erase("processors");
  EXPECT_EQ(errorOf(oldProcessors), "plan.json: $.processors: missing: written by an older plan-solve (a plan lists "
                                    "its processors once); re-run plan-solve");
  Json unknownProcessor = good;
  unknownProcessor["units"][0]["processor"] = "npu";
  EXPECT_EQ(errorOf(unknownProcessor),
            "plan.json: $.units[0].processor: 'npu' is not one of the plan's processors ($.processors)");
  Json processorTwice = good;
  processorTwice["processors"].push_back(processorTwice["processors"][0]);
  EXPECT_NE(errorOf(processorTwice).find("processor 'cpu' is listed twice"), std::string::npos)
      << errorOf(processorTwice);
  Json twice = good;
  twice["units"].push_back(twice["units"][0]);
  EXPECT_EQ(errorOf(twice), "plan.json: $.units[2].id: 'group:g' is listed twice");
  Json unnamed = good;
  unnamed["cold"][0]["unit"] = "model:other";
  EXPECT_EQ(errorOf(unnamed), "plan.json: $.cold[0].unit: 'model:other' is not a unit of the plan");
  Json noGroup = good;
  noGroup["units"][1]["group"] = "group:h";
  EXPECT_EQ(errorOf(noGroup), "plan.json: $.units[1].group: 'group:h' is not a unit of the plan");
  Json badId = good;
  badId["units"][0]["id"] = "layer:x";
  EXPECT_NE(errorOf(badId).find("$.units[0].id"), std::string::npos) << errorOf(badId);
  Json badHash = good;
  badHash["units"][0]["sha256"] = "abc";
  EXPECT_NE(errorOf(badHash).find("sha256: expected 64 lowercase hex digits"), std::string::npos) << errorOf(badHash);
  Json badResidency = good;
  badResidency["units"][0]["residency"] = "sometimes";
  EXPECT_NE(errorOf(badResidency).find("residency"), std::string::npos) << errorOf(badResidency);
}

// Units of one file share one cold cache: each loads by the cold section of the
// first of them (in unit order) that has one, whichever unit it is.
TEST(PlanUnits, UnitsOfOneFileLoadByOneColdSection) {
  plan::Plan p;
  auto unit = [](UnitId id, std::string file) {
    plan::Unit u;
    u.id = std::move(id);
    u.file = std::move(file);
    u.sha256 = kSha;
    return u;
  };
  p.units = {unit(UnitId::subgraph("parity", 0, "dense"), "sg/a.onnx"),
             unit(UnitId::subgraph("digit10", 0, "dense"), "sg/a.onnx"),
             unit(UnitId::subgraph("gt4", 0, "dense"), "sg/a.onnx"),
             unit(UnitId::subgraph("scene", 0, "u80"), "sg/b.onnx")};
  p.cold.resize(2);
  p.cold[0].unit = UnitId::subgraph("parity", 0, "dense");
  p.cold[1].unit = UnitId::subgraph("digit10", 0, "dense");
  for (size_t u = 0; u < 3; ++u) {
    const plan::ColdPlan* c = plan::coldSectionOf(p, p.units[u]);
    ASSERT_NE(c, nullptr) << p.units[u].id.str();
    EXPECT_EQ(c->unit, UnitId::subgraph("digit10", 0, "dense")) << p.units[u].id.str();
  }
  EXPECT_EQ(plan::coldSectionOf(p, p.units[3]), nullptr);
}

}  // namespace
