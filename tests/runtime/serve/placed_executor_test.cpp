// A placed model on pinned workers (serve/placed_executor.h): outputs equal the
// single-session run's, the two branches of a model run at the same time on two
// cores, processors that are not on this machine are refused, and the trace has
// one track per processor.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "libplan/graph/model_io.h"
#include "libplan/runtime/serve/placed_executor.h"
#include "tests/common/onnx_text.h"

namespace zp::runtime::serve {
namespace {

// Two MatMul+Relu chains from x (weights A and B) joined by an Add: steps
// A0..A3, B0..B3 in that order, then the Add.
std::string twoBranchText() {
  std::string body;
  for (const char* br : {"A", "B"}) {
    std::string prev = "x";
    for (int d = 0; d < 4; ++d) {
      const std::string h = std::string(br) + std::to_string(d);
      body += "  " + h + "m = MatMul (" + prev + ", W" + br + ")\n  " + h + " = Relu (" + h + "m)\n";
      prev = h;
    }
  }
  body += "  y = Add (A3, B3)\n";
  return "<ir_version: 8, opset_import: [\"\" : 13]>\ntwo (float[320,320] x) => (float[320,320] y)\n<" +
         zp::testing::floatInitializer("WA", {320, 320}, 0.006f) + ", " +
         zp::testing::floatInitializer("WB", {320, 320}, 0.007f) + ">\n{\n" + body + "}\n";
}

std::unique_ptr<Session> load(const std::string& text, const Processor& p) {
  auto model = graph::parseModelText(text);
  EXPECT_TRUE(model.ok()) << model.error().message;
  auto s = Session::fromModel(*model, "two", sessionOptions(p));
  EXPECT_TRUE(s.ok()) << s.error().message;
  return std::move(*s);
}

// Two processors on two cores (when there are two), with different GEMM libraries
// (results differ by rounding) but kernels of the same speed class, so that the
// two branches take about as long.
std::vector<Processor> hostProcessors() {
  const auto cores = availableCores();
  const int second = cores.size() > 1 ? cores[1] : cores[0];
  return {Processor{"cpu", "cpu", "host", "default", 1, {cores[0]}, "onednn"},
          Processor{"npu", "npu", "host", "default", 1, {second}, "blis"}};
}

// The model as one plain session on a processor: what a placed run is checked against.
struct Reference {
  std::unique_ptr<Session> session;
  TensorMap inputs, outputs;
};

// Fatal when the reference run fails: call under ASSERT_NO_FATAL_FAILURE.
void runReference(const std::string& text, const Processor& p, uint64_t seed, Reference& r) {
  r.session = load(text, p);
  r.inputs = randomInputs(*r.session, seed);
  auto out = r.session->run(r.inputs);
  ASSERT_TRUE(out.ok()) << out.error().message;
  r.outputs = std::move(*out);
  ASSERT_EQ(r.outputs.count("y"), 1u) << "the reference run has no output y";
}

// The largest difference of output y from the reference's, relative to the
// reference's largest magnitude (at least 1).
double relativeDiff(const TensorMap& got, const TensorMap& want) {
  const auto y = got.at("y").toF32(), r = want.at("y").toF32();
  EXPECT_EQ(y.size(), r.size());
  double scale = 1, diff = 0;
  for (size_t i = 0; i < std::min(y.size(), r.size()); ++i) {
    scale = std::max(scale, double(std::abs(r[i])));
    diff = std::max(diff, double(std::abs(y[i] - r[i])));
  }
  return diff / scale;
}

Expected<std::unique_ptr<PlacedExecutor>> startPlaced(const std::string& text, std::vector<Processor> procs,
                                                      std::vector<int> placement) {
  std::vector<std::unique_ptr<Session>> sessions;
  for (const auto& p : procs) sessions.push_back(load(text, p));
  ZP_ASSIGN_OR_RETURN(auto prog, PlacedProgram::create(std::move(sessions), std::move(placement)));
  return PlacedExecutor::start(std::move(prog), std::move(procs));
}

TEST(PlacedExecutor, BranchesOnTwoCoresMatchTheSingleProcessorRunAndOverlap) {
  const std::string text = twoBranchText();
  const auto procs = hostProcessors();
  Reference ref;
  ASSERT_NO_FATAL_FAILURE(runReference(text, procs[0], 1, ref));
  const TensorMap& inputs = ref.inputs;
  const std::vector<int> placement = {0, 0, 0, 0, 1, 1, 1, 1, 0};
  auto exec = startPlaced(text, procs, placement);
  ASSERT_TRUE(exec.ok()) << exec.error().message;
  EXPECT_EQ((*exec)->program().handoffs(), 1) << "the Add reads B3 from the other processor";
  double wallMs = 0;
  auto out = (*exec)->run(inputs, true, &wallMs);
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_GT(wallMs, 0);
  EXPECT_LE(relativeDiff(*out, ref.outputs), 1e-5);

  const auto& t = (*exec)->program().lastProfile();
  ASSERT_EQ(t.size(), 9u);
  for (size_t s = 0; s < t.size(); ++s) EXPECT_EQ(t[s].processor, placement[s]);
  if (availableCores().size() > 1) {
    // Warm runs first (the GEMM libraries start on their first product); then the
    // branches run at the same time in at least one run within a few seconds
    // (another test or process may hold the second core for many runs on this
    // shared host, so a count of runs is not enough).
    bool overlapped = false;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    for (int run = 0; !overlapped && (run < 8 || std::chrono::steady_clock::now() < deadline); ++run) {
      ASSERT_TRUE((*exec)->run(inputs, true).ok());
      const auto& u = (*exec)->program().lastProfile();
      const double aEnd = u[3].startMs + u[3].durMs, bEnd = u[7].startMs + u[7].durMs;
      overlapped = u[4].startMs < aEnd && u[0].startMs < bEnd;
    }
    EXPECT_TRUE(overlapped) << "branch B never ran while branch A did";
  }
  EXPECT_GE(t[8].startMs, t[7].startMs + t[7].durMs) << "the Add waits for B3";

  const Json trace = placedRunTrace((*exec)->program(), procs, "two");
  int named = 0, ops = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name") ++named;
    if (e["ph"] == "X" && e["cat"] == "op") ++ops;
  }
  EXPECT_EQ(named, 2);
  EXPECT_EQ(ops, 9);

