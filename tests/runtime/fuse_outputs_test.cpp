// The fusion rewrite keeps outputs: the Before model run unfused, the After model
// (graph::fuseModel) and the Before model fused by the session agree on random inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "tests/common/onnx_text.h"
#include "libplan/graph/model_io.h"
#include "libplan/graph/rewrite/fuse.h"
#include "libplan/runtime/session.h"
#include "tests/runtime/test_util.h"

namespace zp::runtime {
namespace {

using test_util::relErr;

using zp::testing::randomValues;

std::unique_ptr<Session> session(const onnx::ModelProto& m, bool fuse, const std::string& policy = "default") {
  SessionOptions o;
  o.foldBatchNorm = fuse;
  o.fuseActivations = fuse;
  o.kernels.policy = policy;
  auto s = Session::fromModel(m, "model", o);
  EXPECT_TRUE(s.ok()) << s.error().message;
  return s.ok() ? std::move(*s) : nullptr;
}

// Conv-BN-Relu, Conv(bias)-BN-Clip, Gemm-Clip and MatMul-Relu in one model.
onnx::ModelProto beforeModel() {
  auto m = graph::parseModelText(fmt::format(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2,3,7,7] x) => (float[2,5] y, float[2,4] z)
    <float[8,3,3,3] W1 = {{{}}}, float[8] s1 = {{{}}}, float[8] b1 = {{{}}}, float[8] m1 = {{{}}}, float[8] v1 = {{{}}},
     float[8,8,1,1] W2 = {{{}}}, float[8] B2 = {{{}}}, float[8] s2 = {{{}}}, float[8] b2 = {{{}}}, float[8] m2 = {{{}}},
     float[8] v2 = {{{}}}, float lo = {{-0.25}}, float hi = {{0.75}},
     float[5,8] Wg = {{{}}}, float[5] Cg = {{{}}}, float[8,4] Wm = {{{}}}>
    {{
      c1 = Conv <pads=[1,1,1,1], strides=[2,2]> (x, W1)
      n1 = BatchNormalization <epsilon=0.001> (c1, s1, b1, m1, v1)
      r1 = Relu (n1)
      c2 = Conv (r1, W2, B2)
      n2 = BatchNormalization (c2, s2, b2, m2, v2)
      r2 = Clip (n2, lo, hi)
      p = GlobalAveragePool (r2)
      f = Flatten (p)
      g1 = Gemm <transB=1> (f, Wg, Cg)
      y = Clip (g1, lo, hi)
      mm = MatMul (f, Wm)
      z = Relu (mm)
    }}
  )",
      randomValues(216, 1), randomValues(8, 2, 0.5f, 1.5f), randomValues(8, 3), randomValues(8, 4), randomValues(8, 5, 0.5f, 1.5f), randomValues(64, 6),
      randomValues(8, 7), randomValues(8, 8, 0.5f, 1.5f), randomValues(8, 9), randomValues(8, 10), randomValues(8, 11, 0.5f, 1.5f), randomValues(40, 12),
      randomValues(5, 13), randomValues(32, 14)));
  EXPECT_TRUE(m.ok()) << m.error().message;
  return m.ok() ? *m : onnx::ModelProto{};
}

// Under each kernel policy and on each seed's input x: the After model (run unfused)
// and the Before model fused by the session have `nodes` nodes each and compute the
// outputs as the unfused Before model does.
void expectFusionKeepsOutputs(const onnx::ModelProto& before, const onnx::ModelProto& after, size_t nodes,
                              const std::vector<std::string>& policies, const std::vector<uint64_t>& seeds,
                              const std::vector<std::string>& outputs) {
  for (const std::string& policy : policies) {
    auto reference = session(before, false, policy);
    auto fusedModel = session(after, false, policy);
    auto fusedBySession = session(before, true, policy);
    ASSERT_TRUE(reference && fusedModel && fusedBySession);
    EXPECT_EQ(fusedModel->nodes().size(), nodes) << policy;
    EXPECT_EQ(fusedBySession->nodes().size(), nodes) << policy;
    for (uint64_t seed : seeds) {
      TensorMap in = {{"x", randomInput(reference->inputs()[0], seed)}};
      auto a = reference->run(in);
      auto b = fusedModel->run(in);
      auto c = fusedBySession->run(in);
      ASSERT_TRUE(a.ok() && b.ok() && c.ok());
      for (const std::string& out : outputs) {
        EXPECT_LE(relErr(b->at(out), a->at(out)), 1e-5) << policy << " " << out;
        // The session fuses exactly as the rewrite does: the same ops, the same bytes.
        ASSERT_EQ(b->at(out).bytes(), c->at(out).bytes());
        EXPECT_EQ(std::memcmp(b->at(out).data, c->at(out).data, b->at(out).bytes()), 0) << policy << " " << out;
      }
    }
  }
}

