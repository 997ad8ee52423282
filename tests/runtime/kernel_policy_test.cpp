// The kernel policy on shapes and sparsity alone, without building a session.
#include <gtest/gtest.h>

#include "libplan/runtime/kernel_policy.h"
#include "libplan/runtime/kernels/conv_primitives.h"
#include "libplan/runtime/kernels/simd_target.h"

namespace zp::runtime {
namespace {

ConvAttrs conv(int64_t M, int64_t C, int64_t k, int64_t stride = 1, int64_t group = 1) {
  ConvAttrs a;
  a.M = M;
  a.Cg = C / group;
  a.kh = a.kw = k;
  a.sh = a.sw = stride;
  a.group = group;
  a.padT = a.padL = a.padB = a.padR = k / 2;
  return a;
}

ConvNode node(const ConvAttrs& a, std::optional<Shape> in, double zeros = 0) {
  ConvNode n;
  n.name = "c";
  n.attrs = a;
  n.input = std::move(in);
  n.zeroFraction = zeros;
  n.tunable = n.input.has_value();
  return n;
}

// A tuner the tests can see being called.
struct FakeTuner {
  ConvKernel answer = ConvKernel::Naive;
  int calls = 0;
  ConvTuner fn() {
    return [this] {
      ++calls;
      return answer;
    };
  }
};

// What the default picks for an unpruned 1x1 with at most 8x8 outputs.
ConvKernel small1x1() { return pointwisePackedFast() ? ConvKernel::Packed1x1 : ConvKernel::Gemm1x1; }

// What the default picks where the direct kernel pays, on hosts where it runs (AVX-512).
ConvKernel directOr(const ConvAttrs& a, ConvKernel fallback) {
  return convKernelApplies(ConvKernel::Direct, a) ? ConvKernel::Direct : fallback;
}

// oneDNN's primitive with its AVX2 kernels, else `other` (what the default takes from
// at most 32 channels on maps up to 64x64 where oneDNN runs AVX-512, or without oneDNN).
ConvKernel oneDnnOnAvx2Or(ConvKernel other) {
  return convPrimitivesIsa() == ConvPrimitivesIsa::Avx2 ? ConvKernel::OneDnn : other;
}

// What the default picks where oneDNN's primitive pays: on AVX-512 hosts, and on AVX2
// hosts unless `onAvx2` is false (there Winograd, where it pays, and the grouped direct
// kernel stay ahead); elsewhere the fallback.
ConvKernel oneDnnOr(ConvKernel fallback, bool onAvx2 = true) {
  switch (convPrimitivesIsa()) {
    case ConvPrimitivesIsa::Avx512: return ConvKernel::OneDnn;
    case ConvPrimitivesIsa::Avx2: return onAvx2 ? ConvKernel::OneDnn : fallback;
    case ConvPrimitivesIsa::None: break;
  }
  return fallback;
}

ConvKernel choose(const KernelPolicy& p, const ConvNode& n) {
  FakeTuner never;
  auto k = chooseConvKernel(p, n, never.fn());
  EXPECT_TRUE(k.ok()) << k.error().message;
  EXPECT_EQ(never.calls, 0);
  return k.ok() ? *k : ConvKernel::Naive;
}

TEST(KernelPolicy, DefaultPicksDepthwiseWinogradGemm1x1DirectOrIm2colFromTheShape) {
  const KernelPolicy p;
  EXPECT_EQ(choose(p, node(conv(32, 32, 3, 1, 32), Shape{1, 32, 56, 56})), ConvKernel::Depthwise);
  EXPECT_EQ(choose(p, node(conv(64, 64, 3), Shape{1, 64, 56, 56})), ConvKernel::Winograd);
  EXPECT_EQ(choose(p, node(conv(64, 64, 3), Shape{1, 64, 8, 8})), oneDnnOr(ConvKernel::Winograd, false)) << "8x8 maps";
  EXPECT_EQ(choose(p, node(conv(64, 64, 3), std::nullopt)), ConvKernel::Winograd) << "unknown map size";
  EXPECT_EQ(choose(p, node(conv(64, 64, 3), Shape{1, 64, 7, 7})),
            oneDnnOr(directOr(conv(64, 64, 3), ConvKernel::Im2col))) << "7x7 maps";
  EXPECT_EQ(choose(p, node(conv(32, 128, 3), Shape{1, 128, 56, 56})), oneDnnOr(ConvKernel::Winograd, false))
      << "32 outputs, 56x56";
  EXPECT_EQ(choose(p, node(conv(32, 128, 3), Shape{1, 128, 14, 14})),
            oneDnnOr(directOr(conv(32, 128, 3), ConvKernel::Im2col))) << "32 outputs, 14x14";
  EXPECT_EQ(choose(p, node(conv(128, 128, 3), Shape{1, 128, 14, 14})), oneDnnOr(ConvKernel::Winograd, false))
      << "128 each way, 14x14";
  EXPECT_EQ(choose(p, node(conv(128, 128, 3), Shape{1, 128, 28, 28})), ConvKernel::Winograd) << "128 each way, 28x28";
  EXPECT_EQ(choose(p, node(conv(192, 48, 3), Shape{1, 48, 56, 56})), ConvKernel::Winograd) << "48 -> 192, 56x56";
  EXPECT_EQ(choose(p, node(conv(64, 32, 3), Shape{1, 32, 56, 56})), ConvKernel::Winograd) << "32 -> 64, 56x56";
  EXPECT_EQ(choose(p, node(conv(64, 32, 3), Shape{1, 32, 147, 147})), oneDnnOr(ConvKernel::Winograd, false))
      << "32 -> 64, 147x147";
  EXPECT_EQ(choose(p, node(conv(64, 16, 3), Shape{1, 16, 55, 55})),
            simdFloatLanes() >= 16 ? ConvKernel::Direct : ConvKernel::Winograd) << "16 -> 64, 55x55";
  EXPECT_EQ(choose(p, node(conv(96, 32, 3), Shape{1, 32, 28, 28})), ConvKernel::Winograd) << "32 -> 96, 28x28";
  EXPECT_EQ(choose(p, node(conv(64, 24, 3), Shape{1, 24, 14, 14})), oneDnnOnAvx2Or(ConvKernel::Direct))
      << "24 -> 64, 14x14";
  EXPECT_EQ(choose(p, node(conv(128, 48, 3), Shape{1, 48, 7, 7})), oneDnnOr(ConvKernel::Direct)) << "48 -> 128, 7x7";
  EXPECT_EQ(choose(p, node(conv(16, 8, 3), Shape{1, 8, 56, 56})), directOr(conv(16, 8, 3), ConvKernel::Im2col))
      << "8 input channels";
  EXPECT_EQ(choose(p, node(conv(16, 16, 3), Shape{1, 16, 64, 64})), directOr(conv(16, 16, 3), ConvKernel::Im2col))
      << "16 -> 16";
  EXPECT_EQ(choose(p, node(conv(64, 64, 3, 2), Shape{1, 64, 56, 56})), oneDnnOr(ConvKernel::Im2col)) << "stride 2";
  EXPECT_EQ(choose(p, node(conv(192, 192, 7), Shape{1, 192, 17, 17})),
            oneDnnOr(directOr(conv(192, 192, 7), ConvKernel::Im2col))) << "7x7 kernel";
  EXPECT_EQ(choose(p, node(conv(128, 64, 1), Shape{1, 64, 28, 28})), ConvKernel::Gemm1x1);
  EXPECT_EQ(choose(p, node(conv(128, 64, 1, 2), Shape{1, 64, 28, 28})), ConvKernel::Gemm1x1) << "strided 1x1";
  // Stems along output rows where 32 registers hold three vectors of positions a tile.
  const bool rows = directRowsFast();
  // Stems of 64 outputs with 7x7 windows or at stride 1 on oneDNN's AVX-512 kernels.
  EXPECT_EQ(choose(p, node(conv(64, 3, 7, 2), Shape{1, 3, 224, 224})),
            oneDnnOr(rows ? ConvKernel::DirectRows : directOr(conv(64, 3, 7, 2), ConvKernel::Im2col), false))
      << "7x7 stem, stride 2";
  EXPECT_EQ(choose(p, node(conv(64, 3, 3), Shape{1, 3, 224, 224})),
            oneDnnOr(rows ? ConvKernel::DirectRows : directOr(conv(64, 3, 3), ConvKernel::Im2col), false))
      << "3x3 stem, stride 1";
  EXPECT_EQ(choose(p, node(conv(64, 3, 3, 2), Shape{1, 3, 224, 224})), rows ? ConvKernel::DirectRows : ConvKernel::Im2col)
      << "3x3 stem to 64, stride 2";
  EXPECT_EQ(choose(p, node(conv(32, 3, 3, 2), Shape{1, 3, 224, 224})), rows ? ConvKernel::DirectRows : ConvKernel::Im2col)
      << "3x3 stem, stride 2";
  EXPECT_EQ(choose(p, node(conv(32, 5, 3, 2), Shape{1, 5, 224, 224})), ConvKernel::Im2col) << "5 input channels";
  EXPECT_EQ(choose(p, node(conv(2048, 512, 1), Shape{1, 512, 7, 7})), small1x1()) << "7x7 1x1";
  EXPECT_EQ(choose(p, node(conv(512, 1024, 1, 2), Shape{1, 1024, 14, 14})), small1x1()) << "to 7x7";
  EXPECT_EQ(choose(p, node(conv(512, 1024, 1), Shape{1, 1024, 9, 9})), ConvKernel::Gemm1x1) << "9x9 1x1";
  EXPECT_EQ(choose(p, node(conv(64, 64, 1), std::nullopt)), ConvKernel::Gemm1x1) << "unknown map size";
  EXPECT_EQ(choose(p, node(conv(64, 64, 1, 1, 2), Shape{1, 64, 7, 7})),
            directOr(conv(64, 64, 1, 1, 2), ConvKernel::Gemm1x1)) << "grouped 1x1";
  EXPECT_EQ(choose(p, node(conv(400, 400, 3, 1, 25), Shape{1, 400, 7, 7})),
            oneDnnOr(directOr(conv(400, 400, 3, 1, 25), ConvKernel::Im2col), false)) << "grouped 3x3, 16 per group";
  EXPECT_EQ(choose(p, node(conv(128, 128, 3, 1, 32), Shape{1, 128, 56, 56})),
            directOr(conv(128, 128, 3, 1, 32), ConvKernel::Im2col)) << "grouped 3x3, 4 per group";
}

TEST(KernelPolicy, DefaultPicksSparseForPrunedKxkConvsAndOnlyLargePrunedPointwiseOnes) {
  const KernelPolicy p;
  EXPECT_EQ(choose(p, node(conv(64, 64, 3), Shape{1, 64, 56, 56}, 0.8)), ConvKernel::Sparse);
  EXPECT_EQ(choose(p, node(conv(64, 64, 3), Shape{1, 64, 56, 56}, 0.79)), ConvKernel::Winograd);
  EXPECT_EQ(choose(p, node(conv(8, 8, 3, 2), Shape{1, 8, 8, 8}, 0.9)), ConvKernel::Sparse) << "any stride, small map";
  // 1x1: 90% zeros and at least 7x7 outputs per stride step.
  EXPECT_EQ(choose(p, node(conv(64, 64, 1), Shape{1, 64, 7, 7}, 0.9)), ConvKernel::Sparse);
  EXPECT_EQ(choose(p, node(conv(64, 64, 1), Shape{1, 64, 7, 7}, 0.85)), small1x1());
  EXPECT_EQ(choose(p, node(conv(64, 64, 1), Shape{1, 64, 6, 6}, 0.97)), small1x1());
  EXPECT_EQ(choose(p, node(conv(64, 64, 1, 2), Shape{1, 64, 13, 13}, 0.97)), small1x1()) << "strided: 14x14";
  EXPECT_EQ(choose(p, node(conv(64, 64, 1, 2), Shape{1, 64, 14, 14}, 0.97)), ConvKernel::Sparse);
  EXPECT_EQ(choose(p, node(conv(64, 64, 1), std::nullopt, 0.97)), ConvKernel::Sparse) << "unknown map size";
  // Depthwise convs stay depthwise however pruned.
  EXPECT_EQ(choose(p, node(conv(32, 32, 3, 1, 32), Shape{1, 32, 56, 56}, 0.95)), ConvKernel::Depthwise);
  KernelPolicy strict;
  strict.sparseThreshold = 0.95;
  EXPECT_EQ(choose(strict, node(conv(64, 64, 3), Shape{1, 64, 56, 56}, 0.9)), ConvKernel::Winograd);
  EXPECT_EQ(choose(strict, node(conv(64, 64, 1), Shape{1, 64, 7, 7}, 0.93)), small1x1());
}

TEST(KernelPolicy, AForcedKernelAppliesWhereItCanAndTheDefaultElsewhere) {
  KernelPolicy p;
  p.policy = "winograd";
  EXPECT_EQ(choose(p, node(conv(16, 16, 3), Shape{1, 16, 9, 9})), ConvKernel::Winograd);
  EXPECT_EQ(choose(p, node(conv(16, 16, 1), Shape{1, 16, 9, 9})), ConvKernel::Gemm1x1);
  p.policy = "gemm1x1";
  EXPECT_EQ(choose(p, node(conv(32, 16, 3), Shape{1, 16, 9, 9})),
            oneDnnOnAvx2Or(directOr(conv(32, 16, 3), ConvKernel::Im2col)));
  p.policy = "sparse";
  EXPECT_EQ(choose(p, node(conv(16, 16, 3), Shape{1, 16, 9, 9})), ConvKernel::Sparse);
  p.policy = "blas";  // a Gemm kernel: Convs keep the default
  EXPECT_EQ(choose(p, node(conv(64, 64, 3), Shape{1, 64, 9, 9})), oneDnnOr(ConvKernel::Winograd, false));
}

// Each SIMD target the host runs: the expectations above under its own rules.
TEST(KernelPolicy, DefaultFollowsTheSimdTargetInUse) {
  for (const std::string& target : simdTargetsOfThisHost()) {
    ASSERT_TRUE(useSimdTarget(target).ok());
    const KernelPolicy p;
    EXPECT_EQ(choose(p, node(conv(64, 64, 3), Shape{1, 64, 8, 8})), oneDnnOr(ConvKernel::Winograd, false)) << target;
    EXPECT_EQ(choose(p, node(conv(64, 64, 3, 2), Shape{1, 64, 56, 56})), oneDnnOr(ConvKernel::Im2col)) << target;
    EXPECT_EQ(choose(p, node(conv(192, 192, 7), Shape{1, 192, 17, 17})),
              oneDnnOr(directOr(conv(192, 192, 7), ConvKernel::Im2col))) << target;
    EXPECT_EQ(choose(p, node(conv(400, 400, 3, 1, 25), Shape{1, 400, 7, 7})),
              oneDnnOr(directOr(conv(400, 400, 3, 1, 25), ConvKernel::Im2col), false)) << target;
    if (target == "avx2") {
      EXPECT_EQ(convPrimitivesIsa(), ConvPrimitivesIsa::Avx2);
    }
  }
  ASSERT_TRUE(useSimdTarget("best").ok());
}

// Pointwise convs beside a depthwise conv take packed weights where the two pass
// values channel-blocked and that measured faster: expansions into it on maps up to
// 14x14 or from at most 16 channels, projections from it on maps up to 28x28; the
// GEMM elsewhere, and wherever the target has narrower vectors than 16 lanes.
TEST(KernelPolicy, DefaultPacksPointwiseConvsBesideADepthwiseOneWhereBlocksPay) {
  for (const std::string& target : simdTargetsOfThisHost()) {
    ASSERT_TRUE(useSimdTarget(target).ok());
    const KernelPolicy p;
    const ConvKernel packed = pointwisePackedFast() ? ConvKernel::Packed1x1 : ConvKernel::Gemm1x1;
    auto pick = [&](int64_t cin, int64_t cout, int64_t hw, bool feeds, bool fed) {
      ConvNode n = node(conv(cout, cin, 1), Shape{1, cin, hw, hw});
      n.feedsDepthwise = feeds;
      n.fedByDepthwise = fed;
      return choose(p, n);
    };
    EXPECT_EQ(pick(64, 384, 14, true, false), packed) << target;
    EXPECT_EQ(pick(64, 384, 14, false, false), ConvKernel::Gemm1x1) << target;
    EXPECT_EQ(pick(16, 96, 112, true, false), packed) << target;
    EXPECT_EQ(pick(24, 144, 56, true, false), packed) << target << ": expansions into blocks at any map size";
    EXPECT_EQ(pick(64, 120, 14, true, false), ConvKernel::Gemm1x1) << target << ": 120 channels are no whole blocks";
    EXPECT_EQ(pick(192, 32, 28, false, true), packed) << target;
    EXPECT_EQ(pick(144, 24, 56, false, true), ConvKernel::Gemm1x1) << target;
    EXPECT_EQ(pick(120, 40, 28, false, true), ConvKernel::Gemm1x1) << target << ": 120 channels are no whole blocks";
  }
  ASSERT_TRUE(useSimdTarget("best").ok());
}

// A stem feeding a depthwise conv writes channel blocks for it on the direct kernel
// where stems otherwise run along rows (16 lanes); 24 output channels are no whole blocks.
TEST(KernelPolicy, DefaultHasAStemWriteBlocksForTheDepthwiseConvItFeeds) {
  for (const std::string& target : simdTargetsOfThisHost()) {
    ASSERT_TRUE(useSimdTarget(target).ok());
    const KernelPolicy p;
    auto pick = [&](int64_t cout, bool feeds) {
      ConvNode n = node(conv(cout, 3, 3, 2), Shape{1, 3, 224, 224});
      n.feedsDepthwise = feeds;
      return choose(p, n);
    };
    const ConvKernel alone = directRowsFast() ? ConvKernel::DirectRows : ConvKernel::Im2col;
    EXPECT_EQ(pick(32, true), directRowsFast() ? ConvKernel::Direct : alone) << target;
    EXPECT_EQ(pick(32, false), alone) << target;
    EXPECT_EQ(pick(24, true), alone) << target;
  }
  ASSERT_TRUE(useSimdTarget("best").ok());
}

TEST(KernelPolicy, DefaultLeavesOneDnnsConvolutionsToSessionsOnItsGemm) {
  const KernelPolicy p;
  ConvNode n = node(conv(32, 128, 3), Shape{1, 128, 56, 56});
  n.gemm = GemmLibrary::Blis;  // a session that starts cold: oneDNN would generate its kernels on the first run
  EXPECT_EQ(choose(p, n), ConvKernel::Winograd);
  n.gemm = GemmLibrary::OneDnn;
  EXPECT_EQ(choose(p, n), oneDnnOr(ConvKernel::Winograd, false));
}

TEST(KernelPolicy, PerNodeKernelsOverrideThePolicyAndMustApply) {
  KernelPolicy p;
  p.policy = "im2col";
  p.perNode["c"] = "winograd";
  EXPECT_EQ(choose(p, node(conv(16, 16, 3), Shape{1, 16, 9, 9})), ConvKernel::Winograd);
  FakeTuner t;
  auto notApplying = chooseConvKernel(p, node(conv(16, 16, 1), Shape{1, 16, 9, 9}), t.fn());
  ASSERT_FALSE(notApplying.ok());
  EXPECT_EQ(notApplying.error().message, "kernel 'winograd' does not apply to this Conv");
  p.perNode["c"] = "blas";
  auto notConv = chooseConvKernel(p, node(conv(16, 16, 3), Shape{1, 16, 9, 9}), t.fn());
  ASSERT_FALSE(notConv.ok());
  EXPECT_EQ(notConv.error().message, "kernel 'blas' is not a Conv kernel");
  p.perNode.clear();
  p.perNode["other"] = "naive";
  EXPECT_EQ(choose(p, node(conv(16, 16, 3), Shape{1, 16, 9, 9})), ConvKernel::Im2col);
}

TEST(KernelPolicy, TuneTimesOnlyNodesWithAStaticShape) {
  KernelPolicy p;
  p.policy = "tune";
  FakeTuner t;
  t.answer = ConvKernel::Sparse;
  auto k = chooseConvKernel(p, node(conv(64, 64, 3), Shape{1, 64, 9, 9}), t.fn());
  ASSERT_TRUE(k.ok());
  EXPECT_EQ(*k, ConvKernel::Sparse);
  EXPECT_EQ(t.calls, 1);
  ConvNode dynamic = node(conv(64, 64, 3), std::nullopt);
  k = chooseConvKernel(p, dynamic, t.fn());
  ASSERT_TRUE(k.ok());
  EXPECT_EQ(*k, ConvKernel::Winograd) << "the default heuristic";
  ConvNode autoPad = node(conv(64, 64, 3), Shape{1, 64, 9, 9});
  autoPad.tunable = false;
  k = chooseConvKernel(p, autoPad, t.fn());
  ASSERT_TRUE(k.ok());
  EXPECT_EQ(t.calls, 1);
  p.perNode["c"] = "naive";
  k = chooseConvKernel(p, node(conv(64, 64, 3), Shape{1, 64, 9, 9}), t.fn());
  ASSERT_TRUE(k.ok());
  EXPECT_EQ(*k, ConvKernel::Naive) << "an override is not tuned";
  EXPECT_EQ(t.calls, 1);
}

TEST(KernelPolicy, TuningReturnsAnApplicableKernelOtherThanNaive) {
  for (const ConvAttrs& a : {conv(8, 8, 1), conv(8, 8, 3), conv(8, 8, 3, 2), conv(8, 8, 3, 1, 8)}) {
    std::vector<float> w(static_cast<size_t>(a.M * a.Cg * a.kh * a.kw), 0.5f), b(static_cast<size_t>(a.M), 0.1f);
    const ConvKernel k = tuneConvKernel(a, 1, 6, 6, w.data(), b.data(), Epilogue{}, 1, GemmLibrary::OneDnn);
    EXPECT_NE(k, ConvKernel::Naive);
    EXPECT_TRUE(convKernelApplies(k, a)) << convKernelName(k);
  }
}

TEST(KernelPolicy, GemmIsSparseFromTheThresholdOnUnlessForced) {
  const KernelPolicy p;
  auto k = chooseGemmKernel(p, "fc", 0.79);
  ASSERT_TRUE(k.ok());
  EXPECT_EQ(*k, GemmKernel::Blas);
  EXPECT_EQ(*chooseGemmKernel(p, "fc", 0.8), GemmKernel::Sparse);
  KernelPolicy forced;
  forced.policy = "blas";
  EXPECT_EQ(*chooseGemmKernel(forced, "fc", 0.99), GemmKernel::Blas);
  forced.policy = "winograd";  // a Conv kernel: Gemms keep the default
  EXPECT_EQ(*chooseGemmKernel(forced, "fc", 0.99), GemmKernel::Sparse);
  forced.perNode["fc"] = "naive";
  EXPECT_EQ(*chooseGemmKernel(forced, "fc", 0.99), GemmKernel::Naive);
  forced.perNode["fc"] = "im2col";
  auto bad = chooseGemmKernel(forced, "fc", 0.0);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "kernel 'im2col' is not a Gemm/MatMul kernel");
}

TEST(KernelPolicy, EveryPolicyNameIsKnown) {
  for (const auto& name : policyNames()) EXPECT_TRUE(isKnownPolicy(name)) << name;
  EXPECT_FALSE(isKnownPolicy("fastest"));
  EXPECT_EQ(policyNames().front(), "default");
}

}  // namespace
}  // namespace zp::runtime
