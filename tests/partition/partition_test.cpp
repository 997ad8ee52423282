#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "libplan/graph/model_io.h"
#include "passes/partition/partition.h"
#include "tests/common/onnx_text.h"

namespace zp::partition {
namespace {

using zp::testing::floatInitializer;

// Stem, two residual blocks, global pool and classifier.
std::string residualCnn(bool extraNode = false) {
  return R"(<ir_version: 8, opset_import: ["" : 13]>
    g (float[1,1,6,6] x) => (float[1,3] y)
    <)" + floatInitializer("ws", {4, 1, 3, 3}) + ", " + floatInitializer("wa", {4, 4, 3, 3}) + ", " + floatInitializer("wb", {4, 4, 3, 3}) + ", " +
         floatInitializer("wc", {4, 4, 3, 3}) + ", " + floatInitializer("wd", {4, 4, 3, 3}) + ", " + floatInitializer("wf", {3, 4}) + ", " +
         floatInitializer("bn_s", {4}, 1.0f) + ", " + floatInitializer("bn_b", {4}) + ", " + floatInitializer("bn_m", {4}) + ", " +
         "float[4] bn_v = {1.0, 1.0, 1.0, 1.0}" + R"(>
    {
      s0 = Conv <pads = [1,1,1,1]> (x, ws)
      s1 = BatchNormalization (s0, bn_s, bn_b, bn_m, bn_v)
      r1 = Relu (s1)
      a0 = Conv <pads = [1,1,1,1]> (r1, wa)
      a1 = Relu (a0)
      a2 = Conv <pads = [1,1,1,1]> (a1, wb)
      a3 = Add (a2, r1)
      r2 = Relu (a3)
      b0 = Conv <pads = [1,1,1,1]> (r2, wc)
      b1 = Relu (b0)
      b2 = Conv <pads = [1,1,1,1]> (b1, wd))" +
         std::string(extraNode ? "\n      b2x = Sigmoid (b2)\n      b3 = Add (b2x, r2)" : "\n      b3 = Add (b2, r2)") + R"(
      r3 = Relu (b3)
      g = GlobalAveragePool (r3)
      f = Flatten (g)
      y = Gemm <transB = 1> (f, wf)
    })";
}

onnx::ModelProto parse(const std::string& text) {
  auto m = graph::parseModelText(text);
  EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().message);
  return m.ok() ? *m : onnx::ModelProto();
}

std::vector<std::string> cutTensors(const graph::GraphView& v) {
  std::vector<std::string> out;
  for (const auto& c : findCutPoints(v)) out.push_back(c.tensor);
  return out;
}

TEST(CutPoints, ResidualCnnCutsOnlyAtBlockBoundaries) {
  auto m = parse(residualCnn());
  graph::GraphView v(m);
  EXPECT_EQ(cutTensors(v), (std::vector<std::string>{"r1", "r2", "r3", "g", "f"}));
}

TEST(CutPoints, NeverInsideFusibleChains) {
  EXPECT_TRUE(isFusiblePair("Conv", "BatchNormalization"));
  EXPECT_TRUE(isFusiblePair("BatchNormalization", "Relu"));
  EXPECT_TRUE(isFusiblePair("MatMul", "Add"));
  EXPECT_TRUE(isFusiblePair("Add", "Relu"));
  EXPECT_FALSE(isFusiblePair("Relu", "Conv"));
  // A plain chain: only the cuts after Relu and after Add (which feeds MatMul) remain.
  auto m = parse(R"(<ir_version: 8, opset_import: ["" : 13]>
    g (float[1,4] x) => (float[1,4] y)
    <)" + floatInitializer("w1", {4, 4}) + ", " + floatInitializer("b1", {4}) + ", " + floatInitializer("w2", {4, 4}) + ", " + floatInitializer("b2", {4}) + R"(>
    {
      m1 = MatMul (x, w1)
      a1 = Add (m1, b1)
      r1 = Relu (a1)
      m2 = MatMul (r1, w2)
      a2 = Add (m2, b2)
      y = Sigmoid (a2)
    })");
  graph::GraphView v(m);
  EXPECT_EQ(cutTensors(v), (std::vector<std::string>{"r1"}));
}

