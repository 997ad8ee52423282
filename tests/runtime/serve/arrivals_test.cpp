#include <gtest/gtest.h>

#include "libplan/runtime/serve/arrivals.h"

namespace zp::runtime::serve {
namespace {

ArrivalParams twoTasks(ArrivalProcess process, uint64_t seed) {
  ArrivalParams p;
  p.tasks = {{"digits", process, 50, 10}, {"wine", process, 20, 3}};
  p.seed = seed;
  p.durationMs = 1000;
  return p;
}

TEST(Arrivals, PeriodicTimesAreMultiplesOfThePeriodAndSamplesCycle) {
  auto t = generateArrivals(twoTasks(ArrivalProcess::Periodic, 0));
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->tasks, (std::vector<std::string>{"digits", "wine"}));
  int digits = 0, wine = 0;
  for (const auto& a : t->arrivals) {
    const int k = a.task == 0 ? digits++ : wine++;
    EXPECT_DOUBLE_EQ(a.timeMs, k * (a.task == 0 ? 20.0 : 50.0));
    EXPECT_EQ(a.sample, k % (a.task == 0 ? 10 : 3));
  }
  EXPECT_EQ(digits, 50);  // [0, 1000) every 20 ms
  EXPECT_EQ(wine, 20);
  // Simultaneous arrivals keep task order.
  EXPECT_EQ(t->arrivals[0].task, 0);
  EXPECT_EQ(t->arrivals[1].task, 1);
}

TEST(Arrivals, GenerationIsDeterministicPerSeed) {
  auto a = generateArrivals(twoTasks(ArrivalProcess::Poisson, 7));
  auto b = generateArrivals(twoTasks(ArrivalProcess::Poisson, 7));
  auto c = generateArrivals(twoTasks(ArrivalProcess::Poisson, 8));
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(*a, *b);
  EXPECT_NE(*a, *c);
  for (size_t i = 1; i < a->arrivals.size(); ++i) EXPECT_LE(a->arrivals[i - 1].timeMs, a->arrivals[i].timeMs);
}

TEST(Arrivals, PoissonRateIsRoughlyTheOneAskedFor) {
  ArrivalParams p;
  p.tasks = {{"digits", ArrivalProcess::Poisson, 100, 10}};
  p.seed = 3;
  p.count = 4000;
  auto t = generateArrivals(p);
  ASSERT_TRUE(t.ok());
  ASSERT_EQ(t->arrivals.size(), 4000u);
  const double meanGapMs = t->arrivals.back().timeMs / 4000;
  EXPECT_NEAR(meanGapMs, 10.0, 0.6);  // 4000 exponential gaps: standard error 10/sqrt(4000) = 0.16 ms
}

TEST(Arrivals, AddingATaskLeavesTheOthersStreamAlone) {
  ArrivalParams one;
  one.tasks = {{"digits", ArrivalProcess::Poisson, 50, 10}};
  one.seed = 5;
  one.count = 30;
  ArrivalParams two = one;
  two.tasks.push_back({"wine", ArrivalProcess::Poisson, 50, 3});
  auto a = generateArrivals(one), b = generateArrivals(two);
  ASSERT_TRUE(a.ok() && b.ok());
  std::vector<double> fromTwo;
  for (const auto& x : b->arrivals)
    if (x.task == 0) fromTwo.push_back(x.timeMs);
  ASSERT_EQ(fromTwo.size(), a->arrivals.size());
  for (size_t i = 0; i < fromTwo.size(); ++i) EXPECT_EQ(fromTwo[i], a->arrivals[i].timeMs);
}

TEST(Arrivals, BadParametersAreRefused) {
  auto p = twoTasks(ArrivalProcess::Periodic, 0);
  p.count = 5;  // and a duration
  EXPECT_FALSE(generateArrivals(p).ok());
  p = twoTasks(ArrivalProcess::Periodic, 0);
  p.tasks[1].rateQps = -1;
  auto e = generateArrivals(p);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().message.find("wine"), std::string::npos) << e.error().message;
  p = twoTasks(ArrivalProcess::Periodic, 0);
  p.tasks[1].task = "digits";
  EXPECT_FALSE(generateArrivals(p).ok());
}

}  // namespace
}  // namespace zp::runtime::serve
