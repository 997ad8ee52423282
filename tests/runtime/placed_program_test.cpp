// A model's steps placed on several processors (runtime/placed_program.h), each
// processor on its own thread: outputs equal the single-session run's under every
// placement of a small branchy model, the arena is re-planned safely, and a
// failing step stops the other processors instead of leaving them waiting.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <thread>

#include "libplan/graph/model_io.h"
#include "libplan/runtime/measure.h"
#include "libplan/runtime/placed_program.h"
#include "tests/common/onnx_text.h"

namespace zp::runtime {
namespace {

using zp::testing::floatInitializer;

// Three branches from the input (two Conv+Relu, one Conv), an Add and a Concat
// joining them, a pooled graph output that a Flatten view also reads, and a Gemm.
std::string branchyText() {
  return "<ir_version: 8, opset_import: [\"\" : 13]>\n"
         "branchy (float[1,3,8,8] x) => (float[1,10] y, float[1,12,4,4] pooled)\n<" +
         floatInitializer("w1", {4, 3, 3, 3}, 0.05f) + ", " + floatInitializer("b1", {4}, 0.1f) + ", " +
         floatInitializer("w2", {4, 3, 1, 1}, 0.2f) + ", " + floatInitializer("w3", {4, 3, 3, 3}, 0.03f) + ", " +
         floatInitializer("wf", {10, 192}, 0.01f) +
         ">\n{\n"
         "  a = Conv <pads = [1, 1, 1, 1]> (x, w1, b1)\n"
         "  ar = Relu (a)\n"
         "  b = Conv (x, w2)\n"
         "  br = Relu (b)\n"
         "  c = Conv <pads = [1, 1, 1, 1]> (x, w3)\n"
         "  s = Add (ar, c)\n"
         "  cat = Concat <axis = 1> (s, br, c)\n"
         "  pooled = MaxPool <kernel_shape = [2, 2], strides = [2, 2]> (cat)\n"
         "  f = Flatten (pooled)\n"
         "  y = Gemm <transB = 1> (f, wf)\n"
         "}\n";
}

std::unique_ptr<Session> load(const std::string& text, const std::string& policy) {
  auto model = graph::parseModelText(text);
  EXPECT_TRUE(model.ok()) << model.error().message;
  SessionOptions o;
  o.kernels.policy = policy;
  auto s = Session::fromModel(*model, "branchy", o);
  EXPECT_TRUE(s.ok()) << s.error().message;
  return std::move(*s);
}

std::unique_ptr<PlacedProgram> placed(const std::string& text, const std::vector<std::string>& policies,
                                      std::vector<int> placement) {
  std::vector<std::unique_ptr<Session>> sessions;
  for (const auto& p : policies) sessions.push_back(load(text, p));
  auto prog = PlacedProgram::create(std::move(sessions), std::move(placement));
  EXPECT_TRUE(prog.ok()) << prog.error().message;
  return prog.ok() ? std::move(*prog) : nullptr;
}

// One run with a thread per processor.
Expected<TensorMap> runOnThreads(PlacedProgram& prog, const TensorMap& inputs, bool profile = false) {
  ZP_TRY(prog.start(inputs, profile));
  std::vector<std::thread> threads;
  for (int p = 0; p < prog.processors(); ++p) threads.emplace_back([&prog, p] { prog.runProcessor(p); });
  for (auto& t : threads) t.join();
  return prog.finish();
}

double maxAbsDiff(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.shape, b.shape);
  const auto x = a.toF32(), y = b.toF32();
  double d = 0;
  for (size_t i = 0; i < x.size() && i < y.size(); ++i) d = std::max(d, std::abs(double(x[i]) - double(y[i])));
  return d;
}

double maxAbs(const Tensor& a) {
  double m = 0;
  for (float v : a.toF32()) m = std::max(m, std::abs(double(v)));
  return m;
}

TEST(PlacedProgram, EveryPlacementOfABranchyModelMatchesTheSingleProcessorRun) {
  const std::string text = branchyText();
  auto single = load(text, "default");
  const auto inputs = randomInputs(*single, 3);
  auto ref = single->run(inputs);
  ASSERT_TRUE(ref.ok()) << ref.error().message;
  const size_t steps = single->nodes().size();
  ASSERT_EQ(steps, 8u) << "Relu fused into two Convs";
  int crossing = 0;
  for (uint32_t mask = 0; mask < (1u << steps); ++mask) {
    std::vector<int> placement;
    for (size_t s = 0; s < steps; ++s) placement.push_back((mask >> s) & 1);
    // Processor 1 runs other kernels (naive): results agree to rounding.
    auto prog = placed(text, {"default", "naive"}, placement);
    ASSERT_TRUE(prog);
    crossing += prog->handoffs() > 0;
    for (int run = 0; run < 2; ++run) {  // the second run uses the arena planned from the first's sizes
      auto out = runOnThreads(*prog, inputs);
      ASSERT_TRUE(out.ok()) << out.error().message;
      ASSERT_EQ(out->size(), ref->size());
      for (const auto& [name, t] : *ref)
        EXPECT_LE(maxAbsDiff(out->at(name), t), 1e-5 * std::max(1.0, maxAbs(t))) << "placement " << mask << " " << name;
    }
  }
  EXPECT_GT(crossing, 200);
}

TEST(PlacedProgram, SameKernelsOnBothProcessorsGiveBitIdenticalOutputs) {
  const std::string text = branchyText();
  auto single = load(text, "default");
  const auto inputs = randomInputs(*single, 5);
  auto ref = single->run(inputs);
  ASSERT_TRUE(ref.ok());
  for (uint32_t mask : {0x00u, 0xffu, 0x55u, 0xaau, 0x0fu, 0x96u}) {
    std::vector<int> placement;
    for (size_t s = 0; s < 8; ++s) placement.push_back((mask >> s) & 1);
    auto prog = placed(text, {"default", "default"}, placement);
    ASSERT_TRUE(prog);
    for (int run = 0; run < 3; ++run) {
      auto out = runOnThreads(*prog, inputs, run == 2);
      ASSERT_TRUE(out.ok()) << out.error().message;
      for (const auto& [name, t] : *ref) EXPECT_EQ(maxAbsDiff(out->at(name), t), 0.0) << "placement " << mask;
    }
    // The profiled run: every step timed on its processor, after the steps it reads.
    const auto& timings = prog->lastProfile();
    ASSERT_EQ(timings.size(), 8u);
    for (size_t s = 0; s < 8; ++s) {
      EXPECT_EQ(timings[s].processor, placement[s]);
      EXPECT_LE(timings[s].waitStartMs, timings[s].startMs);
    }
    EXPECT_GE(timings[3].startMs, timings[0].startMs + timings[0].durMs) << "Add reads the first Conv";
  }
}

// Each session passes its inverted residual block's values channel-blocked between
// its own pointwise and depthwise convs (Session::Builder::blockChannels). Placed, the
// ops of sessions that agree keep their blocks across processors; where a value's
// writer and reader disagree, every op goes back to planes: under every placement the
// outputs are those of one session (the same bits where both run the same kernels).
TEST(PlacedProgram, ChannelBlockedValuesStayBlockedOnlyWhereBothEndsAgree) {
  auto model = graph::parseModelText(zp::testing::invertedResidualText());
  ASSERT_TRUE(model.ok()) << model.error().message;
  auto session = [&](const std::string& policy) {
    SessionOptions o;
    o.kernels.policy = policy;
    auto s = Session::fromModel(*model, "block", o);
    EXPECT_TRUE(s.ok()) << s.error().message;
    return std::move(*s);
  };
  auto single = session("packed1x1");
  // Expansion, depthwise conv, projection with the residual Add fused.
  const size_t steps = single->nodes().size();
  ASSERT_EQ(steps, 3u);
  const auto inputs = randomInputs(*single, 3);
  auto ref = single->run(inputs);
  ASSERT_TRUE(ref.ok());
  int blockedAcross = 0;
  for (const std::string other : {"packed1x1", "im2col"})
    for (uint32_t mask = 0; mask < (1u << steps); ++mask) {
      std::vector<std::unique_ptr<Session>> sessions;
      sessions.push_back(session("packed1x1"));
      sessions.push_back(session(other));
      std::vector<int> placement;
      for (size_t s = 0; s < steps; ++s) placement.push_back((mask >> s) & 1);
      auto prog = PlacedProgram::create(std::move(sessions), placement);
      ASSERT_TRUE(prog.ok()) << prog.error().message;
      for (size_t s = 0; s + 1 < steps; ++s)
        blockedAcross += (*prog)->node(s).blockedOutput && placement[s] != placement[s + 1];
      auto out = runOnThreads(**prog, inputs);
      ASSERT_TRUE(out.ok()) << out.error().message;
      const double tolerance = other == "packed1x1" ? 0.0 : 1e-5 * maxAbs(ref->at("y"));
      EXPECT_LE(maxAbsDiff(out->at("y"), ref->at("y")), tolerance) << other << ", placement " << mask;
    }
  EXPECT_GT(blockedAcross, 0) << "sessions that both block a value pass it blocked across processors";
}

TEST(PlacedProgram, ExclusiveProcessorsTakeTurnsUnderRandomPlacements) {
  // Processor 2 shares the hardware of 0 and 1 (one processor with all cores).
  const std::string text = branchyText();
  auto single = load(text, "default");
  const auto inputs = randomInputs(*single, 9);
  auto ref = single->run(inputs);
  ASSERT_TRUE(ref.ok());
  std::mt19937 rng(4);
  for (int iter = 0; iter < 100; ++iter) {
    std::vector<int> placement;
    for (int s = 0; s < 8; ++s) placement.push_back(static_cast<int>(rng() % 3));
    std::vector<std::unique_ptr<Session>> sessions;
    for (const char* p : {"default", "naive", "default"}) sessions.push_back(load(text, p));
    PlacedProgramParams params;
    params.exclusive = {{0, 2}, {2, 1}};
    auto prog = PlacedProgram::create(std::move(sessions), placement, params);
    ASSERT_TRUE(prog.ok()) << prog.error().message;
    auto out = runOnThreads(**prog, inputs, true);
    ASSERT_TRUE(out.ok()) << out.error().message;
    for (const auto& [name, t] : *ref)
      EXPECT_LE(maxAbsDiff(out->at(name), t), 1e-5 * std::max(1.0, maxAbs(t))) << "iteration " << iter;
    const auto& tm = (*prog)->lastProfile();
    for (const auto& a : tm)
      for (const auto& b : tm)
        if (a.processor == 2 && b.processor != 2) {
          EXPECT_TRUE(a.startMs + a.durMs <= b.startMs || b.startMs + b.durMs <= a.startMs)
              << "iteration " << iter << ": steps " << a.step << " and " << b.step << " overlap";
        }
  }
  std::vector<std::unique_ptr<Session>> sessions;
  sessions.push_back(load(text, "default"));
  PlacedProgramParams params;
  params.exclusive = {{0, 0}};
  EXPECT_FALSE(PlacedProgram::create(std::move(sessions), std::vector<int>(8, 0), params).ok());
}

TEST(PlacedProgram, AProcessorSharingCoresSpinsBrieflyOneOnItsOwnCoresLonger) {
  const std::string text = branchyText();
  std::vector<std::unique_ptr<Session>> sessions;
  for (int p = 0; p < 3; ++p) sessions.push_back(load(text, "default"));
  PlacedProgramParams params;
  params.exclusive = {{0, 2}};
  params.spinUs = 3000;
  params.sharedCoreSpinUs = 50;
  auto prog = PlacedProgram::create(std::move(sessions), {0, 1, 2, 0, 1, 2, 0, 1}, params);
  ASSERT_TRUE(prog.ok()) << prog.error().message;
  EXPECT_EQ((*prog)->spinUs(0), 50);
  EXPECT_EQ((*prog)->spinUs(1), 3000);
  EXPECT_EQ((*prog)->spinUs(2), 50);
  auto two = placed(text, {"default", "naive"}, {0, 1, 0, 1, 0, 1, 0, 1});
  ASSERT_TRUE(two);
  EXPECT_EQ(two->spinUs(0), PlacedProgramParams{}.spinUs);
  EXPECT_GT(PlacedProgramParams{}.spinUs, PlacedProgramParams{}.sharedCoreSpinUs);
}

TEST(PlacedProgram, AFailingStepStopsEveryProcessorAndTheNextRunWorks) {
  // x has a dynamic size: Reshape to [2,3] fails unless it holds 6 values.
  const std::string text = "<ir_version: 8, opset_import: [\"\" : 13]>\n"
                           "fails (float[N] x) => (float[2,3] y, float[N] z)\n<int64[2] shape = {2, 3}>\n{\n"
                           "  z = Neg (x)\n  r = Reshape (x, shape)\n  y = Relu (r)\n}\n";
  auto prog = placed(text, {"default", "default"}, {0, 1, 0});
  ASSERT_TRUE(prog);
  TensorMap bad{{"x", Tensor::fromFloats({1, 2, 3, 4, 5}, {5})}};
  auto out = runOnThreads(*prog, bad);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.error().message.find("Reshape"), std::string::npos) << out.error().message;
  TensorMap good{{"x", Tensor::fromFloats({1, -2, 3, -4, 5, -6}, {6})}};
  out = runOnThreads(*prog, good);
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(out->at("y").toF32(), (std::vector<float>{1, 0, 3, 0, 5, 0}));
  EXPECT_EQ(out->at("z").toF32(), (std::vector<float>{-1, 2, -3, 4, -5, 6}));
}

