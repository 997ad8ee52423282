// SparseLoom's Algorithm 1 against brute force on small random instances:
// the feasible sets, the global order (the minimum over every order of the
// mean best feasible latency), each task's pick under it, and plan-solve's
// order over several configurations. The dense latency tables the optimizer
// uses agree with the latency model they were built from.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "libplan/estimate/latency_model.h"
#include "passes/select/plan_stitch.h"
#include "passes/select/select.h"

namespace zp::select {
namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();

// T tasks of `positions` positions, V variants, P processors; random latencies,
// overheads, transitions and accuracies; candidates are every combination.
StitchSpace randomSpace(std::mt19937_64& rng, int T, int positions, int V, int P) {
  std::uniform_real_distribution<double> ms(0.5, 10.0), acc(0.5, 1.0);
  StitchSpace sp;
  std::vector<std::string> names;
  for (int p = 0; p < P; ++p) {
    names.push_back("p" + std::to_string(p));
    sp.processors.push_back({names.back(), "cpu", "host", "default", 1});
  }
  for (int t = 0; t < T; ++t) {
    TaskSpace ts;
    ts.name = "t" + std::to_string(t);
    ts.positions = positions;
    size_t total = 1;
    for (int i = 0; i < positions; ++i) total *= static_cast<size_t>(V);
    for (size_t k = 0; k < total; ++k) {
      std::vector<std::string> vs;
      size_t rest = k;
      for (int i = 0; i < positions; ++i, rest /= static_cast<size_t>(V)) vs.push_back("v" + std::to_string(rest % V));
      const bool original = std::all_of(vs.begin(), vs.end(), [&](const auto& v) { return v == vs[0]; });
      std::string id;
      for (const auto& v : vs) id += (id.empty() ? "" : "+") + v;
      ts.candidates.push_back(Candidate{id, vs, acc(rng), original ? acc(rng) : -1.0, original});
    }
    for (int pos = 0; pos < positions; ++pos)
      for (int v = 0; v < V; ++v)
        for (const auto& p : names) ts.latency.setSubgraph(pos, "v" + std::to_string(v), p, ms(rng));
    for (const auto& p : names) ts.latency.setOverhead(p, ms(rng) / 20);
    for (const auto& a : names)
      for (const auto& b : names)
        if (a != b) ts.latency.setTransition(a, b, {ms(rng) / 10, 1e-6});
    for (int pos = 0; pos + 1 < positions; ++pos) ts.boundaryBytes.push_back(4096.0 * (1 + pos));
    ts.buildDense(names);
    sp.tasks.push_back(std::move(ts));
  }
  return sp;
}

// An SLO each task can meet with some but not all candidates (mostly).
plan::SloConfiguration randomSlo(std::mt19937_64& rng, const StitchSpace& sp) {
  std::uniform_real_distribution<double> acc(0.55, 0.95), lat(4.0, 25.0);
  plan::SloConfiguration c;
  c.id = "C";
  for (const auto& t : sp.tasks) c.tasks[t.name] = plan::TaskSlo{acc(rng), lat(rng)};
  return c;
}

std::vector<std::string> prefix(const std::vector<std::string>& order, int n) {
  return std::vector<std::string>(order.begin(), order.begin() + n);
}

// Brute force of Algorithm 1 line 2: candidates meeting accuracy and latency under some order.
std::vector<int> bruteFeasible(const TaskSpace& ts, const plan::TaskSlo& slo,
                               const std::vector<std::vector<std::string>>& orders, const SelectParams& params) {
  std::vector<int> out;
  for (size_t k = 0; k < ts.candidates.size(); ++k) {
    if (decisionAccuracy(ts.candidates[k], params) < slo.accuracy) continue;
    for (const auto& o : orders)
      if (ts.latencyMs(ts.candidates[k], prefix(o, ts.positions)) <= slo.latencyMs) {
        out.push_back(static_cast<int>(k));
        break;
      }
  }
  return out;
}

// Mean over tasks with a feasible candidate of the fastest one's latency under `order`.
double meanBest(const StitchSpace& sp, const std::vector<std::vector<int>>& theta, const std::vector<std::string>& order) {
  double sum = 0;
  int n = 0;
  for (size_t t = 0; t < sp.tasks.size(); ++t) {
    if (theta[t].empty()) continue;
    double m = kInf;
    for (int k : theta[t])
      m = std::min(m, sp.tasks[t].latencyMs(sp.tasks[t].candidates[static_cast<size_t>(k)], prefix(order, sp.tasks[t].positions)));
    sum += m;
    ++n;
  }
  return n ? sum / n : 0.0;
}

TEST(selectAlgorithm1, DenseLatencyEqualsTheLatencyModelUnderEveryPlacement) {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 10; ++round) {
    StitchSpace sp = randomSpace(rng, 1, 1 + round % 3, 2 + round % 2, 2 + round % 2);
    const auto& ts = sp.tasks[0];
    const int P = static_cast<int>(sp.processors.size());
    std::vector<int> idx(static_cast<size_t>(ts.positions), 0);
    for (;;) {  // every assignment of positions to processors
      std::vector<std::string> names;
      for (int i : idx) names.push_back(sp.processors[static_cast<size_t>(i)].name);
      for (size_t k = 0; k < ts.candidates.size(); ++k)
        EXPECT_NEAR(ts.latencyMs(k, idx), ts.latencyMs(ts.candidates[k], names), 1e-9);
      size_t d = 0;
      while (d < idx.size() && ++idx[d] == P) idx[d++] = 0;
      if (d == idx.size()) break;
    }
  }
}

