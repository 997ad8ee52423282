// End-to-end: plan-solve --mode concurrent.
#include "tests/common/temp_dir.h"
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <unistd.h>
#include <algorithm>

#include "libplan/plan/plan.h"
#include "libplan/util/file.h"
#include "libplan/util/json.h"
#include "passes/schedule/random_instance.h"
#include "libplan/artifacts/plan_json.h"
#include "libplan/artifacts/workload_json.h"
#include "tests/common/test_paths.h"

namespace fs = std::filesystem;

namespace {

const fs::path kBin = fs::path(zp::testing::kBinaryDir) / "bin" / "plan-solve";
const fs::path kData = fs::path(zp::testing::kSourceDir) / "testdata" / "concurrent";

struct Run {
  int code;
  std::string out;
};

Run run(const std::string& args) {
  std::string cmd = kBin.string() + " " + args + " 2>&1";
  FILE* f = popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  int st = pclose(f);
  return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, out};
}

fs::path tmpDir(const std::string& name) {
  return zp::testing::uniqueTempDir("concurrent_" + name);
}

}  // namespace

TEST(concurrentPlanSolveCli, ByteIdenticalRerunsTraceAndTable) {
  ASSERT_TRUE(fs::exists(kBin)) << kBin << ": plan-solve is not built (build the tools before the tests)";
  fs::path d = tmpDir("rerun");
  std::string w = (kData / "googlenet-table2-scenario1.json").string();
  auto r1 = run("--mode concurrent " + w + " -o " + (d / "a.json").string() + " --trace " +
                (d / "trace.json").string() + " --seed 7");
  ASSERT_EQ(r1.code, 0) << r1.out;
  auto r2 = run("--mode concurrent " + w + " -o " + (d / "b.json").string() + " --seed 7");
  ASSERT_EQ(r2.code, 0) << r2.out;
  EXPECT_EQ(*zp::readFile(d / "a.json"), *zp::readFile(d / "b.json"));
  for (const char* name : {"GPU-only", "naive-concurrent", "mensa-like", "herald-like", "h2h-like", "zooplan"})
    EXPECT_NE(r1.out.find(name), std::string::npos) << name;
  auto plan = zp::artifacts::readPlan(d / "a.json");
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  ASSERT_TRUE(plan->concurrent.has_value());
  EXPECT_EQ(plan->concurrent->solver.seed, 7);
  EXPECT_EQ(plan->concurrent->solver.status, "optimal");
  EXPECT_EQ(plan->header.inputs.size(), 2u);
  auto trace = zp::Json::parse(*zp::readFile(d / "trace.json"));
  std::set<int> tids;
  for (const auto& ev : trace["traceEvents"])
    if (ev["ph"] == "X" && ev["cat"] != "transition") tids.insert(ev["tid"].get<int>());
  EXPECT_EQ(tids.size(), 2u);  // one track per accelerator
  fs::remove_all(d);
}

// The scenarios of real models (the realistic zoo's, profiled node by node and
// with the contention measured on the build host, bench/concurrent): grouped
// from the ONNX files, solved, a pipeline's second DNN released at the first's end.
TEST(concurrentPlanSolveCli, RealModelWorkloadsSolve) {
  ASSERT_TRUE(fs::exists(kBin)) << kBin << ": plan-solve is not built (build the tools before the tests)";
  fs::path d = tmpDir("realistic");
  for (const char* name : {"resnet+mobilenet", "resnet+vit", "mobilenet+vit", "resnet+mobilenet+vit",
                           "resnet-to-mobilenet+vit"}) {
    const auto w = kData / (std::string("realistic-") + name + ".json");
    auto r = run("--mode concurrent " + w.string() + " -o " + (d / "p.json").string());
    ASSERT_EQ(r.code, 0) << name << ": " << r.out;
    auto plan = zp::artifacts::readPlan(d / "p.json");
    ASSERT_TRUE(plan.ok()) << plan.error().message;
    const auto& c = *plan->concurrent;
    EXPECT_EQ(c.accelerators, (std::vector<std::string>{"cpu", "npu"}));
    EXPECT_EQ(c.solver.status, "optimal") << name;
    EXPECT_EQ(c.dnns.size(), std::string(name).find("vit") != std::string::npos &&
                                     std::string(name).find("mobilenet") != std::string::npos &&
                                     std::string(name).find("resnet") != std::string::npos
                                 ? 3u
                                 : 2u);
    for (const auto& dnn : c.dnns) EXPECT_GE(dnn.groups.size(), 5u) << dnn.name;  // grouped, not one block
    if (std::string(name) == "resnet-to-mobilenet+vit") {
      ASSERT_EQ(c.dnns[1].name, "mobilenet");
      EXPECT_GE(c.dnns[1].releaseMs, c.dnns[0].endMs - 1e-9);
    }
  }
  fs::remove_all(d);
}

