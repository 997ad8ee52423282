#include <gtest/gtest.h>

#include "libplan/plan/plan.h"
#include "passes/schedule/concurrent.h"
#include "passes/schedule/random_instance.h"
#include "libplan/artifacts/plan_json.h"

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
  Json j = Json::parse(R"({"header": {"tool": "t", "version": "v", "inputs": {}},
                           "concurrent": {"workload": "w", "objective": "speed"}})");
  auto r = artifacts::planFromJson(j, "plan.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "plan.json: $.concurrent.objective: must be 'latency' or 'throughput'");
  auto r2 = artifacts::planFromJson(Json::parse(R"({"header": {"tool": 1}})"), "plan.json");
  ASSERT_FALSE(r2.ok());
  EXPECT_EQ(r2.error().message, "plan.json: $.header.tool: expected a string");
}
