#include <gtest/gtest.h>

#include <cmath>

#include "tests/common/concurrent_brute_force.h"
#include "libplan/artifacts/contention_csv.h"
#include "libplan/sim/concurrent/contention.h"
#include "libplan/sim/concurrent/simulator.h"
#include "libplan/sim/concurrent/trace.h"

using namespace zp;
using sim::Objective;

namespace {

const char* kCsv =
    "accelerator,own_demand,external_demand,slowdown\n"
    "GPU,0,0,1\nGPU,0,100,1\nGPU,100,0,1\nGPU,100,100,2\n"
    "DLA,0,0,1\nDLA,0,100,1.5\nDLA,100,0,1\nDLA,100,100,1.5\n";

sim::GroupCost group(double gpu, double dla, double demand = 100, double out = 0, double in = 0) {
  sim::GroupCost g;
  g.name = "g";
  g.timeMs = {gpu, dla};
  g.transitionOutMs = {out, out};
  g.transitionInMs = {in, in};
  g.demand = {demand, demand};
  return g;
}

sim::Problem twoDnns() {
  sim::Problem p;
  p.accelerators = {"GPU", "DLA"};
  auto m = artifacts::parseContentionCsv(kCsv, "t.csv", p.accelerators);
  EXPECT_TRUE(m.ok());
  p.contention = *m;
  p.dnns.push_back({"a", {group(1, 2)}, {}});
  p.dnns.push_back({"b", {group(1, 2)}, {}});
  return p;
}

}  // namespace

TEST(concurrentContention, BilinearAndClamped) {
  auto m = artifacts::parseContentionCsv(kCsv, "t.csv", {"GPU", "DLA"});
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_DOUBLE_EQ(m->slowdown(0, 100, 100), 2.0);
  EXPECT_DOUBLE_EQ(m->slowdown(0, 50, 50), 1.25);
  EXPECT_DOUBLE_EQ(m->slowdown(0, 100, 300), 2.0);  // clamped
  EXPECT_DOUBLE_EQ(m->slowdown(1, 30, 50), 1.25);
  EXPECT_DOUBLE_EQ(m->scaled(0).slowdown(0, 100, 100), 1.0);
  EXPECT_DOUBLE_EQ(m->scaled(0.5).slowdown(0, 100, 100), 1.5);
}

TEST(concurrentContention, CsvErrorsNameFileAndLine) {
  std::vector<std::string> accs = {"GPU"};
  auto e1 = artifacts::parseContentionCsv("a,b\n", "soc.csv", accs);
  ASSERT_FALSE(e1.ok());
  EXPECT_NE(e1.error().message.find("soc.csv:1: header"), std::string::npos);
  auto e2 = artifacts::parseContentionCsv("accelerator,own_demand,external_demand,slowdown\nGPU,0,0,0.5\n",
                                           "soc.csv", accs);
  ASSERT_FALSE(e2.ok());
  EXPECT_NE(e2.error().message.find("soc.csv:2: slowdown"), std::string::npos);
  auto e3 = artifacts::parseContentionCsv(
      "accelerator,own_demand,external_demand,slowdown\nGPU,0,0,1\nGPU,1,1,1\n", "soc.csv", accs);
  ASSERT_FALSE(e3.ok());
  EXPECT_NE(e3.error().message.find("complete own x external grid"), std::string::npos);
  auto e4 = artifacts::parseContentionCsv("accelerator,own_demand,external_demand,slowdown\nGPU,0,0,nan\n",
                                           "soc.csv", accs);
  ASSERT_FALSE(e4.ok());
  auto e5 = artifacts::parseContentionCsv("accelerator,own_demand,external_demand,slowdown\nGPU,0,0,1\n",
                                           "soc.csv", {"GPU", "DLA"});
  ASSERT_FALSE(e5.ok());
  EXPECT_NE(e5.error().message.find("no rows for accelerator 'DLA'"), std::string::npos);
}

TEST(concurrentSimulator, ContentionIntervalsSlowBothSides) {
  auto p = twoDnns();
  // a on GPU (1 ms), b on DLA (2 ms); both demand 100: GPU slowdown 2, DLA 1.5.
  auto r = sim::simulate(p, {{{0}, {1}}});
  // Until a ends: a progresses at 1/2 -> ends at 2; b progresses 2/1.5 = 1.333 ms of work.
  EXPECT_NEAR(r.dnns[0].end, 2.0, 1e-12);
  // b then runs alone: remaining 2 - 4/3 = 2/3 -> ends at 2.6667.
  EXPECT_NEAR(r.dnns[1].end, 2.0 + 2.0 / 3.0, 1e-12);
  EXPECT_NEAR(r.latencyMs, 2.0 + 2.0 / 3.0, 1e-12);
  EXPECT_NEAR(r.throughput, 1000.0 / 2.0 + 1000.0 / (8.0 / 3.0), 1e-9);
  ASSERT_EQ(r.dnns[0].groups[0].slowed.size(), 1u);
  EXPECT_DOUBLE_EQ(r.dnns[0].groups[0].slowed[0].slowdown, 2.0);
  EXPECT_NEAR(r.dnns[1].groups[0].slowed[0].end, 2.0, 1e-12);
}

