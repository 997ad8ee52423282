// The latency program over a set of placements (placement_set.h): run over a
// combination it gives the least latency over the set exactly as
// TaskSpace::latencyMs computes it, whether the set is kept as a list, as
// every sequence of processors or as every sequence without a repeat; run
// over a prefix with the cheapest (dearest) work per position it bounds every
// completion's least latency from below (above).
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <random>

#include "passes/select/placement_set.h"
#include "tests/select/random_space.h"
#include "libplan/util/infinity.h"

namespace zp::select {
namespace {

std::vector<std::vector<int>> sequences(int P, int S, bool noRepeat) {
  std::vector<std::vector<int>> out;
  std::vector<int> cur(static_cast<size_t>(S), 0);
  for (;;) {
    std::vector<int> sorted = cur;
    std::sort(sorted.begin(), sorted.end());
    if (!noRepeat || std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end()) out.push_back(cur);
    size_t d = 0;
    while (d < cur.size() && ++cur[d] == P) cur[d++] = 0;
    if (d == cur.size()) return out;
  }
}

void checkSet(const TaskSpace& ts, const std::vector<std::vector<int>>& placements, std::mt19937_64& rng) {
  const int P = ts.processorCount(), S = ts.positions;
  const PlacementSet set = PlacementSet::of(placements, P, S);
  const auto& c = ts.combinations();
  std::vector<double> lowest(static_cast<size_t>(S * P), kInf), highest(static_cast<size_t>(S * P), -kInf);
  for (int j = 0; j < S; ++j)
    for (int v = 0; v < c.variants(); ++v)
      for (int p = 0; p < P; ++p) {
        lowest[static_cast<size_t>(j * P + p)] = std::min(lowest[static_cast<size_t>(j * P + p)], ts.works(j, v)[p]);
        highest[static_cast<size_t>(j * P + p)] = std::max(highest[static_cast<size_t>(j * P + p)], ts.works(j, v)[p]);
      }
  std::vector<double> states((static_cast<size_t>(S) + 1) * set.states()), scratch(2 * set.states());
  for (int trial = 0; trial < 20; ++trial) {
    const uint64_t k = rng() % c.size();
    const auto digits = c.digits(k);
    for (int j = 0; j < S; ++j)
      set.step(ts, j, digits[static_cast<size_t>(j)], states.data() + static_cast<size_t>(j) * set.states(),
               states.data() + static_cast<size_t>(j + 1) * set.states());
    double least = kInf;
    for (const auto& pl : placements) least = std::min(least, ts.latencyMs(k, pl));
    EXPECT_EQ(set.least(states.data() + static_cast<size_t>(S) * set.states()), least);
    for (int j = 0; j <= S; ++j) {
      const double* at = states.data() + static_cast<size_t>(j) * set.states();
      EXPECT_LE(set.complete(ts, j, at, lowest, scratch.data()), least);
      EXPECT_GE(set.complete(ts, j, at, highest, scratch.data()), least);
    }
  }
}

TEST(PlacementSet, LeastLatencyOverListsAndFamilies) {
  std::mt19937_64 rng(3);
  testing::SpaceOptions o;
  o.unprofiled = 0.05;
  for (auto [P, S] : {std::pair{3, 4}, std::pair{2, 3}, std::pair{3, 3}, std::pair{8, 6}, std::pair{4, 1}}) {
    StitchSpace sp = testing::randomSpace(rng, testing::Shape{1, S, 3, P}, o);
    const auto& ts = sp.tasks[0];
    checkSet(ts, sequences(P, S, false), rng);           // every sequence (a family from 3 x 4 on)
    checkSet(ts, sequences(P, S, true), rng);            // no repeat (a family for 8 x 6)
    checkSet(ts, {sequences(P, S, false).back()}, rng);  // one placement
    auto some = sequences(P, S, false);
    some.resize(std::min<size_t>(some.size(), 5));
    checkSet(ts, some, rng);
  }
}

}  // namespace
}  // namespace zp::select
