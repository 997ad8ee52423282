#include <gtest/gtest.h>

#include "libplan/graph/analysis.h"
#include "libplan/graph/model_io.h"
#include "tests/graph/test_util.h"

namespace zp::graph {
namespace {

using test_util::parse;

TEST(Analysis, ConvFlopsByHand) {
  // 1x3x8x8 input, 4 filters 3x3, pads 1: output 1x4x8x8.
  // MACs per output = 3*3*3 = 27; FLOPs = 2*27*256 + 256 (bias) = 14080.
  std::string weights;
  for (int i = 0; i < 108; ++i) weights += (i ? "," : "") + std::string(i < 27 ? "0.0" : "1.0");
  auto m = parse(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,3,8,8] x) => (float[1,4,8,8] y)
    <float[4,3,3,3] w = {)" + weights + R"(}, float[4] b = {0.0,0.0,0.0,0.0}>
    { y = Conv <pads = [1,1,1,1], kernel_shape = [3,3]> (x, w, b) }
  )");
  GraphView v(m);
  ASSERT_EQ(v.numNodes(), 1);
  NodeStats s = v.nodeStats(0);
  EXPECT_DOUBLE_EQ(s.flops, 2.0 * 27 * 256 + 256);
  EXPECT_EQ(s.params, 108 + 4);
  EXPECT_EQ(s.weightBytes, (108 + 4) * 4);
  EXPECT_EQ(s.weightElems, 108);   // the bias (rank 1) is not a weight matrix
  EXPECT_EQ(s.weightZeros, 27);
  EXPECT_EQ(v.precision(), Precision::Fp32);
}

TEST(Analysis, GemmAndMatMulFlopsByHand) {
  auto m = parse(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2,5] x, float[3,5,7] a, float[3,7,4] b) => (float[2,6] y, float[3,5,4] z)
    <float[6,5] w = {1.0,0.0,1.0,0.0,1.0, 1.0,0.0,1.0,0.0,1.0, 1.0,0.0,1.0,0.0,1.0,
                     1.0,0.0,1.0,0.0,1.0, 1.0,0.0,1.0,0.0,1.0, 1.0,0.0,1.0,0.0,1.0}>
    {
      y = Gemm <transB = 1> (x, w)
      z = MatMul (a, b)
    }
  )");
  GraphView v(m);
  EXPECT_DOUBLE_EQ(v.nodeStats(0).flops, 2.0 * 2 * 6 * 5);
  EXPECT_EQ(v.nodeStats(0).weightZeros, 12);
  EXPECT_DOUBLE_EQ(v.nodeStats(1).flops, 2.0 * 3 * 5 * 4 * 7);
  NodeStats t = v.totals();
  EXPECT_EQ(t.weightElems, 30);
  EXPECT_EQ(t.weightZeros, 12);
}

TEST(Analysis, TopologicalOrderIsDeterministicAndRespectsEdges) {
  // Nodes written out of order: c consumes b's output, b consumes a's.
  auto m = parse(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[4] x) => (float[4] z)
    {
      z = Relu (y2)
      y1 = Relu (x)
      y2 = Add (y1, y3)
      y3 = Sigmoid (x)
    }
  )", LoadOptions{.check = false, .inferShapes = true});
  GraphView v(m);
  std::vector<std::string> order;
  for (int i : v.topoOrder()) order.push_back(v.node(i).name());
  EXPECT_EQ(order, (std::vector<std::string>{"Relu_1", "Sigmoid_3", "Add_2", "Relu_0"}));
  GraphView again(m);
  EXPECT_EQ(again.topoOrder(), v.topoOrder());
  EXPECT_EQ(v.producer("y2"), 2);
  EXPECT_EQ(v.consumers("x"), (std::vector<int>{1, 3}));
}

TEST(Analysis, QdqModelIsInt8AndWeightDequantizeIsConstant) {
  auto m = parse(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,4] x) => (float[1,2] y)
    <int8[2,4] wq = {1,0,0,3,0,0,0,2}, float ws = {0.5}, int8 wz = {0}>
    {
      w = DequantizeLinear (wq, ws, wz)
      y = Gemm <transB = 1> (x, w)
    }
  )");
  GraphView v(m);
  EXPECT_EQ(v.precision(), Precision::Int8);
  EXPECT_TRUE(v.isConstantNode(0));
  EXPECT_FALSE(v.isConstantNode(1));
  EXPECT_EQ(v.nodeStats(0).weightZeros, 5);
}

}  // namespace
}  // namespace zp::graph
