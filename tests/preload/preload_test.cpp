#include <gtest/gtest.h>

#include <random>

#include "passes/preload/preload.h"

namespace zp::preload {
namespace {

std::vector<Item> randomItems(std::mt19937& rng, int tasks, int positions, int variants) {
  std::vector<Item> items;
  for (int t = 0; t < tasks; ++t)
    for (int p = 0; p < positions; ++p)
      for (int v = 0; v < variants; ++v) {
        Item it;
        it.id = std::to_string(t) + "/" + std::to_string(p) + "/" + std::to_string(v);
        it.task = t;
        it.position = p;
        it.hotness = (rng() % 4 == 0) ? 0.0 : static_cast<double>(rng() % 1000) / 100.0;
        it.bytes = 1 + static_cast<int64_t>(rng() % 100);
        items.push_back(it);
      }
  return items;
}

TEST(Preload, ExactEqualsBruteForceOnRandomInstances) {
  std::mt19937 rng(2024);
  for (int trial = 0; trial < 200; ++trial) {
    auto items = randomItems(rng, 1 + static_cast<int>(rng() % 2), 1 + static_cast<int>(rng() % 3), 1 + static_cast<int>(rng() % 4));
    if (items.size() > 18) items.resize(18);
    int64_t total = 0;
    for (const auto& i : items) total += i.bytes;
    int64_t budget = static_cast<int64_t>(rng() % static_cast<uint64_t>(total + 1));
    auto exact = exactPreload(items, budget);
    auto brute = bruteForcePreload(items, budget);
    ASSERT_TRUE(exact.optimal);
    EXPECT_NEAR(exact.hotness, brute.hotness, 1e-9) << "trial " << trial;
    int64_t used = 0;
    for (size_t i : exact.chosen) used += items[i].bytes;
    EXPECT_LE(used, budget);
    // The greedy never beats the optimum and respects the budget.
    auto greedy = greedyPreload(items, budget);
    double g = 0;
    int64_t gb = 0;
    for (size_t i : greedy) {
      g += items[i].hotness;
      gb += items[i].bytes;
    }
    EXPECT_LE(g, exact.hotness + 1e-9);
    EXPECT_LE(gb, budget);
  }
}

TEST(Preload, GreedyIsAlgorithm2OnePerTaskAndPosition) {
  std::vector<Item> items = {
      {"a/0/x", 0, 0, 5.0, 10}, {"a/0/y", 0, 0, 3.0, 1}, {"a/1/x", 0, 1, 1.0, 1}, {"a/1/y", 0, 1, 2.0, 50}};
  // Budget 12: position 0 takes its hottest (x, 10 bytes); position 1's hottest
  // (y, 50) does not fit, so the next (x, 1) is taken. One per position.
  auto g = greedyPreload(items, 12);
  EXPECT_EQ(g, (std::vector<size_t>{0, 2}));
  auto e = exactPreload(items, 12);
  EXPECT_NEAR(e.hotness, 5.0 + 3.0 + 1.0, 1e-12);  // the exact solver may take two at one position
}

}  // namespace
}  // namespace zp::preload
