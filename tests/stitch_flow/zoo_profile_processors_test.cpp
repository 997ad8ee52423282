// zoo-profile's processors: a --processor NAME=host:POLICY@THREADS override
// names the policy and threads only; the zoo's cores and GEMM library stay.
#include <gtest/gtest.h>

#include "drivers/stitch_flow/zoo_profile_steps.h"
#include "libplan/artifacts/zoo_json.h"
#include "tests/common/test_paths.h"

namespace zp::drivers::zoo_profile {
namespace {

TEST(zooProfileProcessors, HostOverrideKeepsTheZoosCoresAndGemm) {
  auto zoo = artifacts::loadZoo(std::string(zp::testing::kSourceDir) + "/testdata/digits/zoo.json");
  ASSERT_TRUE(zoo.ok()) << zoo.error().message;
  ProfileParams params;
  params.hostOverrides.push_back(HostOverride{"npu", "default", 2});
  auto procs = resolveProcessors(*zoo, params);
  ASSERT_TRUE(procs.ok()) << procs.error().message;
  ASSERT_EQ(procs->size(), 2u);
  const Processor& npu = (*procs)[1];
  ASSERT_EQ(npu.name, "npu");
  EXPECT_TRUE(npu.host);
  EXPECT_EQ(npu.config.policy, "default");
  EXPECT_EQ(npu.config.threads, 2);
  EXPECT_EQ(npu.config.cores, std::vector<int>{1});               // zoo.json: "cores": [1]
  EXPECT_EQ(npu.config.gemm, runtime::GemmLibrary::Blis);         // zoo.json: "gemm": "blis"
  // The processor not overridden keeps its whole zoo configuration.
  const Processor& cpu = (*procs)[0];
  EXPECT_EQ(cpu.config.policy, "default");
  EXPECT_EQ(cpu.config.cores, std::vector<int>{0});
  EXPECT_EQ(cpu.config.gemm, runtime::GemmLibrary::OneDnn);
}

TEST(zooProfileProcessors, HostOverrideOfAnUnknownProcessorIsAnError) {
  auto zoo = artifacts::loadZoo(std::string(zp::testing::kSourceDir) + "/testdata/digits/zoo.json");
  ASSERT_TRUE(zoo.ok()) << zoo.error().message;
  ProfileParams params;
  params.hostOverrides.push_back(HostOverride{"tpu", "default", 1});
  auto procs = resolveProcessors(*zoo, params);
  ASSERT_FALSE(procs.ok());
  EXPECT_EQ(procs.error().message, "--processor: the zoo has no processor 'tpu'");
}

}  // namespace
}  // namespace zp::drivers::zoo_profile
