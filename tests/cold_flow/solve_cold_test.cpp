#include <gtest/gtest.h>

#include "drivers/cold_flow/solve_cold.h"
#include "libplan/artifacts/cold_profile_csv.h"
#include "libplan/artifacts/plan_json.h"
#include "libplan/graph/model_io.h"
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
  EXPECT_EQ(c.model, "tiny");
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
