#include "passes/mts/unit_placement.h"

#include <algorithm>
#include <cassert>
#include <numeric>

namespace zp::mts {
namespace {

using Costs = std::vector<std::vector<double>>;

// No placement beats the largest of the units' fastest times, nor the sum of
// the fastest times spread evenly over the processors.
double lowerBound(const Costs& c) {
  double largest = 0, sum = 0;
  for (const auto& row : c) {
    const double best = *std::min_element(row.begin(), row.end());
    largest = std::max(largest, best);
    sum += best;
  }
  return std::max(largest, sum / static_cast<double>(c.front().size()));
}

bool fewEnough(size_t units, size_t processors, uint64_t limit) {
  uint64_t n = 1;
  for (size_t u = 0; u < units; ++u) {
    if (n > limit / processors) return false;
    n *= processors;
  }
  return true;
}

// Every assignment in lexicographic order (odometer); a strictly better one replaces the best.
UnitPlacement enumerate(const Costs& c) {
  const size_t U = c.size();
  const int P = static_cast<int>(c.front().size());
  std::vector<int> at(U, 0);
  UnitPlacement best{at, makespanOf(c, at), 0, true, 1, true};
  for (;;) {
    size_t u = U;
    while (u > 0 && at[u - 1] == P - 1) at[--u] = 0;
    if (u == 0) break;
    ++at[u - 1];
    ++best.assignments;
    const double m = makespanOf(c, at);
    if (m < best.makespanMs) best.processor = at, best.makespanMs = m;
  }
  best.lowerBoundMs = best.makespanMs;
  return best;
}

// Longest (fastest time) first, each to the processor where it finishes earliest.
UnitPlacement longestFirst(const Costs& c) {
  const size_t P = c.front().size();
  std::vector<size_t> order(c.size());
  std::iota(order.begin(), order.end(), 0);
  auto fastest = [&](size_t u) { return *std::min_element(c[u].begin(), c[u].end()); };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return fastest(a) > fastest(b); });
  std::vector<double> load(P, 0);
  UnitPlacement r;
  r.processor.assign(c.size(), 0);
  for (size_t u : order) {
    size_t best = 0;
    for (size_t p = 1; p < P; ++p)
      if (load[p] + c[u][p] < load[best] + c[u][best]) best = p;
    load[best] += c[u][best];
    r.processor[u] = static_cast<int>(best);
  }
  r.makespanMs = makespanOf(c, r.processor);
  r.lowerBoundMs = std::min(lowerBound(c), r.makespanMs);
  r.optimal = r.lowerBoundMs >= r.makespanMs;
  r.assignments = 1;
  return r;
}

}  // namespace

double makespanOf(const Costs& costMs, const std::vector<int>& placement) {
  assert(placement.size() == costMs.size());
  std::vector<double> load(costMs.empty() ? 0 : costMs.front().size(), 0);
  for (size_t u = 0; u < costMs.size(); ++u) load[static_cast<size_t>(placement[u])] += costMs[u][static_cast<size_t>(placement[u])];
  return load.empty() ? 0 : *std::max_element(load.begin(), load.end());
}

UnitPlacement placeUnits(const Costs& costMs, const UnitPlacementParams& params) {
  if (costMs.empty()) return UnitPlacement{{}, 0, 0, true, 1, true};
  assert(!costMs.front().empty());
  for ([[maybe_unused]] const auto& row : costMs) assert(row.size() == costMs.front().size());
  if (fewEnough(costMs.size(), costMs.front().size(), params.maxAssignments)) return enumerate(costMs);
  return longestFirst(costMs);
}

}  // namespace zp::mts
