#include <gtest/gtest.h>

#include <cctype>

#include "libplan/graph/analysis.h"
#include "libplan/graph/dims.h"
#include "libplan/graph/model_io.h"
#include "tests/graph/test_util.h"

namespace zp::graph {
namespace {

using test_util::parse;

// A small CNN as torch.onnx.export writes it: Conv, ReLU, GlobalAveragePool,
// `x.view(x.size(0), -1)` and a Gemm. BATCH is the input's leading dim: a
// number (fixed-batch export) or a name (dynamic_axes); with a name the view
// takes the batch from Shape, with a number it is a constant, as torch writes it.
std::string cnn(const std::string& batch, const std::string& height = "8") {
  std::string w1, w2;
  for (int i = 0; i < 4 * 1 * 3 * 3; ++i) w1 += (i ? "," : "") + std::to_string((i % 7) * 0.125 - 0.25);
  for (int i = 0; i < 10 * 4; ++i) w2 += (i ? "," : "") + std::to_string((i % 5) * 0.25 - 0.5);
  const bool dynamic = !std::isdigit(static_cast<unsigned char>(batch[0]));
  const std::string view = dynamic ? R"(
      s = Shape (p)
      i0 = Constant <value = int64 {0}> ()
      n = Gather <axis = 0> (s, i0))"
                                   : R"(
      n = Constant <value = int64 {1}> ())";
  return R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[)" + batch + ",1," + height + R"(,8] input) => (float[)" + batch + R"(,10] logits)
    <float[4,1,3,3] w1 = {)" + w1 + R"(}, float[4] b1 = {0.5,0,0,-0.5}, float[10,4] w2 = {)" + w2 +
         R"(}, float[10] b2 = {0,0,0,0,0,0,0,0,0,0}>
    {
      c = Conv <pads = [1,1,1,1], kernel_shape = [3,3]> (input, w1, b1)
      r = Relu (c)
      p = GlobalAveragePool (r))" + view + R"(
      a0 = Constant <value = int64[1] {0}> ()
      nu = Unsqueeze (n, a0)
      m1 = Constant <value = int64 {-1}> ()
      a1 = Constant <value = int64[1] {0}> ()
      mu = Unsqueeze (m1, a1)
      shape = Concat <axis = 0> (nu, mu)
      f = Reshape (p, shape)
      logits = Gemm <transB = 1> (f, w2, b2)
    }
  )";
}

std::vector<double> nodeFlops(const GraphView& v) {
  std::vector<double> f;
  for (int i : v.topoOrder()) f.push_back(v.nodeStats(i).flops);
  return f;
}

TEST(Dims, SymbolicBatchLeavesFlopsUnknownUntilBound) {
  auto dynamic = parse(cnn("batch"));
  EXPECT_TRUE(hasSymbolicInputs(dynamic));
  EXPECT_TRUE(leadingDimSymbolic(dynamic, "input"));
  // Unbound, no element count is known: the Conv and Gemm count nothing.
  EXPECT_EQ(GraphView(dynamic).totals().flops, 0.0);
}

