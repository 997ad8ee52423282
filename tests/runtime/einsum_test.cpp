// Einsum's batched-GEMM evaluation against its naive definition on random shapes of
// two-operand equations (every layout: transposed operands, permuted outputs,
// several batch/row/column/contracted labels), and the equation errors.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "libplan/runtime/ops/einsum.h"

namespace zp::runtime::detail {
namespace {

Tensor randomTensor(const Shape& s, std::mt19937& rng) {
  std::uniform_real_distribution<float> d(-1, 1);
  Tensor t = Tensor::empty(DType::F32, s);
  for (int64_t i = 0; i < t.size(); ++i) t.ptr<float>()[i] = d(rng);
  return t;
}

TEST(Einsum, GemmMatchesTheDefinition) {
  const std::vector<std::string> equations = {
      "bhqd,bhkd->bhqk", "bhqk,bhkd->bhqd", "bij,bjk->bik", "ij,kj->ik", "ji,jk->ik", "ji,kj->ki",
      "nchw,kc->nkhw", "bnd,de->bne",     "abc,cd->dba",  "i,i",       "i,j->ij",   "abcd,bdce->aeb",
      "xy,yz->zx",     "bij,bkj->bki"};
  std::mt19937 rng(5);
  for (const auto& eq : equations)
    for (int trial = 0; trial < 5; ++trial) {
      std::map<char, int64_t> size;
      for (char c : eq)
        if (std::isalpha(static_cast<unsigned char>(c)) && !size.count(c)) size[c] = 1 + static_cast<int64_t>(rng() % 5);
      const std::string lhs = eq.substr(0, eq.find("->"));
      std::vector<Tensor> ops;
      std::string term;
      for (char c : lhs + ",") {
        if (c != ',') { term += c; continue; }
        Shape s;
        for (char l : term) s.push_back(size[l]);
        ops.push_back(randomTensor(s, rng));
        term.clear();
      }
      std::vector<const Tensor*> in = {&ops[0], &ops[1]};
      auto plan = planEinsum(eq, {ops[0].shape, ops[1].shape});
      ASSERT_TRUE(plan.ok()) << plan.error().message;
      ASSERT_TRUE(canUseGemm(*plan, in)) << eq;
      Tensor ref = Tensor::empty(DType::F32, plan->outputShape), got = Tensor::empty(DType::F32, plan->outputShape);
      ASSERT_TRUE(einsumNaive(*plan, in, ref).ok());
      einsumGemm(*plan, in, got, 1, GemmLibrary::OneDnn);
      for (int64_t i = 0; i < ref.size(); ++i)
        ASSERT_NEAR(got.ptr<float>()[i], ref.ptr<float>()[i], 1e-5 * (1 + std::fabs(ref.ptr<float>()[i]))) << eq << " " << i;
    }
}

TEST(Einsum, DiagonalsBroadcastsAndOneSidedSumsTakeTheDefinition) {
  Tensor a = Tensor::fromFloats({1, 2, 3, 4}, {2, 2}), b = Tensor::fromFloats({1, 1}, {1, 2});
  auto p = planEinsum("ii->i", {a.shape});
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE(canUseGemm(*p, {&a}));
  Tensor y = Tensor::empty(DType::F32, p->outputShape);
  ASSERT_TRUE(einsumNaive(*p, {&a}, y).ok());
  EXPECT_EQ(y.toF32(), (std::vector<float>{1, 4}));
  auto q = planEinsum("ij,kj->ik", {a.shape, b.shape});
  ASSERT_TRUE(q.ok());
  EXPECT_TRUE(canUseGemm(*q, {&a, &b}));
  auto r = planEinsum("ij,jk->i", {a.shape, a.shape});  // k summed over the second operand alone
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(canUseGemm(*r, {&a, &a}));
}

TEST(Einsum, BadEquationsNameTheEquation) {
  EXPECT_EQ(planEinsum("ij,jk->ik", {{2, 3}}).error().message, "Einsum equation 'ij,jk->ik' has 2 operands, the node 1");
  EXPECT_EQ(planEinsum("ij->ik", {{2, 3}}).error().message, "Einsum equation 'ij->ik' has output label 'k' in no operand");
  EXPECT_EQ(planEinsum("ij,jk", {{2, 3}, {4, 5}}).error().message,
            "Einsum equation 'ij,jk': label 'j' is 3 in one operand and 4 in another");
  EXPECT_EQ(planEinsum("i1->i", {{2, 3}}).error().message, "Einsum equation 'i1->i' has an unexpected '1'");
  EXPECT_EQ(planEinsum("ijk->i", {{2, 3}}).error().message, "Einsum equation 'ijk->i' does not fit an operand of rank 2");
}

}  // namespace
}  // namespace zp::runtime::detail
