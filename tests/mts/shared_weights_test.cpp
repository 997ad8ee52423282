// Families of models that share weights by content (zoo-init's groups).
#include "passes/mts/shared_weights.h"

#include <gtest/gtest.h>

#include "tests/mts/mts_test_util.h"

namespace zp::mts {
namespace {
using testing::parse;
using testing::tensor;

const char* kHeader = "<ir_version: 8, opset_import: [\"\" : 13]>\n";

// x[1,in] -> Gemm(w1: hidden x in, b1) -> Relu -> Gemm(w2: out x hidden, b2) -> y; seeds pick the tensors.
std::string mlp(int in, int hidden, int out, int w1, int b1, int w2, int b2) {
  return std::string(kHeader) + "g (float[1," + std::to_string(in) + "] x) => (float[1," + std::to_string(out) +
         "] y)\n<" + tensor("w1", {hidden, in}, w1) + ", " + tensor("b1", {hidden}, b1) + ", " +
         tensor("w2", {out, hidden}, w2) + ", " + tensor("b2", {out}, b2) +
         ">\n{\n  h = Gemm <transB = 1> (x, w1, b1)\n  r = Relu (h)\n  y = Gemm <transB = 1> (r, w2, b2)\n}\n";
}

TEST(SharedWeights, HeadsOnOneBackboneAreAFamilyAndOthersAreNot) {
  // a, b and d: one first layer (8x16 + 8 floats), their own heads (3x8 + 3); c its own everything.
  const auto a = parse(mlp(16, 8, 3, 1, 2, 3, 4)), b = parse(mlp(16, 8, 3, 1, 2, 5, 6)),
             c = parse(mlp(16, 8, 3, 7, 8, 9, 10)), d = parse(mlp(16, 8, 3, 1, 2, 11, 12));
  const auto families = sharedWeightFamilies({&a, &c, &b, &d}, 0.5);
  ASSERT_EQ(families.size(), 1u);
  EXPECT_EQ(families[0].members, (std::vector<int>{0, 2, 3}));
  EXPECT_EQ(families[0].sharedBytes, (8 * 16 + 8) * 4);
  EXPECT_EQ(families[0].smallestBytes, (8 * 16 + 8 + 3 * 8 + 3) * 4);
  // The first layer is 136 of 163 floats (0.834 of either model): a link at 0.83, none at 0.84.
  EXPECT_TRUE(sharedWeightFamilies({&a, &b}, 0.84).empty());
  EXPECT_EQ(sharedWeightFamilies({&a, &b}, 0.83).size(), 1u);
  EXPECT_TRUE(sharedWeightFamilies({&a, &c}, 0.01).empty());
}

TEST(SharedWeights, AFamilyIsConnectedThroughAnyLink) {
  // a-b share the first layer, b-e the second only: one family of three, though a and e share nothing.
  const auto a = parse(mlp(16, 8, 3, 1, 2, 3, 4)), b = parse(mlp(16, 8, 3, 1, 2, 5, 6)),
             e = parse(mlp(16, 8, 3, 13, 14, 5, 6));
  const auto families = sharedWeightFamilies({&e, &a, &b}, 0.1);
  ASSERT_EQ(families.size(), 1u);
  EXPECT_EQ(families[0].members, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(families[0].sharedBytes, 0);  // nothing all three hold
}

}  // namespace
}  // namespace zp::mts
