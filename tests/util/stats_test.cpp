// Median and percentiles: linear interpolation between the nearest ranks
// (numpy's default), whatever the order of the sample.
#include <gtest/gtest.h>

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
