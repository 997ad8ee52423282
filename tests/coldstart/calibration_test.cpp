// Calibration of the cold cost model against measured runs: the factors are the
// measured sums over the profiled ones, the plan follows the calibrated costs and
// records them, and runs of another model are errors.
#include <gtest/gtest.h>

#include "passes/coldstart/calibration.h"
#include "passes/coldstart/coldstart.h"

namespace zp::coldstart {
namespace {

profile::ColdProfile profileOfTwoNodes() {
  profile::ColdProfile p;
  p.cores = 2;
  p.storageMBps = 1000;  // 1 MB per ms
  p.gemmStartupMs = {{"blis", 1.0}};
  p.models = {{"m", 2.0}};
  //       model step node  op     kernel      gemm    raw        cache      tr    first  warm
  p.nodes = {{"m", 0, "c1", "Conv", "im2col", "blis", 1'000'000, 1'000'000, 0.5, 9.0, 8.0},
             {"m", 0, "c1", "Conv", "winograd", "blis", 1'000'000, 4'000'000, 2.0, 5.0, 4.0},
             {"m", 1, "relu", "Relu", "", "", 0, 0, 0, 1.0, 0.4}};
  return p;
}

profile::MeasuredColdNode node(int step, std::string name, std::string kernel, std::string weights,
                               std::optional<profile::Span> read, std::optional<profile::Span> transform,
                               profile::Span execute) {
  profile::MeasuredColdNode n;
  n.step = step, n.node = std::move(name), n.kernel = std::move(kernel);
  n.gemm = n.kernel.empty() ? "" : "blis";
  n.weights = std::move(weights);
  n.read = read, n.transform = transform, n.execute = execute;
  return n;
}

TEST(ColdCalibration, FactorsAreMeasuredOverProfiledSums) {
  // Run 1: winograd transformed (1 MB raw read in 2 ms, transform 6 ms against 2), execute 10 + 2
  // against 5 + 1. Run 2: im2col from the cache (1 MB in 0.5 ms), execute 9 + 1 against 9 + 1.
  profile::MeasuredColdRun r1{"K+C+P", 2, 20, {node(0, "c1", "winograd", "transform", profile::Span{1, 3},
                                                    profile::Span{3, 9}, {9, 19}),
                                               node(1, "relu", "", "none", std::nullopt, std::nullopt, {19, 21})}};
  profile::MeasuredColdRun r2{"K+C+P", 2, 12, {node(0, "c1", "im2col", "cache", profile::Span{1, 1.5}, std::nullopt,
                                                    {2, 11}),
                                               node(1, "relu", "", "none", std::nullopt, std::nullopt, {11, 12})}};
  auto c = calibrate(profileOfTwoNodes(), "m", {r1, r2}, {"r1.json", "r2.json"});
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->runs, 2);
  // Each piece at its median over the runs: relu ran in both (2 and 1 ms).
  EXPECT_DOUBLE_EQ(c->executeFactor, (10.0 + 9 + 1.5) / (5.0 + 9 + 1));
  EXPECT_DOUBLE_EQ(c->transformFactor, 6.0 / 2.0);
  EXPECT_DOUBLE_EQ(c->readMBps, 2.0 / (2.5 / 1e3));  // 2 MB in 2.5 ms

