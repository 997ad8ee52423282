// SLO.json: the configurations written read back as the same ones.
#include <gtest/gtest.h>

#include <filesystem>

#include "libplan/artifacts/slo_json.h"
#include "libplan/util/file.h"
#include "tests/common/temp_dir.h"

namespace zp::artifacts {
namespace {
namespace fs = std::filesystem;

// slo.json in a fresh directory of its own.
class artifactsSloJson : public ::testing::Test {
 protected:
  void SetUp() override { dir = zp::testing::uniqueTempDir("slo_json"); }
  void TearDown() override { fs::remove_all(dir); }
  fs::path dir, file = {};
};

TEST_F(artifactsSloJson, WrittenConfigurationsReadBackTheSame) {
  file = dir / "slo.json";
  std::vector<plan::SloConfiguration> configs(2);
  configs[0].id = "C01";
  configs[0].tasks = {{"digits", {0.95, 1.25}}, {"faces", {0.8, 3.5}}};
  configs[1].id = "C02";
  configs[1].tasks = {{"digits", {0.9, 0.75}}, {"faces", {0.85, 2.0}}};
  ASSERT_TRUE(writeFileAtomic(file, canonicalJson(sloFileJson(configs))).ok());
  auto back = readSloFile(file, {"digits", "faces"});
  ASSERT_TRUE(back.ok()) << back.error().message;
  ASSERT_EQ(back->size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ((*back)[i].id, configs[i].id);
    for (const auto& [t, s] : configs[i].tasks) {
      EXPECT_EQ((*back)[i].tasks.at(t).accuracy, s.accuracy);
      EXPECT_EQ((*back)[i].tasks.at(t).latencyMs, s.latencyMs);
    }
  }
  auto missing = readSloFile(file, {"digits", "faces", "speech"});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("speech"), std::string::npos);
}

TEST_F(artifactsSloJson, AWorkloadReadsBackAndNamesWhatIsWrong) {
  file = dir / "slo.json";
  std::vector<plan::SloConfiguration> configs(1);
  configs[0].id = "C01";
  configs[0].tasks = {{"digits", {0.95, 1.25}}, {"faces", {0.8, 3.5}}};
  plan::ServingWorkloadRecord w;
  w.process = "periodic";
  w.rateQps = {{"digits", 50}, {"faces", 12.5}};
  ASSERT_TRUE(writeFileAtomic(file, canonicalJson(sloFileJson(configs, w))).ok());
  auto back = readSloWorkload(file, {"digits", "faces"});
  ASSERT_TRUE(back.ok()) << back.error().message;
  ASSERT_TRUE(back->has_value());
  EXPECT_EQ((*back)->process, "periodic");
  EXPECT_EQ((*back)->rateQps, w.rateQps);
  auto missing = readSloWorkload(file, {"digits", "faces", "speech"});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message, file.string() + ": $.workload.rate_qps: no rate for task 'speech' (queries per second)");
  ASSERT_TRUE(writeFileAtomic(file, canonicalJson(sloFileJson(configs))).ok());
  auto none = readSloWorkload(file, {"digits", "faces"});
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
}

}  // namespace
}  // namespace zp::artifacts