TEST(Dims, BoundBatchGivesTheFixedBatchFlops) {
  auto fixedRead = parse(cnn("1"));
  auto dynamic = parse(cnn("batch"));
  ASSERT_FALSE(hasSymbolicInputs(fixedRead));
  auto fixed = bindDims(fixedRead, DimBinding{}, "fixed.onnx");  // its Reshape followed too
  auto bound = bindDims(dynamic, DimBinding{}, "dyn.onnx");
  ASSERT_TRUE(bound.ok() && fixed.ok()) << bound.error().message;
  EXPECT_FALSE(hasSymbolicInputs(*bound));
  GraphView f(*fixed), b(*bound);
  EXPECT_GT(f.totals().flops, 0.0);
  EXPECT_DOUBLE_EQ(b.totals().flops, f.totals().flops);
  // Node by node where both have the node (the dynamic view has Shape/Gather, 0 FLOPs).
  auto gemmFlops = [](const GraphView& v) {
    for (int i : v.topoOrder())
      if (v.node(i).op_type() == "Gemm") return v.nodeStats(i).flops;
    return -1.0;
  };
  EXPECT_DOUBLE_EQ(gemmFlops(b), 2.0 * 4 * 10 + 10);  // Gemm [1,4]x[4,10] + bias: needs the Reshape's shape
  EXPECT_DOUBLE_EQ(gemmFlops(b), gemmFlops(f));
  // The Reshape's output (batch taken from Shape) has the bound batch.
  EXPECT_EQ(b.tensorInfo("f")->shape, (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(b.tensorInfo("logits")->shape, (std::vector<int64_t>{1, 10}));
}

TEST(Dims, BatchScalesEveryBatchedNode) {
  auto dynamic = parse(cnn("N"));
  auto one = bindDims(dynamic, DimBinding{1, {}}, "dyn.onnx");
  auto four = bindDims(dynamic, DimBinding{4, {}}, "dyn.onnx");
  ASSERT_TRUE(one.ok() && four.ok());
  auto f1 = nodeFlops(GraphView(*one)), f4 = nodeFlops(GraphView(*four));
  ASSERT_EQ(f1.size(), f4.size());
  for (size_t i = 0; i < f1.size(); ++i) EXPECT_DOUBLE_EQ(f4[i], 4 * f1[i]) << "node " << i;
  EXPECT_EQ(GraphView(*four).tensorInfo("input")->shape, (std::vector<int64_t>{4, 1, 8, 8}));
}

TEST(Dims, ModelWithoutSymbolicDimsKeepsItsShapesAndGainsTheReshapes) {
  // ONNX 1.12's inference leaves torch's computed Reshape target unknown even at a
  // fixed batch; bindDims follows it, and changes nothing else.
  auto fixed = parse(cnn("1"));
  ASSERT_FALSE(GraphView(fixed).tensorInfo("f").has_value() && GraphView(fixed).tensorInfo("f")->hasShape);
  auto bound = bindDims(fixed, DimBinding{7, {}}, "fixed.onnx");
  ASSERT_TRUE(bound.ok());
  EXPECT_EQ(GraphView(*bound).tensorInfo("f")->shape, (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(GraphView(*bound).tensorInfo("input")->shape, (std::vector<int64_t>{1, 1, 8, 8}));
  auto again = bindDims(*bound, DimBinding{7, {}}, "fixed.onnx");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(serializeModel(*again), serializeModel(*bound));
}

TEST(Dims, SymbolicNonBatchDimIsAOneLineErrorNamingModelAndDim) {
  auto model = parse(cnn("batch", "height"));
  auto bound = bindDims(model, DimBinding{}, "zoo/models/dense.onnx");
  ASSERT_FALSE(bound.ok());
  const std::string& e = bound.error().message;
  EXPECT_EQ(e.find('\n'), std::string::npos);
  EXPECT_NE(e.find("zoo/models/dense.onnx"), std::string::npos) << e;
  EXPECT_NE(e.find("'height'"), std::string::npos) << e;
  EXPECT_NE(e.find("--dim height=VALUE"), std::string::npos) << e;
  EXPECT_EQ(e, "zoo/models/dense.onnx: input 'input' dimension 2 is symbolic ('height') and not the batch; bind it "
               "with --dim height=VALUE");
}

TEST(Dims, NamedDimIsBoundAndReported) {
  auto model = parse(cnn("batch", "height"));
  std::map<std::string, int64_t> applied;
  auto bound = bindDims(model, DimBinding{2, {{"height", 8}}}, "m.onnx", &applied);
  ASSERT_TRUE(bound.ok()) << bound.error().message;
  EXPECT_EQ(applied, (std::map<std::string, int64_t>{{"height", 8}}));
  GraphView v(*bound);
  EXPECT_EQ(v.tensorInfo("input")->shape, (std::vector<int64_t>{2, 1, 8, 8}));
  auto fixed = bindDims(parse(cnn("batch")), DimBinding{2, {}}, "m.onnx");
  ASSERT_TRUE(fixed.ok());
  EXPECT_DOUBLE_EQ(v.totals().flops, GraphView(*fixed).totals().flops);
}

TEST(Dims, BindInputShapesFixesTheGivenInputs) {
  auto model = parse(cnn("batch"));
  auto bound = bindInputShapes(model, {{"input", {3, 1, 8, 8}}}, "m.onnx");
  ASSERT_TRUE(bound.ok()) << bound.error().message;
  EXPECT_EQ(GraphView(*bound).tensorInfo("logits")->shape, (std::vector<int64_t>{3, 10}));
  auto wrongRank = bindInputShapes(model, {{"input", {3, 64}}}, "m.onnx");
  ASSERT_FALSE(wrongRank.ok());
  EXPECT_EQ(wrongRank.error().message, "m.onnx: input 'input' has rank 4, not the 2 dims given");
}

TEST(Dims, ParseDimSpec) {
  auto ok = parseDimSpec("height=32");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->first, "height");
  EXPECT_EQ(ok->second, 32);
  EXPECT_EQ(parseDimSpec("height").error().message,
            "--dim 'height': expected NAME=VALUE (a symbolic dim's name and a positive integer)");
  EXPECT_EQ(parseDimSpec("=3").error().message,
            "--dim '=3': expected NAME=VALUE (a symbolic dim's name and a positive integer)");
  EXPECT_EQ(parseDimSpec("h=x").error().message, "--dim 'h=x': 'x' is not an integer");
  EXPECT_EQ(parseDimSpec("h=").error().message, "--dim 'h=': '' is not an integer");
  EXPECT_EQ(parseDimSpec("h=0").error().message, "--dim 'h=0': 0 is outside [1, 1048576]");
}

}  // namespace
}  // namespace zp::graph
