#include "tests/common/temp_dir.h"
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>

#include "libplan/estimate/accuracy_estimator.h"
#include "libplan/estimate/calibrate.h"
#include "libplan/estimate/latency_model.h"
#include "libplan/estimate/metrics.h"

namespace zp::estimate {
namespace {

TEST(Metrics, TopKRecallCountsTiesInTheTruth) {
  std::vector<double> truth{0.9, 0.8, 0.8, 0.7, 0.1};
  // K=2: the true top-2 is {0, 1, 2} (1 and 2 tie for second).
  EXPECT_DOUBLE_EQ(topKRecall({5, 1, 4, 3, 2}, truth, 2), 1.0);   // predicted {0, 2}
  EXPECT_DOUBLE_EQ(topKRecall({5, 1, 2, 4, 3}, truth, 2), 0.5);   // predicted {0, 3}
  EXPECT_DOUBLE_EQ(topKRecall({1, 2, 3, 4, 5}, truth, 1), 0.0);
}

TEST(Metrics, SpearmanMaeMape) {
  EXPECT_NEAR(spearman({1, 2, 3, 4}, {10, 20, 30, 40}), 1.0, 1e-12);
  EXPECT_NEAR(spearman({1, 2, 3, 4}, {4, 3, 2, 1}), -1.0, 1e-12);
  EXPECT_EQ(averageRanks({3, 1, 3, 2}), (std::vector<double>{3.5, 1, 3.5, 2}));
  EXPECT_DOUBLE_EQ(meanAbsoluteError({1, 2}, {2, 4}), 1.5);
  EXPECT_DOUBLE_EQ(meanAbsolutePercentageError({1, 3}, {2, 4}), (0.5 + 0.25) / 2);
}

TEST(LatencyModel, OverheadIsPaidOncePerRunOfOneProcessor) {
  LatencyModel m;
  m.setOverhead("cpu", 1.0);
  m.setOverhead("gpu", 2.0);
  m.setTransition("cpu", "gpu", {0.5, 0.001});
  m.setSubgraph(0, "a", "cpu", 3.0);
  m.setSubgraph(1, "a", "cpu", 4.0);
  m.setSubgraph(1, "a", "gpu", 5.0);
  // Both on cpu: work 2 + 3, one dispatch of 1.
  EXPECT_DOUBLE_EQ(*m.estimate({"a", "a"}, {"cpu", "cpu"}, {100}), 6.0);
  // cpu then gpu: (3-1)+1 + (5-2)+2 + transition 0.5 + 0.1.
  EXPECT_DOUBLE_EQ(*m.estimate({"a", "a"}, {"cpu", "gpu"}, {100}), 3.0 + 5.0 + 0.6);
  EXPECT_FALSE(m.estimate({"a", "b"}, {"cpu", "cpu"}, {100}).has_value());
  EXPECT_EQ(placementOrders({"c", "g", "n"}, 3).size(), 6u);
  EXPECT_EQ(placementOrders({"c", "g", "n"}, 2).size(), 6u);
  EXPECT_EQ(placementOrders({"c", "g", "n"}, 3)[1], (std::vector<std::string>{"c", "n", "g"}));
}

TEST(CalibrateOverhead, MedianPerExtraRunWithinZeroAndTheFastestSubgraph) {
  const double inf = std::numeric_limits<double>::infinity();
  // Three positions: (sum - whole) / 2 per original is 1, 2, 4; the median is 2.
  const std::vector<std::pair<double, double>> pairs{{12, 10}, {14, 10}, {18, 10}};
  EXPECT_DOUBLE_EQ(calibrateOverhead(pairs, 3, 0.5, inf), 2.0);
  EXPECT_DOUBLE_EQ(calibrateOverhead(pairs, 3, 0.5, 1.5), 1.5);  // no more than the fastest subgraph
  // Whole slower than its parts (noise): not below 0.
  EXPECT_DOUBLE_EQ(calibrateOverhead({{10, 12}}, 2, 0.5, inf), 0.0);
  // One position, or no originals measured: the probe, also capped.
  EXPECT_DOUBLE_EQ(calibrateOverhead(pairs, 1, 0.5, inf), 0.5);
  EXPECT_DOUBLE_EQ(calibrateOverhead({}, 3, 0.5, inf), 0.5);
  EXPECT_DOUBLE_EQ(calibrateOverhead({}, 3, 0.5, 0.25), 0.25);
}

TEST(AccuracyEstimator, LearnsASmoothFunctionAndRoundTrips) {
  // y = mean of three "source accuracies" minus a penalty on the int8 flag.
  FeatureMatrix f;
  f.names = {"a0", "a1", "a2", "q"};
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(0.5f, 1.0f);
  std::vector<double> y;
  for (int i = 0; i < 400; ++i) {
    float a = u(rng), b = u(rng), c = u(rng), q = static_cast<float>(rng() % 2);
    f.values.insert(f.values.end(), {a, b, c, q});
    y.push_back((a + b + c) / 3.0 - 0.05 * q);
  }
  std::vector<size_t> rows = sampleIndices(400, 200, 3, {0, 1});
  ASSERT_EQ(rows.size(), 200u);
  EXPECT_EQ(rows, sampleIndices(400, 200, 3, {0, 1}));
  EXPECT_NE(rows, sampleIndices(400, 200, 4, {0, 1}));
  std::vector<double> ty;
  for (size_t r : rows) ty.push_back(y[r]);
  auto est = AccuracyEstimator::train(f, rows, ty, XgbParams{});
  ASSERT_TRUE(est.ok()) << est.error().message;
  auto pred = est->predict(f);
  EXPECT_LT(meanAbsoluteError(pred, y), 0.02);
  EXPECT_GT(spearman(pred, y), 0.95);

  const auto tmp = zp::testing::uniqueTempDir("xgb");
  auto path = tmp / "zp_xgb_test.json";
  ASSERT_TRUE(est->save(path).ok());
  auto loaded = AccuracyEstimator::load(path);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  EXPECT_EQ(loaded->predict(f), pred);
  // Training is deterministic: same data, same model bytes.
  auto again = AccuracyEstimator::train(f, rows, ty, XgbParams{});
  auto path2 = tmp / "zp_xgb_test2.json";
  ASSERT_TRUE(again->save(path2).ok());
  std::ifstream a(path), b(path2);
  std::string sa((std::istreambuf_iterator<char>(a)), {}), sb((std::istreambuf_iterator<char>(b)), {});
  EXPECT_EQ(sa, sb);
  std::filesystem::remove(path);
  std::filesystem::remove(path2);
  std::filesystem::remove(tmp);
  auto bad = AccuracyEstimator::load("/nonexistent/model.json");
  EXPECT_FALSE(bad.ok());
}

}  // namespace
}  // namespace zp::estimate

