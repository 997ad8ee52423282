#include <gtest/gtest.h>

#include <filesystem>

#include "libplan/runtime/serve/arrivals.h"
#include "libplan/runtime/serve/arrivals_file.h"
#include "libplan/util/file.h"

namespace zp::runtime::serve {
namespace {

const std::vector<KnownTask> kKnown = {{"digits", 10}, {"wine", 3}};

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
  EXPECT_EQ(arrivalsToCsv(*a), arrivalsToCsv(*b));
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

TEST(ArrivalsFile, RoundTripIsExact) {
  auto t = generateArrivals(twoTasks(ArrivalProcess::Poisson, 11));
  ASSERT_TRUE(t.ok());
  const auto dir = std::filesystem::temp_directory_path() / ("zp_arrivals_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  ASSERT_TRUE(writeArrivals(dir / "a.csv", *t).ok());
  auto back = readArrivals(dir / "a.csv", kKnown);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back, *t);
  ASSERT_TRUE(writeArrivals(dir / "b.csv", *back).ok());
  EXPECT_EQ(*readFile(dir / "a.csv"), *readFile(dir / "b.csv"));
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), {}), 2);  // no temp files left
  std::filesystem::remove_all(dir);
}

TEST(ArrivalsFile, TasksIndexTheKnownListWhateverTheFileOrder) {
  auto t = parseArrivals("time_ms,task,sample\n0,wine,2\n1.5,digits,9\n1.5,wine,0\n", "a.csv", kKnown);
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->tasks, (std::vector<std::string>{"digits", "wine"}));
  EXPECT_EQ(t->arrivals, (std::vector<Arrival>{{0, 1, 2}, {1.5, 0, 9}, {1.5, 1, 0}}));
}

// Each bad file gives one line naming the file, the line and the problem.
TEST(ArrivalsFile, BadInputNamesFileAndLine) {
  struct Case {
    std::string text, expect;
  };
  const std::vector<Case> cases = {
      {"", "a.csv: empty file"},
      {"time,task,sample\n", "a.csv:1: expected the header"},
      {"time_ms,task,sample\n", "a.csv: no arrivals"},
      {"time_ms,task,sample\n0,digits,0\n1,cats,0\n", "a.csv:3: task 'cats' is not known (known: digits, wine)"},
      {"time_ms,task,sample\n-1,digits,0\n", "a.csv:2: time -1 is negative"},
      {"time_ms,task,sample\nnan,digits,0\n", "a.csv:2: time nan is not a finite number"},
      {"time_ms,task,sample\ninf,digits,0\n", "a.csv:2: time inf is not a finite number"},
      {"time_ms,task,sample\n1e999,digits,0\n", "a.csv:2: time '1e999' is not a number"},
      {"time_ms,task,sample\n5,digits,0\n4,digits,1\n", "a.csv:3: time 4 is before the previous line's 5"},
      {"time_ms,task,sample\n0,digits,10\n", "a.csv:2: sample 10 is outside the 10 samples of task 'digits'"},
      {"time_ms,task,sample\n0,wine,-1\n", "a.csv:2: sample -1 is outside the 3 samples of task 'wine'"},
      {"time_ms,task,sample\n0,wine,1.5\n", "a.csv:2: sample '1.5' is not an integer"},
      {"time_ms,task,sample\n0,wine\n", "a.csv:2: expected 3 fields"},
      {"time_ms,task,sample\n0,wine,1,\n", "a.csv:2: expected 3 fields"},
      {"time_ms,task,sample\nx,wine,1\n", "a.csv:2: time 'x' is not a number"},
  };
  for (const auto& c : cases) {
    auto t = parseArrivals(c.text, "a.csv", kKnown);
    ASSERT_FALSE(t.ok()) << c.text;
    EXPECT_EQ(t.error().message.rfind(c.expect, 0), 0u) << t.error().message;
    EXPECT_EQ(t.error().message.find('\n'), std::string::npos);
  }
}

TEST(ArrivalsFile, MissingFileIsAnError) {
  auto t = readArrivals("/nonexistent/arrivals.csv", kKnown);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().message.find("/nonexistent/arrivals.csv"), std::string::npos);
}

}  // namespace
}  // namespace zp::runtime::serve
