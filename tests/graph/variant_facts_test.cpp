#include <gtest/gtest.h>

#include <fmt/format.h>

#include "libplan/graph/model_io.h"
#include "libplan/graph/variant_facts.h"

namespace zp::graph {
namespace {

// An MLP [1,4] -> Gemm(w1: 4x4) -> Relu -> Gemm(w2: 2x4), its weights given as text.
onnx::ModelProto mlp(const std::string& w1, const std::string& w2, int hidden = 4) {
  auto m = parseModelText(fmt::format(R"(<ir_version: 8, opset_import: ["" : 13]>
    g (float[1,4] x) => (float[1,2] y)
    <float[{0},4] w1 = {{{1}}}, float[2,{0}] w2 = {{{2}}}>
    {{
      h = Gemm <transB = 1> (x, w1)
      r = Relu (h)
      y = Gemm <transB = 1> (r, w2)
    }})",
                                      hidden, w1, w2));
  EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().message);
  return *m;
}

const std::string kW1 = "1,2,3,4, 5,6,7,8, 9,1,2,3, 4,5,6,7";
const std::string kW2 = "1,2,3,4, 5,6,7,8";

TEST(VariantFacts, KindAndSparsityAreReadFromTheWeights) {
  const auto dense = mlp(kW1, kW2);
  auto f = variantFacts(dense);
  EXPECT_EQ(f.kind, "dense");
  EXPECT_EQ(f.precision, "fp32");
  EXPECT_EQ(f.weightElems, 24);
  // Scattered zeros: unstructured, sparsity = the zero share.
  f = variantFacts(mlp("0,2,0,4, 5,0,7,0, 0,1,0,3, 4,0,6,0", "0,2,3,0, 5,0,0,8"), &dense);
  EXPECT_EQ(f.kind, "unstructured");
  EXPECT_DOUBLE_EQ(f.sparsity, 12.0 / 24.0);
  // Whole output neurons zeroed (torch ln_structured): structured.
  f = variantFacts(mlp("0,0,0,0, 5,6,7,8, 0,0,0,0, 4,5,6,7", "0,2,0,4, 0,6,0,8"), &dense);
  EXPECT_EQ(f.kind, "structured");
  EXPECT_DOUBLE_EQ(f.sparsity, 12.0 / 24.0);
  // Neurons cut away: fewer weights than the reference's.
  f = variantFacts(mlp("1,2,3,4, 5,6,7,8", "1,2, 3,4", 2), &dense);
  EXPECT_EQ(f.kind, "structured");
  EXPECT_DOUBLE_EQ(f.sparsity, 1.0 - 12.0 / 24.0);
}

TEST(VariantFacts, DequantizedWeightsMakeAQuantizedVariant) {
  auto m = parseModelText(R"(<ir_version: 8, opset_import: ["" : 13]>
    g (float[1,4] x) => (float[1,2] y)
    <int8[2,4] wq = {1,0,3,4, 5,6,0,8}, float s = {0.1}, int8 z = {0}>
    {
      w = DequantizeLinear (wq, s, z)
      y = Gemm <transB = 1> (x, w)
    })");
  ASSERT_TRUE(m.ok()) << m.error().message;
  const auto f = variantFacts(*m);
  EXPECT_EQ(f.kind, "quantized");
  EXPECT_EQ(f.precision, "int8");
  EXPECT_EQ(f.weightElems, 8);
  EXPECT_DOUBLE_EQ(f.sparsity, 2.0 / 8.0);
}

}  // namespace
}  // namespace zp::graph
