#include "libplan/sim/concurrent/contention_fit.h"

#include <gtest/gtest.h>

#include <random>

#include "libplan/artifacts/contention_csv.h"
#include "tests/common/test_paths.h"

namespace zp::sim {
namespace {

// A PCCS-shaped surface: no slowdown without demand on either side, rising
// with both, saturating in the external demand.
double known(double own, double external) { return 1 + 0.5 * (own / 100) * std::min(external, 80.0) / 80; }

std::vector<ContentionPoint> measure(const std::vector<double>& owns, const std::vector<double>& externals,
                                     double noise, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> n(0, noise);
  std::vector<ContentionPoint> points;
  for (double o : owns)
    for (double e : externals) points.push_back({o + n(rng) * 0.2, e + n(rng) * 0.2, known(o, e) + n(rng)});
  return points;
}

TEST(concurrentContentionFit, RecoversAKnownSurfaceOnItsGridAndBetween) {
  const std::vector<double> owns{10, 30, 55, 100}, externals{20, 45, 90};
  auto s = fitContentionSurface(measure(owns, externals, 0.0, 1));
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->own, (std::vector<double>{0, 10, 30, 55, 100}));
  EXPECT_EQ(s->external, (std::vector<double>{0, 20, 45, 90}));
  const auto model = ContentionModel::fromSurfaces({*s});
  for (double o : owns)
    for (double e : externals) EXPECT_NEAR(model.slowdown(0, o, e), known(o, e), 1e-6) << o << " " << e;
  EXPECT_NEAR(model.slowdown(0, 0, 90), 1.0, 1e-9);    // no own demand: not slowed
  EXPECT_NEAR(model.slowdown(0, 100, 0), 1.0, 1e-9);   // alone: not slowed
  // Between grid points the bilinear surface stays within the known one's curvature.
  EXPECT_NEAR(model.slowdown(0, 40, 30), known(40, 30), 0.02);
  // Noisy repeats of each point are averaged, and jitter in the demands merged.
  auto noisy = measure(owns, externals, 0.01, 2);
  auto again = measure(owns, externals, 0.01, 3);
  noisy.insert(noisy.end(), again.begin(), again.end());
  auto sn = fitContentionSurface(noisy);
  ASSERT_TRUE(sn.ok()) << sn.error().message;
  EXPECT_EQ(sn->own.size(), 5u);
  const auto mn = ContentionModel::fromSurfaces({*sn});
  for (double o : owns)
    for (double e : externals) EXPECT_NEAR(mn.slowdown(0, o, e), known(o, e), 0.03);
}

TEST(concurrentContentionFit, LeaveOneRowOutPredictsTheInnerRowsAndMissingCellsAreErrors) {
  auto residuals = leaveOneRowOut(measure({10, 30, 55, 100}, {20, 45, 90}, 0.0, 1));
  ASSERT_TRUE(residuals.ok()) << residuals.error().message;
  ASSERT_EQ(residuals->size(), 3u * 3u);  // rows 10, 30, 55 held out in turn (0 and 100 are the ends)
  for (const auto& r : *residuals) {
    EXPECT_NEAR(r.predicted, known(r.point.own, r.point.external), 1e-6) << r.point.own;  // linear in own
  }
  auto gap = measure({10, 30}, {20, 45}, 0.0, 1);
  gap.pop_back();
  auto s = fitContentionSurface(gap);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("no measurement at own 30.0%, external 45.0%"), std::string::npos)
      << s.error().message;
  EXPECT_FALSE(fitContentionSurface({{10, 20, NAN}}).ok());
}

// The surface measured on the build host reads back as a model of its two
// processors, with no slowdown where either side requests nothing.
TEST(concurrentContentionFit, TheMeasuredHostSurfaceReads) {
  auto m = artifacts::readContentionCsv(std::string(zp::testing::kSourceDir) + "/testdata/concurrent/contention-host-2core.csv",
                                        {"cpu", "npu"});
  ASSERT_TRUE(m.ok()) << m.error().message;
  for (int a = 0; a < 2; ++a) {
    EXPECT_DOUBLE_EQ(m->slowdown(a, 0, 100), 1.0);
    EXPECT_DOUBLE_EQ(m->slowdown(a, 100, 0), 1.0);
    EXPECT_GT(m->slowdown(a, 130, 100), 1.1);  // a triad beside a triad
  }
}

}  // namespace
}  // namespace zp::sim