  const profile::ColdProfile scaled = applyCalibration(profileOfTwoNodes(), "m", *c);
  EXPECT_DOUBLE_EQ(scaled.storageMBps, c->readMBps);
  EXPECT_DOUBLE_EQ(scaled.nodes[1].transformMs, 2.0 * 3);
  EXPECT_DOUBLE_EQ(scaled.nodes[1].firstExecMs, 5.0 * c->executeFactor);
  EXPECT_DOUBLE_EQ(scaled.nodes[1].warmExecMs, 4.0);  // warm runs are not the cold run's
}

TEST(ColdCalibration, ReadsAndTransformsAreLinesWhereTheirSizesDiffer) {
  // Reads: 1 MB (raw) in 1.5 ms, 4 MB (winograd's cache) in 3 ms: 1 ms + 0.5 ms per MB.
  // Transforms: winograd (2 ms profiled) in 4 ms, im2col (0.5 ms) in 2.5 ms: 2 ms + 1x.
  auto run = [](std::string kernel, std::string weights, double readMs, std::optional<double> transformMs) {
    std::optional<profile::Span> t;
    if (transformMs) t = profile::Span{2, 2 + *transformMs};
    return profile::MeasuredColdRun{"K+C+P", 2, 30, {node(0, "c1", kernel, weights, profile::Span{0, readMs}, t, {10, 20}),
                                                     node(1, "relu", "", "none", std::nullopt, std::nullopt, {20, 21})}};
  };
  auto c = calibrate(profileOfTwoNodes(), "m",
                     {run("winograd", "transform", 1.5, 4.0), run("winograd", "cache", 3.0, std::nullopt),
                      run("im2col", "transform", 1.5, 2.5)},
                     {"a.json", "b.json", "c.json"});
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_NEAR(c->readLatencyMs, 1.0, 1e-9);
  EXPECT_NEAR(c->readMBps, 2000, 1e-6);
  EXPECT_NEAR(c->transformOverheadMs, 2.0, 1e-9);
  EXPECT_NEAR(c->transformFactor, 1.0, 1e-9);
  const profile::ColdProfile scaled = applyCalibration(profileOfTwoNodes(), "m", *c);
  EXPECT_NEAR(scaled.storageLatencyMs, 1.0, 1e-9);
  EXPECT_NEAR(scaled.nodes[1].transformMs, 2.0 + 2.0, 1e-9);
  EXPECT_DOUBLE_EQ(scaled.nodes[2].transformMs, 0);  // a node without heavy weights has no transform
  // The plan records the fit.
  ColdStartParams params;
  params.calibration = *c;
  auto plan = planColdStart(profileOfTwoNodes(), plan::UnitId::model("m"), params);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  EXPECT_NEAR(plan->readLatencyMs, 1.0, 1e-9);
  EXPECT_NEAR(plan->transformOverheadMs, 2.0, 1e-9);
}

TEST(ColdCalibration, NoRunsIsTheIdentityAndThePlanSaysWhetherItWasCalibrated) {
  auto none = calibrate(profileOfTwoNodes(), "m", {}, {});
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->runs, 0);
  EXPECT_EQ(applyCalibration(profileOfTwoNodes(), "m", *none), profileOfTwoNodes());

  auto plain = planColdStart(profileOfTwoNodes(), plan::UnitId::model("m"), ColdStartParams{});
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  EXPECT_EQ(plain->calibrationRuns, 0);
  ColdStartParams params;
  // Half the bandwidth, twice the execute, 4x the transforms.
  params.calibration = Calibration{.runs = 3, .readMBps = 500, .executeFactor = 2.0, .transformFactor = 4.0};
  auto slow = planColdStart(profileOfTwoNodes(), plan::UnitId::model("m"), params);
  ASSERT_TRUE(slow.ok()) << slow.error().message;
  EXPECT_EQ(slow->calibrationRuns, 3);
  EXPECT_DOUBLE_EQ(slow->executeFactor, 2.0);
  EXPECT_DOUBLE_EQ(slow->transformFactor, 4.0);
  EXPECT_DOUBLE_EQ(slow->storageMBps, 500);
  EXPECT_GT(slow->predictedColdMs, plain->predictedColdMs);
}

