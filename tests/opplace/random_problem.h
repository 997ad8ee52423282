// Seeded random placement problems and a brute-force optimum for the tests.
#pragma once
#include <cstdint>
#include <random>

#include <fmt/format.h>

#include "passes/opplace/problem.h"

namespace zp::opplace::testing {

// n nodes, k processors; chain: edges i -> i+1 only; otherwise each node gets
// 0-2 predecessors (branches and joins). sharedCores (k >= 3): the last
// processor occupies the cores of processors 0 and 1 (one processor with all cores).
inline Problem randomProblem(int n, int k, uint64_t seed, bool chain, bool sharedCores = false) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> cost(0.1, 5.0), bytes(0, 4e5), unit(0, 1);
  Problem p;
  for (int q = 0; q < k; ++q) p.processors.push_back(fmt::format("p{}", q));
  for (int v = 0; v < n; ++v) {
    p.nodes.push_back(OpNode{fmt::format("n{}", v), "Conv", unit(rng), cost(rng) * 1e6});
    std::vector<double> row;
    for (int q = 0; q < k; ++q) row.push_back(cost(rng));
    p.ms.push_back(row);
    if (v == 0) continue;
    if (chain) {
      p.edges.push_back(OpEdge{v - 1, v, bytes(rng)});
      continue;
    }
    std::uniform_int_distribution<int> pick(0, v - 1);
    const int preds = unit(rng) < 0.2 ? 0 : (unit(rng) < 0.7 ? 1 : 2);
    int last = -1;
    for (int i = 0; i < preds; ++i) {
      int u = pick(rng);
      if (u == last) continue;
      p.edges.push_back(OpEdge{u, v, bytes(rng)});
      last = u;
    }
  }
  p.handoff.assign(static_cast<size_t>(k), std::vector<estimate::TransitionCost>(static_cast<size_t>(k)));
  for (auto& row : p.handoff)
    for (auto& h : row) h = estimate::TransitionCost{unit(rng) * 0.5, unit(rng) * 5e-6};
  if (sharedCores && k >= 3) {
    for (int q = 0; q + 1 < k; ++q) p.cores.push_back({q});
    p.cores.push_back({0, 1});
  }
  return p;
}

struct BruteForce {
  double latencyMs = 0;
  Assignment assignment;
};

inline BruteForce bruteForce(const Problem& p) {
  const size_t n = p.nodes.size(), k = p.processors.size();
  Assignment a(n, 0);
  BruteForce best{latencyOf(p, a), a};
  while (true) {
    size_t i = 0;
    while (i < n && ++a[i] == static_cast<int>(k)) a[i++] = 0;
    if (i == n) break;
    double l = latencyOf(p, a);
    if (l < best.latencyMs) best = {l, a};
  }
  return best;
}

}  // namespace zp::opplace::testing
