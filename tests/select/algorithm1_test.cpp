// SparseLoom's Algorithm 1 against its definition on small random instances:
// Θ^t listed by brute force, the global order the minimum over every order of
// the mean best feasible latency, each task's pick the fastest of Θ^t under
// it. The dense latency tables the searches use agree with the latency model
// they were built from, to the bit.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "passes/select/select.h"
#include "tests/select/random_space.h"
#include "libplan/util/infinity.h"

namespace zp::select {
namespace {
using testing::randomSlo;
using testing::randomSpace;
using testing::Shape;
using testing::SpaceOptions;

std::vector<std::string> prefix(const std::vector<std::string>& order, int n) {
  return std::vector<std::string>(order.begin(), order.begin() + n);
}

// Algorithm 1 line 2 by brute force: combinations meeting accuracy and latency under some order.
std::vector<uint64_t> bruteFeasible(const TaskSpace& ts, const plan::TaskSlo& slo,
                                    const std::vector<std::vector<std::string>>& orders, const SelectParams& params) {
  std::vector<uint64_t> out;
  for (uint64_t k : ts.validCombinations()) {
    if (decisionAccuracy(ts.candidate(k), params) < slo.accuracy) continue;
    for (const auto& o : orders)
      if (ts.latencyMs(ts.candidate(k), prefix(o, ts.positions)) <= slo.latencyMs) {
        out.push_back(k);
        break;
      }
  }
  return out;
}

// Mean over tasks with a feasible combination of the fastest one's latency under `order`.
double meanBest(const StitchSpace& sp, const std::vector<std::vector<uint64_t>>& theta, const std::vector<std::string>& order) {
  double sum = 0;
  int n = 0;
  for (size_t t = 0; t < sp.tasks.size(); ++t) {
    if (theta[t].empty()) continue;
    double m = kInf;
    for (uint64_t k : theta[t]) m = std::min(m, sp.tasks[t].latencyMs(sp.tasks[t].candidate(k), prefix(order, sp.tasks[t].positions)));
    sum += m;
    ++n;
  }
  return n ? sum / n : 0.0;
}

TEST(selectAlgorithm1, DenseLatencyEqualsTheLatencyModelUnderEveryPlacement) {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 10; ++round) {
    StitchSpace sp = randomSpace(rng, Shape{1, 1 + round % 3, 2 + round % 2, 2 + round % 2}, SpaceOptions{});
    const auto& ts = sp.tasks[0];
    const int P = static_cast<int>(sp.processors.size());
    std::vector<int> idx(static_cast<size_t>(ts.positions), 0);
    for (;;) {  // every assignment of positions to processors
      std::vector<std::string> names;
      for (int i : idx) names.push_back(sp.processors[static_cast<size_t>(i)].name);
      for (uint64_t k : ts.validCombinations()) EXPECT_EQ(ts.latencyMs(k, idx), ts.latencyMs(ts.candidate(k), names));
      size_t d = 0;
      while (d < idx.size() && ++idx[d] == P) idx[d++] = 0;
      if (d == idx.size()) break;
    }
  }
}

TEST(selectAlgorithm1, IsItsDefinitionOnRandomInstances) {
  std::mt19937_64 rng(5);
  SelectParams params;
  int withFeasible = 0, checkedPicks = 0;
  for (int round = 0; round < 60; ++round) {
    const int positions = 1 + round % 3, P = positions + round % 2;
    StitchSpace sp = randomSpace(rng, Shape{1 + round % 3, positions, 2 + round % 2, P}, SpaceOptions{});
    const auto slo = randomSlo(rng, sp, "C");
    const auto orders = globalOrders(sp);
    std::vector<std::vector<uint64_t>> theta;
    for (const auto& ts : sp.tasks) theta.push_back(bruteFeasible(ts, slo.tasks.at(ts.name), orders, params));
    auto r = algorithm1(sp, slo, orders, params, false, "zooplan");
    double best = kInf;
    for (const auto& o : orders) best = std::min(best, meanBest(sp, theta, o));
    EXPECT_EQ(r.meanLatencyMs, std::isfinite(best) ? best : 0.0) << "round " << round;
    EXPECT_EQ(meanBest(sp, theta, r.choice.order), best) << "round " << round;
    for (size_t t = 0; t < sp.tasks.size(); ++t) {
      const auto& ts = sp.tasks[t];
      const auto pl = prefix(r.choice.order, ts.positions);
      EXPECT_EQ(r.choice.placement[t], pl);
      withFeasible += !theta[t].empty();
      if (!r.choice.feasible[t]) continue;
      double fastest = kInf;
      for (uint64_t k : theta[t]) fastest = std::min(fastest, ts.latencyMs(ts.candidate(k), pl));
      const uint64_t pick = static_cast<uint64_t>(r.choice.candidate[t]);
      EXPECT_EQ(ts.latencyMs(ts.candidate(pick), pl), fastest);
      EXPECT_NE(std::find(theta[t].begin(), theta[t].end(), pick), theta[t].end());
      ++checkedPicks;
    }
  }
  EXPECT_GT(checkedPicks, 30);
  EXPECT_GT(withFeasible, 30);
}

}  // namespace
}  // namespace zp::select
