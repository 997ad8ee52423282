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

// The form a user writes first: one SLO per task, no configuration names.
TEST_F(artifactsSloJson, OneSloPerTaskReadsAsOneConfigurationAndWritesBackSo) {
  file = dir / "slo.json";
  ASSERT_TRUE(writeFileAtomic(file, R"({"tasks": {"digits": {"accuracy": 0.9, "latency_ms": 5},
                                                  "faces": {"accuracy": 0.8, "latency_ms": 20}}})")
                  .ok());
  auto back = readSloFile(file, {"digits", "faces"});
  ASSERT_TRUE(back.ok()) << back.error().message;
  ASSERT_EQ(back->size(), 1u);
  EXPECT_EQ(back->front().id, kPerTaskSloId);
  EXPECT_EQ(back->front().tasks.at("faces").latencyMs, 20);
  const Json written = sloFileJson(*back);
  EXPECT_TRUE(written.contains("tasks") && !written.contains("configurations")) << written.dump();
  ASSERT_TRUE(writeFileAtomic(file, canonicalJson(written)).ok());
  auto again = readSloFile(file, {"digits", "faces"});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *back);
  // Neither form, or both: one line naming the file and both forms.
  ASSERT_TRUE(writeFileAtomic(file, R"({"slos": {}})").ok());
  auto neither = readSloFile(file, {"digits"});
  ASSERT_FALSE(neither.ok());
  EXPECT_NE(neither.error().message.find("expected 'tasks' (one SLO per task"), std::string::npos)
      << neither.error().message;
  ASSERT_TRUE(writeFileAtomic(file, R"({"tasks": {}, "configurations": []})").ok());
  auto both = readSloFile(file, {"digits"});
  ASSERT_FALSE(both.ok());
  EXPECT_NE(both.error().message.find("not both"), std::string::npos) << both.error().message;
}

TEST_F(artifactsSloJson, AWorkloadReadsBackAndNamesWhatIsWrong) {
  file = dir / "slo.json";
  std::vector<plan::SloConfiguration> configs(1);
  configs[0].id = "C01";
  configs[0].tasks = {{"digits", {0.95, 1.25}}, {"faces", {0.8, 3.5}}, {"det", {0.5, 20}}, {"track", {0.5, 20}}};
  const std::vector<std::string> tasks{"digits", "faces", "det", "track"};
  plan::WorkloadSpec w;
  w.process = "periodic";
  w.rateQps = {{"digits", 50}, {"faces", 12.5}};
  w.frames = {{"camera", 40, 30, {"det", "track", "faces"}, {{"track", "det"}}}};
  w.memoryBudget = "60%";
  ASSERT_TRUE(writeFileAtomic(file, canonicalJson(sloFileJson(configs, w))).ok());
  auto back = readSloWorkload(file, tasks);
  ASSERT_TRUE(back.ok()) << back.error().message;
  ASSERT_TRUE(back->has_value());
  EXPECT_EQ(**back, w);
  auto missing = readSloWorkload(file, {"digits", "faces", "det", "track", "speech"});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message,
            file.string() + ": $.workload: task 'speech' has no rate (rate_qps) and runs in no frame");
  ASSERT_TRUE(writeFileAtomic(file, canonicalJson(sloFileJson(configs))).ok());
  auto none = readSloWorkload(file, tasks);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
}

// Each bad workload: one line naming the file, where in it, and what is wrong.
TEST_F(artifactsSloJson, ABadWorkloadIsOneLineNamingWhereAndWhat) {
  file = dir / "slo.json";
  const std::vector<std::string> tasks{"det", "track"};
  const std::string configs = R"("configurations": [{"id": "C", "tasks": {"det": {"accuracy": 0, "latency_ms": 9},
                                  "track": {"accuracy": 0, "latency_ms": 9}}}])";
  const std::vector<std::pair<std::string, std::string>> cases{
      {R"({"rate_qps": {"det": 5, "nope": 1}})", "$.workload.rate_qps.nope: the profile has no such task"},
      {R"({"frames": [{"name": "f", "period_ms": 0, "dnns": ["det", "track"]}]})",
       "$.workload.frames[0].period_ms: a frame's period must be > 0 ms"},
      {R"({"frames": [{"name": "f", "period_ms": -3, "dnns": ["det", "track"]}]})",
       "$.workload.frames[0].period_ms: a frame's period must be > 0 ms"},
      {R"({"frames": [{"name": "f", "period_ms": 10, "dnns": ["det", "track"],
                       "depends_on": {"det": ["track"], "track": ["det"]}}]})",
       "$.workload.frames[0].depends_on: frame 'f': its dependencies form a cycle among det, track"},
      {R"({"frames": [{"name": "f", "period_ms": 10, "dnns": ["det", "cam"]}]})",
       "$.workload.frames[0].dnns[1]: the profile has no task 'cam'"},
      {R"({"frames": [{"name": "f", "period_ms": 10, "dnns": ["det"], "depends_on": {"det": ["track"]}}],
          "rate_qps": {"track": 1}})",
       "$.workload.frames[0].depends_on.det: 'det' depends on 'track', which the frame does not run"},
      {R"({"rate_qps": {"det": 5}})", "$.workload: task 'track' has no rate (rate_qps) and runs in no frame"},
      {R"({"process": "bursty", "rate_qps": {"det": 5, "track": 1}})",
       "$.workload: process: 'bursty' is not poisson or periodic"},
      {R"({"rate_qps": {"det": 5, "track": 1}, "arrivals": "a.csv"})",
       "$.workload: rate_qps and arrivals: give one (the arrivals file replaces the rates)"},
      {R"({"rate_qps": {"det": 5, "track": 1}, "memory_budget": 0})", "$.workload.memory_budget:"},
      {R"({"rate_qps": {"det": 5, "track": 1}, "rate_qp": 3})",
       "$.workload.rate_qp: unknown field (expected one of process, rate_qps, arrivals, frames, memory_budget)"},
  };
  for (const auto& [workload, want] : cases) {
    ASSERT_TRUE(writeFileAtomic(file, "{" + configs + R"(, "workload": )" + workload + "}").ok());
    auto r = readSloWorkload(file, tasks);
    ASSERT_FALSE(r.ok()) << workload;
    EXPECT_EQ(r.error().message.rfind(file.string() + ": " + want, 0), 0u) << r.error().message;
    EXPECT_EQ(r.error().message.find('\n'), std::string::npos) << r.error().message;
  }
}

TEST(planWorkload, FrameChainsFollowDependenciesAndSplitIndependentDnns) {
  plan::FrameSpec f{"cam", 33, 33, {"a", "b", "c", "d"}, {{"c", "b"}, {"b", "a"}}};
  auto chains = plan::frameChains(f);
  ASSERT_TRUE(chains.ok()) << chains.error().message;
  EXPECT_EQ(*chains, (std::vector<std::vector<std::string>>{{"a", "b", "c"}, {"d"}}));
  f.dependsOn = {{"a", "d"}, {"b", "d"}};  // a diamond's top and two that follow it
  chains = plan::frameChains(f);
  ASSERT_TRUE(chains.ok());
  EXPECT_EQ(*chains, (std::vector<std::vector<std::string>>{{"c"}, {"d", "a", "b"}}));
  f.dependsOn = {{"a", "b"}, {"b", "c"}, {"c", "a"}};
  ASSERT_FALSE(plan::frameChains(f).ok());
  EXPECT_EQ(plan::frameChains(f).error().message, "frame 'cam': its dependencies form a cycle among a, b, c");
}

}  // namespace
}  // namespace zp::artifacts
