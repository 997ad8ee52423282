// MTS model grouping (MTS §V, Alg. 1): split T models into groups that run one
// after another, each group stitched into one graph, minimising the total
// latency while every group's memory stays within a budget.
//
// Costs are per subset of members (bit t = member t): the latency and memory of
// that subset stitched as one group, measured or predicted by the caller.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace zp::mts {

struct GroupCosts {
  int members = 0;
  std::vector<double> latency;  // [1 << members]; index 0 unused
  std::vector<double> memory;   // [1 << members]
};

struct Grouping {
  std::vector<uint32_t> groups;  // member bitmasks, ascending
  double latency = 0;            // sum of the groups' latencies, added in ascending mask order
  bool feasible = false;         // every group within the budget (false: no grouping is)
};

// Sum of the groups' latencies in ascending mask order (so that equal partitions
// give bit-identical totals whatever found them), and feasibility.
Grouping evaluate(const GroupCosts& costs, std::vector<uint32_t> groups, double budget);

// Alg. 1 lines 1-6, for members with the same structure and batch size: group
// cost depends only on its size (costs of the subsets {0..n-1} are used),
// F_n = min_j L_j + F_{n-j}. Members are assigned in index order.
Grouping groupIdentical(const GroupCosts& costs, double budget);
// Alg. 1 lines 7-12: dynamic programming over subsets,
// H_S = min(L_S, min_{S' subset of S} H_S' + H_{S \ S'}). O(3^T).
Grouping groupSubsets(const GroupCosts& costs, double budget);
// Alg. 1 lines 13-19: for G = 1..T, deal the members sorted by descending
// latency into G groups in the order G1..GG, GG..G1, ...; keep the best.
Grouping groupGreedy(const GroupCosts& costs, double budget);
// Every set partition (Bell(T) of them): the reference the others are checked against.
Grouping groupBruteForce(const GroupCosts& costs, double budget);

// "{0,2} {1}" for messages and tables.
std::string groupingText(const Grouping& g);

}  // namespace zp::mts
