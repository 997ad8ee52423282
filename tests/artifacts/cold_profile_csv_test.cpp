#include <gtest/gtest.h>

#include "libplan/artifacts/cold_profile_csv.h"
#include "libplan/artifacts/plan_json.h"
#include "libplan/artifacts/plan_pb.h"

namespace zp::artifacts {
namespace {

profile::ColdProfile sample() {
  profile::ColdProfile p;
  p.cores = 2;
  p.threads = 1;
  p.storageMBps = 812.5;
  p.storageProbeBytes = 33554432;
  p.gemmStartupMs = {{"blis", 0.25}, {"onednn", 41.5}};
  p.models = {{"resnet", 3.5}};
  p.nodes = {{"resnet", 0, "conv1", "Conv", "im2col", "onednn", 37632, 37888, 0.125, 6.5, 5.25},
             {"resnet", 0, "conv1", "Conv", "sparse", "", 37632, 45000, 1.5, 20, 19},
             {"resnet", 1, "pool, \"max\"", "MaxPool", "", "", 0, 0, 0, 0.5, 0.25}};
  return p;
}

TEST(ColdProfileCsv, RoundTrip) {
  const std::string text = formatColdProfileCsv(sample());
  auto back = parseColdProfileCsv(text, "cold_profile.csv");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back, sample());
  EXPECT_EQ(formatColdProfileCsv(*back), text);
}

TEST(ColdProfileCsv, ReadLatencyRoundTripsAndIsAbsentWhenZero) {
  profile::ColdProfile p = sample();
  EXPECT_EQ(formatColdProfileCsv(p).find("storage_read_latency_ms"), std::string::npos);
  p.storageLatencyMs = 0.25;
  const std::string text = formatColdProfileCsv(p);
  auto back = parseColdProfileCsv(text, "cold_profile.csv");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back, p);
}

TEST(ColdProfileCsv, RejectsBadRowsNamingFileAndLine) {
  std::string text = formatColdProfileCsv(sample());
  auto bad = [&](const std::string& from, const std::string& to, const std::string& expect) {
    std::string t = text;
    size_t at = t.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    t.replace(at, from.size(), to);
    auto r = parseColdProfileCsv(t, "cold_profile.csv");
    ASSERT_FALSE(r.ok()) << to;
    EXPECT_NE(r.error().message.find(expect), std::string::npos) << r.error().message;
    EXPECT_EQ(r.error().message.find('\n'), std::string::npos);
  };
  bad("0.125,6.5", "-1,6.5", "cold_profile.csv:9: column 'transform_ms'");
  bad("host,,,cores", "host,,,kores", "unknown host key 'kores'");
  bad("node,resnet,1,", "node,resnet,2,", "step 1 is missing");
  bad("model,resnet,", "model,other,", "which has no model row");
  bad("\"pool, \"\"max\"\"\",MaxPool,,,0,0,0", "\"pool, \"\"max\"\"\",MaxPool,,,5,0,0", "no GEMM library, weights");
  bad("sparse,,", "im2col,onednn,", "given twice");
  bad("storage_read_mb_per_s,,,,,,,,,812.5", "storage_read_mb_per_s,,,,,,,,,0", "storage_read_mb_per_s");
}

plan::Plan coldPlan() {
  plan::Plan p;
  p.header = {"plan-solve", "0.1.0", {{"m.onnx", "ab"}}};
  p.units.push_back(plan::Unit{plan::UnitId::model("m"), "m.onnx", std::string(64, 'a'), "", false, plan::kColdUnit,
                               std::nullopt});
  plan::ColdPlan c;
  c.unit = plan::UnitId::model("m");
  c.configuration = "K+C+P";
  c.pipelined = true;
  c.gemm = "blis+onednn";
  c.gemmStartup = true;
  c.cores = 2;
  c.storageMBps = 800;
  c.setupMs = 2;
  c.predictedColdMs = 11.5;
  c.predictedWarmReadyMs = 12;
  c.predictedWarmMs = 4.5;
  c.solver = "pareto-dp";
  c.status = "optimal";
  c.searchSpace = "all";
  c.lowerBoundMs = 11.5;
  c.states = 9;
  c.nodes = {{0, "c1", "winograd", "blis", "transform", 1, 2, 3, 3, 7, 7, 11, "winograd", "onednn", "none", -1, 40},
             {1, "c2", "sparse", "", "cache", -1, 3, 4, 4, 4, 11, 11.2, "im2col", "onednn", "cache", -1, 41},
             {2, "relu", "", "", "none", -1, 4, 4, 4, 4, 11.2, 11.5, "", "", "none", -1, 0}};
  c.configurations = {{"none", false, false, false, "onednn", 77.5, "optimal"},
                      {"K+C+P", true, true, true, "blis", 11.5, "optimal"}};
  p.cold.push_back(c);
  return p;
}