TEST(PlacedProgram, BadInputsAndMismatchedSessionsAreRefused) {
  const std::string text = branchyText();
  {
    std::vector<std::unique_ptr<Session>> s;
    s.push_back(load(text, "default"));
    s.push_back(load(text, "default"));
    auto prog = PlacedProgram::create(std::move(s), {0, 1, 0});
    ASSERT_FALSE(prog.ok());
    EXPECT_NE(prog.error().message.find("the placement names 3 steps, the model runs 8"), std::string::npos)
        << prog.error().message;
  }
  {
    std::vector<std::unique_ptr<Session>> s;
    s.push_back(load(text, "default"));
    auto prog = PlacedProgram::create(std::move(s), {0, 0, 0, 0, 2, 0, 0, 0});
    ASSERT_FALSE(prog.ok());
    EXPECT_NE(prog.error().message.find("is placed on processor 2, there are 1"), std::string::npos);
  }
  {
    std::vector<std::unique_ptr<Session>> s;
    s.push_back(load(text, "default"));
    auto other = graph::parseModelText(
        "<ir_version: 8, opset_import: [\"\" : 13]>\nother (float[1,3,8,8] x) => (float[1,3,8,8] y)\n{\n  y = Relu (x)\n}\n");
    ASSERT_TRUE(other.ok());
    s.push_back(std::move(Session::fromModel(*other, "other", {})).value());
    auto prog = PlacedProgram::create(std::move(s), std::vector<int>(8, 0));
    ASSERT_FALSE(prog.ok());
    EXPECT_NE(prog.error().message.find("not the same model"), std::string::npos) << prog.error().message;
  }
  auto prog = placed(text, {"default", "default"}, std::vector<int>(8, 1));
  ASSERT_TRUE(prog);
  auto st = prog->start(TensorMap{{"x", Tensor::zeros(DType::F32, {1, 3, 8, 9})}});
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find("input 'x' has shape"), std::string::npos) << st.error().message;
}

}  // namespace
}  // namespace zp::runtime
