// Hot-subgraph preloading (SparseLoom §3.4, Algorithm 2, hotness Eq. 7) and an
// exact solver for the same choice: the subgraph set of maximum total hotness
// within the memory budget (0/1 knapsack, branch and bound), so the greedy's
// distance from the optimum is known on every instance.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace zp::preload {

struct Item {
  std::string id;        // "task/position/variant"
  int task = 0, position = 0;
  double hotness = 0;
  int64_t bytes = 0;
};

// Algorithm 2 as printed: per task, per position, the hottest subgraph not yet
// chosen that still fits; at most one per (task, position).
std::vector<size_t> greedyPreload(const std::vector<Item>& items, int64_t budget);

struct ExactResult {
  std::vector<size_t> chosen;
  double hotness = 0;
  bool optimal = true;   // false when the node limit stopped the search
  uint64_t nodes = 0;
};
ExactResult exactPreload(const std::vector<Item>& items, int64_t budget, uint64_t nodeLimit = 50'000'000);

// Brute force over all subsets (tests; at most ~20 items).
ExactResult bruteForcePreload(const std::vector<Item>& items, int64_t budget);

}  // namespace zp::preload