  auto stats = (*exec)->measure(inputs, 1, 5);
  ASSERT_TRUE(stats.ok()) << stats.error().message;
  EXPECT_EQ(stats->runs, 5);
  EXPECT_GT(stats->medianMs, 0);
  auto alone = measureOnProcessor(*ref.session, procs[0], inputs, 1, 3);
  ASSERT_TRUE(alone.ok()) << alone.error().message;
  EXPECT_EQ(alone->runs, 3);
}

TEST(PlacedExecutor, OneProcessorRunsAsItsPlainSessionAndStillProfilesPerStep) {
  const std::string text = twoBranchText();
  const auto procs = hostProcessors();
  Reference ref;
  ASSERT_NO_FATAL_FAILURE(runReference(text, procs[1], 4, ref));
  const TensorMap& inputs = ref.inputs;
  auto exec = startPlaced(text, procs, std::vector<int>(9, 1));
  ASSERT_TRUE(exec.ok()) << exec.error().message;
  EXPECT_EQ((*exec)->program().soleProcessor(), 1);
  for (bool profile : {false, true, false}) {
    auto out = (*exec)->run(inputs, profile);
    ASSERT_TRUE(out.ok()) << out.error().message;
    // The same session kind as the reference (npu's): the same numbers, bit for bit.
    EXPECT_EQ(out->at("y").toF32(), ref.outputs.at("y").toF32());
  }
  EXPECT_EQ((*exec)->program().lastProfile().size(), 9u);  // the profiled run went step by step
  auto mixed = startPlaced(text, procs, {0, 0, 0, 0, 1, 1, 1, 1, 0});
  ASSERT_TRUE(mixed.ok());
  EXPECT_EQ((*mixed)->program().soleProcessor(), -1);
}

TEST(PlacedExecutor, AProcessorWithAllCoresTakesTurnsWithTheSingleCoreOnes) {
  const auto cores = availableCores();
  if (cores.size() < 2) GTEST_SKIP() << "needs two cores";
  const std::string text = twoBranchText();
  auto procs = hostProcessors();
  procs.push_back(Processor{"all", "cpu", "host", "default", 2, {cores[0], cores[1]}, "onednn"});
  Reference ref;
  ASSERT_NO_FATAL_FAILURE(runReference(text, procs[0], 2, ref));
  const TensorMap& inputs = ref.inputs;
  // Branch A's first half on cpu, its second on all; branch B on npu then all; the Add on all.
  const std::vector<int> placement = {0, 0, 2, 2, 1, 1, 2, 2, 2};
  auto program = [&](std::vector<std::pair<int, int>> exclusive) {
    std::vector<std::unique_ptr<Session>> sessions;
    for (const auto& p : procs) sessions.push_back(load(text, p));
    PlacedProgramParams params;
    params.exclusive = std::move(exclusive);
    return std::move(PlacedProgram::create(std::move(sessions), placement, params)).value();
  };
  auto refused = PlacedExecutor::start(program({}), procs);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("processors 'cpu' and 'all' share cores"), std::string::npos)
      << refused.error().message;
  EXPECT_EQ(sharedCorePairs(procs), (std::vector<std::pair<int, int>>{{0, 2}, {1, 2}}));
  auto exec = PlacedExecutor::start(program(sharedCorePairs(procs)), procs);
  ASSERT_TRUE(exec.ok()) << exec.error().message;
  for (int run = 0; run < 5; ++run) {
    auto out = (*exec)->run(inputs, true);
    ASSERT_TRUE(out.ok()) << out.error().message;
    EXPECT_LE(relativeDiff(*out, ref.outputs), 1e-5);
    // No step on "all" overlaps a step on cpu or npu.
    const auto& t = (*exec)->program().lastProfile();
    for (const auto& a : t)
      for (const auto& b : t)
        if (a.processor == 2 && b.processor != 2) {
          EXPECT_TRUE(a.startMs + a.durMs <= b.startMs + 1e-6 || b.startMs + b.durMs <= a.startMs + 1e-6)
              << "steps " << a.step << " and " << b.step;
        }
  }
}

