#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "drivers/concurrent_flow/workload.h"
#include "libplan/artifacts/group_rows_csv.h"
#include "tests/common/test_paths.h"

using namespace zp;
using namespace zp::drivers;
using zp::artifacts::parseGroupRowsCsv;
namespace fs = std::filesystem;

namespace {

// workload.json text read and resolved as a file "w.json" whose paths resolve against `base`.
Expected<schedule::Workload> parseWorkload(const std::string& text, const std::string& label, const fs::path& base) {
  ZP_ASSIGN_OR_RETURN(auto spec, artifacts::parseWorkloadJson(text, label, base));
  return resolveWorkload(spec, label);
}

std::string err(const std::string& text) {
  auto w = parseWorkload(text, "w.json", fs::path(zp::testing::kSourceDir) / "testdata/concurrent");
  EXPECT_FALSE(w.ok()) << text;
  return w.ok() ? std::string() : w.error().message;
}

const char* kGroup = R"({"name": "g", "timeMs": {"GPU": 1, "DLA": 2}})";

std::string doc(const std::string& dnns, const std::string& extra = "") {
  return R"({"version": 1, "accelerators": ["GPU", "DLA"], "dnns": )" + dnns + extra + "}";
}

}  // namespace

TEST(concurrentWorkload, LoadsTheTable2Scenario) {
  auto w = loadWorkload(fs::path(zp::testing::kSourceDir) / "testdata/concurrent/googlenet-table2-scenario1.json");
  ASSERT_TRUE(w.ok()) << w.error().message;
  EXPECT_EQ(w->objective, sim::Objective::Throughput);
  ASSERT_EQ(w->problem.dnns.size(), 2u);
  EXPECT_EQ(w->problem.dnns[1].name, "googlenet#1");
  // Table 2 row "0-9" as printed: GPU 0.45, DLA 0.75, G->D 0.056, D->G 0.15, 41.97 %.
  const auto& g = w->problem.dnns[0].groups[0];
  EXPECT_EQ(g.name, "0-9");
  EXPECT_DOUBLE_EQ(g.timeMs[0], 0.45);
  EXPECT_DOUBLE_EQ(g.timeMs[1], 0.75);
  EXPECT_DOUBLE_EQ(g.transitionOutMs[0], 0.056);
  EXPECT_DOUBLE_EQ(g.transitionOutMs[1], 0.15);
  EXPECT_DOUBLE_EQ(g.demand[0], 41.97);
  EXPECT_EQ(w->inputFiles.size(), 2u);  // workload + contention CSV
}

TEST(concurrentWorkload, PipelineAndInstancesExpand) {
  std::string g = std::string("[") + kGroup + "]";
  auto w = parseWorkload(doc(R"([{"name": "a", "instances": 2, "groups": )" + g + R"(},
                                 {"name": "b", "instances": 2, "dependsOn": ["a"], "groups": )" + g + R"(},
                                 {"name": "s", "groups": )" + g + R"(},
                                 {"name": "c", "instances": 2, "dependsOn": ["s"], "groups": )" + g + "}]"),
                         "w.json", ".");
  ASSERT_TRUE(w.ok()) << w.error().message;
  ASSERT_EQ(w->problem.dnns.size(), 7u);
  EXPECT_EQ(w->problem.dnns[0].name, "a#0");
  EXPECT_EQ(w->problem.dnns[2].deps, std::vector<int>{0});  // b#0 after a#0
  EXPECT_EQ(w->problem.dnns[3].deps, std::vector<int>{1});  // b#1 after a#1
  EXPECT_EQ(w->problem.dnns[4].name, "s");
  EXPECT_EQ(w->problem.dnns[5].deps, std::vector<int>{4});  // both c instances after s
  EXPECT_EQ(w->problem.dnns[6].deps, std::vector<int>{4});
}