TEST(ColdCalibration, LibraryStartUpsAreMeasuredOverProfiledAndDelayThePlan) {
  // The profile's BLIS start-up is 1 ms; two runs measured it at 3 and 5 ms (it shares
  // its core with the reader and the transforms in a fresh process).
  auto run = [](double startupMs) {
    profile::MeasuredColdRun r{"K+C+P", 2, 20, {node(0, "c1", "im2col", "cache", profile::Span{0, 1}, std::nullopt,
                                                     {5, 14}),
                                                node(1, "relu", "", "none", std::nullopt, std::nullopt, {14, 15})}};
    r.startups = {{"blis", {0, startupMs}}};
    return r;
  };
  auto c = calibrate(profileOfTwoNodes(), "m", {run(3), run(5)}, {"a.json", "b.json"});
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_DOUBLE_EQ(c->startupFactor, (3.0 + 5.0) / (1.0 + 1.0));
  EXPECT_DOUBLE_EQ(applyCalibration(profileOfTwoNodes(), "m", *c).gemmStartupMs.at("blis"), 4.0);
  // Both kernels of c1 need BLIS: a start-up of 60 ms is on the critical path, and the plan records it.
  ColdStartParams params;
  auto plain = planColdStart(profileOfTwoNodes(), plan::UnitId::model("m"), params);
  params.calibration = Calibration{.runs = 1, .startupFactor = 60.0};
  auto slow = planColdStart(profileOfTwoNodes(), plan::UnitId::model("m"), params);
  ASSERT_TRUE(plain.ok() && slow.ok());
  EXPECT_LT(plain->predictedColdMs, 60.0);
  EXPECT_GE(slow->predictedColdMs, 60.0);
  EXPECT_DOUBLE_EQ(slow->startupFactor, 60.0);
  // A library the profile never started is an error naming the run.
  profile::MeasuredColdRun other = run(3);
  other.startups = {{"mkl", {0, 2}}};
  auto bad = calibrate(profileOfTwoNodes(), "m", {other}, {"other.json"});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("other.json: GEMM library 'mkl'"), std::string::npos) << bad.error().message;
}

TEST(ColdCalibration, OneRunsSlowSpellIsNotATrend) {
  // Five runs of the same plan: winograd's transform takes 2.5 ms against 2 profiled,
  // except in one run where its worker lost the core for 40 ms.
  std::vector<profile::MeasuredColdRun> runs;
  std::vector<std::string> names;
  for (double ms : {2.5, 2.5, 40.0, 2.5, 2.5}) {
    runs.push_back({"K+C+P", 2, 30, {node(0, "c1", "winograd", "transform", profile::Span{0, 1},
                                          profile::Span{1, 1 + ms}, {10, 15}),
                                     node(1, "relu", "", "none", std::nullopt, std::nullopt, {15, 16})}});
    names.push_back("run" + std::to_string(names.size()) + ".json");
  }
  auto c = calibrate(profileOfTwoNodes(), "m", runs, names);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_DOUBLE_EQ(c->transformFactor, 2.5 / 2.0);
  EXPECT_DOUBLE_EQ(c->executeFactor, (5.0 + 1.0) / (5.0 + 1.0));
}

TEST(ColdCalibration, SetupIsTheRunsMedianOverTheProfiled) {
  // The profile's setup is 2 ms; a fresh process took 3, 3.5 and 9 ms (one slow spell)
  // and one run did not report its setup. Every step of the plan waits for the setup.
  std::vector<profile::MeasuredColdRun> runs;
  for (double setup : {3.0, 9.0, 3.5, 0.0}) {
    runs.push_back({"K+C+P", 2, 30, {node(0, "c1", "im2col", "cache", profile::Span{3, 4}, std::nullopt, {4, 13}),
                                     node(1, "relu", "", "none", std::nullopt, std::nullopt, {13, 14})}});
    runs.back().setupMs = setup;
  }
  auto c = calibrate(profileOfTwoNodes(), "m", runs, {"a.json", "b.json", "c.json", "d.json"});
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_DOUBLE_EQ(c->setupFactor, 3.5 / 2.0);
  EXPECT_DOUBLE_EQ(applyCalibration(profileOfTwoNodes(), "m", *c).models[0].setupMs, 3.5);
  ColdStartParams params;
  params.calibration.runs = 1;
  params.calibration.setupFactor = 3.0;
  auto plain = planColdStart(profileOfTwoNodes(), plan::UnitId::model("m"), ColdStartParams{});
  auto slow = planColdStart(profileOfTwoNodes(), plan::UnitId::model("m"), params);
  ASSERT_TRUE(plain.ok() && slow.ok());
  EXPECT_DOUBLE_EQ(slow->setupMs, 6.0);
  EXPECT_DOUBLE_EQ(slow->setupFactor, 3.0);
  EXPECT_NEAR(slow->predictedColdMs - plain->predictedColdMs, 4.0, 1e-9);
  // Runs that report no setup leave it as profiled.
  for (auto& r : runs) r.setupMs = 0;
  c = calibrate(profileOfTwoNodes(), "m", runs, {"a.json", "b.json", "c.json", "d.json"});
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_DOUBLE_EQ(c->setupFactor, 1.0);
}