// x -> MatMul(w1) -> Relu -> MatMul(w2) -> Sigmoid: the float model the Q/DQ tests align with.
std::string twoMatMulWeights() { return floatInitializer("w1", {4, 4}) + ", " + floatInitializer("w2", {4, 4}); }
std::string twoMatMuls() {
  return R"(<ir_version: 8, opset_import: ["" : 13]>
    g (float[1,4] x) => (float[1,4] y)
    <)" + twoMatMulWeights() + R"(>
    {
      m1 = MatMul (x, w1)
      r1 = Relu (m1)
      m2 = MatMul (r1, w2)
      y = Sigmoid (m2)
    })";
}

TEST(CutPoints, QdqNodesTravelWithTheOpTheyFeed) {
  // Float model and its QDQ twin (weight DQ + activation Q/DQ before the
  // second MatMul) have the same main sequence and the same cut.
  auto fp = parse(twoMatMuls());
  auto q = parse(R"(<ir_version: 8, opset_import: ["" : 13]>
    g (float[1,4] x) => (float[1,4] y)
    <)" + floatInitializer("w1", {4, 4}) + R"(, int8[4,4] w2q = {1,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,0,1}, float s = {0.1}, int8 z = {0}>
    {
      m1 = MatMul (x, w1)
      r1 = Relu (m1)
      r1q = QuantizeLinear (r1, s, z)
      r1d = DequantizeLinear (r1q, s, z)
      w2 = DequantizeLinear (w2q, s, z)
      m2 = MatMul (r1d, w2)
      y = Sigmoid (m2)
    })");
  graph::GraphView vf(fp), vq(q);
  EXPECT_EQ(mainSequence(vf).nodes.size(), 4u);
  EXPECT_EQ(mainSequence(vq).nodes.size(), 4u);
  auto cf = findCutPoints(vf), cq = findCutPoints(vq);
  ASSERT_EQ(cf.size(), 1u);  // after r1 (MatMul->Relu and MatMul->Sigmoid are fusible)
  ASSERT_EQ(cq.size(), 1u);
  EXPECT_EQ(cq[0].tensor, "r1");  // not r1q or r1d: the Q/DQ pair stays with m2
  EXPECT_EQ(cq[0].after, cf[0].after);
  auto a = alignVariants({{"fp", &vf}, {"q", &vq}}, "t");
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_EQ(a->cuts.size(), 1u);
}

// torch's quantized exports: convert() puts a Cast between each Q and DQ,
// fake-quant a Clip; both quantize the model's input and dequantize its output
// (QuantStub, DeQuantStub). Aligned with the float model modulo those nodes,
// cut at the same tensor; the trailing Q/DQ to the output stays with the last op.
TEST(CutPoints, TorchQuantizedExportsAlignWithTheirFloatTwin) {
  const std::string weights = twoMatMulWeights();
  auto fp = parse(twoMatMuls());
  for (const std::string between : {"Cast <to = 2>", "Clip"}) {
    auto q = parse(R"(<ir_version: 8, opset_import: ["" : 13]>
    g (float[1,4] x) => (float[1,4] y)
    <)" + weights + R"(, float s = {0.1}, uint8 z = {128}>
    {
      xq = QuantizeLinear (x, s, z)
      xc = )" + between + R"( (xq)
      xd = DequantizeLinear (xc, s, z)
      m1 = MatMul (xd, w1)
      r1 = Relu (m1)
      r1q = QuantizeLinear (r1, s, z)
      r1c = )" + between + R"( (r1q)
      r1d = DequantizeLinear (r1c, s, z)
      m2 = MatMul (r1d, w2)
      s2 = Sigmoid (m2)
      yq = QuantizeLinear (s2, s, z)
      yc = )" + between + R"( (yq)
      y = DequantizeLinear (yc, s, z)
    })");
    graph::GraphView vf(fp), vq(q);
    EXPECT_EQ(mainSequence(vq).nodes.size(), 4u) << between;
    auto cq = findCutPoints(vq);
    ASSERT_EQ(cq.size(), 1u) << between << ": the trailing Q/DQ must not cross every cut";
    EXPECT_EQ(cq[0].tensor, "r1") << between;
    auto a = alignVariants({{"fp", &vf}, {"q", &vq}}, "t");
    ASSERT_TRUE(a.ok()) << between << ": " << a.error().message;
    EXPECT_EQ(a->cuts.size(), 1u) << between;
  }
}

