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
  Sources src;
  src.zoo = *zoo;
  auto st = resolveProcessors(src, params);
  ASSERT_TRUE(st.ok()) << st.error().message;
  ASSERT_EQ(src.processors.size(), 2u);
  const Processor& npu = src.processors[1];
  ASSERT_EQ(npu.name, "npu");
  EXPECT_TRUE(npu.host());
  EXPECT_EQ(npu.policy, "default");
  EXPECT_EQ(npu.threads, 2);
  EXPECT_EQ(npu.cores, std::vector<int>{1});  // zoo.json: "cores": [1]
  EXPECT_EQ(npu.gemm, "blis");                // zoo.json: "gemm": "blis"
  // The processor not overridden keeps its whole zoo configuration.
  const Processor& cpu = src.processors[0];
  EXPECT_EQ(cpu.policy, "default");
  EXPECT_EQ(cpu.cores, std::vector<int>{0});
  EXPECT_EQ(cpu.gemm, "onednn");
  EXPECT_TRUE(src.importSpecs.empty());
}

TEST(zooProfileProcessors, HostOverrideOfAnUnknownProcessorIsAnError) {
  auto zoo = artifacts::loadZoo(std::string(zp::testing::kSourceDir) + "/testdata/digits/zoo.json");
  ASSERT_TRUE(zoo.ok()) << zoo.error().message;
  ProfileParams params;
  params.hostOverrides.push_back(HostOverride{"tpu", "default", 1});
  Sources src;
  src.zoo = *zoo;
  auto st = resolveProcessors(src, params);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().message, "--processor: the zoo has no processor 'tpu'");
}

}  // namespace
}  // namespace zp::drivers::zoo_profile