TEST(FuseOutputs, TheFusedModelComputesWhatTheUnfusedOneDoes) {
  const onnx::ModelProto before = beforeModel();
  const onnx::ModelProto after = graph::fuseModel(before);
  ASSERT_EQ(after.graph().node_size(), 6) << "Conv+BN+Relu, Conv+BN+Clip, Gemm+Clip, MatMul+Relu, pool, flatten";
  expectFusionKeepsOutputs(before, after, 6, {"default", "naive", "im2col", "winograd", "sparse"}, {1, 2, 3},
                           {"y", "z"});
}

// SiLU and HardSwish after Convs, BatchNormalization+Relu on its own, Pad+AveragePool,
// a decomposed LayerNormalization, and MatMul+bias+Gelu.
onnx::ModelProto activationModel() {
  auto m = graph::parseModelText(fmt::format(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,3,9,9] x) => (float[1,9,9,6] y)
    <float[8,3,3,3] W1 = {{{}}}, float[8,1,5,5] W2 = {{{}}}, float[8] s = {{{}}}, float[8] b = {{{}}}, float[8] m = {{{}}},
     float[8] v = {{{}}}, int64[8] pads = {{0, 0, 1, 1, 0, 0, 1, 1}}, float two = {{2.0}}, float eps = {{0.00001}},
     float[8] g = {{{}}}, float[8] beta = {{{}}}, float[8,6] Wm = {{{}}}, float[6] bm = {{{}}}, float r2 = {{1.4142135}},
     float one = {{1.0}}, float half = {{0.5}}>
    {{
      c1 = Conv <pads=[1,1,1,1]> (x, W1)
      s1 = Sigmoid (c1)
      a1 = Mul (c1, s1)
      c2 = Conv <pads=[2,2,2,2], group=8> (a1, W2)
      h2 = HardSigmoid <alpha=0.1666667> (c2)
      a2 = Mul (c2, h2)
      n3 = BatchNormalization (a2, s, b, m, v)
      r3 = Relu (n3)
      q = Pad (r3, pads)
      p = AveragePool <kernel_shape=[3,3]> (q)
      t = Transpose <perm=[0,2,3,1]> (p)
      mu = ReduceMean <axes=[-1]> (t)
      d = Sub (t, mu)
      dp = Pow (d, two)
      var = ReduceMean <axes=[-1]> (dp)
      ve = Add (var, eps)
      sd = Sqrt (ve)
      nd = Div (d, sd)
      ng = Mul (nd, g)
      ln = Add (ng, beta)
      mm = MatMul (ln, Wm)
      ab = Add (bm, mm)
      gd = Div (ab, r2)
      ge = Erf (gd)
      gp = Add (ge, one)
      gq = Mul (ab, gp)
      y = Mul (gq, half)
    }}
  )",
      randomValues(216, 21), randomValues(200, 22), randomValues(8, 23, 0.5f, 1.5f), randomValues(8, 24), randomValues(8, 25), randomValues(8, 26, 0.5f, 1.5f),
      randomValues(8, 27, 0.5f, 1.5f), randomValues(8, 28), randomValues(48, 29), randomValues(6, 30)));
  EXPECT_TRUE(m.ok()) << m.error().message;
  return m.ok() ? *m : onnx::ModelProto{};
}

TEST(FuseOutputs, ActivationFunctionsLayerNormalizationAndPaddedPoolsComputeWhatTheUnfusedOnesDo) {
  const onnx::ModelProto before = activationModel();
  const onnx::ModelProto after = graph::fuseModel(before);
  ASSERT_EQ(after.graph().node_size(), 7) << "Conv+Silu, Conv+HardSwish, BN+Relu, pool, transpose, LN, MatMul+bias+Gelu";
  expectFusionKeepsOutputs(before, after, 7, {"default", "naive", "im2col", "sparse"}, {1, 2}, {"y"});
}

// Residual ends: Conv, then the skip added and Relu'd; a Conv's output added to the
// value it read and Clip'd; an Add whose sum is read twice (left alone). Both Convs
// take their Add and its clamp (the skip is written before them).
onnx::ModelProto residualModel() {
  auto m = graph::parseModelText(fmt::format(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2,8,6,6] x) => (float[2,8,6,6] y)
    <float[8,8,3,3] W1 = {{{}}}, float[8,8,1,1] W2 = {{{}}}, float lo = {{-0.5}}, float hi = {{0.5}}>
    {{
      c1 = Conv <pads=[1,1,1,1]> (x, W1)
      s1 = Add (c1, x)
      r1 = Relu (s1)
      c2 = Conv (r1, W2)
      s2 = Add (r1, c2)
      r2 = Clip (s2, lo, hi)
      s3 = Add (r2, x)
      r3 = Relu (s3)
      y = Mul (r3, s3)
    }}
  )", randomValues(576, 41), randomValues(64, 42)));
  EXPECT_TRUE(m.ok()) << m.error().message;
  return m.ok() ? *m : onnx::ModelProto{};
}