TEST(concurrentWorkload, ErrorsNameFileAndJsonPath) {
  std::string g = std::string("[") + kGroup + "]";
  EXPECT_EQ(err("{").rfind("w.json: not valid JSON: ", 0), 0u) << err("{");
  EXPECT_NE(err(R"({"version": 2})").find("w.json: $.version: must be 1"), std::string::npos);
  EXPECT_NE(err(doc("[]")).find("w.json: $.dnns: expected a non-empty array"), std::string::npos);
  EXPECT_NE(err(doc(R"([{"name": "a", "groups": [{"timeMs": {"NPU": 1}}]}])"))
                .find("w.json: $.dnns[0].groups[0].timeMs.NPU: unknown accelerator"),
            std::string::npos);
  EXPECT_NE(err(doc(R"([{"name": "a", "groups": [{"timeMs": {"GPU": -1}}]}])"))
                .find("$.dnns[0].groups[0].timeMs.GPU: must be a positive number"),
            std::string::npos);
  EXPECT_NE(err(doc(R"([{"name": "a", "groups": [{"timeMs": {}}]}])")).find("runs on no accelerator"),
            std::string::npos);
  EXPECT_NE(err(doc(R"([{"name": "a", "dependsOn": ["z"], "groups": )" + g + "}]"))
                .find("$.dnns[0].dependsOn[0]: 'z' is not a DNN listed before this one"),
            std::string::npos);
  EXPECT_NE(err(doc(R"([{"name": "a", "instances": 2, "groups": )" + g + R"(}, {"name": "b", "instances": 3, "dependsOn": ["a"], "groups": )" + g + "}]"))
                .find("$.dnns[1].dependsOn[0]: 'a' has 2 instances"),
            std::string::npos);
  EXPECT_NE(err(doc(R"([{"name": "a", "groups": )" + g + "}]", R"(, "contention": "missing.csv")"))
                .find("w.json: $.contention: "),
            std::string::npos);
  EXPECT_NE(err(doc(R"([{"name": "a", "groups": )" + g + "}]", R"(, "objective": "energy")"))
                .find("$.objective: must be 'latency' or 'throughput'"),
            std::string::npos);
  EXPECT_NE(err(doc(R"([{"name": "a", "groups": )" + g + R"(, "extra": 1}])")).find("$.dnns[0]: unknown field 'extra'"),
            std::string::npos);
  EXPECT_NE(err(doc(R"([{"name": "a", "model": "m.onnx"}])")).find("$.dnns[0].profile: expected a string"), std::string::npos);
  EXPECT_NE(err(doc(R"([{"name": "a", "model": "m.onnx", "profile": "p.csv", "task": "t", "variant": "v"}])"))
                .find("$.dnns[0].model: "),
            std::string::npos);
  EXPECT_NE(err(doc(R"([{"name": "a", "groups": )" + g + R"(, "groupsCsv": "x.csv"}])")).find("give exactly one of"),
            std::string::npos);
}

TEST(concurrentWorkload, GroupRowsCsv) {
  auto rows = parseGroupRowsCsv(
      "group,accelerator,time_ms,transition_out_ms,transition_in_ms,mem_throughput\n"
      "g0,GPU,0.5,0.1,0,40\ng0,DLA,0.9,0.2,0,22\ng1,GPU,0.3,0,0,50\n",
      "rows.csv", {"GPU", "DLA"});
  ASSERT_TRUE(rows.ok()) << rows.error().message;
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_FALSE((*rows)[1].allowed(1));
  EXPECT_DOUBLE_EQ((*rows)[0].transitionOutMs[1], 0.2);
  auto bad = parseGroupRowsCsv(
      "group,accelerator,time_ms,transition_out_ms,transition_in_ms,mem_throughput\ng0,GPU,NaN,0,0,1\n",
      "rows.csv", {"GPU"});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("rows.csv:2: time_ms 'NaN'"), std::string::npos);
  auto missing = parseGroupRowsCsv("group,accelerator,time_ms\n", "rows.csv", {"GPU"});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("rows.csv:1: header"), std::string::npos);
}