TEST(Align, DivergingVariantsNameTheFirstDivergentNodes) {
  auto a = parse(residualCnn()), b = parse(residualCnn(true));
  graph::GraphView va(a), vb(b);
  auto r = alignVariants({{"dense", &va}, {"odd", &vb}}, "digits");
  ASSERT_FALSE(r.ok());
  const auto& msg = r.error().message;
  EXPECT_NE(msg.find("'dense' and 'odd'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("(Add)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("(Sigmoid)"), std::string::npos) << msg;
}

TEST(Partition, NamedCutsAndTooManySubgraphs) {
  auto m = parse(residualCnn());
  graph::GraphView v(m);
  std::vector<VariantGraph> vg{{"dense", &v}};
  auto a = alignVariants(vg, "t");
  ASSERT_TRUE(a.ok());
  auto named = choosePartition(*a, vg, 0, {0, {"r2", "g"}}, "t");
  ASSERT_TRUE(named.ok()) << named.error().message;
  EXPECT_EQ(named->cuts, (std::vector<int>{1, 3}));
  EXPECT_EQ(named->partFlops.size(), 3u);
  auto unknown = choosePartition(*a, vg, 0, {0, {"a1"}}, "t");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("'a1' is not a cut point"), std::string::npos);
  auto tooMany = choosePartition(*a, vg, 0, {7, {}}, "t");
  ASSERT_FALSE(tooMany.ok());
  EXPECT_NE(tooMany.error().message.find("only 5 cut points"), std::string::npos) << tooMany.error().message;
  auto three = choosePartition(*a, vg, 0, {3, {}}, "t");
  ASSERT_TRUE(three.ok());
  // Two equal residual blocks dominate the cost: the balanced split puts one in
  // each of two parts (cut at r2), the other cut at r1 or r3.
  ASSERT_EQ(three->cuts.size(), 2u);
  EXPECT_TRUE(std::find(three->cuts.begin(), three->cuts.end(), 1) != three->cuts.end());
}

// Brute force over all cut subsets: min max part, then min sum of squares.
std::pair<double, double> bruteBest(const std::vector<double>& w, const std::vector<int>& allowed, int parts) {
  std::pair<double, double> best{1e300, 1e300};
  int c = static_cast<int>(allowed.size());
  for (int mask = 0; mask < (1 << c); ++mask) {
    if (__builtin_popcount(static_cast<unsigned>(mask)) != parts - 1) continue;
    std::vector<int> cuts;
    for (int i = 0; i < c; ++i)
      if (mask & (1 << i)) cuts.push_back(allowed[static_cast<size_t>(i)]);
    double mx = 0, sq = 0, cur = 0;
    size_t k = 0;
    for (int i = 0; i < static_cast<int>(w.size()); ++i) {
      cur += w[static_cast<size_t>(i)];
      if ((k < cuts.size() && cuts[k] == i) || i + 1 == static_cast<int>(w.size())) {
        mx = std::max(mx, cur);
        sq += cur * cur;
        cur = 0;
        ++k;
      }
    }
    if (mx < best.first - 1e-9 || (std::abs(mx - best.first) <= 1e-9 && sq < best.second)) best = {mx, sq};
  }
  return best;
}

TEST(Partition, BalancedSplitMatchesBruteForceOnRandomInstances) {
  std::mt19937 rng(12345);
  for (int trial = 0; trial < 300; ++trial) {
    int n = 2 + static_cast<int>(rng() % 12);
    std::vector<double> w(static_cast<size_t>(n));
    for (auto& x : w) x = static_cast<double>(rng() % 100);
    std::vector<int> allowed;
    for (int i = 0; i + 1 < n; ++i)
      if (rng() % 3 != 0) allowed.push_back(i);
    int parts = 1 + static_cast<int>(rng() % (allowed.size() + 1));
    auto cuts = balancedSplit(w, allowed, parts);
    ASSERT_EQ(static_cast<int>(cuts.size()), parts - 1);
    double mx = 0, sq = 0, cur = 0;
    size_t k = 0;
    for (int i = 0; i < n; ++i) {
      cur += w[static_cast<size_t>(i)];
      if ((k < cuts.size() && cuts[k] == i) || i + 1 == n) {
        mx = std::max(mx, cur);
        sq += cur * cur;
        cur = 0;
        ++k;
      }
    }
    auto best = bruteBest(w, allowed, parts);
    EXPECT_NEAR(mx, best.first, 1e-9) << "trial " << trial;
    EXPECT_NEAR(sq, best.second, 1e-6) << "trial " << trial;
  }
  EXPECT_TRUE(balancedSplit({1, 2, 3}, {0}, 3).empty());  // more parts than cuts allow
}

}  // namespace
}  // namespace zp::partition
