// plan-run BUNDLE_DIR: chained sessions with the bundle's caches match the
// uncached reference, corrupted caches fall back with a warning, bad requests
// are errors.
#include <gtest/gtest.h>

#include "libplan/util/file.h"
#include "drivers/emit/emit_bundle.h"
#include "drivers/run/run_bundle.h"
#include "tests/common/emit_fixture.h"
#include "libplan/artifacts/plan_json.h"

namespace zp::drivers {
namespace {
namespace fs = std::filesystem;

class emitRunBundle : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::scratchDir("run");
    auto m = testing::stitchMultitask(dir_);
    ASSERT_TRUE(m.ok()) << m.error().message;
    plan_ = testing::stitchPlanFor(*m);
    ASSERT_TRUE(artifacts::writePlan(plan_, dir_ / "plan.json").ok());
    EmitParams e;
    e.plan = dir_ / "plan.json";
    e.out = dir_ / "bundle";
    e.toolVersion = "test";
    auto r = emitBundle(e);
    ASSERT_TRUE(r.ok()) << r.error().message;
  }
  void TearDown() override { fs::remove_all(dir_); }
  BundleRunParams params() {
    BundleRunParams p;
    p.bundle = dir_ / "bundle";
    p.repeat = 3;
    p.samples = 6;
    return p;
  }
  fs::path dir_;
  plan::Plan plan_;
};

TEST_F(emitRunBundle, ChainedCachedRunsMatchTheReferenceOnDatasetSamples) {
  auto r = runBundle(params());
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->ok()) << r->table();
  EXPECT_TRUE(r->warnings.empty()) << r->warnings.front();
  ASSERT_EQ(r->tasks.size(), plan_.stitch->tasks.size());
  for (size_t i = 0; i < r->tasks.size(); ++i) {
    const auto& t = r->tasks[i];
    const auto& sel = plan_.stitch->systems[0].selections[0].tasks[i];
    EXPECT_EQ(t.task, plan_.stitch->tasks[i].name);
    EXPECT_TRUE(t.feasible);
    EXPECT_EQ(t.slo, "C01");
    EXPECT_EQ(t.combination, sel.combination);
    const auto& order = plan_.stitch->placementOrder;  // one position per processor of the zoo
    EXPECT_EQ(t.processors, std::vector<std::string>(order.begin(), order.begin() + plan_.stitch->tasks[i].positions));
    EXPECT_EQ(t.inputs, "dataset");  // the multitask zoo has datasets with labels
    EXPECT_EQ(t.samples, 6);
    EXPECT_TRUE(t.match) << t.task << " max diff " << t.maxAbsDiff;
    EXPECT_GT(t.cacheHits, 0) << t.task;
    EXPECT_EQ(t.cacheFallbacks, 0) << t.task;
    EXPECT_GT(t.measuredMs, 0);
    EXPECT_DOUBLE_EQ(t.predictedMs, sel.latencyMs);
    EXPECT_GE(t.accuracy, 0);
    EXPECT_LE(t.accuracy, 1);
  }
  const Json j = r->json();
  EXPECT_TRUE(j.at("ok").get<bool>());
  EXPECT_EQ(j.at("tasks").size(), r->tasks.size());
}

TEST_F(emitRunBundle, SloAndTaskSelectWhatRuns) {
  auto p = params();
  p.slo = "C02";  // the first task is infeasible there
  auto r = runBundle(p);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_FALSE(r->tasks.empty());
  EXPECT_FALSE(r->tasks[0].feasible);
  EXPECT_NE(r->tasks[0].skipped.find("infeasible"), std::string::npos);
  for (size_t i = 1; i < r->tasks.size(); ++i) {
    EXPECT_TRUE(r->tasks[i].feasible);
    EXPECT_EQ(r->tasks[i].combination, plan_.stitch->systems[0].selections[1].tasks[i].combination);
    EXPECT_TRUE(r->tasks[i].match);
  }
  p.slo.clear();
  p.task = plan_.stitch->tasks[1].name;
  r = runBundle(p);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->tasks.size(), 1u);
  EXPECT_EQ(r->tasks[0].task, p.task);

  p.task = "no_such_task";
  r = runBundle(p);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("--task no_such_task: no such task"), std::string::npos);
  p.task.clear();
  p.slo = "C99";
  r = runBundle(p);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("--slo C99"), std::string::npos);
}

TEST_F(emitRunBundle, CorruptedCacheWarnsFallsBackAndStillMatches) {
  // Flip a byte of the first payload (payloads start after the 64-byte header)
  // in every cache the first task uses.
  const auto& task = plan_.stitch->tasks[0];
  int corrupted = 0;
  for (const auto& g : task.subgraphs) {
    const std::string policy = g.position == 0 ? "default" : g.position == 1 ? "im2col" : "sparse";
    const fs::path cache = dir_ / "bundle" / artifacts::cacheFileName(testing::unitOf(plan_, task.name, g).sha256, policy);
    auto bytes = readFile(cache);
    ASSERT_TRUE(bytes.ok());
    if (bytes->size() <= 64) continue;
    (*bytes)[64] ^= 0x5a;
    ASSERT_TRUE(writeFileAtomic(cache, *bytes).ok());
    ++corrupted;
  }
  ASSERT_GT(corrupted, 0);
  auto p = params();
  p.task = task.name;
  auto r = runBundle(p);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->tasks.size(), 1u);
  EXPECT_TRUE(r->tasks[0].match) << r->table();
  EXPECT_GT(r->tasks[0].cacheFallbacks, 0);
  bool runtimeWarned = false;
  for (const auto& w : r->warnings) runtimeWarned |= w.find("raw ONNX weights") != std::string::npos;
  EXPECT_TRUE(runtimeWarned) << (r->warnings.empty() ? "no warnings" : r->warnings.front());
}

TEST_F(emitRunBundle, ModifiedSubgraphOrConcurrentOnlyBundleIsAnError) {
  const auto& g = plan_.stitch->tasks[0].subgraphs[0];
  const fs::path f = dir_ / "bundle" / testing::unitOf(plan_, plan_.stitch->tasks[0].name, g).file;
  auto bytes = readFile(f);
  ASSERT_TRUE(bytes.ok());
  ASSERT_TRUE(writeFileAtomic(f, *bytes + " ").ok());
  auto r = runBundle(params());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find(f.string() + ": content hash"), std::string::npos) << r.error().message;

  auto solved = testing::solveConcurrent(dir_);
  ASSERT_TRUE(solved.ok()) << solved.error().message;
  EmitParams e;
  e.plan = dir_ / "concurrent_plan.json";
  e.out = dir_ / "conc_bundle";
  e.toolVersion = "test";
  ASSERT_TRUE(emitBundle(e).ok());
  auto p = params();
  p.bundle = dir_ / "conc_bundle";
  r = runBundle(p);
  ASSERT_FALSE(r.ok());
  // A concurrent plan of workload rows (no models, no host processors) is simulated only.
  EXPECT_NE(r.error().message.find("names no host processors"), std::string::npos) << r.error().message;
}

}  // namespace
}  // namespace zp::drivers