TEST(concurrentSimulator, FifoQueueOnOneAccelerator) {
  auto p = twoDnns();
  auto r = sim::simulate(p, {{{0}, {0}}});
  EXPECT_DOUBLE_EQ(r.dnns[0].groups[0].start, 0.0);  // tie: lower DNN index first
  EXPECT_DOUBLE_EQ(r.dnns[1].groups[0].start, 1.0);
  EXPECT_DOUBLE_EQ(r.latencyMs, 2.0);
  EXPECT_TRUE(r.dnns[0].groups[0].slowed.empty());  // never concurrent: no contention
}

TEST(concurrentSimulator, SegmentsHoldTheAcceleratorAndTransitionsDelay) {
  sim::Problem p = twoDnns();
  p.contention = sim::ContentionModel::none(2);
  p.dnns[0].groups = {group(1, 2, 0, 0.25, 0.5), group(1, 2, 0, 0.25, 0.5)};
  p.dnns[1].groups = {group(0.5, 1, 0)};
  // a: GPU, DLA (transition after group 0: out 0.25 + in 0.5); b: DLA.
  auto r = sim::simulate(p, {{{0, 1}, {1}}});
  EXPECT_DOUBLE_EQ(r.dnns[0].groups[1].start, 1.75);
  EXPECT_DOUBLE_EQ(r.dnns[0].end, 3.75);
  ASSERT_EQ(r.dnns[0].transitions.size(), 1u);
  EXPECT_DOUBLE_EQ(r.dnns[0].transitions[0].end, 1.75);
  // a's two GPU groups form one segment: b (GPU) cannot slip in between.
  auto r2 = sim::simulate(p, {{{0, 0}, {0}}});
  EXPECT_DOUBLE_EQ(r2.dnns[0].groups[1].start, 1.0);
  EXPECT_DOUBLE_EQ(r2.dnns[1].groups[0].start, 2.0);
}

TEST(concurrentSimulator, PipelineDependencyWaitsAndPaysTransition) {
  sim::Problem p = twoDnns();
  p.contention = sim::ContentionModel::none(2);
  p.dnns[0].groups = {group(1, 2, 0, 0.25, 0.5)};
  p.dnns[1].groups = {group(1, 2, 0, 0.25, 0.5)};
  p.dnns[1].deps = {0};
  auto r = sim::simulate(p, {{{0}, {1}}});
  EXPECT_DOUBLE_EQ(r.dnns[1].release, 1.75);
  EXPECT_DOUBLE_EQ(r.dnns[1].end, 3.75);
  EXPECT_NEAR(r.throughput, 1000.0 / 1.0 + 1000.0 / 2.0, 1e-9);
}

TEST(concurrentSimulator, TraceMarksContention) {
  auto p = twoDnns();
  auto r = sim::simulate(p, {{{0}, {1}}});
  Json t = sim::chromeTrace(p, r, "t");
  int slowed = 0, contention = 0;
  for (const auto& ev : t["traceEvents"]) {
    if (ev["ph"] != "X") continue;
    if (ev["name"].get<std::string>().find("[contention x") != std::string::npos) ++slowed;
    if (ev["cat"] == "contention") ++contention;
  }
  EXPECT_EQ(slowed, 2);
  EXPECT_EQ(contention, 2);  // one contention interval nested in each slowed group
}

TEST(concurrentSimulator, WaitingSegmentsStartInReadyOrder) {
  // GPU busy with a until 1; b becomes ready for the GPU at 0.3, c at 0.5
  // (c waited for b on the DLA): FIFO gives b the GPU first.
  sim::Problem p;
  p.accelerators = {"GPU", "DLA"};
  p.contention = sim::ContentionModel::none(2);
  auto g = [](double t) { return group(t, t, 0); };
  p.dnns.push_back({"a", {g(1.0)}, {}});
  p.dnns.push_back({"b", {g(0.3), g(1.0)}, {}});
  p.dnns.push_back({"c", {g(0.2), g(1.0)}, {}});
  auto r = sim::simulate(p, {{{0}, {1, 0}, {1, 0}}});
  EXPECT_DOUBLE_EQ(r.dnns[2].groups[0].start, 0.3);
  EXPECT_DOUBLE_EQ(r.dnns[1].groups[1].start, 1.0);
  EXPECT_DOUBLE_EQ(r.dnns[2].groups[1].start, 2.0);
}
