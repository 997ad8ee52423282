#include "drivers/concurrent_flow/executed_schedule.h"

#include <gtest/gtest.h>

#include "libplan/graph/model_io.h"
#include "libplan/runtime/session.h"
#include "libplan/runtime/serve/processor.h"
#include "tests/common/onnx_text.h"
#include "tests/common/processors.h"

namespace zp::drivers {
namespace {

// x -> MatMul -> Relu -> MatMul -> y, with a constant node feeding the last MatMul's bias Add.
onnx::ModelProto chain(const std::string& tag, uint32_t seed) {
  const std::string text = fmt::format(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g{0} (float[1,8] x) => (float[1,4] y)
    <float[8,8] W1 = {{{1}}}, float[8,4] W2 = {{{2}}}>
    {{
      mm1{0} = MatMul(x, W1)
      h{0} = Relu(mm1{0})
      b{0} = Constant<value = float[4] {{0.5, -0.5, 1.0, 0.0}}>()
      mm2{0} = MatMul(h{0}, W2)
      y = Add(mm2{0}, b{0})
    }}
  )",
                                       tag, testing::randomValues(64, seed), testing::randomValues(32, seed + 1));
  auto m = graph::parseModelText(text);
  EXPECT_TRUE(m.ok()) << m.error().message;
  auto& g = *m->mutable_graph();
  const char* names[] = {"first", "relu", "const", "second", "bias"};
  for (int n = 0; n < g.node_size(); ++n) g.mutable_node(n)->set_name(names[n]);
  return *m;
}

sim::Problem twoByTwo() {
  sim::Problem p;
  p.accelerators = {"cpu", "npu"};
  for (const char* name : {"a", "b"}) {
    sim::Dnn d;
    d.name = name;
    for (int k = 0; k < 2; ++k)
      d.groups.push_back(sim::GroupCost{fmt::format("g{}", k), {1.0, 2.0}, {0.0, 0.0}, {0.0, 0.0}, {0.0, 0.0}});
    p.dnns.push_back(d);
  }
  p.contention = sim::ContentionModel::none(2);
  return p;
}

std::vector<ScheduledModel> models() {
  const std::vector<std::vector<std::string>> groups{{"first", "relu"}, {"second", "bias"}};
  return {ScheduledModel{"a", chain("a", 1), groups}, ScheduledModel{"b", chain("b", 7), groups}};
}

TEST(concurrentExecutedSchedule, JoinedGraphOrdersNodesBySimulatedStartAndComputesEachModel) {
  const auto p = twoByTwo();
  const sim::Schedule s{{{0, 1}, {1, 0}}};  // a: cpu then npu; b: npu then cpu
  const auto run = sim::simulate(p, s);
  auto joined = joinScheduledModels(models(), simulatedOrder(p, s));
  ASSERT_TRUE(joined.ok()) << joined.error().message;
  std::vector<std::string> order;
  for (const auto& n : joined->model.graph().node()) order.push_back(n.name());
  // a's first group runs on cpu from 0, b's on npu from 0 to 2, so a's second
  // waits for npu until 2 and b's second starts on cpu at 2: a0 b0 a1 b1.
  std::vector<std::pair<double, std::string>> starts;
  for (size_t d = 0; d < 2; ++d)
    for (size_t k = 0; k < 2; ++k) starts.emplace_back(run.dnns[d].groups[k].start, fmt::format("{}{}", "ab"[d], k));
  std::stable_sort(starts.begin(), starts.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::string> groupOrder;
  for (const auto& name : order) {
    const std::string g = name.substr(0, 1) + (name.find("first") != std::string::npos || name.find("relu") != std::string::npos ? "0" : "1");
    if (groupOrder.empty() || groupOrder.back() != g) groupOrder.push_back(g);
  }
  std::vector<std::string> expected;
  for (const auto& [t, g] : starts) expected.push_back(g);
  EXPECT_EQ(groupOrder, expected);
  EXPECT_EQ(joined->nodeAccelerator.at("a/first"), 0);
  EXPECT_EQ(joined->nodeAccelerator.at("a/bias"), 1);
  EXPECT_EQ(joined->nodeAccelerator.at("b/first"), 1);
  EXPECT_EQ(joined->nodeAccelerator.at("b/const"), 0);  // the constant goes with its reader's group

  // The joined graph computes each model's output.
  runtime::SessionOptions o;
  auto both = runtime::Session::fromModel(joined->model, "joined", o);
  ASSERT_TRUE(both.ok()) << both.error().message;
  auto ms = models();
  runtime::TensorMap feeds;
  std::map<std::string, runtime::Tensor> want;
  for (const auto& m : ms) {
    auto alone = runtime::Session::fromModel(m.model, m.name, o);
    ASSERT_TRUE(alone.ok()) << alone.error().message;
    auto in = runtime::randomInputs(**alone, m.name == "a" ? 3 : 4);
    auto out = (*alone)->run(in);
    ASSERT_TRUE(out.ok()) << out.error().message;
    feeds.emplace(m.name + "/x", in.at("x"));
    want.emplace(m.name + "/y", out->at("y"));
  }
  auto got = (*both)->run(feeds);
  ASSERT_TRUE(got.ok()) << got.error().message;
  for (const auto& [name, w] : want) {
    const auto a = got->at(name).toF32(), b = w.toF32();
    ASSERT_EQ(a.size(), b.size());
    for (size_t k = 0; k < a.size(); ++k) EXPECT_NEAR(a[k], b[k], 1e-5) << name;
  }
}

TEST(concurrentExecutedSchedule, RunsOnPinnedProcessorsAndRejectsWhatItCannotJoin) {
  const auto p = twoByTwo();
  const sim::Schedule s{{{0, 1}, {1, 0}}};
  const auto cores = runtime::serve::availableCores();
  std::vector<Processor> procs{testing::pinned("cpu", {cores.front()}), testing::pinned("npu", {cores.back()})};
  auto done = executeSchedule(models(), simulatedOrder(p, s), procs, {1, 3, 0});
  ASSERT_TRUE(done.ok()) << done.error().message;
  EXPECT_EQ(done->wall.runs, 3);
  EXPECT_GT(done->wall.medianMs, 0);
  ASSERT_EQ(done->dnnLatencyMs.size(), 2u);
  for (double ms : done->dnnLatencyMs) EXPECT_GT(ms, 0);
  EXPECT_NEAR(done->throughput, 1000 / done->dnnLatencyMs[0] + 1000 / done->dnnLatencyMs[1], 0.5 * done->throughput);
  EXPECT_GE(done->handoffs, 2);  // a's and b's second groups read the other processor's output
  EXPECT_TRUE(done->trace.contains("traceEvents"));

  auto bad = models();
  bad[1].groupNodes[1].push_back("nonexistent");
  auto e = joinScheduledModels(bad, simulatedOrder(p, s));
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().message.find("b: a layer group names a node the model does not have"), std::string::npos)
      << e.error().message;
}

// The latest end of "<dnn>/" op spans and their earliest start, in the trace (us).
std::pair<double, double> spanOf(const Json& trace, const std::string& dnn) {
  double first = 1e300, last = -1;
  for (const auto& e : trace["traceEvents"])
    if (e.value("cat", "") == "op" && e.value("name", "").rfind(dnn + "/", 0) == 0) {
      first = std::min(first, e["ts"].get<double>());
      last = std::max(last, e["ts"].get<double>() + e["dur"].get<double>());
    }
  return {first, last};
}

TEST(concurrentExecutedSchedule, APipelineDnnStartsAfterTheOneItFollowsEndsOnEveryProcessor) {
  auto p = twoByTwo();
  p.dnns[1].deps = {0};  // b consumes a's result
  // a on cpu; b's first group on npu: no tensor orders it after a, only the pipeline.
  const sim::Schedule s{{{0, 0}, {1, 0}}};
  const auto order = simulatedOrder(p, s);
  ASSERT_EQ(order.deps, (std::vector<std::vector<int>>{{}, {0}}));
  const auto cores = runtime::serve::availableCores();
  std::vector<Processor> procs{testing::pinned("cpu", {cores.front()}), testing::pinned("npu", {cores.back()})};
  auto done = executeSchedule(models(), order, procs, {1, 3, 0});
  ASSERT_TRUE(done.ok()) << done.error().message;
  const auto [aFirst, aLast] = spanOf(done->trace, "a");
  const auto [bFirst, bLast] = spanOf(done->trace, "b");
  ASSERT_GT(aLast, 0);
  ASSERT_GT(bLast, 0);
  EXPECT_GE(bFirst, aLast);
  // b's latency counts from a's end, not from the round's start.
  EXPECT_LT(done->dnnLatencyMs[1], done->wall.medianMs + 1e-9);

  auto independent = p;
  independent.dnns[1].deps.clear();
  const auto free = simulatedOrder(independent, s);
  EXPECT_TRUE(free.deps[1].empty());
}

}  // namespace
}  // namespace zp::drivers
