#include <gtest/gtest.h>

#include "passes/coldstart/runtime_schedule.h"
#include "drivers/cold_flow/solve_cold.h"
#include "libplan/artifacts/cold_profile_csv.h"
#include "libplan/artifacts/cold_run_json.h"
#include "libplan/artifacts/plan_json.h"
#include "libplan/artifacts/plan_pb.h"
#include "libplan/graph/model_io.h"
#include "libplan/runtime/session.h"
#include "libplan/util/file.h"
#include "tests/common/onnx_text.h"
#include "tests/common/temp_dir.h"

namespace zp::drivers {
namespace {
namespace fs = std::filesystem;

// Conv 3x3 (8 -> 16 channels) + Relu + Conv 1x1 (16 -> 8).
std::string convModel() {
  return R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[1,8,12,12] x) => (float[1,8,12,12] y)
<)" + testing::floatInitializer("w1", {16, 8, 3, 3}) + ", " + testing::floatInitializer("w2", {8, 16, 1, 1}) + R"(>
{
  a = Conv <pads = [1,1,1,1]> (x, w1)
  b = Relu (a)
  y = Conv (b, w2)
})";
}

fs::path writeModel(const fs::path& dir) {
  auto m = graph::parseModelText(convModel());
  EXPECT_TRUE(m.ok()) << m.error().message;
  fs::path path = dir / "tiny.onnx";
  EXPECT_TRUE(graph::saveModel(*m, path).ok());
  return path;
}

