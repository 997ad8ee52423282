#include <gtest/gtest.h>

#include "libplan/plan/plan.h"
#include "passes/schedule/concurrent.h"
#include "passes/schedule/random_instance.h"
#include "libplan/artifacts/plan_json.h"
#include "libplan/artifacts/plan_pb.h"

using namespace zp;

TEST(concurrentPlan, ConcurrentSectionRoundTrips) {
  schedule::Workload w;
  w.problem = schedule::randomInstance({.dnns = 2, .groups = 5, .accelerators = 2, .seed = 3});
  auto o = schedule::solveConcurrent(w, "w.json", {});
  ASSERT_TRUE(o.ok());
  plan::Plan p;
  p.header = {"plan-solve", "0.1.0", {{"w.json", "abc"}}};
  p.concurrent = o->section;
  std::string text = artifacts::planToText(p);
  auto back = artifacts::planFromJson(Json::parse(text), "plan.json");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(artifacts::planToText(*back), text);
  EXPECT_EQ(back->concurrent->dnns.size(), 2u);
  EXPECT_EQ(back->concurrent->dnns[0].groups.size(), 5u);
}

TEST(concurrentPlan, ReaderErrorsNameThePath) {
  Json j = Json::parse(R"({"header": {"tool": "t", "version": "v", "inputs": {}}, "processors": [], "units": [],
                           "concurrent": {"workload": "w", "objective": "speed"}})");
  auto r = artifacts::planFromJson(j, "plan.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "plan.json: $.concurrent.objective: must be 'latency' or 'throughput'");
  auto r2 = artifacts::planFromJson(Json::parse(R"({"header": {"tool": 1}})"), "plan.json");
  ASSERT_FALSE(r2.ok());
  EXPECT_EQ(r2.error().message, "plan.json: $.header.tool: expected a string");
}

// A plan that can run (the workload named host processors and its DNNs are
// models) records the processors, each DNN's model, dependencies and group
// nodes, and every baseline's schedule; plan.json and plan.pb carry them all.
TEST(concurrentPlan, AnExecutablePlanRecordsWhatPlanRunNeedsAndRoundTrips) {
  schedule::Workload w;
  w.problem = schedule::randomInstance({.dnns = 2, .groups = 3, .accelerators = 2, .seed = 5, .pipeline = true});
  w.processors = {Processor{w.problem.accelerators[0], "gpu", "host", "default", 1, {0}, "onednn"},
                  Processor{w.problem.accelerators[1], "npu", "host", "sparse", 1, {1}, "blis"}};
  for (const auto& d : w.problem.dnns) {
    schedule::Workload::ModelSource src{d.name + ".onnx", {}};
    for (const auto& g : d.groups) src.groupNodes.push_back({g.name + "/conv", g.name + "/relu"});
    w.sources.push_back(src);
  }
  auto o = schedule::solveConcurrent(w, "w.json", {});
  ASSERT_TRUE(o.ok()) << o.error().message;
  const auto& c = o->section;
  EXPECT_EQ(o->processors, w.processors);
  EXPECT_EQ(c.accelerators, w.problem.accelerators);
  ASSERT_EQ(c.dnns.size(), 2u);
  EXPECT_EQ(c.dnns[1].dependsOn, (std::vector<std::string>{c.dnns[0].name}));
  EXPECT_EQ(c.dnns[0].unit, plan::UnitId::model(c.dnns[0].name));
  EXPECT_EQ(c.dnns[1].groups[2].nodes, w.sources[1].groupNodes[2]);
  ASSERT_FALSE(c.baselines.empty());
  for (const auto& b : c.baselines) {
    ASSERT_EQ(b.dnns.size(), 2u) << b.name;
    double end = 0;
    for (const auto& d : b.dnns) end = std::max(end, d.endMs);
    EXPECT_DOUBLE_EQ(end, b.latencyMs) << b.name;  // the recorded schedule is the one simulated
  }
  plan::Plan p;
  p.header = {"plan-solve", "0.1.0", {{"w.json", "abc"}}};
  p.processors = o->processors;
  for (size_t n = 0; n < c.dnns.size(); ++n)
    p.units.push_back(plan::Unit{*c.dnns[n].unit, w.sources[n].model, std::string(64, 'a'), "", true, plan::kResidentUnit,
                                 std::nullopt});
  p.concurrent = c;
  const std::string text = artifacts::planToText(p);
  auto back = artifacts::planFromJson(Json::parse(text), "plan.json");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(artifacts::planToText(*back), text);  // numbers as the text rounds them
  EXPECT_EQ(back->processors, o->processors);
  EXPECT_EQ(back->concurrent->dnns[1].dependsOn, c.dnns[1].dependsOn);
  EXPECT_EQ(back->concurrent->dnns[1].groups[2].nodes, c.dnns[1].groups[2].nodes);
  EXPECT_EQ(back->concurrent->baselines.back().dnns.size(), 2u);
  auto fromPb = artifacts::parsePlanPb(artifacts::serializePlanPb(p), "plan.pb");
  ASSERT_TRUE(fromPb.ok()) << fromPb.error().message;
  EXPECT_EQ(*fromPb->concurrent, c);  // the protobuf keeps every bit

  // A dependency on a DNN not listed before is refused.
  Json j = Json::parse(text);
  j["concurrent"]["dnns"][0]["dependsOn"] = {c.dnns[1].name};
  auto bad = artifacts::planFromJson(j, "plan.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("plan.json: $.concurrent.dnns[0].dependsOn: '" + c.dnns[1].name +
                                     "' is not a DNN listed before it"),
            std::string::npos)
      << bad.error().message;
  // Every accelerator is one of the plan's processors, or none is (simulated only).
  Json k = Json::parse(text);
  k["processors"].erase(0);
  auto partial = artifacts::planFromJson(k, "plan.json");
  ASSERT_FALSE(partial.ok());
  EXPECT_NE(partial.error().message.find("$.concurrent.accelerators[0]: '"), std::string::npos)
      << partial.error().message;
  // A schedule of the older shape (its own processors) is refused with what to do.
  Json old = Json::parse(text);
  old["concurrent"]["processors"] = old["processors"];
  auto refused = artifacts::planFromJson(old, "plan.json");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("re-run plan-solve"), std::string::npos) << refused.error().message;
}