namespace zp::estimate {
namespace {

TEST(PlacementSearch, OrderCountMatchesTheOrdersSearched) {
  for (size_t p = 1; p <= 4; ++p)
    for (int s = 1; s <= 5; ++s) {
      std::vector<std::string> procs;
      for (size_t i = 0; i < p; ++i) procs.push_back("p" + std::to_string(i));
      EXPECT_EQ(searchOrderCount(p, s, UINT64_MAX), searchOrders(procs, s).size()) << p << " " << s;
    }
  EXPECT_FALSE(searchOrderCount(3, 40, kMaxPlacementSearch));  // 3^40
  EXPECT_FALSE(searchOrderCount(20, 12, kMaxPlacementSearch));
}

TEST(PlacementSearch, LargeSpacesAreRefusedWithTheirSize) {
  EXPECT_TRUE(checkPlacementSearch("stitch.json", "t", 729, 3, 3).ok());
  auto tooMany = checkPlacementSearch("stitch.json", "t", 100000, 5, 5);  // 100000 x 120
  ASSERT_FALSE(tooMany.ok());
  EXPECT_EQ(tooMany.error().message,
            "stitch.json: task 't': 100000 stitched variants x 120 placement orders of 5 positions on 5 processors exceed "
            "the 1000000 this tool can search; use fewer subgraphs, variants or processors");
  auto orders = checkPlacementSearch("stitch.json", "t", 1, 3, 30);
  ASSERT_FALSE(orders.ok());
  EXPECT_NE(orders.error().message.find("x too many placement orders"), std::string::npos);
}

}  // namespace
}  // namespace zp::estimate