TEST(SolveCold, MeasuresPlansAndWritesAPlanThatReadsBack) {
  fs::path dir = testing::uniqueTempDir("cold_flow");
  SolveColdOptions o;
  o.model = writeModel(dir);
  o.output = dir / "plan.json";
  o.writeProfile = dir / "cold_profile.csv";
  o.measure.warmRepeat = 2;
  o.measure.probeBytes = 1 << 20;
  o.version = "test";
  auto r = solveCold(o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_NE(r->summary.find("PREDICTED"), std::string::npos);
  auto profile = artifacts::readColdProfileCsv(o.writeProfile);
  ASSERT_TRUE(profile.ok()) << profile.error().message;
  EXPECT_GT(profile->storageMBps, 0);
  EXPECT_EQ(profile->gemmStartupMs.size(), 2u);
  // Conv 3x3 has several kernels (im2col, winograd, sparse, ...), each with a cache size.
  int conv1Rows = 0;
  for (const auto& n : profile->nodes)
    if (n.step == 0) {
      ++conv1Rows;
      EXPECT_EQ(n.rawBytes, 16 * 8 * 3 * 3 * 4) << n.kernel;
      EXPECT_GT(n.cacheBytes, 0) << n.kernel;
    }
  EXPECT_GE(conv1Rows, 3);
  auto plan = artifacts::readPlan(o.output);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  ASSERT_EQ(plan->cold.size(), 1u);
  const auto& c = plan->cold[0];
  EXPECT_EQ(c.unit, plan::UnitId::model("tiny"));
  ASSERT_EQ(plan->units.size(), 1u);
  EXPECT_EQ(plan->units[0].residency, plan::kColdUnit);
  EXPECT_EQ(plan->units[0].id, c.unit);
  EXPECT_EQ(c.configurations.size(), 8u);
  EXPECT_EQ(c.status, "optimal");
  for (const auto& k : c.configurations) EXPECT_GE(k.predictedMs, c.predictedColdMs - 1e-6) << k.name;
  // Replanning from the written profile gives the same plan, byte for byte, but for the header's inputs.
  SolveColdOptions again = o;
  again.coldProfile = o.writeProfile;
  again.writeProfile.clear();
  again.output = dir / "plan2.json";
  ASSERT_TRUE(solveCold(again).ok());
  auto plan2 = artifacts::readPlan(again.output);
  ASSERT_TRUE(plan2.ok());
  EXPECT_EQ(plan2->cold, plan->cold);
  fs::remove_all(dir);
}

// The plan as the runtime's schedule, followed by a cold start whose outputs are
// a plain session's; an unknown library in a plan is an error naming it.
// (A profile made up for the model's nodes: a process measures the GEMM libraries'
// start-up once, and another test here did.)
TEST(SolveCold, ThePlanIsTheRuntimesScheduleAndRuns) {
  fs::path dir = testing::uniqueTempDir("cold_flow_run");
  SolveColdOptions o;
  o.model = writeModel(dir);
  o.output = dir / "plan.json";
  o.coldProfile = dir / "cold_profile.csv";
  {
    auto s = runtime::Session::load(o.model, {});
    ASSERT_TRUE(s.ok());
    profile::ColdProfile p;
    p.cores = 2;
    p.storageMBps = 1000;
    p.gemmStartupMs = {{"blis", 0.3}, {"onednn", 30}};
    p.models = {{"tiny", 1.0}};
    const std::vector<std::vector<std::pair<std::string, std::string>>> kernels = {
        {{"im2col", "blis"}, {"im2col", "onednn"}, {"winograd", "onednn"}, {"sparse", ""}},
        {},
        {{"gemm1x1", "blis"}, {"im2col", "onednn"}, {"sparse", ""}}};
    ASSERT_EQ((*s)->nodes().size(), 2u);  // the Relu is fused into the first Conv
    for (int step = 0; step < 2; ++step)
      for (const auto& [k, g] : kernels[static_cast<size_t>(step) * 2]) {
        const auto& n = (*s)->nodes()[static_cast<size_t>(step)];
        const double slow = g == "blis" ? 1.3 : 1.0;
        p.nodes.push_back({"tiny", step, n.name, n.opType, k, g, 4608, k == "winograd" ? 8192 : 4608,
                           k == "im2col" ? 0.01 : 0.2, 0.3 * slow, 0.2 * slow});
      }
    ASSERT_TRUE(artifacts::writeColdProfileCsv(p, o.coldProfile).ok());
  }
  auto solved = solveCold(o);
  ASSERT_TRUE(solved.ok()) << solved.error().message;
  auto plan = artifacts::readPlan(o.output);
  ASSERT_TRUE(plan.ok());
  const plan::ColdPlan& cp = plan->cold[0];
  auto sc = coldstart::coldScheduleOf(cp, "plan.json");
  ASSERT_TRUE(sc.ok()) << sc.error().message;
  ASSERT_EQ(sc->steps.size(), cp.nodes.size());
  EXPECT_EQ(sc->cores, cp.cores);
  EXPECT_EQ(sc->pipelined, cp.pipelined);
  for (size_t i = 0; i < cp.nodes.size(); ++i) {
    const auto& n = cp.nodes[i];
    const auto& s = sc->steps[i];
    EXPECT_EQ(s.node, n.node);
    EXPECT_EQ(s.kernel, n.kernel);
    EXPECT_EQ(s.gemm.has_value(), !n.gemm.empty());
    if (s.gemm) {
      EXPECT_EQ(runtime::gemmLibraryKey(*s.gemm), n.gemm);
    }
    EXPECT_EQ(runtime::coldWeightsName(s.weights), n.weights);
    EXPECT_EQ(s.warmKernel, n.warmKernel);
  }
  ASSERT_TRUE(runtime::Session::writeColdCache(o.model, *sc, {}, dir / "cold.zwc", true).ok());
  runtime::SessionOptions so;
  so.cache = dir / "cold.zwc";
  so.coldSchedule = std::make_shared<runtime::ColdSchedule>(*sc);
  auto cold = runtime::Session::load(o.model, so);
  ASSERT_TRUE(cold.ok()) << cold.error().message;
  auto plain = runtime::Session::load(o.model, {});
  ASSERT_TRUE(plain.ok());
  runtime::TensorMap in{{"x", runtime::randomInput({"x", runtime::DType::F32, {1, 8, 12, 12}}, 3)}};
  auto got = (*cold)->run(in);
  auto want = (*plain)->run(in);
  ASSERT_TRUE(got.ok() && want.ok());
  const auto& g = got->at("y");
  const auto& w = want->at("y");
  for (int64_t k = 0; k < w.size(); ++k) EXPECT_NEAR(g.ptr<float>()[k], w.ptr<float>()[k], 1e-5) << k;
  plan::ColdPlan bad = cp;
  for (auto& n : bad.nodes)
    if (!n.gemm.empty()) n.gemm = "mkl";
  if (std::any_of(cp.nodes.begin(), cp.nodes.end(), [](const auto& n) { return !n.gemm.empty(); })) {
    auto e = coldstart::coldScheduleOf(bad, "plan.json");
    ASSERT_FALSE(e.ok());
    EXPECT_NE(e.error().message.find("plan.json: unknown GEMM library 'mkl'"), std::string::npos);
  }
  fs::remove_all(dir);
}

// A cold run that took twice the plan's execute times: the plan made against it
// records one calibration run and an execute factor of 2, predicts more, and reads
// back the same from plan.json and plan.pb; a run of another model is an error.
TEST(SolveCold, CalibratedPlanRecordsItsRunsAndRoundTrips) {
  fs::path dir = testing::uniqueTempDir("cold_flow_calibrate");
  profile::ColdProfile p;
  p.cores = 2;
  p.storageMBps = 1000;
  p.gemmStartupMs = {{"blis", 0.3}};
  p.models = {{"tiny", 1.0}};
  p.nodes = {{"tiny", 0, "a", "Conv", "im2col", "blis", 4608, 4608, 0.01, 0.3, 0.2},
             {"tiny", 1, "y", "Conv", "im2col", "blis", 512, 512, 0.01, 0.2, 0.1}};
  SolveColdOptions o;
  o.model = writeModel(dir);
  o.output = dir / "plan.json";
  o.coldProfile = dir / "cold_profile.csv";
  ASSERT_TRUE(artifacts::writeColdProfileCsv(p, o.coldProfile).ok());
  ASSERT_TRUE(solveCold(o).ok());
  auto plain = artifacts::readPlan(o.output);
  ASSERT_TRUE(plain.ok());
  profile::MeasuredColdRun run{"K+C+P", 2, 2.0, {}};
  for (const auto& n : plain->cold[0].nodes) {
    profile::MeasuredColdNode m;
    m.step = n.step, m.node = n.node, m.kernel = n.kernel, m.gemm = n.gemm, m.weights = n.weights;
    m.read = profile::Span{n.readStartMs, n.readEndMs};
    m.execute = {n.execStartMs, n.execStartMs + 2 * (n.execEndMs - n.execStartMs)};
    run.nodes.push_back(m);
  }
  Json report{{"cold_plan_run", artifacts::coldRunReportJson(run)}};
  ASSERT_TRUE(writeFileAtomic(dir / "run.json", report.dump()).ok());
  SolveColdOptions cal = o;
  cal.calibrationRuns = {dir / "run.json"};
  cal.output = dir / "calibrated.json";
  auto solved = solveCold(cal);
  ASSERT_TRUE(solved.ok()) << solved.error().message;
  EXPECT_NE(solved->summary.find("calibrated against 1 measured cold run"), std::string::npos) << solved->summary;
  auto plan = artifacts::readPlan(cal.output);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  const plan::ColdPlan& c = plan->cold[0];
  EXPECT_EQ(c.calibrationRuns, 1);
  EXPECT_NEAR(c.executeFactor, 2.0, 1e-9);
  EXPECT_GT(c.predictedColdMs, plain->cold[0].predictedColdMs);
  EXPECT_TRUE(plan->header.inputs.count((dir / "run.json").string()));
  auto pb = artifacts::parsePlanPb(artifacts::serializePlanPb(*plan), "plan.pb");
  ASSERT_TRUE(pb.ok()) << pb.error().message;
  EXPECT_EQ(pb->cold, plan->cold);
  // A run whose nodes are another model's.
  run.nodes[0].node = "/other/Conv";
  report = Json{{"cold_plan_run", artifacts::coldRunReportJson(run)}};
  ASSERT_TRUE(writeFileAtomic(dir / "other.json", report.dump()).ok());
  cal.calibrationRuns = {dir / "other.json"};
  cal.output = dir / "other_plan.json";
  auto bad = solveCold(cal);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find((dir / "other.json").string() + ": step 0 runs '/other/Conv'"), std::string::npos)
      << bad.error().message;
  EXPECT_FALSE(fs::exists(cal.output));
  fs::remove_all(dir);
}

TEST(SolveCold, AProfileWithoutTheModelIsAOneLineErrorAndNoPlan) {
  fs::path dir = testing::uniqueTempDir("cold_flow_bad");
  profile::ColdProfile p;
  p.storageMBps = 100;
  p.models = {{"other", 1}};
  p.nodes = {{"other", 0, "r", "Relu", "", "", 0, 0, 0, 1, 1}};
  ASSERT_TRUE(artifacts::writeColdProfileCsv(p, dir / "cold_profile.csv").ok());
  SolveColdOptions o;
  o.model = writeModel(dir);
  o.output = dir / "plan.json";
  o.coldProfile = dir / "cold_profile.csv";
  auto r = solveCold(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("no model 'tiny'"), std::string::npos) << r.error().message;
  EXPECT_EQ(r.error().message.find('\n'), std::string::npos);
  EXPECT_FALSE(fs::exists(o.output));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace zp::drivers