TEST(selectAlgorithm1, MatchesBruteForceOnRandomInstances) {
  std::mt19937_64 rng(5);
  SelectParams params;
  int withFeasible = 0, checkedPicks = 0;
  for (int round = 0; round < 60; ++round) {
    const int positions = 1 + round % 3, P = positions + round % 2;
    StitchSpace sp = randomSpace(rng, 1 + round % 3, positions, 2 + round % 2, P);
    const auto slo = randomSlo(rng, sp);
    const auto orders = globalOrders(sp);
    const auto theta = feasibleSets(sp, slo, orders, params);
    for (size_t t = 0; t < sp.tasks.size(); ++t) {
      EXPECT_EQ(theta[t], bruteFeasible(sp.tasks[t], slo.tasks.at(sp.tasks[t].name), orders, params));
      withFeasible += !theta[t].empty();
    }
    auto r = algorithm1(sp, slo, orders, params, false, "zooplan");
    double best = kInf;
    for (const auto& o : orders) best = std::min(best, meanBest(sp, theta, o));
    EXPECT_NEAR(r.meanLatencyMs, std::isfinite(best) ? best : 0.0, 1e-9) << "round " << round;
    EXPECT_NEAR(meanBest(sp, theta, r.choice.order), best, 1e-9) << "round " << round;
    EXPECT_EQ(r.ordersEvaluated, static_cast<int>(orders.size()));
    for (size_t t = 0; t < sp.tasks.size(); ++t) {
      const auto& ts = sp.tasks[t];
      const auto pl = prefix(r.choice.order, ts.positions);
      EXPECT_EQ(r.choice.placement[t], pl);
      EXPECT_EQ(r.choice.feasible[t], !theta[t].empty());
      if (theta[t].empty()) continue;
      double fastest = kInf;
      for (int k : theta[t]) fastest = std::min(fastest, ts.latencyMs(ts.candidates[static_cast<size_t>(k)], pl));
      EXPECT_NEAR(ts.latencyMs(ts.candidates[static_cast<size_t>(r.choice.candidate[t])], pl), fastest, 1e-9);
      EXPECT_NE(std::find(theta[t].begin(), theta[t].end(), r.choice.candidate[t]), theta[t].end());
      ++checkedPicks;
    }
  }
  // The instances exercise both branches: feasible tasks whose pick was checked, and infeasible ones.
  EXPECT_GT(checkedPicks, 30);
  EXPECT_GT(withFeasible, 30);
}

TEST(selectAlgorithm1, MultiConfigurationOrderIsTheBruteForceMinimum) {
  std::mt19937_64 rng(9);
  SelectParams params;
  for (int round = 0; round < 30; ++round) {
    StitchSpace sp = randomSpace(rng, 2, 2, 2, 2 + round % 2);
    std::vector<plan::SloConfiguration> slos;
    for (int c = 0; c < 3; ++c) slos.push_back(randomSlo(rng, sp));
    const auto orders = globalOrders(sp);
    std::vector<std::vector<std::vector<int>>> theta;
    for (const auto& s : slos) theta.push_back(feasibleSets(sp, s, orders, params));
    auto mean = [&](const std::vector<std::string>& o) {  // over configurations and tasks with a finite best
      double sum = 0;
      int n = 0;
      for (const auto& perTask : theta)
        for (size_t t = 0; t < sp.tasks.size(); ++t) {
          double m = kInf;
          for (int k : perTask[t])
            m = std::min(m, sp.tasks[t].latencyMs(sp.tasks[t].candidates[static_cast<size_t>(k)], prefix(o, 2)));
          if (std::isfinite(m)) sum += m, ++n;
        }
      return n ? sum / n : 0.0;
    };
    double best = kInf;
    for (const auto& o : orders) best = std::min(best, mean(o));
    const GlobalOrder g = multiConfigurationOrder(sp, orders, theta);
    EXPECT_NEAR(g.meanLatencyMs, best, 1e-9) << "round " << round;
    EXPECT_NEAR(mean(g.order), best, 1e-9) << "round " << round;
  }
}

}  // namespace
}  // namespace zp::select