TEST(ColdCalibration, AKernelRunOnEnoughNodesGetsItsOwnExecuteFactor) {
  profile::ColdProfile p;
  p.cores = 2;
  p.storageMBps = 1000;
  p.gemmStartupMs = {{"blis", 1.0}};
  p.models = {{"m", 1.0}};
  //       model step node  op     kernel    gemm    raw        cache      tr   first warm
  p.nodes = {{"m", 0, "c0", "Conv", "sparse", "", 1'000'000, 1'000'000, 0.5, 2.0, 1.0},
             {"m", 1, "c1", "Conv", "sparse", "", 1'000'000, 1'000'000, 0.5, 3.0, 1.0},
             {"m", 2, "c2", "Conv", "im2col", "blis", 1'000'000, 1'000'000, 0.5, 4.0, 1.0},
             {"m", 3, "relu", "Relu", "", "", 0, 0, 0, 1.0, 0.4}};
  // The sparse nodes ran at twice their profile, im2col (one node: no factor of its own) at 1.1x.
  auto sparse = [](int step, std::string name, profile::Span execute) {
    profile::MeasuredColdNode n = node(step, std::move(name), "sparse", "cache", profile::Span{0, 1}, std::nullopt,
                                       execute);
    n.gemm = "";
    return n;
  };
  profile::MeasuredColdRun r{"K+C+P", 2, 16.4, {sparse(0, "c0", {1, 5}), sparse(1, "c1", {5, 11}),
                                                 node(2, "c2", "im2col", "cache", profile::Span{1, 2}, std::nullopt,
                                                      {11, 15.4}),
                                                 node(3, "relu", "", "none", std::nullopt, std::nullopt, {15.4, 16.4})},
                             {}};
  auto c = calibrate(p, "m", {r}, {"r.json"});
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_DOUBLE_EQ(c->executeFactor, (4.0 + 6.0 + 4.4 + 1.0) / (2.0 + 3.0 + 4.0 + 1.0));
  ASSERT_EQ(c->kernelExecuteFactor.size(), 1u);
  EXPECT_DOUBLE_EQ(c->kernelExecuteFactor.at("sparse"), 2.0);
  const profile::ColdProfile scaled = applyCalibration(p, "m", *c);
  EXPECT_DOUBLE_EQ(scaled.nodes[0].firstExecMs, 4.0);
  EXPECT_DOUBLE_EQ(scaled.nodes[1].firstExecMs, 6.0);
  EXPECT_DOUBLE_EQ(scaled.nodes[2].firstExecMs, 4.0 * c->executeFactor);
  EXPECT_DOUBLE_EQ(scaled.nodes[3].firstExecMs, 1.0 * c->executeFactor);
  // The plan records the kernels' factors.
  ColdStartParams params;
  params.calibration = *c;
  auto plan = planColdStart(p, plan::UnitId::model("m"), params);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  EXPECT_EQ(plan->kernelExecuteFactors, c->kernelExecuteFactor);
}

TEST(ColdCalibration, ARunOfAnotherModelIsAnError) {
  profile::MeasuredColdRun other{"K+C+P", 2, 5, {node(0, "conv0", "im2col", "cache", profile::Span{0, 1},
                                                      std::nullopt, {1, 2})}};
  auto c = calibrate(profileOfTwoNodes(), "m", {other}, {"other.json"});
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().message.find("other.json: step 0 runs 'conv0'"), std::string::npos) << c.error().message;
  profile::MeasuredColdRun kernel{"K+C+P", 2, 5, {node(0, "c1", "sparse", "cache", profile::Span{0, 1},
                                                       std::nullopt, {1, 2})}};
  c = calibrate(profileOfTwoNodes(), "m", {kernel}, {"kernel.json"});
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().message.find("kernel 'sparse'"), std::string::npos) << c.error().message;
  EXPECT_FALSE(calibrate(profileOfTwoNodes(), "other", {}, {}).ok());
}

}  // namespace
}  // namespace zp::coldstart
