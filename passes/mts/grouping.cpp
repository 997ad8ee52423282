#include "passes/mts/grouping.h"
#include "libplan/util/infinity.h"

#include <algorithm>
#include <cassert>
#include <functional>
#include <limits>
#include <numeric>

namespace zp::mts {

namespace {


bool fits(const GroupCosts& c, uint32_t s, double budget) { return c.memory[s] <= budget; }

// Better by latency; ties keep the first found.
void keepBest(Grouping& best, const Grouping& candidate) {
  if (candidate.feasible && (!best.feasible || candidate.latency < best.latency)) best = candidate;
}

}  // namespace

Grouping evaluate(const GroupCosts& costs, std::vector<uint32_t> groups, double budget) {
  std::sort(groups.begin(), groups.end());
  Grouping g;
  g.feasible = true;
  for (uint32_t s : groups) {
    g.latency += costs.latency[s];
    g.feasible = g.feasible && fits(costs, s, budget);
  }
  g.groups = std::move(groups);
  return g;
}

Grouping groupIdentical(const GroupCosts& costs, double budget) {
  const int T = costs.members;
  std::vector<double> F(static_cast<size_t>(T + 1), kInf);
  std::vector<int> choice(static_cast<size_t>(T + 1), 0);
  F[0] = 0;
  for (int n = 1; n <= T; ++n)
    for (int j = 1; j <= n; ++j) {
      const uint32_t first = (uint32_t{1} << j) - 1;  // a group of j members
      if (!fits(costs, first, budget) || F[static_cast<size_t>(n - j)] == kInf) continue;
      const double v = costs.latency[first] + F[static_cast<size_t>(n - j)];
      if (v < F[static_cast<size_t>(n)]) {
        F[static_cast<size_t>(n)] = v;
        choice[static_cast<size_t>(n)] = j;
      }
    }
  if (F[static_cast<size_t>(T)] == kInf) return Grouping{};
  std::vector<uint32_t> groups;
  int next = 0;
  for (int n = T; n > 0; n -= choice[static_cast<size_t>(n)]) {
    const int j = choice[static_cast<size_t>(n)];
    groups.push_back(((uint32_t{1} << j) - 1) << next);
    next += j;
  }
  return evaluate(costs, groups, budget);
}

Grouping groupSubsets(const GroupCosts& costs, double budget) {
  const uint32_t full = (uint32_t{1} << costs.members) - 1;
  std::vector<double> H(static_cast<size_t>(full) + 1, kInf);
  std::vector<uint32_t> split(static_cast<size_t>(full) + 1, 0);  // 0: S is one group
  H[0] = 0;
  for (uint32_t S = 1; S <= full; ++S) {
    if (fits(costs, S, budget)) H[S] = costs.latency[S];
    const uint32_t low = S & (~S + 1);
    for (uint32_t sub = (S - 1) & S; sub > 0; sub = (sub - 1) & S) {
      if (!(sub & low)) continue;  // each split once: the part holding S's lowest member
      const double v = H[sub] + H[S ^ sub];
      if (v < H[S]) {
        H[S] = v;
        split[S] = sub;
      }
    }
  }
  if (H[full] == kInf) return Grouping{};
  std::vector<uint32_t> groups;
  std::function<void(uint32_t)> unfold = [&](uint32_t S) {
    if (split[S] == 0) {
      groups.push_back(S);
      return;
    }
    unfold(split[S]);
    unfold(S ^ split[S]);
  };
  unfold(full);
  return evaluate(costs, groups, budget);
}

Grouping groupGreedy(const GroupCosts& costs, double budget) {
  const int T = costs.members;
  std::vector<int> order(static_cast<size_t>(T));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return costs.latency[uint32_t{1} << a] > costs.latency[uint32_t{1} << b];
  });
  Grouping best;
  for (int G = 1; G <= T; ++G) {
    std::vector<uint32_t> groups(static_cast<size_t>(G), 0);
    for (int k = 0; k < T; ++k) {
      const int round = k / G, pos = k % G;
      const int g = round % 2 == 0 ? pos : G - 1 - pos;  // G1..GG, GG..G1, ...
      groups[static_cast<size_t>(g)] |= uint32_t{1} << order[static_cast<size_t>(k)];
    }
    keepBest(best, evaluate(costs, groups, budget));
  }
  return best;
}

Grouping groupBruteForce(const GroupCosts& costs, double budget) {
  const int T = costs.members;
  Grouping best;
  std::vector<uint32_t> groups;
  std::function<void(int)> place = [&](int t) {
    if (t == T) {
      keepBest(best, evaluate(costs, groups, budget));
      return;
    }
    for (size_t g = 0; g < groups.size(); ++g) {  // by index: deeper calls push and pop groups
      groups[g] |= uint32_t{1} << t;
      place(t + 1);
      groups[g] &= ~(uint32_t{1} << t);
    }
    groups.push_back(uint32_t{1} << t);
    place(t + 1);
    groups.pop_back();
  };
  place(0);
  return best;
}

std::string groupingText(const Grouping& g) {
  if (!g.feasible) return "(infeasible)";
  std::string out;
  for (uint32_t s : g.groups) {
    out += out.empty() ? "{" : " {";
    bool first = true;
    for (int t = 0; t < 32; ++t)
      if (s & (uint32_t{1} << t)) {
        if (!first) out += ",";
        out += std::to_string(t);
        first = false;
      }
    out += "}";
  }
  return out;
}

}  // namespace zp::mts
