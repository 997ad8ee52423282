// query_summary.h, budgeted_lru.h and process_memory.h.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "libplan/util/budgeted_lru.h"
#include "libplan/util/process_memory.h"
#include "libplan/util/query_summary.h"

namespace zp {
namespace {

TEST(QuerySummary, ViolationsLatenciesAndThroughput) {
  std::vector<QueryOutcome> q = {
      {0, 4, true, 5, true},    // 4 ms: met
      {1, 8, true, 5, true},    // 7 ms: late
      {2, 9, true, 50, false},  // accuracy SLO missed
      {3, 0, false, 5, true},   // never completed
  };
  auto s = summarizeQueries(q);
  EXPECT_EQ(s.queries, 4);
  EXPECT_EQ(s.completed, 3);
  EXPECT_EQ(s.violations, 3);
  EXPECT_DOUBLE_EQ(s.violationRate, 0.75);
  EXPECT_DOUBLE_EQ(s.p50Ms, 7);
  EXPECT_DOUBLE_EQ(s.spanMs, 9);
  EXPECT_DOUBLE_EQ(s.throughputQps, 3 / 0.009);
  auto empty = summarizeQueries({});
  EXPECT_EQ(empty.queries, 0);
  EXPECT_EQ(empty.violationRate, 0);
}

TEST(BudgetedLru, EvictsLeastRecentlyUsedUnpinnedFirst) {
  BudgetedLru lru(30);
  lru.addPinned(0, 10);
  lru.insert(1, 10);
  lru.insert(2, 10);
  lru.touch(1);
  EXPECT_EQ(lru.makeRoom(10, {}), std::vector<int>{2});
  lru.insert(3, 10);
  EXPECT_EQ(lru.makeRoom(20, {}), (std::vector<int>{1, 3}));
  EXPECT_TRUE(lru.contains(0));
  EXPECT_EQ(lru.residentBytes(), 10);
  EXPECT_EQ(lru.peakBytes(), 30);
  // Nothing evictable: makeRoom stops, the caller sees it does not fit.
  lru.insert(4, 20);
  EXPECT_TRUE(lru.makeRoom(10, [](int) { return false; }).empty());
  EXPECT_FALSE(lru.fits(10));
}

TEST(BudgetedLru, MatchesANaiveModelOnRandomOperations) {
  std::mt19937 rng(1);
  for (int round = 0; round < 50; ++round) {
    BudgetedLru lru(100);
    std::vector<std::pair<int, int64_t>> model;  // unpinned, least recent first
    for (int op = 0; op < 200; ++op) {
      const int id = static_cast<int>(rng() % 10);
      const int64_t bytes = 5 + static_cast<int64_t>(rng() % 30);
      auto it = std::find_if(model.begin(), model.end(), [&](auto& m) { return m.first == id; });
      if (it != model.end()) {
        lru.touch(id);
        auto m = *it;
        model.erase(it);
        model.push_back(m);
        continue;
      }
      int64_t resident = 0;
      for (auto& m : model) resident += m.second;
      std::vector<int> expect;
      while (!model.empty() && resident + bytes > 100) {
        expect.push_back(model.front().first);
        resident -= model.front().second;
        model.erase(model.begin());
      }
      ASSERT_EQ(lru.makeRoom(bytes, {}), expect);
      lru.insert(id, bytes);
      model.push_back({id, bytes});
      ASSERT_EQ(lru.residentBytes(), resident + bytes);
    }
  }
}

TEST(ProcessMemory, PeakRssIsAtLeastWhatWasTouched) {
  resetPeakRss();
  const size_t bytes = 64 << 20;
  std::vector<char> block(bytes, 1);
  EXPECT_GE(peakRssBytes(), static_cast<int64_t>(bytes));
  EXPECT_EQ(block[bytes / 2], 1);
}

}  // namespace
}  // namespace zp
