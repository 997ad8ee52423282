// The optimizer's selections stay indices whatever the latencies: with none
// finite (unprofiled placements) or SLOs no score can compare against, every
// system still picks a candidate, and the simulator evaluates it.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "passes/select/select.h"
#include "tests/select/planted_space.h"

namespace zp::select {
namespace {

// One task of two positions over variants a and b on processors cpu and gpu;
// `ms` is every subgraph's latency, or nothing for "not profiled".
StitchSpace space(std::optional<double> ms) {
  StitchSpace sp;
  sp.processors = {{"cpu", "cpu", "host", "default", 1, {}, "onednn"}, {"gpu", "gpu", "host", "default", 1, {}, "onednn"}};
  TaskSpace ts;
  ts.name = "t";
  ts.positions = 2;
  ts.variants = {"a", "b"};
  std::vector<AccuracyEntry> entries;
  for (uint64_t k = 0; k < 4; ++k) entries.push_back(AccuracyEntry{k, 0.9, k == 0 || k == 3 ? 0.9 : -1.0});
  ts.accuracy = std::make_shared<AccuracyTable>(Combinations(2, 2), entries);
  if (ms)
    for (int pos = 0; pos < 2; ++pos)
      for (const char* v : {"a", "b"})
        for (const char* p : {"cpu", "gpu"}) ts.latency.setSubgraph(pos, v, p, *ms);
  testing::addCpuGpuTask(sp, std::move(ts));
  return sp;
}

void expectIndices(const Choice& c, const StitchSpace& sp, const std::string& what) {
  ASSERT_EQ(c.candidate.size(), sp.tasks.size()) << what;
  for (size_t t = 0; t < sp.tasks.size(); ++t) {
    EXPECT_GE(c.candidate[t], 0) << what << " " << c.system;
    EXPECT_LT(c.candidate[t], 4) << what << " " << c.system;
    EXPECT_EQ(c.placement[t].size(), 2u) << what << " " << c.system;
  }
}

TEST(Select, EverySystemPicksACandidateWhateverTheLatencies) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (std::optional<double> ms : {std::optional<double>(), std::optional<double>(1e7), std::optional<double>(0.5)}) {
    StitchSpace sp = space(ms);
    for (plan::TaskSlo slo : {plan::TaskSlo{0.99, 1e-6}, plan::TaskSlo{nan, nan}, plan::TaskSlo{0.5, 1e9}}) {
      plan::SloConfiguration cfg{"c", {{"t", slo}}};
      const std::string what = fmt::format("latency {} slo ({}, {})", ms ? *ms : -1.0, slo.accuracy, slo.latencyMs);
      SelectParams params;
      params.queriesPerTask = 3;
      auto a1 = algorithm1(sp, cfg, globalOrders(sp), params, false, "zooplan");
      expectIndices(a1.choice, sp, what);
      auto originals = algorithm1(sp, cfg, globalOrders(sp), params, true, "zooplan");
      expectIndices(originals.choice, sp, what);
      EXPECT_TRUE(sp.tasks[0].combinations().original(static_cast<uint64_t>(originals.choice.candidate[0]))) << what;
      for (const auto& b : baselineChoices(sp, cfg, params)) {
        expectIndices(b, sp, what);
        evaluate(sp, cfg, b, params);
      }
      Choice z = zooplanChoice(sp, cfg, params, nullptr, nullptr);
      expectIndices(z, sp, what);
      Outcome o = evaluate(sp, cfg, z, params);
      if (!ms) {
        EXPECT_EQ(o.violationRate, 1.0) << what;  // nothing profiled: nothing meets an SLO
      }
    }
  }
}

}  // namespace
}  // namespace zp::select
