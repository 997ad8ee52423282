// Fusion into heavy nodes: each test writes the Before graph and the Expected
// nodes as ONNX text and compares the rewritten nodes with them.
#include <gtest/gtest.h>

#include <sstream>

#include <onnx/defs/printer.h>

#include "libplan/graph/analysis.h"
#include "libplan/graph/model_io.h"
#include "libplan/graph/rewrite/fuse.h"

namespace zp::graph {
namespace {

// "outs = domain.Op<attrs>(ins)": what a node computes, without its name.
std::string nodeText(const onnx::NodeProto& n) {
  std::ostringstream os;
  for (int i = 0; i < n.output_size(); ++i) os << (i ? ", " : "") << n.output(i);
  os << " = " << (n.domain().empty() ? "" : n.domain() + ".") << n.op_type();
  if (n.attribute_size() > 0) os << n.attribute();
  os << "(";
  for (int i = 0; i < n.input_size(); ++i) os << (i ? ", " : "") << n.input(i);
  os << ")";
  return os.str();
}

std::string nodesText(const onnx::GraphProto& g) {
  std::string s;
  for (const auto& n : g.node()) s += nodeText(n) + "\n";
  return s;
}

// The model a test starts from: header, graph signature, initializers, then the body.
onnx::ModelProto model(const std::string& signature, const std::string& initializers, const std::string& body) {
  const std::string text = "<ir_version: 8, opset_import: [\"\" : 13]>\n" + signature + "\n<" + initializers +
                           ">\n{\n" + body + "\n}\n";
  auto m = parseModelText(text);
  EXPECT_TRUE(m.ok()) << m.error().message << "\n" << text;
  return m.ok() ? *m : onnx::ModelProto{};
}

// The expected nodes, written as a graph body (fused nodes in the ai.zooplan domain).
std::string expected(const std::string& signature, const std::string& body) {
  const std::string text = "<ir_version: 8, opset_import: [\"\" : 13, \"ai.zooplan\" : 1]>\n" + signature + "\n{\n" +
                           body + "\n}\n";
  LoadOptions raw;
  raw.check = false;
  raw.inferShapes = false;
  auto m = parseModelText(text, raw);
  EXPECT_TRUE(m.ok()) << m.error().message << "\n" << text;
  return m.ok() ? nodesText(m->graph()) : "";
}

std::string fusedText(const onnx::ModelProto& m, const FuseOptions& options = {}) {
  return nodesText(fuseModel(m, options).graph());
}

const char* kConvSig = "g (float[1,2,5,5] x) => (float[1,3,5,5] y)";
const char* kConvInits =
    "float[3,2,3,3] W = {1,0,1,0,1,0,1,0,1, 0,1,0,1,0,1,0,1,0, 1,1,1,1,1,1,1,1,1, 0,0,0,0,1,0,0,0,0, "
    "1,0,0,0,1,0,0,0,1, 0,0,1,0,1,0,1,0,0}, float[3] B = {0.1, 0.2, 0.3}, "
    "float[3] s = {1.0, 0.5, 2.0}, float[3] b = {0.0, 0.1, -0.1}, float[3] m = {0.2, 0.0, 0.1}, float[3] v = {1.0, 2.0, 0.5}";

TEST(Fuse, ConvBatchNormReluBecomeOneNodeCarryingTheNormalizationAndActivation) {
  auto before = model(kConvSig, kConvInits, R"(
    c = Conv <pads=[1,1,1,1]> (x, W)
    n = BatchNormalization <epsilon=0.001> (c, s, b, m, v)
    y = Relu (n))");
  EXPECT_EQ(fusedText(before), expected(kConvSig, R"(
    y = ai.zooplan.Conv <pads=[1,1,1,1], bn_epsilon=0.001, activation="Relu"> (x, W, , s, b, m, v))"));
  // With a bias the normalization's parameters follow it.
  auto biased = model(kConvSig, kConvInits, R"(
    c = Conv <pads=[1,1,1,1]> (x, W, B)
    y = BatchNormalization (c, s, b, m, v))");
  EXPECT_EQ(fusedText(biased), expected(kConvSig, R"(
    y = ai.zooplan.Conv <pads=[1,1,1,1], bn_epsilon=0.00001> (x, W, B, s, b, m, v))"));
}

TEST(Fuse, GemmAndMatMulWithAConstantMatrixTakeReluOrClip) {
  const char* sig = "g (float[2,4] x) => (float[2,3] y, float[2,3] z)";
  const char* inits = "float[3,4] W = {1,2,3,4,5,6,7,8,9,10,11,12}, float[3] C = {1,2,3}, "
                      "float[4,3] K = {1,0,0,0,1,0,0,0,1,1,1,1}, float lo = {0.5}, float hi = {6.0}";
  auto before = model(sig, inits, R"(
    h = Gemm <transB=1> (x, W, C)
    y = Clip (h, lo, hi)
    k = MatMul (x, K)
    z = Relu (k))");
  EXPECT_EQ(fusedText(before), expected(sig, R"(
    y = ai.zooplan.Gemm <transB=1, activation="Clip", activation_min=0.5, activation_max=6.0> (x, W, C)
    z = ai.zooplan.MatMul <activation="Relu"> (x, K))"));
  // Clip with only a lower bound (opset 11 inputs are optional).
  auto lower = model(sig, inits, R"(
    h = Gemm <transB=1> (x, W, C)
    y = Clip (h, lo)
    z = MatMul (x, K))");
  const std::string got = fusedText(lower);
  EXPECT_NE(got.find("activation_min = 0.5"), std::string::npos) << got;
  EXPECT_NE(got.find("activation_max = inf"), std::string::npos) << got;
}

TEST(Fuse, NothingFusesAcrossATensorWithAnotherUseOrThatIsAGraphOutput) {
  const char* sig = "g (float[1,2,5,5] x) => (float[1,3,5,5] y, float[1,3,5,5] c)";
  auto output = model(sig, kConvInits, R"(
    c = Conv <pads=[1,1,1,1]> (x, W)
    y = Relu (c))");
  EXPECT_EQ(fusedText(output), nodesText(output.graph()));
  auto twoUses = model(kConvSig, kConvInits, R"(
    c = Conv <pads=[1,1,1,1]> (x, W)
    r = Relu (c)
    y = Add (r, c))");
  EXPECT_EQ(fusedText(twoUses), nodesText(twoUses.graph()));
  auto sameTwice = model(kConvSig, kConvInits, R"(
    c = Conv <pads=[1,1,1,1]> (x, W)
    y = Mul (c, c))");
  EXPECT_EQ(fusedText(sameTwice), nodesText(sameTwice.graph()));
}

TEST(Fuse, AddTakesTheReluOrClipAfterItAndNothingElse) {
  const char* sig = "g (float[2,3] x, float[2,3] r) => (float[2,3] y, float[2,3] z)";
  const char* inits = "float lo = {0.5}, float hi = {6.0}";
  auto before = model(sig, inits, R"(
    s = Add (x, r)
    y = Relu (s)
    t = Add (r, x)
    z = Clip (t, lo, hi))");
  EXPECT_EQ(fusedText(before), expected(sig, R"(
    y = ai.zooplan.Add <activation="Relu"> (x, r)
    z = ai.zooplan.Add <activation="Clip", activation_min=0.5, activation_max=6.0> (r, x))"));
  // Not a function (the runtime clamps the sum), not a sum read twice.
  auto unfused = model(sig, inits, R"(
    s = Add (x, r)
    y = Sigmoid (s)
    t = Add (r, x)
    u = Relu (t)
    z = Mul (u, t))");
  EXPECT_EQ(fusedText(unfused), nodesText(unfused.graph()));
  FuseOptions off;
  off.activations = false;
  EXPECT_EQ(fusedText(before, off), nodesText(before.graph()));
}

TEST(Fuse, NothingFusesWhenWeightsOrParametersAreNotConstantsOfTheRightShape) {
  // BatchNormalization's scale is a graph input: it stays on its own (and takes the Relu).
  const char* inputSig = "g (float[1,2,5,5] x, float[3] s2) => (float[1,3,5,5] y)";
  auto inputScale = model(inputSig, kConvInits, R"(
    c = Conv <pads=[1,1,1,1]> (x, W)
    n = BatchNormalization (c, s2, b, m, v)
    y = Relu (n))");
  EXPECT_EQ(fusedText(inputScale), expected(inputSig, R"(
    c = Conv <pads=[1,1,1,1]> (x, W)
    y = ai.zooplan.BatchNormalization <activation="Relu"> (c, s2, b, m, v))"));
  // Parameters of 2 values for 3 channels.
  auto wrongSize = model(kConvSig, std::string(kConvInits) + ", float[2] s3 = {1.0, 1.0}", R"(
    c = Conv <pads=[1,1,1,1]> (x, W)
    n = BatchNormalization (c, s3, b, m, v)
    y = Relu (n))");
  EXPECT_EQ(fusedText(wrongSize), expected(kConvSig, R"(
    c = Conv <pads=[1,1,1,1]> (x, W)
    y = ai.zooplan.BatchNormalization <activation="Relu"> (c, s3, b, m, v))"));
  // The Conv's weight is a graph input.
  auto inputWeight = model("g (float[1,2,5,5] x, float[3,2,3,3] W2) => (float[1,3,5,5] y)", kConvInits, R"(
    c = Conv <pads=[1,1,1,1]> (x, W2)
    y = Relu (c))");
  EXPECT_EQ(fusedText(inputWeight), nodesText(inputWeight.graph()));
  // A Gemm whose C is a full [2,3] matrix, and a MatMul with a rank-3 constant.
  auto gemmC = model("g (float[2,4] x, float[1,2,4] x3) => (float[2,3] y, float[1,2,3] z)",
                     "float[3,4] W = {1,2,3,4,5,6,7,8,9,10,11,12}, float[2,3] C = {1,2,3,4,5,6}, "
                     "float[1,4,3] K = {1,0,0,0,1,0,0,0,1,1,1,1}", R"(
    h = Gemm <transB=1> (x, W, C)
    y = Relu (h)
    k = MatMul (x3, K)
    z = Relu (k))");
  EXPECT_EQ(fusedText(gemmC), nodesText(gemmC.graph()));
  // Clip's bound is a graph input.
  auto clipInput = model("g (float[1,2,5,5] x, float hi) => (float[1,3,5,5] y)", kConvInits, R"(
    c = Conv <pads=[1,1,1,1]> (x, W)
    y = Clip (c, , hi))");
  EXPECT_EQ(fusedText(clipInput), nodesText(clipInput.graph()));
}

TEST(Fuse, GatedActivationsSiluAndHardSwishAndSingleNodeActivations) {
  const char* sig = "g (float[1,2,5,5] x) => (float[1,3,5,5] y, float[1,3,5,5] z, float[1,3,5,5] u, float[1,3,5,5] t)";
  auto before = model(sig, kConvInits, R"(
    c1 = Conv <pads=[1,1,1,1]> (x, W)
    s1 = Sigmoid (c1)
    y = Mul (c1, s1)
    c2 = Conv <pads=[1,1,1,1]> (x, W, B)
    h2 = HardSigmoid <alpha=0.1666667> (c2)
    z = Mul (h2, c2)
    c3 = Conv <pads=[1,1,1,1]> (x, W)
    u = Sigmoid (c3)
    c4 = Conv <pads=[1,1,1,1]> (x, W)
    t = Tanh (c4))");
  EXPECT_EQ(fusedText(before), expected(sig, R"(
    y = ai.zooplan.Conv <pads=[1,1,1,1], activation="Silu"> (x, W)
    z = ai.zooplan.Conv <pads=[1,1,1,1], activation="HardSwish", activation_alpha=0.1666667, activation_beta=0.5> (x, W, B)
    u = ai.zooplan.Conv <pads=[1,1,1,1], activation="Sigmoid"> (x, W)
    t = ai.zooplan.Conv <pads=[1,1,1,1], activation="Tanh"> (x, W))"));
  // A gate on another tensor (squeeze-excitation) is no activation of the Conv: only the
  // Sigmoid fuses.
  const char* seSig = "g (float[1,2,5,5] x, float[1,3,5,5] g) => (float[1,3,5,5] y)";
  auto gate = model(seSig, kConvInits, R"(
    c = Conv <pads=[1,1,1,1]> (x, W)
    gs = Sigmoid (c)
    y = Mul (g, gs))");
  EXPECT_EQ(fusedText(gate), expected(seSig, R"(
    gs = ai.zooplan.Conv <pads=[1,1,1,1], activation="Sigmoid"> (x, W)
    y = Mul (g, gs))"));
}

TEST(Fuse, MatMulTakesAConstantBiasVectorAndGelu) {
  const char* sig = "g (float[2,4] x) => (float[2,3] y, float[2,3] z)";
  const char* inits = "float[4,3] K = {1,0,0,0,1,0,0,0,1,1,1,1}, float[3,4] Wt = {1,2,3,4,5,6,7,8,9,10,11,12}, "
                      "float[3] b = {0.1, 0.2, 0.3}, float r2 = {1.4142135}, float one = {1.0}, float half = {0.5}";
  auto before = model(sig, inits, R"(
    m = MatMul (x, K)
    a = Add (b, m)
    d = Div (a, r2)
    e = Erf (d)
    p = Add (e, one)
    q = Mul (a, p)
    y = Mul (q, half)
    g = Gemm <transB=1> (x, Wt)
    z = Add (g, b))");
  EXPECT_EQ(fusedText(before), expected(sig, R"(
    y = ai.zooplan.MatMul <activation="Gelu"> (x, K, b)
    z = ai.zooplan.Gemm <transB=1> (x, Wt, b))"));
  // 0.4 instead of 0.5 is no Gelu (the bias still fuses), and a [1,3] bias is not a vector.
  auto notGelu = model(sig, std::string(inits) + ", float[1,3] b2 = {1,2,3}, float fourTenths = {0.4}", R"(
    m = MatMul (x, K)
    a = Add (b, m)
    d = Div (a, r2)
    e = Erf (d)
    p = Add (e, one)
    q = Mul (a, p)
    y = Mul (q, fourTenths)
    g = MatMul (x, K)
    z = Add (g, b2))");
  EXPECT_EQ(fusedText(notGelu), expected(sig, R"(
    a = ai.zooplan.MatMul (x, K, b)
    d = Div (a, r2)
    e = Erf (d)
    p = Add (e, one)
    q = Mul (a, p)
    y = Mul (q, fourTenths)
    g = MatMul (x, K)
    z = Add (g, b2))"));
}

TEST(Fuse, DecomposedLayerNormalizationOverTheLastAxisBecomesOneNode) {
  const char* sig = "g (float[1,4,3] x) => (float[1,4,3] y)";
  const char* inits = "float two = {2.0}, float eps = {0.000001}, float[3] s = {1.0, 0.5, 2.0}, float[3] b = {0.0, 0.1, -0.1}";
  const char* body = R"(
    m = ReduceMean <axes=[-1]> (x)
    d = Sub (x, m)
    p = Pow (d, two)
    v = ReduceMean <axes=[-1]> (p)
    e = Add (v, eps)
    r = Sqrt (e)
    n = Div (d, r)
    o = Mul (n, s)
    y = Add (o, b))";
  auto before = model(sig, inits, body);
  EXPECT_EQ(fusedText(before), expected(sig, R"(
    y = ai.zooplan.LayerNormalization <axis=-1, epsilon=0.000001> (x, s, b))"));
  // Over axis 1 it is no LayerNormalization over the last axis.
  std::string axis1 = body;
  for (size_t at; (at = axis1.find("axes=[-1]")) != std::string::npos;) axis1.replace(at, 9, "axes=[1]");
  auto other = model(sig, inits, axis1);
  EXPECT_EQ(fusedText(other), nodesText(other.graph()));
  FuseOptions off;
  off.layerNorm = false;
  EXPECT_EQ(fusedText(before, off), nodesText(before.graph()));
}

TEST(Fuse, ZeroPadBeforeAveragePoolBecomesThePoolsOwnPadding) {
  const char* sig = "g (float[1,2,5,5] x) => (float[1,2,5,5] y)";
  const char* inits = "int64[8] p = {0, 0, 1, 1, 0, 0, 1, 1}, int64[8] pc = {0, 1, 1, 1, 0, 0, 1, 1}, float nz = {1.0}";
  auto before = model(sig, inits, R"(
    q = Pad (x, p)
    y = AveragePool <kernel_shape=[3,3]> (q))");
  EXPECT_EQ(fusedText(before), expected(sig, R"(
    y = AveragePool <kernel_shape=[3,3], pads=[1,1,1,1], count_include_pad=1> (x))"));
  // Padding the channel axis, or with another value than zero, stays.
  auto channel = model("g (float[1,2,5,5] x) => (float[1,3,5,5] y)", inits, R"(
    q = Pad (x, pc)
    y = AveragePool <kernel_shape=[3,3]> (q))");
  EXPECT_EQ(fusedText(channel), nodesText(channel.graph()));
  auto ones = model(sig, inits, R"(
    q = Pad (x, p, nz)
    y = AveragePool <kernel_shape=[3,3]> (q))");
  EXPECT_EQ(fusedText(ones), nodesText(ones.graph()));
}

TEST(Fuse, ConvTakesAnAddOfAValueWrittenBeforeItAndTheClampAfter) {
  const char* sig = "g (float[1,2,5,5] x, float[1,3,5,5] r, float[1,3,1,1] q) => (float[1,3,5,5] y)";
  auto before = model(sig, kConvInits, R"(
    c = Conv <pads=[1,1,1,1]> (x, W, B)
    n = BatchNormalization (c, s, b, m, v)
    a = Add (r, n)
    y = Relu (a))");
  EXPECT_EQ(fusedText(before), expected(sig, R"(
    y = ai.zooplan.Conv <pads=[1,1,1,1], bn_epsilon=0.00001, activation="Relu"> (x, W, B, s, b, m, v, r))"));
  // Of two Convs added, the later one takes the Add: the earlier one's output is
  // written before it runs.
  auto twoConvs = model(sig, kConvInits, R"(
    c1 = Conv <pads=[1,1,1,1]> (x, W)
    c2 = Conv <pads=[1,1,1,1]> (x, W, B)
    y = Add (c1, c2))");
  EXPECT_EQ(fusedText(twoConvs), expected(sig, R"(
    c1 = Conv <pads=[1,1,1,1]> (x, W)
    y = ai.zooplan.Conv <pads=[1,1,1,1]> (x, W, B, , , , , c1))"));
  // Not a broadcast Add, not a constant, not without the shapes; a function stays apart.
  auto broadcast = model(sig, kConvInits, R"(
    c = Conv <pads=[1,1,1,1]> (x, W)
    y = Add (c, q))");
  EXPECT_EQ(fusedText(broadcast), nodesText(broadcast.graph()));
  std::string seventyFive = "0";
  for (int k = 1; k < 75; ++k) seventyFive += ", 0";
  auto constant = model(sig, std::string(kConvInits) + ", float[1,3,5,5] k = {" + seventyFive + "}", R"(
    c = Conv <pads=[1,1,1,1]> (x, W)
    y = Add (c, k))");
  EXPECT_EQ(fusedText(constant), nodesText(constant.graph()));
  auto sigmoid = model(sig, kConvInits, R"(
    c = Conv <pads=[1,1,1,1]> (x, W)
    a = Add (c, r)
    y = Sigmoid (a))");
  EXPECT_EQ(fusedText(sigmoid), expected(sig, R"(
    a = ai.zooplan.Conv <pads=[1,1,1,1]> (x, W, , , , , , r)
    y = Sigmoid (a))"));
  const auto graphOrder = [&] {
    std::vector<int> all(static_cast<size_t>(before.graph().node_size()));
    for (size_t k = 0; k < all.size(); ++k) all[k] = static_cast<int>(k);
    return all;
  }();
  EXPECT_EQ(nodesText(fuseIntoHeavyNodes(before.graph(), graphOrder, initializerConstants(before.graph())).graph),
            expected(sig, R"(
    n = ai.zooplan.Conv <pads=[1,1,1,1], bn_epsilon=0.00001> (x, W, B, s, b, m, v)
    y = ai.zooplan.Add <activation="Relu"> (r, n))"))
      << "without shapes the Add stays";
  // A symbolic batch: the same name on both sides fuses, another name might broadcast.
  const char* symbolic = "g (float[N,2,5,5] x, float[N,3,5,5] r, float[B,3,5,5] q) => (float[N,3,5,5] y, float[N,3,5,5] z)";
  auto batch = model(symbolic, kConvInits, R"(
    c = Conv <pads=[1,1,1,1]> (x, W)
    y = Add (c, r)
    d = Conv <pads=[1,1,1,1]> (x, W)
    z = Add (d, q))");
  EXPECT_EQ(fusedText(batch), expected(symbolic, R"(
    y = ai.zooplan.Conv <pads=[1,1,1,1]> (x, W, , , , , , r)
    d = Conv <pads=[1,1,1,1]> (x, W)
    z = Add (d, q))"));
  FuseOptions off;
  off.residual = false;
  EXPECT_EQ(fusedText(before, off), expected(sig, R"(
    n = ai.zooplan.Conv <pads=[1,1,1,1], bn_epsilon=0.00001> (x, W, B, s, b, m, v)
    y = ai.zooplan.Add <activation="Relu"> (r, n))"));
}

TEST(Fuse, OptionsTurnEachFusionOff) {
  auto before = model(kConvSig, kConvInits, R"(
    c = Conv <pads=[1,1,1,1]> (x, W)
    n = BatchNormalization (c, s, b, m, v)
    y = Relu (n))");
  FuseOptions noBn;
  noBn.batchNorm = false;
  EXPECT_EQ(fusedText(before, noBn), expected(kConvSig, R"(
    c = Conv <pads=[1,1,1,1]> (x, W)
    y = ai.zooplan.BatchNormalization <activation="Relu"> (c, s, b, m, v))"))
      << "Relu follows the BatchNormalization, not the Conv";
  noBn.activations = false;
  EXPECT_EQ(fusedText(before, noBn), nodesText(before.graph()));
  FuseOptions noActivation;
  noActivation.activations = false;
  EXPECT_EQ(fusedText(before, noActivation), expected(kConvSig, R"(
    n = ai.zooplan.Conv <pads=[1,1,1,1], bn_epsilon=0.00001> (x, W, , s, b, m, v)
    y = Relu (n))"));
}

TEST(Fuse, FusedNodesKeepTheAnchorsNameAndSayWhichNodeTheyStandFor) {
  auto before = model(kConvSig, kConvInits, R"(
    a = Relu (x)
    c = Conv <pads=[1,1,1,1]> (a, W)
    n = BatchNormalization (c, s, b, m, v)
    y = Relu (n))");
  GraphView view(before);
  const FusedNodes f = fuseIntoHeavyNodes(before.graph(), view.topoOrder(), initializerConstants(before.graph()));
  ASSERT_EQ(f.graph.node_size(), 2);
  EXPECT_EQ(f.source, (std::vector<int>{0, 1}));
  EXPECT_EQ(f.graph.node(1).name(), before.graph().node(1).name());
  // Only the nodes asked for are considered (here: those constant folding would leave).
  const FusedNodes part = fuseIntoHeavyNodes(before.graph(), {1, 2}, initializerConstants(before.graph()));
  ASSERT_EQ(part.graph.node_size(), 1);
  EXPECT_EQ(part.source, (std::vector<int>{1}));
  EXPECT_EQ(part.graph.node(0).output(0), "n");
}

TEST(Fuse, FuseModelImportsTheDomainKeepsTheRestAndIsIdempotent) {
  auto before = model(kConvSig, kConvInits, R"(
    c = Conv <pads=[1,1,1,1]> (x, W)
    y = Relu (c))");
  const onnx::ModelProto after = fuseModel(before);
  EXPECT_EQ(after.graph().initializer_size(), before.graph().initializer_size());
  EXPECT_EQ(after.graph().value_info_size(), before.graph().value_info_size());
  EXPECT_EQ(after.graph().output(0).name(), "y");
  int imports = 0;
  for (const auto& o : after.opset_import()) imports += o.domain() == kFusedDomain;
  EXPECT_EQ(imports, 1);
  const onnx::ModelProto again = fuseModel(after);
  EXPECT_EQ(nodesText(again.graph()), nodesText(after.graph()));
  EXPECT_EQ(again.opset_import_size(), after.opset_import_size());
}

}  // namespace
}  // namespace zp::graph