TEST(PlacedExecutor, ProcessorsNotOnThisMachineAreRefused) {
  const std::string text = twoBranchText();
  auto procs = hostProcessors();
  const int missing = availableCores().back() + 1;
  procs[1].cores = {missing};
  // Refused even though no step is placed on it: the plan names it.
  auto exec = startPlaced(text, procs, std::vector<int>(9, 0));
  ASSERT_FALSE(exec.ok());
  EXPECT_EQ(exec.error().message.rfind("processor 'npu': core " + std::to_string(missing) + " is not on this machine", 0),
            0u)
      << exec.error().message;
  auto programOnHost = [&] {
    std::vector<std::unique_ptr<Session>> sessions;
    for (const auto& p : hostProcessors()) sessions.push_back(load(text, p));
    return std::move(PlacedProgram::create(std::move(sessions), std::vector<int>(9, 0))).value();
  };
  procs = hostProcessors();
  procs[0].policy = "fastest";  // the session was built with a known policy; the processor names another
  exec = PlacedExecutor::start(programOnHost(), procs);
  ASSERT_FALSE(exec.ok());
  EXPECT_NE(exec.error().message.find("unknown kernel policy 'fastest'"), std::string::npos);
  procs = hostProcessors();
  procs.push_back(procs[0]);
  exec = PlacedExecutor::start(programOnHost(), procs);
  ASSERT_FALSE(exec.ok());
  EXPECT_NE(exec.error().message.find("3 processors described for a program on 2"), std::string::npos);
}

}  // namespace
}  // namespace zp::runtime::serve