TEST(ColdPlanJson, RoundTripThroughJsonAndProtobuf) {
  plan::Plan p = coldPlan();
  plan::Plan calibrated = p;
  calibrated.cold[0].calibrationRuns = 6;
  calibrated.cold[0].executeFactor = 1.25;
  calibrated.cold[0].transformFactor = 3.5;
  calibrated.cold[0].transformOverheadMs = 0.125;
  calibrated.cold[0].readLatencyMs = 0.5;
  calibrated.cold[0].startupFactor = 2.25;
  calibrated.cold[0].setupFactor = 1.75;
  calibrated.cold[0].kernelExecuteFactors = {{"im2col/blis", 1.25}, {"sparse", 2.5}};
  for (const plan::Plan& q : {p, calibrated}) {
    auto j = planFromJson(toJson(q), "plan.json");
    ASSERT_TRUE(j.ok()) << j.error().message;
    EXPECT_EQ(*j, q);
    auto pb = parsePlanPb(serializePlanPb(q), "plan.pb");
    ASSERT_TRUE(pb.ok()) << pb.error().message;
    EXPECT_EQ(*pb, q);
  }
  EXPECT_FALSE(toJson(p)["cold"][0].contains("calibration"));
  // Plans calibrated before start-ups and setup were: factors of 1.
  Json older = toJson(calibrated);
  older["cold"][0]["calibration"].erase("startup_factor");
  older["cold"][0]["calibration"].erase("setup_factor");
  older["cold"][0]["calibration"].erase("kernel_execute_factors");
  auto o = planFromJson(older, "plan.json");
  ASSERT_TRUE(o.ok()) << o.error().message;
  EXPECT_EQ(o->cold[0].startupFactor, 1.0);
  EXPECT_EQ(o->cold[0].setupFactor, 1.0);
  EXPECT_TRUE(o->cold[0].kernelExecuteFactors.empty());
  auto j = planFromJson(toJson(p), "plan.json");
  ASSERT_TRUE(j.ok()) << j.error().message;
  EXPECT_EQ(*j, p);
  const std::string bytes = serializePlanPb(p);
  auto pb = parsePlanPb(bytes, "plan.pb");
  ASSERT_TRUE(pb.ok()) << pb.error().message;
  EXPECT_EQ(*pb, p);
  EXPECT_EQ(serializePlanPb(*pb), bytes);  // deterministic
}

TEST(ColdPlanJson, RejectsInconsistentNodes) {
  Json j = toJson(coldPlan());
  j["cold"][0]["nodes"][2]["weights"] = "cache";  // a node without a kernel has no weights
  auto r = planFromJson(j, "plan.json");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("$.cold[0].nodes[2]"), std::string::npos) << r.error().message;
  Json k = toJson(coldPlan());
  k["cold"][0]["nodes"][0]["exec_ms"] = Json::array({7.0, 6.0});  // ends before it starts
  EXPECT_FALSE(planFromJson(k, "plan.json").ok());
  auto rejects = [](const char* what, auto edit) {
    Json e = toJson(coldPlan());
    edit(e["cold"][0]);
    auto r = planFromJson(e, "plan.json");
    ASSERT_FALSE(r.ok()) << what;
    EXPECT_NE(r.error().message.find(what), std::string::npos) << r.error().message;
  };
  rejects("'openblas' is not a GEMM library", [](Json& c) { c["nodes"][0]["gemm"] = "openblas"; });
  rejects("warm_gemm", [](Json& c) { c["nodes"][0]["warm_gemm"] = "mkl"; });
  rejects("distinct GEMM libraries", [](Json& c) { c["gemm"] = "blis+blis"; });
  rejects("not a knob combination", [](Json& c) { c["configuration"] = "P+K"; });
  rejects("pipelined: false for configuration K+C+P", [](Json& c) { c["pipelined"] = false; });
  rejects("warm_weights is 'cache' or 'transform' exactly when",
          [](Json& c) { c["nodes"][1]["warm_weights"] = "none"; });
  rejects("no GEMM library and no warm kernel", [](Json& c) { c["nodes"][2]["gemm"] = "blis"; });
}

}  // namespace
}  // namespace zp::artifacts
