// Median and percentiles: linear interpolation between the nearest ranks
// (numpy's default), whatever the order of the sample.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <thread>

#include "libplan/util/stats.h"

namespace zp {
namespace {

TEST(Stats, MedianOfOddAndEvenSamples) {
  EXPECT_EQ(median({3, 1, 2}), 2);
  EXPECT_EQ(median({4, 1, 2, 3}), 2.5);
  EXPECT_EQ(median({7}), 7);
  EXPECT_EQ(median({}), 0);
}

TEST(Stats, PercentilesInterpolateBetweenRanks) {
  EXPECT_DOUBLE_EQ(percentile({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 0.9), 9.1);
  EXPECT_EQ(percentile({10, 1, 5}, 0.0), 1);
  EXPECT_EQ(percentile({10, 1, 5}, 1.0), 10);
  EXPECT_DOUBLE_EQ(percentile({0, 10}, 0.25), 2.5);
  EXPECT_EQ(percentile({7}, 0.9), 7);
}

// The selection it uses gives exactly what sorting the whole sample gives,
// duplicates included.
TEST(Stats, PercentilesEqualTheSortedSamplesInterpolation) {
  std::mt19937_64 rng(9);
  for (int round = 0; round < 200; ++round) {
    std::vector<double> v(1 + rng() % 60);
    for (auto& x : v) x = static_cast<double>(rng() % 25) / 4;  // many ties
    std::vector<double> sorted = v;
    std::sort(sorted.begin(), sorted.end());
    for (double q : {0.0, 0.01, 0.25, 0.5, 0.9, 0.99, 1.0}) {
      const double pos = q * static_cast<double>(sorted.size() - 1);
      const auto lo = static_cast<size_t>(std::floor(pos));
      const size_t hi = std::min(lo + 1, sorted.size() - 1);
      const double expected = sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - static_cast<double>(lo));
      EXPECT_EQ(percentile(v, q), expected) << "round " << round << " q " << q;
    }
  }
}

TEST(Stats, ElapsedTimeGrowsAndAgreesInBothUnits) {
  const auto t0 = SteadyClock::now();
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  const double ms = msSince(t0);
  const double s = secondsSince(t0);
  EXPECT_GE(ms, 2.0);
  EXPECT_GE(s * 1000.0, ms);  // read later, so at least as long
}

}  // namespace
}  // namespace zp
