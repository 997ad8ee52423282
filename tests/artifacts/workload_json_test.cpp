// workload.json: a spec written and read back is the same spec (inline groups,
// a group rows CSV and a model with grouping options, instances, dependencies,
// contention), rewriting gives the same bytes, and the bundled workloads
// survive a read-write-read.
#include <gtest/gtest.h>

#include <random>

#include "libplan/artifacts/workload_json.h"
#include "tests/artifacts/concurrent_inputs_test.h"
#include "tests/common/test_paths.h"

namespace zp::artifacts {
namespace {
namespace fs = std::filesystem;

sim::GroupCost randomGroup(std::mt19937_64& rng, const std::string& name, size_t accs) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  sim::GroupCost g;
  g.name = name;
  for (size_t a = 0; a < accs; ++a) {
    g.timeMs.push_back(a == 1 && u(rng) < 0.3 ? -1 : 0.01 + 5 * u(rng));  // -1: cannot run there
    g.transitionOutMs.push_back(u(rng) / 7);
    g.transitionInMs.push_back(u(rng) / 3);
    g.demand.push_back(100 * u(rng));
  }
  return g;
}

TEST(artifactsWorkloadJson, EverySourceRoundTripsAndRewritesToTheSameBytes) {
  std::mt19937_64 rng(11);
  const fs::path base = "/work/zoo";
  WorkloadSpec w;
  w.name = "mixed \"workload\"";
  w.accelerators = {"GPU", "DLA", "CPU"};
  w.objective = sim::Objective::Throughput;
  w.contention = base / "soc" / "contention.csv";
  w.processors = {Processor{"GPU", "gpu", "host", "default", 2, {0, 1}, "onednn"},
                  Processor{"DLA", "npu", "host", "sparse", 1, {2}, "blis"},
                  Processor{"CPU", "cpu", "host", "naive", 1, {}, "onednn"}};
  WorkloadDnn inl;
  inl.name = "inline";
  inl.instances = 3;
  for (int i = 0; i < 5; ++i) inl.groups.push_back(randomGroup(rng, "g,"+ std::to_string(i), 3));
  WorkloadDnn csv;
  csv.name = "from csv";
  csv.source = WorkloadDnn::Source::GroupsCsv;
  csv.groupsCsv = base / "groups.csv";
  csv.dependsOn = {"inline"};
  csv.instances = 3;
  WorkloadDnn model;
  model.name = "model";
  model.source = WorkloadDnn::Source::Model;
  model.model = "/elsewhere/m.onnx";  // outside the folder: written absolute
  model.profile = base / "prof" / "profile.csv";
  model.task = "digits";
  model.variant = "u50";
  model.dependsOn = {"inline", "from csv"};
  model.instances = 3;
  model.grouping.maxGroups = 7;
  model.grouping.transitionBandwidthGBs = 12.5;
  model.grouping.minTimeToTransition = 0.1 / 3;
  w.dnns = {inl, csv, model};
  for (size_t n = 0; n < w.dnns.size(); ++n) w.dnns[n].jsonPath = "$.dnns[" + std::to_string(n) + "]";

  const std::string text = formatWorkloadJson(w, base);
  EXPECT_NE(text.find("\"soc/contention.csv\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"/elsewhere/m.onnx\""), std::string::npos) << text;
  auto back = parseWorkloadJson(text, "w.json", base);
  ASSERT_TRUE(back.ok()) << back.error().message;
  testing::expectSameWorkload(*back, w);
  EXPECT_EQ(formatWorkloadJson(*back, base), text);
}

TEST(artifactsWorkloadJson, TheBundledWorkloadsReadWriteReadTheSame) {
  const fs::path dir = fs::path(zp::testing::kSourceDir) / "testdata/concurrent";
  int files = 0;
  for (const char* name : {"googlenet-table2-scenario1.json", "googlenet-table2-pipeline.json"}) {
    auto first = readWorkloadJson(dir / name);
    ASSERT_TRUE(first.ok()) << first.error().message;
    auto again = parseWorkloadJson(formatWorkloadJson(*first, dir), name, dir);
    ASSERT_TRUE(again.ok()) << again.error().message;
    testing::expectSameWorkload(*again, *first);
    ++files;
  }
  EXPECT_EQ(files, 2);
}

}  // namespace
}  // namespace zp::artifacts