TEST(FuseOutputs, AddsWithTheirReluOrClipComputeWhatTheUnfusedOnesDo) {
  const onnx::ModelProto before = residualModel();
  const onnx::ModelProto after = graph::fuseModel(before);
  ASSERT_EQ(after.graph().node_size(), 5) << "Conv+Add+Relu, Conv+Add+Clip, Add, Relu, Mul";
  EXPECT_EQ(after.graph().node(0).input_size(), graph::kFusedResidualInput + 1);
  EXPECT_EQ(after.graph().node(0).input(graph::kFusedResidualInput), "x");
  EXPECT_EQ(after.graph().node(1).input(graph::kFusedResidualInput), "r1");
  // The GEMM's epilogue adds the residual (im2col), the other kernels a pass after theirs.
  expectFusionKeepsOutputs(before, after, 5, {"default", "naive", "im2col", "winograd", "direct", "packed1x1"}, {1, 2},
                           {"y"});
}

// MobileNetV2's block: the projection reads the depthwise conv's output channel-blocked
// and takes the residual Add in planes.
TEST(FuseOutputs, AProjectionReadingBlocksTakesItsResidual) {
  auto before = graph::parseModelText(zp::testing::invertedResidualText());
  ASSERT_TRUE(before.ok()) << before.error().message;
  const onnx::ModelProto after = graph::fuseModel(*before);
  ASSERT_EQ(after.graph().node_size(), 3) << "expansion+Clip, depthwise+Clip, projection+Add";
  expectFusionKeepsOutputs(*before, after, 3, {"default", "packed1x1", "im2col"}, {1, 2}, {"y"});
}

TEST(FuseOutputs, AFusedNodeTheRuntimeCannotCarryOutIsAnErrorNamingIt) {
  auto m = graph::parseModelText(R"(
    <ir_version: 8, opset_import: ["" : 13, "ai.zooplan" : 1]>
    g (float[2,4] x, float[3,4] W) => (float[2,3] y)
    { y = ai.zooplan.Gemm <transB=1, activation="Relu"> (x, W) }
  )", {false, false});
  ASSERT_TRUE(m.ok()) << m.error().message;
  auto s = Session::fromModel(*m, "m.onnx", {});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, "m.onnx: node 'Gemm_0' (Gemm): a fused Gemm needs a constant matrix B");
  auto elu = graph::parseModelText(R"(
    <ir_version: 8, opset_import: ["" : 13, "ai.zooplan" : 1]>
    g (float[2,4] x) => (float[2,3] y)
    <float[3,4] W = {1,2,3,4,5,6,7,8,9,10,11,12}>
    { y = ai.zooplan.Gemm <transB=1, activation="Elu"> (x, W) }
  )", {false, false});
  ASSERT_TRUE(elu.ok()) << elu.error().message;
  auto s2 = Session::fromModel(*elu, "m.onnx", {});
  ASSERT_FALSE(s2.ok());
  EXPECT_EQ(s2.error().message, "m.onnx: node 'Gemm_0' (Gemm): fused activation 'Elu' is not supported");
  auto other = graph::parseModelText(R"(
    <ir_version: 8, opset_import: ["" : 13, "ai.zooplan" : 1]>
    g (float[2,4] x) => (float[2,4] y)
    { y = ai.zooplan.Relu (x) }
  )", {false, false});
  ASSERT_TRUE(other.ok());
  auto s3 = Session::fromModel(*other, "m.onnx", {});
  ASSERT_FALSE(s3.ok());
  EXPECT_EQ(s3.error().message, "m.onnx: node 'Relu_0': operator 'ai.zooplan::Relu' is not supported");
  // A residual with a function, or of another shape than the output.
  auto residual = [](const std::string& rShape, const std::string& activation) {
    auto m = graph::parseModelText(fmt::format(R"(
      <ir_version: 8, opset_import: ["" : 13, "ai.zooplan" : 1]>
      g (float[1,2,3,3] x, float{} r) => (float[1,2,3,3] y)
      <float[2,2,1,1] W = {{1, 2, 3, 4}}>
      {{ y = ai.zooplan.Conv <activation="{}"> (x, W, , , , , , r) }}
    )", rShape, activation), {false, false});
    EXPECT_TRUE(m.ok()) << m.error().message;
    return Session::fromModel(*m, "m.onnx", {});
  };
  auto sigmoid = residual("[1,2,3,3]", "Sigmoid");
  ASSERT_FALSE(sigmoid.ok());
  EXPECT_EQ(sigmoid.error().message, "m.onnx: node 'Conv_0' (Conv): a fused Conv with a residual takes Relu or Clip, not Sigmoid");
  auto wide = residual("[1,2,1,3]", "Relu");
  ASSERT_TRUE(wide.ok()) << wide.error().message;
  TensorMap in = {{"x", randomInput((*wide)->inputs()[0], 1)}, {"r", randomInput((*wide)->inputs()[1], 2)}};
  auto run = (*wide)->run(in);
  ASSERT_FALSE(run.ok());
  EXPECT_NE(run.error().message.find("the residual added to the Conv's output [1,2,3,3] is float32 [1,2,1,3]"),
            std::string::npos)
      << run.error().message;
}

}  // namespace
}  // namespace zp::runtime
