// plan-solve --mode opplace's driver on the digits zoo: a plan whose placement
// is no slower than any baseline, byte-identical on a second run; a profile
// directory without hand-off costs is a one-line error and writes nothing.
#include <gtest/gtest.h>

#include "drivers/opplace_flow/node_profiles.h"
#include "drivers/opplace_flow/solve_opplace.h"
#include "libplan/artifacts/latency_model_json.h"
#include "libplan/artifacts/plan_json.h"
#include "libplan/artifacts/zoo_json.h"
#include "libplan/util/file.h"
#include "tests/common/temp_dir.h"
#include "tests/common/test_paths.h"

namespace zp::drivers {
namespace {

TEST(opplaceFlowSolve, PlanIsDeterministicAndNoWorseThanTheBaselines) {
  const auto dir = testing::uniqueTempDir("opplace_solve");
  const std::string zooFile = std::string(zp::testing::kSourceDir) + "/testdata/digits/zoo.json";
  auto zoo = artifacts::loadZoo(zooFile);
  ASSERT_TRUE(zoo.ok());
  auto models = opplace_flow::zooModels(*zoo);
  auto rows = opplace_flow::profileModels({models[0], models[3]}, opplace_flow::hostConfigs(*zoo), {{3, 1}, 0});
  ASSERT_TRUE(rows.ok()) << rows.error().message;
  ASSERT_TRUE(writeFileAtomic(dir / "node_profile.csv", artifacts::formatNodeProfileCsv(*rows)).ok());

  SolveOpplaceOptions o;
  o.model = models[0].file.string();
  o.zoo = zooFile;
  o.profileDir = dir.string();
  o.output = (dir / "a.json").string();
  o.version = "test";
  o.solve.minMixGain = 0;  // the optimum under the cost model, however small a mix's gain
  auto missing = solveOpplace(o);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("latency_model.json"), std::string::npos) << missing.error().message;
  EXPECT_EQ(missing.error().message.find('\n'), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(o.output));

  estimate::TaskLatencyModel t;
  t.task = "digits";
  t.positions = 1;
  for (const char* a : {"cpu", "gpu", "npu"})
    for (const char* b : {"cpu", "gpu", "npu"})
      if (std::string(a) != b) t.model.setTransition(a, b, estimate::TransitionCost{0.003, 2e-7});
  t.model.setSubgraph(0, "dense", "cpu", 1.0);
  ASSERT_TRUE(writeFileAtomic(dir / "latency_model.json", artifacts::formatLatencyModel({t})).ok());

  auto a = solveOpplace(o);
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_NE(a->summary.find("sparoa-threshold"), std::string::npos) << a->summary;
  o.output = (dir / "b.json").string();
  ASSERT_TRUE(solveOpplace(o).ok());
  EXPECT_EQ(*readFile(dir / "a.json"), *readFile(dir / "b.json"));

  auto plan = artifacts::readPlan(dir / "a.json");
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  ASSERT_EQ(plan->opplace.size(), 1u);
  const auto& s = plan->opplace.front();
  EXPECT_EQ(s.costSource, "measured");
  EXPECT_EQ(s.solver.status, "optimal");
  for (const auto& b : s.baselines)
    EXPECT_LE(s.latencyMs, b.latencyMs * (1 + 1e-8)) << b.name;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace zp::drivers
