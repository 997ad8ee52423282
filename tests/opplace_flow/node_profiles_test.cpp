// Per-node profiles of a bundled zoo: one config per distinct host processor,
// rows for every executed node of every model under every config, and samples
// selected by config.
#include <gtest/gtest.h>

#include "drivers/opplace_flow/node_profiles.h"
#include "libplan/artifacts/zoo_json.h"
#include "tests/common/test_paths.h"

namespace zp::drivers::opplace_flow {
namespace {

TEST(opplaceFlowNodeProfiles, DigitsZooProfilesEveryNodeUnderEveryProcessor) {
  auto zoo = artifacts::loadZoo(std::string(zp::testing::kSourceDir) + "/testdata/digits/zoo.json");
  ASSERT_TRUE(zoo.ok()) << zoo.error().message;
  auto configs = hostConfigs(*zoo);
  ASSERT_EQ(configs.size(), 2u);  // cpu and npu of the zoo
  EXPECT_EQ(configs[0].label(), "default@1");
  EXPECT_EQ(configs[1].label(), "sparse@1");
  auto models = zooModels(*zoo);
  ASSERT_GE(models.size(), 2u);
  EXPECT_EQ(models[0].name, zoo->name + "/digits/dense");
  models.resize(2);
  auto rows = profileModels(models, configs, ProfileParams{{3, 1}, 0});
  ASSERT_TRUE(rows.ok()) << rows.error().message;
  size_t total = 0;
  for (const auto& c : configs) {
    auto s = samplesOf(*rows, c);
    EXPECT_GT(s.size(), 2u);
    total += s.size();
    EXPECT_GE(selfAgreement(*rows, c, 0.1), 0.0);
  }
  EXPECT_EQ(total, rows->size());
  // The sparse policy picks a different kernel for some node of the dense model than the default one.
  std::set<std::string> kernels;
  for (const auto& r : *rows)
    if (r.features.opType == "Conv" || r.features.opType == "Gemm") kernels.insert(r.policy + ":" + r.features.kernel);
  EXPECT_GE(kernels.size(), 2u);
}

}  // namespace
}  // namespace zp::drivers::opplace_flow
