// arrivals.csv: the round trip is exact, tasks index the known list, and each
// bad file is one line naming the file, the line and the problem.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "libplan/artifacts/arrivals_csv.h"
#include "libplan/util/file.h"

namespace zp::artifacts {
namespace {

using runtime::serve::Arrival;
using runtime::serve::ArrivalParams;
using runtime::serve::ArrivalProcess;
using runtime::serve::generateArrivals;

const std::vector<KnownTask> kKnown = {{"digits", 10, ""}, {"wine", 3, "raise --samples"}};

ArrivalParams twoTasks(ArrivalProcess process, uint64_t seed) {
  ArrivalParams p;
  p.tasks = {{"digits", process, 50, 10}, {"wine", process, 20, 3}};
  p.seed = seed;
  p.durationMs = 1000;
  return p;
}

TEST(ArrivalsFile, RoundTripIsExact) {
  auto t = generateArrivals(twoTasks(ArrivalProcess::Poisson, 11));
  ASSERT_TRUE(t.ok());
  const auto dir = std::filesystem::temp_directory_path() / ("zp_arrivals_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  ASSERT_TRUE(writeArrivalsCsv(dir / "a.csv", *t).ok());
  auto back = readArrivalsCsv(dir / "a.csv", kKnown);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back, *t);
  ASSERT_TRUE(writeArrivalsCsv(dir / "b.csv", *back).ok());
  EXPECT_EQ(*readFile(dir / "a.csv"), *readFile(dir / "b.csv"));
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), {}), 2);  // no temp files left
  std::filesystem::remove_all(dir);
}

TEST(ArrivalsFile, TasksIndexTheKnownListWhateverTheFileOrder) {
  auto t = parseArrivalsCsv("time_ms,task,sample\n0,wine,2\n1.5,digits,9\n1.5,wine,0\n", "a.csv", kKnown);
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
      {"time_ms,task,sample\n0,wine,-1\n", "a.csv:2: sample -1 is outside the 3 samples of task 'wine' (raise --samples)"},
      {"time_ms,task,sample\n0,wine,1.5\n", "a.csv:2: sample '1.5' is not an integer"},
      {"time_ms,task,sample\n0,wine\n", "a.csv:2: expected 3 fields"},
      {"time_ms,task,sample\n0,wine,1,\n", "a.csv:2: expected 3 fields"},
      {"time_ms,task,sample\nx,wine,1\n", "a.csv:2: time 'x' is not a number"},
  };
  for (const auto& c : cases) {
    auto t = parseArrivalsCsv(c.text, "a.csv", kKnown);
    ASSERT_FALSE(t.ok()) << c.text;
    EXPECT_EQ(t.error().message.rfind(c.expect, 0), 0u) << t.error().message;
    EXPECT_EQ(t.error().message.find('\n'), std::string::npos);
  }
}

TEST(ArrivalsFile, MissingFileIsAnError) {
  auto t = readArrivalsCsv("/nonexistent/arrivals.csv", kKnown);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().message.find("/nonexistent/arrivals.csv"), std::string::npos);
}

}  // namespace
}  // namespace zp::artifacts
