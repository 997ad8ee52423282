// The hand-off cost of a placed run: the fit on given points, and one small
// measurement on this host's cores.
#include <gtest/gtest.h>

#include "passes/measure/placed_handoff.h"
#include "tests/common/processors.h"

namespace zp::measure {
namespace {

HandOffFit withPoints(std::vector<std::pair<int64_t, double>> pts) {
  HandOffFit f;
  for (auto [b, ms] : pts) f.points.push_back(HandOffPoint{b, 0, 0, ms});
  fitHandOff(f);
  return f;
}

TEST(PlacedHandOff, FitRecoversALineAndNeverGoesNegative) {
  auto f = withPoints({{1000, 0.01 + 1000 * 1e-7}, {5000, 0.01 + 5000 * 1e-7}, {9000, 0.01 + 9000 * 1e-7}});
  EXPECT_NEAR(f.fixedMs, 0.01, 1e-12);
  EXPECT_NEAR(f.msPerByte, 1e-7, 1e-15);
  f = withPoints({{1000, 0.03}, {9000, 0.01}});  // falling: flat at the mean
  EXPECT_EQ(f.msPerByte, 0);
  EXPECT_NEAR(f.fixedMs, 0.02, 1e-12);
  f = withPoints({{1000, 0.0}, {2000, 0.0}, {100000, 0.1}});  // a negative intercept: through the origin
  EXPECT_EQ(f.fixedMs, 0);
  EXPECT_GT(f.msPerByte, 0);
  EXPECT_EQ(withPoints({}).msPerByte, 0);
}

TEST(PlacedHandOff, MeasuresOnThisHostsCores) {
  const auto cores = runtime::serve::availableCores();
  ASSERT_FALSE(cores.empty());
  const Processor a = testing::pinned("a", {cores.front()}), b = testing::pinned("b", {cores.back()});
  HandOffParams p;
  p.bytes = {4096, 65536};
  p.chain = 4;
  p.measure = {3, 1};
  auto fit = measurePlacedHandOff(a, b, p);
  ASSERT_TRUE(fit.ok()) << fit.error().message;
  ASSERT_EQ(fit->points.size(), 2u);
  for (const auto& pt : fit->points) {
    EXPECT_GT(pt.alternatingMs, 0);
    EXPECT_GT(pt.sameMs, 0);
    EXPECT_GE(pt.perEdgeMs, 0);
  }
  EXPECT_GE(fit->fixedMs, 0);
  EXPECT_GE(fit->msPerByte, 0);
}

}  // namespace
}  // namespace zp::measure
