#include "libplan/estimate/contested_accuracy.h"

#include <gtest/gtest.h>

#include <random>

namespace zp::estimate {
namespace {

std::vector<uint8_t> bits(const std::string& s) {
  std::vector<uint8_t> b;
  for (char c : s) b.push_back(c == '1');
  return b;
}

TEST(ContestedAccuracy, SamplesSomeSourceGetsWrongAreContestedTheRestAgree) {
  const auto a = bits("1101111011"), b = bits("1111011011");
  auto plan = contestedPlan({&a, &b}, 0.0, 1);
  EXPECT_EQ(plan.contested, (std::vector<size_t>{2, 4, 7}));
  EXPECT_EQ(plan.agreeing, 7u);
  EXPECT_TRUE(plan.audit.empty());
  EXPECT_EQ(plan.total, 10u);
  // Without an audit the agreeing samples count as right: 7 + what the contested give.
  EXPECT_DOUBLE_EQ(composedAccuracy(plan, bits("010")), 0.8);
  EXPECT_DOUBLE_EQ(composedAccuracy(plan, bits("000")), 0.7);
}

TEST(ContestedAccuracy, TheAuditPricesBreakageOfAgreeingSamples) {
  const auto a = bits(std::string(90, '1') + std::string(10, '0'));
  auto plan = contestedPlan({&a}, 0.2, 7);
  ASSERT_EQ(plan.audit.size(), 18u);  // ceil(0.2 * 90)
  for (size_t s : plan.audit) EXPECT_LT(s, 90u);
  const auto samples = plan.samples();
  ASSERT_EQ(samples.size(), 28u);
  EXPECT_TRUE(std::is_sorted(samples.begin(), samples.end()));
  // Half the audit broken, none of the contested right: 45 of the 90 agreeing.
  std::vector<uint8_t> correct(samples.size(), 0);
  size_t flipped = 0;
  for (size_t i = 0; i < samples.size(); ++i)
    if (samples[i] < 90 && flipped < 9) correct[i] = 1, ++flipped;
  EXPECT_DOUBLE_EQ(composedAccuracy(plan, correct), 0.45);
  // Same seed, same audit; another seed, another one.
  EXPECT_EQ(contestedPlan({&a}, 0.2, 7).audit, plan.audit);
  EXPECT_NE(contestedPlan({&a}, 0.2, 8).audit, plan.audit);
}

// Against the definition on random verdicts: with the stitched variant's
// verdict on every sample known, the composed accuracy is exact whenever the
// stitched variant is right on every agreeing sample, and with a full audit.
TEST(ContestedAccuracy, ExactWhenStitchingBreaksNothingOrTheAuditIsFull) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 50; ++trial) {
    const size_t n = 1 + rng() % 200;
    std::vector<uint8_t> a(n), b(n), stitched(n);
    for (size_t i = 0; i < n; ++i) a[i] = rng() % 10 != 0, b[i] = rng() % 8 != 0, stitched[i] = rng() % 2;
    for (double audit : {0.0, 1.0}) {
      auto truth = stitched;
      if (audit == 0.0)
        for (size_t i = 0; i < n; ++i) truth[i] |= a[i] && b[i];
      auto plan = contestedPlan({&a, &b}, audit, static_cast<uint64_t>(trial));
      std::vector<uint8_t> seen;
      for (size_t s : plan.samples()) seen.push_back(truth[s]);
      double exact = 0;
      for (uint8_t t : truth) exact += t;
      EXPECT_NEAR(composedAccuracy(plan, seen), exact / static_cast<double>(n), 1e-12) << trial;
    }
  }
}

}  // namespace
}  // namespace zp::estimate
