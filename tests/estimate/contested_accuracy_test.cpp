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
  // Without an audit nor breakage the agreeing samples count as right: 7 + what the contested give.
  EXPECT_DOUBLE_EQ(composedAccuracy(plan, tallyContestedRun(plan, bits("010")), 0.0), 0.8);
  EXPECT_DOUBLE_EQ(composedAccuracy(plan, tallyContestedRun(plan, bits("000")), 0.0), 0.7);
  EXPECT_DOUBLE_EQ(composedAccuracy(plan, tallyContestedRun(plan, bits("000")), 1.0), 0.0);
}

TEST(ContestedAccuracy, TheAuditCountsWhatStitchingBreaks) {
  const auto a = bits(std::string(90, '1') + std::string(10, '0'));
  auto plan = contestedPlan({&a}, 0.2, 7);
  ASSERT_EQ(plan.audit.size(), 18u);  // ceil(0.2 * 90)
  for (size_t s : plan.audit) EXPECT_LT(s, 90u);
  const auto samples = plan.samples();
  ASSERT_EQ(samples.size(), 28u);
  EXPECT_TRUE(std::is_sorted(samples.begin(), samples.end()));
  // Half the audit broken, three contested right.
  std::vector<uint8_t> correct(samples.size(), 0);
  size_t audited = 0, contested = 0;
  for (size_t i = 0; i < samples.size(); ++i) {
    if (samples[i] < 90 && audited++ < 9) correct[i] = 1;
    if (samples[i] >= 90 && contested++ < 3) correct[i] = 1;
  }
  auto run = tallyContestedRun(plan, correct);
  EXPECT_EQ(run.audited, 18u);
  EXPECT_EQ(run.broken, 9u);
  EXPECT_EQ(run.contestedRight, 3u);
  EXPECT_DOUBLE_EQ(composedAccuracy(plan, run, 0.5), (3 + 9 + 72 * 0.5) / 100.0);
  // Same seed, same audit; another seed, another one.
  EXPECT_EQ(contestedPlan({&a}, 0.2, 7).audit, plan.audit);
  EXPECT_NE(contestedPlan({&a}, 0.2, 8).audit, plan.audit);
}

// Against the definition on random verdicts: the composed accuracy is exact
// when stitching breaks no agreeing sample (no audit, breakage 0) and when the
// audit covers every agreeing sample.
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
      EXPECT_NEAR(composedAccuracy(plan, tallyContestedRun(plan, seen), audit == 0.0 ? 0.0 : 0.3), exact / static_cast<double>(n), 1e-12)
          << trial;
    }
  }
}

ContestedRun audit(size_t audited, size_t broken) { return ContestedRun{0, audited, broken}; }

TEST(ContestedAccuracy, BreakageIsShrunkTowardThePooledRateBySamplingNoiseOnly) {
  // Rates that differ no more than 13-sample audits do by chance: everyone at the pool's.
  auto noise = pooledBreakage({audit(13, 0), audit(13, 1), audit(13, 0), audit(13, 0), audit(0, 0)});
  for (double r : noise) EXPECT_DOUBLE_EQ(r, 1.0 / 52);
  // Variants that really differ keep most of their own rate.
  auto real = pooledBreakage({audit(100, 0), audit(100, 60), audit(100, 2), audit(100, 58)});
  EXPECT_LT(real[0], 0.05);
  EXPECT_GT(real[1], 0.55);
  EXPECT_LT(real[2], real[3]);
  // Nothing audited: no breakage.
  EXPECT_EQ(pooledBreakage({audit(0, 0), audit(0, 0)}), (std::vector<double>{0.0, 0.0}));
}

}  // namespace
}  // namespace zp::estimate