TEST(concurrentPlanSolveCli, AnytimePrintsImprovingSchedules) {
  ASSERT_TRUE(fs::exists(kBin)) << kBin << ": plan-solve is not built (build the tools before the tests)";
  fs::path d = tmpDir("anytime");
  auto r = run("--mode concurrent " + (kData / "googlenet-table2-pipeline.json").string() + " -o " +
               (d / "p.json").string() + " --anytime --objective latency");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find(" ms] latency "), std::string::npos) << r.out;
  fs::remove_all(d);
}

TEST(concurrentPlanSolveCli, BadInputOneLineErrorNoOutput) {
  ASSERT_TRUE(fs::exists(kBin)) << kBin << ": plan-solve is not built (build the tools before the tests)";
  fs::path d = tmpDir("bad");
  std::ofstream(d / "w.json") << R"({"version": 1, "accelerators": ["GPU"], "dnns": [{"name": "a", "groups": [{"timeMs": {"GPU": "x"}}]}]})";
  auto r = run("--mode concurrent " + (d / "w.json").string() + " -o " + (d / "p.json").string());
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  EXPECT_NE(r.out.find("w.json: $.dnns[0].groups[0].timeMs.GPU: expected a number"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(d / "p.json"));
  auto r2 = run("--mode concurrent " + (d / "missing.json").string() + " -o " + (d / "p.json").string());
  EXPECT_EQ(r2.code, 1);
  EXPECT_NE(r2.out.find("missing.json: cannot open"), std::string::npos);
  EXPECT_FALSE(fs::exists(d / "p.json"));
  fs::remove_all(d);
}

TEST(concurrentPlanSolveCli, TimeOutSaysNotProvenOptimalWithTheGap) {
  ASSERT_TRUE(fs::exists(kBin)) << kBin << ": plan-solve is not built (build the tools before the tests)";
  fs::path d = tmpDir("timeout");
  // 3 DNNs x 60 groups (seeded), far beyond what 50 ms can prove.
  auto p = zp::schedule::randomInstance({.dnns = 3, .groups = 60, .accelerators = 2, .seed = 5});
  zp::artifacts::WorkloadSpec w;
  w.accelerators = p.accelerators;
  w.objective = zp::sim::Objective::Latency;
  for (const auto& dnn : p.dnns) {
    zp::artifacts::WorkloadDnn e;
    e.name = dnn.name;
    e.groups = dnn.groups;
    w.dnns.push_back(std::move(e));
  }
  std::ofstream(d / "w.json") << zp::artifacts::formatWorkloadJson(w, d);
  auto r = run("--mode concurrent " + (d / "w.json").string() + " -o " + (d / "p.json").string() + " --time-limit 0.05");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("feasible, not proven optimal"), std::string::npos) << r.out;
  auto plan = zp::artifacts::readPlan(d / "p.json");
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  EXPECT_EQ(plan->concurrent->solver.status, "feasible");
  EXPECT_GT(plan->concurrent->solver.gap, 0.0);
  EXPECT_NE(r.out.find("gap "), std::string::npos) << r.out;
  fs::remove_all(d);
}
