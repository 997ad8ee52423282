// Per-node host profile of a small model: one row per executed node, keyed by
// the kernel policy, with shapes, kernel, stride, groups and sparsities.
#include <gtest/gtest.h>

#include "libplan/graph/analysis.h"
#include "libplan/graph/model_io.h"
#include "libplan/runtime/measure.h"
#include "passes/measure/node_profile.h"
#include "tests/common/onnx_text.h"

namespace zp::measure {
namespace {

// x -> Conv(3x3, stride 2, 4 -> 8) -> Relu -> depthwise Conv(3x3, group 8) -> Add(relu) -> y
std::string model() {
  return R"(<ir_version: 8, opset_import: ["" : 13]>
    g (float[1,4,16,16] x) => (float[1,8,8,8] y)
    <)" + testing::floatInitializer("w1", {8, 4, 3, 3}) + ", " + testing::floatInitializer("w2", {8, 1, 3, 3}) + R"(> {
      c1 = Conv <kernel_shape = [3, 3], pads = [1, 1, 1, 1], strides = [2, 2]> (x, w1)
      r = Relu (c1)
      c2 = Conv <kernel_shape = [3, 3], pads = [1, 1, 1, 1], group = 8> (r, w2)
      y = Add (c2, r)
    })";
}

TEST(measureNodeProfile, OneRowPerExecutedNodeWithShapesSparsityAndCacheContext) {
  auto m = graph::parseModelText(model());
  ASSERT_TRUE(m.ok()) << m.error().message;
  for (const char* policy : {"default", "im2col"}) {
    Processor config;
    config.policy = policy;
    auto session = runtime::Session::fromModel(*m, "g", sessionOptions(config));
    ASSERT_TRUE(session.ok()) << session.error().message;
    auto inputs = runtime::randomInputs(**session, 3);
    auto rows = profileNodes(*m, "g", config, inputs, MeasureParams{5, 1});
    ASSERT_TRUE(rows.ok()) << rows.error().message;
    ASSERT_EQ(rows->size(), (*session)->nodes().size());
    ASSERT_GE(rows->size(), 2u);
    for (const auto& r : *rows) {
      EXPECT_EQ(r.model, "g");
      EXPECT_EQ(r.policy, policy);
      EXPECT_GE(r.ms, 0);
      EXPECT_FALSE(r.features.opType.empty());
    }
    const auto& c1 = rows->front();
    EXPECT_EQ(c1.features.opType, "Conv");
    EXPECT_EQ(c1.features.inChannels, 4);
    EXPECT_EQ(c1.features.inH, 16);
    EXPECT_EQ(c1.features.outChannels, 8);
    EXPECT_EQ(c1.features.kernelH, 3);
    EXPECT_EQ(c1.features.stride, 2);
    EXPECT_EQ(c1.features.groups, 1);
    EXPECT_DOUBLE_EQ(c1.features.intensity, 3.0 * 3 * 4 * 8 * 8 * 8);  // SparOA Eq. 2
    EXPECT_DOUBLE_EQ(c1.features.flops, 2.0 * 3 * 3 * 4 * 8 * 8 * 8);
    EXPECT_EQ(c1.features.inputSparsity, 0);
    // With the Relu fused into it, the conv writes the Relu's output.
    if (rows->size() == 3) {
      EXPECT_GT(c1.features.outputSparsity, 0.2);
      EXPECT_EQ(c1.features.activation, "Relu");
    }
    // The depthwise conv reads the Relu's output: about half zeros.
    bool sawDepthwise = false;
    for (const auto& r : *rows)
      if (r.features.opType == "Conv" && r.features.groups == 8) {
        sawDepthwise = true;
        EXPECT_GT(r.features.inputSparsity, 0.2);
        EXPECT_LT(r.features.inputSparsity, 0.8);
        EXPECT_EQ(r.features.inH, 8);
        EXPECT_EQ(r.features.activation, "");
      }
    EXPECT_TRUE(sawDepthwise);
    // Cache context: every row knows the bytes of one run; the first conv reads the
    // graph input (a whole run between its write and the read), and with three
    // executed nodes the Add reads the Relu's output past the depthwise conv alone.
    double perRun = 0;
    for (const auto& r : *rows) perRun += r.features.bytes;
    for (const auto& r : *rows) EXPECT_DOUBLE_EQ(r.features.modelBytes, perRun);
    EXPECT_DOUBLE_EQ(c1.features.inputReuseBytes, perRun);
    if (rows->size() == 3) {
      EXPECT_EQ(rows->at(2).features.opType, "Add");
      EXPECT_DOUBLE_EQ(rows->at(2).features.inputReuseBytes, rows->at(1).features.bytes);
    }
  }
}

// The runtime fuses the Relu into the first conv and the Add into the depthwise one:
// the fused nodes write their chains' last outputs and read what the chains read.
TEST(measureNodeProfile, ExecutedNodesReadAndWriteWhatTheNodesFusedIntoThemDo) {
  auto m = graph::parseModelText(model());
  ASSERT_TRUE(m.ok()) << m.error().message;
  auto session = runtime::Session::fromModel(*m, "g", sessionOptions(Processor{}));
  ASSERT_TRUE(session.ok()) << session.error().message;
  ASSERT_EQ((*session)->nodes().size(), 2u) << "Conv+Relu, depthwise Conv+Add";
  std::set<std::string> executed;
  for (const auto& n : (*session)->nodes()) executed.insert(n.name);
  graph::GraphView view(*m);
  const auto written = executedOutputs(view, executed);
  const auto read = executedInputs(view, executed);
  ASSERT_EQ(written.size(), 2u);
  ASSERT_EQ(read.size(), 2u);
  EXPECT_EQ(written.at(0), std::vector<std::string>{"r"});
  EXPECT_EQ(written.at(2), std::vector<std::string>{"y"});
  EXPECT_EQ(read.at(0), (std::vector<std::string>{"x", "w1"}));
  EXPECT_EQ(read.at(2), (std::vector<std::string>{"r", "w2", "r"})) << "the Add's other operand";
}

}  // namespace
}  // namespace zp::measure
