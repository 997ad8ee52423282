// Every kernel against the naive reference on random shapes: odd sizes, strides,
// asymmetric padding, dilation, groups, depthwise multipliers, pruned weights, epilogues;
// the SIMD kernels on every target this CPU runs (AVX-512 and AVX2 on an AVX-512 host).
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <cstring>
#include <random>

#include "libplan/runtime/kernels/internal.h"
#include "libplan/runtime/kernels/conv_primitives.h"
#include "libplan/runtime/kernels/kernels.h"
#include "libplan/runtime/kernels/matmul_panels.h"
#include "libplan/runtime/kernels/simd_target.h"
#include "libplan/runtime/kernels/sparse.h"
#include "libplan/runtime/kernels/transpose.h"

namespace zp::runtime {
namespace {

// A test of the SIMD kernels, run once per target this CPU runs.
class OnEachSimdTarget : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    ASSERT_TRUE(useSimdTarget(GetParam()).ok());
    // As a session runs its kernels: a GEMM on this thread stays on it (else
    // oneDNN's own OpenMP team sums the one-thread reference another way).
    useSingleThreadedGemm();
  }
  void TearDown() override { ASSERT_TRUE(useSimdTarget("best").ok()); }
};
class ConvKernels : public OnEachSimdTarget {};
class PoolKernels : public OnEachSimdTarget {};
class TransposeKernel : public OnEachSimdTarget {};
class Activation : public OnEachSimdTarget {};

std::string targetName(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param;
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Simd, ConvKernels, ::testing::ValuesIn(simdTargetsOfThisHost()), targetName);
INSTANTIATE_TEST_SUITE_P(Simd, PoolKernels, ::testing::ValuesIn(simdTargetsOfThisHost()), targetName);
INSTANTIATE_TEST_SUITE_P(Simd, TransposeKernel, ::testing::ValuesIn(simdTargetsOfThisHost()), targetName);
INSTANTIATE_TEST_SUITE_P(Simd, Activation, ::testing::ValuesIn(simdTargetsOfThisHost()), targetName);

// A worker's buffers never overlap another worker's, any other slot's or the shared
// slots', whatever sizes earlier kernels asked for; and a size already held is kept.
TEST(Scratch, WorkerBuffersAreEachWorkersOwn) {
  Scratch scratch;
  struct Span { const char* name; uintptr_t lo, hi; };
  std::vector<Span> spans;
  auto add = [&](const char* name, const float* p, size_t count) {
    spans.push_back({name, reinterpret_cast<uintptr_t>(p), reinterpret_cast<uintptr_t>(p + count)});
  };
  add("shared 0", scratch.floats(1000, 0), 1000);
  add("shared 1", scratch.floats(3000, 1), 3000);
  scratch.workerFloats(3, 100, 0);
  const std::vector<float*> tiles = scratch.workerFloats(3, 5000, 0);  // grows each worker's slot 0
  const std::vector<float*> outs = scratch.workerFloats(3, 700, 1);
  ASSERT_EQ(tiles.size(), 3u);
  ASSERT_EQ(outs.size(), 3u);
  for (size_t w = 0; w < 3; ++w) {
    EXPECT_EQ(reinterpret_cast<uintptr_t>(tiles[w]) % 64, 0u);
    add("tile", tiles[w], 5000);
    add("out", outs[w], 700);
  }
  for (size_t i = 0; i < spans.size(); ++i)
    for (size_t j = i + 1; j < spans.size(); ++j)
      EXPECT_TRUE(spans[i].hi <= spans[j].lo || spans[j].hi <= spans[i].lo) << spans[i].name << " " << spans[j].name;
  // Asking again for no more returns the same blocks; one worker loop is worker 0's alone.
  EXPECT_EQ(scratch.workerFloats(3, 4000, 0), tiles);
  EXPECT_EQ(scratch.workerFloats(1, 10, 1).front(), outs.front());
  EXPECT_EQ(scratch.workerFloats(0, 10, 1).size(), 1u);
  // What a session records for a cold start's reservation covers the workers' blocks.
  size_t held = 0;
  for (size_t b : scratch.sizes()) held += b;
  EXPECT_EQ(held, scratch.bytes());
  EXPECT_GE(held, (1000 + 3000 + 3 * (5000 + 700)) * sizeof(float));
  Scratch again;
  again.reserve(scratch.sizes());
  EXPECT_EQ(again.sizes(), scratch.sizes());
}

TEST(SimdTargets, TheHostRunsOneAndRefusesAnUnknownOne) {
  const auto targets = simdTargetsOfThisHost();
  ASSERT_FALSE(targets.empty());
  EXPECT_EQ(simdTargetInUse(), targets.front());
  const int64_t bestLanes = simdFloatLanes();
  ASSERT_TRUE(useSimdTarget(targets.back()).ok());
  EXPECT_EQ(simdTargetInUse(), targets.back());
  // The dispatch follows the target in use, also after the target is read back.
  if (targets.back() == "avx2") {
    EXPECT_EQ(simdFloatLanes(), 8);
    EXPECT_EQ(simdTargetsOfThisHost(), targets);
    EXPECT_EQ(simdTargetInUse(), targets.back());
    EXPECT_EQ(simdFloatLanes(), 8);
    EXPECT_EQ(convPrimitivesIsa(), ConvPrimitivesIsa::Avx2);
  }
  EXPECT_EQ(simdTargetsOfThisHost(), targets);  // what the host runs, whatever is in use
  const Status bad = useSimdTarget("mmx");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("it runs: " + targets.front()), std::string::npos) << bad.error().message;
  ASSERT_TRUE(useSimdTarget("best").ok());
  EXPECT_EQ(simdTargetInUse(), targets.front());
  EXPECT_EQ(simdFloatLanes(), bestLanes);
}

std::vector<float> randomSparseVec(size_t n, std::mt19937& rng, double zeroFraction = 0) {
  std::uniform_real_distribution<float> d(-1, 1);
  std::uniform_real_distribution<double> z(0, 1);
  std::vector<float> v(n);
  for (auto& x : v) x = z(rng) < zeroFraction ? 0.0f : d(rng);
  return v;
}

double relErr(const std::vector<float>& a, const std::vector<float>& ref) {
  double m = 0, r = 1e-12;
  for (size_t i = 0; i < a.size(); ++i) {
    m = std::max(m, static_cast<double>(std::fabs(a[i] - ref[i])));
    r = std::max(r, static_cast<double>(std::fabs(ref[i])));
  }
  return m / r;
}

struct ConvCase {
  int64_t N, C, H, W, M, kh, kw, group, sh, sw, dh, dw, pt, pl, pb, pr;
  double zeros;
  Epilogue::Kind act;
  ActFn fn = ActFn::Silu;  // with act == Function
};

std::string describe(const ConvCase& c) {
  return fmt::format("N{} C{} {}x{} M{} k{}x{} g{} s{}x{} d{}x{} pad{},{},{},{} zeros{} act{}", c.N, c.C, c.H, c.W, c.M,
                     c.kh, c.kw, c.group, c.sh, c.sw, c.dh, c.dw, c.pt, c.pl, c.pb, c.pr, c.zeros, int(c.act));
}

void checkConvCase(const ConvCase& c, std::mt19937& rng, int threads, std::map<std::string, int>* covered) {
  ConvAttrs a;
  a.M = c.M; a.Cg = c.C / c.group; a.kh = c.kh; a.kw = c.kw; a.group = c.group;
  a.sh = c.sh; a.sw = c.sw; a.dh = c.dh; a.dw = c.dw; a.padT = c.pt; a.padL = c.pl; a.padB = c.pb; a.padR = c.pr;
  const int64_t OH = a.outH(c.H), OW = a.outW(c.W);
  ASSERT_GT(OH, 0);
  ASSERT_GT(OW, 0);
  auto x = randomSparseVec(static_cast<size_t>(c.N * c.C * c.H * c.W), rng);
  auto w = randomSparseVec(static_cast<size_t>(a.M * a.Cg * a.kh * a.kw), rng, c.zeros);
  auto b = randomSparseVec(static_cast<size_t>(a.M), rng);
  Epilogue e;
  e.kind = c.act;
  e.lo = -0.25f;
  e.hi = 0.5f;
  e.fn = c.fn;
  e.params.alpha = 1.0f / 6;
  const size_t outN = static_cast<size_t>(c.N * a.M * OH * OW);
  std::vector<float> ref(outN, NAN);
  Scratch scratch;
  PackedWeights naive = transformConvWeights(ConvKernel::Naive, a, w.data(), b.data());
  runConv(ConvKernel::Naive, a, naive, x.data(), c.N, c.H, c.W, ref.data(), e, scratch, 1);
  // The reference itself against a direct formula at one output point.
  {
    const int64_t m = a.M - 1, oh = OH - 1, ow = OW / 2, g = m / (a.M / a.group);
    double s = b[static_cast<size_t>(m)];
    for (int64_t ci = 0; ci < a.Cg; ++ci)
      for (int64_t i = 0; i < a.kh; ++i)
        for (int64_t j = 0; j < a.kw; ++j) {
          int64_t ih = oh * a.sh - a.padT + i * a.dh, iw = ow * a.sw - a.padL + j * a.dw;
          if (ih < 0 || iw < 0 || ih >= c.H || iw >= c.W) continue;
          s += x[static_cast<size_t>(((g * a.Cg + ci) * c.H + ih) * c.W + iw)] * w[static_cast<size_t>(((m * a.Cg + ci) * a.kh + i) * a.kw + j)];
        }
    float expect = static_cast<float>(s);
    if (e.kind == Epilogue::Relu) expect = std::max(expect, 0.0f);
    if (e.kind == Epilogue::Clip) expect = std::min(std::max(expect, e.lo), e.hi);
    if (e.kind == Epilogue::Function) expect = activationReference(e.fn, e.params, expect);
    EXPECT_NEAR(ref[static_cast<size_t>((m * OH + oh) * OW + ow)], expect, 1e-4) << describe(c);
  }
  for (ConvKernel k : kAllConvKernels) {
    if (k == ConvKernel::Naive || !convKernelApplies(k, a)) continue;
    PackedWeights pw = transformConvWeights(k, a, w.data(), b.data());
    // Where oneDNN has nothing fast for the shape, onednn runs im2col on the same weights.
    const bool prepared = prepareConvKernel(k, a, c.N, c.H, c.W, &pw);
    for (GemmLibrary gemm : kAllGemmLibraries) {
      std::vector<float> y(outN, NAN);
      runConv(k, a, pw, x.data(), c.N, c.H, c.W, y.data(), e, scratch, threads, gemm);
      EXPECT_LE(relErr(y, ref), 1e-5) << convKernelName(k) << " " << gemmLibraryKey(gemm) << " threads " << threads
                                      << ": " << describe(c);
      if (threads == 1) continue;
      // The same bits as on one thread: work is split the same way whatever runs it.
      std::vector<float> one(outN, NAN);
      runConv(k, a, pw, x.data(), c.N, c.H, c.W, one.data(), e, scratch, 1, gemm);
      EXPECT_EQ(std::memcmp(one.data(), y.data(), outN * 4), 0)
          << convKernelName(k) << " " << gemmLibraryKey(gemm) << ": thread count changed the result: " << describe(c);
    }
    (*covered)[prepared ? convKernelName(k) : "im2col"]++;
    if (!e.clampOnly()) continue;
    // A residual added before the clamp: the kernel's own sums without the epilogue,
    // plus the residual, then clamped, as the unfused Add and Relu or Clip compute them.
    const auto r = randomSparseVec(outN, rng);
    std::vector<float> plain(outN, NAN), fused(outN, NAN);
    runConv(k, a, pw, x.data(), c.N, c.H, c.W, plain.data(), Epilogue{}, scratch, 1);
    runConv(k, a, pw, x.data(), c.N, c.H, c.W, fused.data(), e, scratch, threads, GemmLibrary::OneDnn, {}, r.data());
    const float lo = e.kind == Epilogue::Clip ? e.lo : e.kind == Epilogue::Relu ? 0.0f : -INFINITY;
    const float hi = e.kind == Epilogue::Clip ? e.hi : INFINITY;
    for (size_t i = 0; i < outN; ++i) plain[i] = std::min(std::max(plain[i] + r[i], lo), hi);
    EXPECT_EQ(std::memcmp(plain.data(), fused.data(), outN * 4), 0)
        << convKernelName(k) << " threads " << threads << ": the residual's sum differs from the unfused one: " << describe(c);
  }
}

TEST_P(ConvKernels, MatchNaiveOnHandPickedShapes) {
  std::mt19937 rng(1);
  std::map<std::string, int> covered;
  const std::vector<ConvCase> cases = {
      {1, 3, 7, 9, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, Epilogue::None},     // odd sizes, winograd with odd output
      {2, 4, 11, 6, 6, 3, 3, 1, 2, 2, 1, 1, 0, 1, 1, 0, 0, Epilogue::Relu},    // stride 2, asymmetric pads
      {1, 6, 9, 9, 4, 3, 3, 2, 1, 1, 2, 2, 2, 2, 2, 2, 0, Epilogue::Clip},     // groups + dilation
      {1, 8, 10, 7, 8, 3, 3, 8, 1, 1, 1, 1, 1, 1, 1, 1, 0, Epilogue::Relu},    // depthwise
      {1, 4, 10, 7, 8, 3, 3, 4, 2, 2, 1, 1, 1, 1, 1, 1, 0, Epilogue::None},    // depthwise, multiplier 2, stride 2
      {1, 5, 9, 8, 10, 5, 5, 5, 3, 1, 1, 2, 2, 1, 0, 3, 0, Epilogue::None},    // depthwise 5x5 x2, mixed strides
      {2, 16, 5, 5, 12, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, Epilogue::None},   // 1x1
      {1, 16, 9, 7, 12, 1, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, 0, Epilogue::Relu},   // strided 1x1
      {1, 12, 6, 6, 9, 1, 1, 3, 1, 1, 1, 1, 0, 0, 0, 0, 0, Epilogue::None},    // grouped 1x1
      {2, 70, 7, 9, 45, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, Epilogue::Clip},   // 1x1: a partial panel and tile
      {1, 33, 15, 13, 64, 1, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, 0, Epilogue::Relu}, // 1x1 strided, whole panels
      {1, 32, 14, 14, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0.92, Epilogue::Relu},  // pruned 3x3
      {1, 64, 8, 8, 48, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0.95, Epilogue::None},    // pruned 1x1
      {1, 3, 23, 17, 8, 7, 7, 1, 2, 2, 1, 1, 3, 3, 3, 3, 0, Epilogue::Relu},   // stem-like 7x7/2
      {1, 2, 4, 4, 3, 3, 3, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, Epilogue::None},     // winograd, single 2x2 tile
      {1, 3, 1, 13, 4, 1, 3, 1, 1, 1, 1, 1, 0, 1, 0, 1, 0, Epilogue::None},    // 1-D style row
      {1, 20, 300, 3, 4, 3, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0, 0.5, Epilogue::None}, // tall, > one sparse tile
      {1, 5, 21, 37, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, Epilogue::Clip},   // winograd: full and partial 8-tile blocks
      {1, 4, 33, 34, 5, 3, 3, 1, 1, 1, 1, 1, 0, 2, 1, 0, 0, Epilogue::Relu},   // winograd, asymmetric pads, even width
      {1, 6, 40, 41, 6, 3, 3, 6, 2, 2, 1, 1, 1, 1, 1, 1, 0, Epilogue::Clip},   // depthwise stride 2, several blocks
      // Depthwise on both of its paths: from the input with masks (small maps: flat for
      // "same" stride 1, by rows for stride 2) and the padded window (wide maps).
      {1, 5, 9, 9, 5, 3, 3, 5, 1, 1, 2, 2, 2, 2, 2, 2, 0, Epilogue::Relu},     // flat, dilated
      {1, 4, 7, 7, 8, 5, 5, 4, 1, 1, 1, 1, 2, 2, 2, 2, 0, Epilogue::Clip},     // flat, multiplier 2, 5x5
      {1, 3, 13, 35, 3, 3, 3, 3, 2, 2, 1, 1, 1, 0, 0, 1, 0, Epilogue::None},   // rows, stride 2, 3 blocks per row
      {1, 3, 20, 20, 3, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0, Epilogue::Relu},   // window: 400 outputs
      {1, 4, 21, 70, 4, 3, 3, 4, 2, 2, 1, 1, 1, 1, 1, 1, 0, Epilogue::Clip},   // window: stride 2 from 70 wide
      // Activation functions as epilogues: after the kernel's own bias, on every kernel.
      {1, 8, 17, 15, 8, 5, 5, 8, 2, 2, 1, 1, 2, 2, 2, 2, 0, Epilogue::Function, ActFn::Silu},       // depthwise 5x5/2
      {1, 7, 19, 13, 7, 7, 7, 7, 1, 1, 1, 1, 3, 3, 3, 3, 0, Epilogue::Function, ActFn::Gelu},       // depthwise 7x7
      {1, 9, 12, 11, 10, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, Epilogue::Function, ActFn::HardSwish}, // winograd
      {1, 16, 9, 7, 12, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, Epilogue::Function, ActFn::Sigmoid},    // 1x1
      {1, 6, 9, 9, 4, 3, 3, 2, 2, 1, 1, 1, 1, 0, 1, 1, 0, Epilogue::Function, ActFn::Tanh},         // grouped im2col
      // Batches of small maps: the images of a batch share one GEMM per group.
      {5, 6, 8, 8, 4, 3, 3, 2, 1, 1, 1, 1, 1, 1, 1, 1, 0, Epilogue::Relu},    // grouped 3x3, 5 images
      {3, 8, 7, 7, 6, 1, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, 0, Epilogue::Clip},    // strided 1x1, 3 images
      {4, 7, 5, 6, 9, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, Epilogue::None},    // 1x1, 4 images
      {1, 32, 14, 14, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0.92, Epilogue::Function, ActFn::HardSigmoid},  // sparse
      // Columns over 1 MB: im2col and the GEMM a few output rows at a time, a partial last tile.
      {1, 64, 24, 24, 40, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, Epilogue::Relu},     // 3x3, 18-row tiles
      {1, 80, 40, 37, 12, 3, 3, 2, 1, 1, 1, 1, 1, 1, 1, 1, 0, Epilogue::None},     // grouped, tiles per group
      {2, 16, 64, 60, 8, 5, 5, 1, 2, 2, 1, 1, 2, 2, 1, 2, 0, Epilogue::None},      // 5x5/2, two images
      // oneDNN's primitive in pieces: bands of output rows, each with its own padding, by panels.
      {1, 24, 70, 66, 80, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, Epilogue::Relu},     // 3 bands, 2 panels
      {2, 16, 75, 61, 20, 5, 3, 1, 2, 1, 2, 1, 2, 1, 3, 0, 0, Epilogue::Function, ActFn::Silu},  // strided, dilated
      // Grouped, 16 channels a group, on maps of one band: panels of whole groups (RegNet's).
      {1, 160, 14, 14, 160, 3, 3, 10, 1, 1, 1, 1, 1, 1, 1, 1, 0, Epilogue::Relu},  // 2 panels of 5 groups
      {2, 112, 7, 7, 112, 3, 3, 7, 2, 2, 1, 1, 1, 1, 1, 1, 0, Epilogue::Clip},     // strided, two images, 4 + 3 groups
      {1, 48, 9, 9, 96, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0, Epilogue::None},       // 32 outputs a group, a 1-group panel
      // Stems along rows: three vectors of positions and a partial one, 8 channels and a partial chunk.
      {1, 3, 30, 101, 20, 3, 3, 1, 2, 2, 1, 1, 1, 1, 1, 1, 0, Epilogue::Clip},      // 3x3/2, 51 outputs a row
      {2, 1, 12, 160, 9, 7, 7, 1, 1, 3, 1, 2, 3, 3, 3, 3, 0, Epilogue::Function, ActFn::HardSwish},  // 7x7, columns /3 dilated
  };
  for (int threads : {1, 2})
    for (const auto& c : cases) checkConvCase(c, rng, threads, &covered);
  for (const char* k : {"im2col", "gemm1x1", "winograd", "depthwise", "sparse", "packed1x1", "direct", "direct_rows"})
    EXPECT_GT(covered[k], 0) << k;
  if (convPrimitivesIsa() != ConvPrimitivesIsa::None) {
    EXPECT_GT(covered["onednn"], 0);
  }
}

TEST_P(ConvKernels, MatchNaiveOnRandomShapes) {
  std::mt19937 rng(2);
  std::map<std::string, int> covered;
  std::uniform_int_distribution<int> u(0, 1 << 30);
  for (int t = 0; t < 60; ++t) {
    ConvCase c{};
    c.N = 1 + u(rng) % 2;
    c.group = std::vector<int64_t>{1, 1, 2, 3}[static_cast<size_t>(u(rng) % 4)];
    c.C = c.group * (1 + u(rng) % 5);
    c.M = c.group * (1 + u(rng) % 4);
    if (u(rng) % 4 == 0) { c.group = c.C; c.M = c.C * (1 + u(rng) % 2); }  // depthwise
    c.kh = 1 + u(rng) % 4;
    c.kw = 1 + u(rng) % 4;
    c.sh = 1 + u(rng) % 3;
    c.sw = 1 + u(rng) % 3;
    c.dh = 1 + u(rng) % 2;
    c.dw = 1 + u(rng) % 2;
    if (u(rng) % 3 == 0) { c.kh = c.kw = 3; c.sh = c.sw = 1; c.dh = c.dw = 1; }
    c.pt = u(rng) % c.kh; c.pb = u(rng) % c.kh; c.pl = u(rng) % c.kw; c.pr = u(rng) % c.kw;
    c.H = c.dh * (c.kh - 1) + 1 + u(rng) % 9;
    c.W = c.dw * (c.kw - 1) + 1 + u(rng) % 9;
    c.zeros = (u(rng) % 3 == 0) ? 0.9 : 0.0;
    c.act = static_cast<Epilogue::Kind>(u(rng) % 3);
    checkConvCase(c, rng, 1 + t % 2, &covered);
  }
  EXPECT_GT(covered["winograd"], 0);
  EXPECT_GT(covered["depthwise"], 0);
}

// A random conv window: kernels of 1..maxKernel, strides 1..3, dilations 1..2, each pad
// below its kernel.
void randomWindow(std::mt19937& rng, int maxKernel, ConvAttrs& a) {
  std::uniform_int_distribution<int> u(0, 1 << 30);
  a.kh = 1 + u(rng) % maxKernel; a.kw = 1 + u(rng) % maxKernel;
  a.sh = 1 + u(rng) % 3; a.sw = 1 + u(rng) % 3;
  a.dh = 1 + u(rng) % 2; a.dw = 1 + u(rng) % 2;
  a.padT = u(rng) % a.kh; a.padB = u(rng) % a.kh; a.padL = u(rng) % a.kw; a.padR = u(rng) % a.kw;
}

// Any of the epilogues: none, ReLU, a clip to [-0.25, 0.5], or HardSwish.
Epilogue randomEpilogue(std::mt19937& rng) {
  std::uniform_int_distribution<int> u(0, 1 << 30);
  Epilogue e;
  e.kind = static_cast<Epilogue::Kind>(u(rng) % 4);
  e.lo = -0.25f;
  e.hi = 0.5f;
  e.fn = ActFn::HardSwish;
  return e;
}

// [N][C][P] planes <-> [N][C/b][P][b] channel blocks (C a multiple of b), written out plainly.
std::vector<float> changeLayout(const std::vector<float>& in, int64_t N, int64_t C, int64_t P, int64_t b, bool toBlocks) {
  std::vector<float> out(in.size());
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t p = 0; p < P; ++p) {
        const size_t plane = static_cast<size_t>((n * C + c) * P + p);
        const size_t block = static_cast<size_t>(((n * C + c / b * b) * P + p * b) + c % b);
        if (toBlocks) out[block] = in[plane];
        else out[plane] = in[block];
      }
  return out;
}

// The kernels that take channel-blocked values (kernels.h BlockedLayouts), in every
// combination of blocked input and output, against the same kernel on planes: the
// same bits (each output sums the same products in the same order), on random shapes
// whose channels come in whole blocks, at one and two threads.
TEST_P(ConvKernels, ChannelBlockedLayoutsGiveTheBitsOfPlanes) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> u(0, 1 << 30);
  const int64_t b = simdFloatLanes();
  std::map<std::string, int> covered;
  for (int t = 0; t < 72; ++t) {
    const bool depthwise = t % 3 == 1, direct = t % 3 == 2;
    ConvAttrs a;
    int64_t C = b * (1 + u(rng) % 5);
    if (depthwise) {
      a.group = C; a.Cg = 1; a.M = C;
      randomWindow(rng, 5, a);
    } else if (direct) {  // stems and the like: any input channels, blocks of 16 outputs
      C = 1 + u(rng) % 6;
      a.Cg = C; a.M = 16 * (1 + u(rng) % 4);
      randomWindow(rng, 5, a);
      if (a.kh * a.kw == 1) a.kw = 3;  // not a plain pointwise conv
    } else {
      a.Cg = C; a.M = b * (1 + u(rng) % 6);
      if (u(rng) % 4 == 0) a.sh = a.sw = 2;  // strided: blocked output only
    }
    const ConvKernel k = depthwise ? ConvKernel::Depthwise : direct ? ConvKernel::Direct : ConvKernel::Packed1x1;
    ASSERT_TRUE(convTakesBlockedOutput(k, a));
    const int64_t N = 1 + u(rng) % 2, H = a.dh * (a.kh - 1) + 1 + u(rng) % 40, W = a.dw * (a.kw - 1) + 1 + u(rng) % 40;
    const int64_t OH = a.outH(H), OW = a.outW(W);
    const int threads = 1 + t / 2 % 2;
    const Epilogue e = randomEpilogue(rng);
    const auto x = randomSparseVec(static_cast<size_t>(N * C * H * W), rng);
    const auto w = randomSparseVec(static_cast<size_t>(a.M * a.Cg * a.kh * a.kw), rng);
    const auto bias = randomSparseVec(static_cast<size_t>(a.M), rng);
    const size_t outN = static_cast<size_t>(N * a.M * OH * OW);
    Scratch scratch;
    std::vector<float> ref(outN, NAN), planes(outN, NAN);
    runConv(ConvKernel::Naive, a, transformConvWeights(ConvKernel::Naive, a, w.data(), bias.data()), x.data(), N, H, W,
            ref.data(), e, scratch, 1);
    const PackedWeights pw = transformConvWeights(k, a, w.data(), bias.data());
    runConv(k, a, pw, x.data(), N, H, W, planes.data(), e, scratch, threads);
    const std::string shape = fmt::format("{} N{} C{} M{} {}x{} k{}x{} s{}x{} pad{},{},{},{} act{} threads {}",
                                          convKernelName(k), N, C, a.M, H, W, a.kh, a.kw, a.sh, a.sw, a.padT, a.padL,
                                          a.padB, a.padR, int(e.kind), threads);
    ASSERT_LE(relErr(planes, ref), 1e-5) << shape;
    const auto xBlocks = C % b == 0 ? changeLayout(x, N, C, H * W, b, true) : std::vector<float>{};
    for (const BlockedLayouts layouts : {BlockedLayouts{true, false}, BlockedLayouts{false, true}, BlockedLayouts{true, true}}) {
      if (layouts.blockedInput && !convTakesBlockedInput(k, a)) continue;
      std::vector<float> y(outN, NAN);
      runConv(k, a, pw, layouts.blockedInput ? xBlocks.data() : x.data(), N, H, W, y.data(), e, scratch, threads,
              GemmLibrary::OneDnn, layouts);
      if (layouts.blockedOutput) y = changeLayout(y, N, a.M, OH * OW, b, false);
      EXPECT_EQ(std::memcmp(y.data(), planes.data(), outN * 4), 0)
          << "blocked input " << layouts.blockedInput << ", output " << layouts.blockedOutput << ": " << shape;
      covered[fmt::format("{} {}{}", convKernelName(k), int(layouts.blockedInput), int(layouts.blockedOutput))]++;
    }
  }
  for (const char* k : {"packed1x1", "depthwise"})
    for (const char* io : {"10", "01", "11"}) EXPECT_GT(covered[fmt::format("{} {}", k, io)], 3) << k << " " << io;
  EXPECT_GT(covered["direct 01"], 10);
}

// Each depthwise path on its own (the kernel picks one by map size): the channel-blocked
// tile, the rows from the input, the padded window, on random shapes with partial
// channel blocks, strides, dilations, asymmetric pads and every epilogue.
TEST_P(ConvKernels, DepthwisePathsMatchNaiveOnRandomShapes) {
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> u(0, 1 << 30);
  std::map<std::string, int> covered;
  for (int t = 0; t < 96; ++t) {
    ConvAttrs a;
    const int64_t C = 1 + u(rng) % 40, mult = u(rng) % 5 == 0 ? 2 : 1;
    a.group = C; a.Cg = 1; a.M = C * mult;
    randomWindow(rng, 7, a);
    // The last 16: maps up to 150 rows, cut into several bands of rows by the blocked path.
    const int64_t extent = t < 80 ? 30 : 150;
    const int64_t N = 1 + u(rng) % 2, H = a.dh * (a.kh - 1) + 1 + u(rng) % extent, W = a.dw * (a.kw - 1) + 1 + u(rng) % extent;
    const int threads = 1 + t % 2;
    const Epilogue e = randomEpilogue(rng);
    const auto x = randomSparseVec(static_cast<size_t>(N * C * H * W), rng);
    const auto w = randomSparseVec(static_cast<size_t>(a.M * a.kh * a.kw), rng);
    const auto b = randomSparseVec(static_cast<size_t>(a.M), rng);
    const size_t outN = static_cast<size_t>(N * a.M * a.outH(H) * a.outW(W));
    Scratch scratch;
    std::vector<float> ref(outN, NAN);
    runConv(ConvKernel::Naive, a, transformConvWeights(ConvKernel::Naive, a, w.data(), b.data()), x.data(), N, H, W,
            ref.data(), e, scratch, 1);
    const PackedWeights pw = transformConvWeights(ConvKernel::Depthwise, a, w.data(), b.data());
    const std::string shape = fmt::format("N{} C{} M{} {}x{} k{}x{} s{}x{} d{}x{} pad{},{},{},{} act{} threads {}", N, C,
                                          a.M, H, W, a.kh, a.kw, a.sh, a.sw, a.dh, a.dw, a.padT, a.padL, a.padB,
                                          a.padR, int(e.kind), threads);
    auto check = [&](const char* path, auto run) {
      std::vector<float> y(outN, NAN);
      run(y.data());
      EXPECT_LE(relErr(y, ref), 1e-5) << path << ": " << shape;
      covered[path]++;
    };
    if (depthwiseBlockedApplies(a))
      check("blocked", [&](float* y) { convDepthwiseBlocked(a, pw, x.data(), N, H, W, y, e, scratch, threads); });
    if (depthwiseRowsApplies(a))
      check("rows", [&](float* y) { convDepthwiseRows(a, pw, x.data(), N, H, W, y, e, threads); });
    check("window", [&](float* y) { convDepthwiseWindow(a, pw, x.data(), N, H, W, y, e, scratch, threads); });
  }
  EXPECT_GT(covered["window"], 0);
  EXPECT_GT(covered["blocked"], 20);
  EXPECT_GT(covered["rows"], 20);
}

// The direct kernel against the naive conv on random shapes: 1-6 groups (and 8-20), 8-32 output
// channels per group (blocks of 8 and of 16), 1-40 input channels per group, any kernel
// (1x1 only grouped), stride, dilation and padding, every epilogue, one and two
// threads, one and two images.
TEST_P(ConvKernels, DirectMatchesNaiveOnRandomShapes) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> u(0, 1 << 30);
  int covered = 0, ungrouped = 0;
  for (int t = 0; t < 96; ++t) {
    ConvAttrs a;
    // The last 16 with 8-20 groups: one band of rows per group on two threads as well.
    a.group = t < 80 ? 1 + u(rng) % 6 : 8 + u(rng) % 13;
    a.Cg = 1 + u(rng) % 40;
    a.M = a.group * 8 * (1 + u(rng) % 4);
    randomWindow(rng, 5, a);
    const int64_t N = 1 + u(rng) % 2, H = a.dh * (a.kh - 1) + 1 + u(rng) % 30, W = a.dw * (a.kw - 1) + 1 + u(rng) % 40;
    const int threads = 1 + t % 2;
    const Epilogue e = randomEpilogue(rng);
    const auto x = randomSparseVec(static_cast<size_t>(N * a.C() * H * W), rng);
    const auto w = randomSparseVec(static_cast<size_t>(a.M * a.Cg * a.kh * a.kw), rng);
    const auto b = randomSparseVec(static_cast<size_t>(a.M), rng);
    const size_t outN = static_cast<size_t>(N * a.M * a.outH(H) * a.outW(W));
    Scratch scratch;
    std::vector<float> ref(outN, NAN), y(outN, NAN);
    runConv(ConvKernel::Naive, a, transformConvWeights(ConvKernel::Naive, a, w.data(), b.data()), x.data(), N, H, W,
            ref.data(), e, scratch, 1);
    if (!convKernelApplies(ConvKernel::Direct, a)) continue;
    runConv(ConvKernel::Direct, a, transformConvWeights(ConvKernel::Direct, a, w.data(), b.data()), x.data(), N, H, W,
            y.data(), e, scratch, threads);
    // Sums of up to 1000 float products in another order than the naive conv's.
    const double tolerance = std::max(1e-5, 2e-6 * std::sqrt(double(a.Cg * a.kh * a.kw)));
    EXPECT_LE(relErr(y, ref), tolerance) << fmt::format(
        "N{} G{} Cg{} M{} {}x{} k{}x{} s{}x{} d{}x{} pad{},{},{},{} act{} threads {}", N, a.group, a.Cg, a.M, H, W,
        a.kh, a.kw, a.sh, a.sw, a.dh, a.dw, a.padT, a.padL, a.padB, a.padR, int(e.kind), threads);
    ++covered;
    ungrouped += a.group == 1;
  }
  EXPECT_GT(covered, 60);  // every shape but the ungrouped 1x1s
  EXPECT_GT(ungrouped, 5);
}

// Max pooling against the definition (max over the window's in-bounds inputs) on random
// windows, strides, dilations and pads, including end pads as large as ceil_mode makes them.
// A random pooling window and input: kernels of 1..maxKernel, strides 1..3, dilations 1..2
// when `dilate`, begin pads below the kernel, end pads up to kernel + stride - 1 (as
// large as ceil_mode makes them), inputs at least one window and up to 39 more.
struct PoolCase {
  ConvAttrs a;
  int64_t N = 0, C = 0, H = 0, W = 0;
};

PoolCase randomPoolCase(std::mt19937& rng, int maxKernel, bool dilate) {
  std::uniform_int_distribution<int> u(0, 1 << 30);
  PoolCase c;
  ConvAttrs& a = c.a;
  a.kh = 1 + u(rng) % maxKernel; a.kw = 1 + u(rng) % maxKernel;
  a.sh = 1 + u(rng) % 3; a.sw = 1 + u(rng) % 3;
  if (dilate) { a.dh = 1 + u(rng) % 2; a.dw = 1 + u(rng) % 2; }
  a.padT = u(rng) % a.kh; a.padL = u(rng) % a.kw;
  a.padB = u(rng) % (a.kh + a.sh); a.padR = u(rng) % (a.kw + a.sw);
  c.N = 1 + u(rng) % 2;
  c.C = 1 + u(rng) % 5;
  c.H = a.dh * (a.kh - 1) + 1 + u(rng) % 40;
  c.W = a.dw * (a.kw - 1) + 1 + u(rng) % 40;
  // As the pool op sets it, a third of the time: the end padding reaches just to the
  // last window's end, before the input's end in floor mode (negative).
  if (u(rng) % 3 == 0) {
    a.padB = 0; a.padR = 0;
    const int64_t OH = a.outH(c.H), OW = a.outW(c.W);
    a.padB = (OH - 1) * a.sh + a.dh * (a.kh - 1) + 1 - c.H - a.padT;
    a.padR = (OW - 1) * a.sw + a.dw * (a.kw - 1) + 1 - c.W - a.padL;
  }
  return c;
}

TEST_P(PoolKernels, MaxPoolMatchesDefinition) {
  std::mt19937 rng(4);
  for (int t = 0; t < 80; ++t) {
    const auto [a, N, C, H, W] = randomPoolCase(rng, 4, true);
    const int64_t OH = a.outH(H), OW = a.outW(W);
    auto x = randomSparseVec(static_cast<size_t>(N * C * H * W), rng);
    // Through the dispatch (the blocked kernel on narrow maps, the row kernels
    // elsewhere) and through the blocked kernel whatever the map.
    std::vector<float> y(static_cast<size_t>(N * C * OH * OW), NAN), yb(y.size(), NAN);
    Scratch scratch;
    runMaxPool(a, x.data(), N, C, H, W, y.data(), scratch, 1 + t % 2);
    maxPoolBlocked(a, x.data(), N * C, H, W, yb.data(), scratch, 1 + t % 2);
    ASSERT_EQ(std::memcmp(y.data(), yb.data(), y.size() * 4), 0) << "case " << t << ": the blocked kernel differs";
    for (int64_t nc = 0; nc < N * C; ++nc)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          float m = -INFINITY;
          for (int64_t i = 0; i < a.kh; ++i)
            for (int64_t j = 0; j < a.kw; ++j) {
              const int64_t ih = oh * a.sh - a.padT + i * a.dh, iw = ow * a.sw - a.padL + j * a.dw;
              if (ih >= 0 && ih < H && iw >= 0 && iw < W) m = std::max(m, x[static_cast<size_t>((nc * H + ih) * W + iw)]);
            }
          ASSERT_EQ(y[static_cast<size_t>((nc * OH + oh) * OW + ow)], m)
              << "case " << t << " k" << a.kh << "x" << a.kw << " s" << a.sh << "x" << a.sw << " d" << a.dh << "x"
              << a.dw << " at " << nc << "," << oh << "," << ow;
        }
  }
}

TEST_P(PoolKernels, AvgPoolMatchesDefinition) {
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> u(0, 1 << 30);
  for (int t = 0; t < 80; ++t) {
    const auto [a, N, C, H, W] = randomPoolCase(rng, 5, false);
    const int64_t OH = a.outH(H), OW = a.outW(W);
    auto x = randomSparseVec(static_cast<size_t>(N * C * H * W), rng);
    // Any divisors per row and column (zero allowed: the output is then 0).
    std::vector<float> rowCount(static_cast<size_t>(OH)), colCount(static_cast<size_t>(OW));
    for (auto& c : rowCount) c = static_cast<float>(u(rng) % 4);
    for (auto& c : colCount) c = static_cast<float>(1 + u(rng) % 4);
    std::vector<float> y(static_cast<size_t>(N * C * OH * OW), NAN), yb(y.size(), NAN);
    Scratch scratch;
    runAvgPool(a, rowCount.data(), colCount.data(), x.data(), N, C, H, W, y.data(), scratch, 1 + t % 2);
    // The blocked kernel whatever the map (the dispatch takes it on narrow maps only).
    avgPoolBlocked(a, rowCount.data(), colCount.data(), x.data(), N * C, H, W, yb.data(), scratch, 1 + t % 2);
    for (size_t i = 0; i < y.size(); ++i) ASSERT_NEAR(yb[i], y[i], 1e-5) << "case " << t << ": the blocked kernel";
    for (int64_t nc = 0; nc < N * C; ++nc)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double s = 0;
          for (int64_t i = 0; i < a.kh; ++i)
            for (int64_t j = 0; j < a.kw; ++j) {
              const int64_t ih = oh * a.sh - a.padT + i, iw = ow * a.sw - a.padL + j;
              if (ih >= 0 && ih < H && iw >= 0 && iw < W) s += x[static_cast<size_t>((nc * H + ih) * W + iw)];
            }
          const double count = rowCount[static_cast<size_t>(oh)] * colCount[static_cast<size_t>(ow)];
          const double expect = count > 0 ? s / count : 0.0;
          ASSERT_NEAR(y[static_cast<size_t>((nc * OH + oh) * OW + ow)], expect, 1e-5)
              << "case " << t << " k" << a.kh << "x" << a.kw << " s" << a.sh << "x" << a.sw << " at " << nc << ","
              << oh << "," << ow;
        }
  }
}

// A product's epilogue of the given kind: the clip to [-0.1, 0.3], the function GELU.
Epilogue gemmEpilogue(Epilogue::Kind kind) {
  Epilogue e;
  e.kind = kind;
  e.lo = -0.1f;
  e.hi = 0.3f;
  e.fn = ActFn::Gelu;
  return e;
}

TEST(GemmKernels, MatchNaive) {
  std::mt19937 rng(3);
  struct Case { int64_t rows, K, N; bool bT; float alpha, beta; double zeros; Epilogue::Kind act; };
  for (const Case& c : std::vector<Case>{{1, 17, 9, false, 1, 1, 0, Epilogue::None},
                                         {5, 33, 7, true, 0.5f, 2, 0, Epilogue::Relu},
                                         {3, 64, 40, true, 1, 1, 0.9, Epilogue::None},
                                         {1, 128, 31, false, 1, 0, 0.95, Epilogue::Clip},
                                         {65, 24, 48, true, 1, 1, 0.5, Epilogue::None},
                                         {7, 40, 19, false, 1, 1, 0, Epilogue::Function},
                                         {300, 24, 130, true, 1, 1, 0, Epilogue::Function}}) {
    auto x = randomSparseVec(static_cast<size_t>(c.rows * c.K), rng);
    auto b = randomSparseVec(static_cast<size_t>(c.K * c.N), rng, c.zeros);
    auto bias = randomSparseVec(static_cast<size_t>(c.N), rng);
    const Epilogue e = gemmEpilogue(c.act);
    std::vector<float> ref(static_cast<size_t>(c.rows * c.N));
    PackedWeights pn = transformGemmWeights(GemmKernel::Naive, c.K, c.N, b.data(), c.bT, bias.data(), c.alpha, c.beta);
    runGemm(GemmKernel::Naive, c.K, c.N, pn, x.data(), c.rows, ref.data(), e, 1);
    // Spot check the reference.
    double s = c.beta * bias[0];
    for (int64_t k = 0; k < c.K; ++k) s += c.alpha * x[static_cast<size_t>(k)] * (c.bT ? b[static_cast<size_t>(k)] : b[static_cast<size_t>(k * c.N)]);
    float expect = static_cast<float>(s);
    if (c.act == Epilogue::Relu) expect = std::max(expect, 0.0f);
    if (c.act == Epilogue::Clip) expect = std::min(std::max(expect, e.lo), e.hi);
    if (c.act == Epilogue::Function) expect = activationReference(e.fn, e.params, expect);
    EXPECT_NEAR(ref[0], expect, 1e-4);
    for (GemmKernel k : {GemmKernel::Blas, GemmKernel::Sparse})
      for (GemmLibrary gemm : kAllGemmLibraries)
        for (int threads : {1, 2}) {
          PackedWeights pw = transformGemmWeights(k, c.K, c.N, b.data(), c.bT, bias.data(), c.alpha, c.beta);
          std::vector<float> y(ref.size(), NAN);
          runGemm(k, c.K, c.N, pw, x.data(), c.rows, y.data(), e, threads, gemm);
          EXPECT_LE(relErr(y, ref), 1e-5) << gemmKernelName(k) << " " << gemmLibraryKey(gemm) << " rows " << c.rows
                                          << " K " << c.K;
        }
  }
}

// Panels of every width class (one, several, a narrow remainder), rows from two to
// several row blocks, each epilogue; the same bits on one and two threads.
TEST(GemmKernels, MatmulPanelsMatchNaive) {
  std::mt19937 rng(5);
  struct Case { int64_t rows, K, N; Epilogue::Kind act; };
  int built = 0;
  for (const Case& c : std::vector<Case>{{2, 17, 9, Epilogue::None},
                                         {37, 64, 200, Epilogue::Relu},
                                         {130, 96, 385, Epilogue::Function},
                                         {5, 300, 1000, Epilogue::Clip},
                                         {197, 48, 192, Epilogue::None},
                                         {601, 40, 100, Epilogue::Relu}}) {  // row blocks of two heights
    auto x = randomSparseVec(static_cast<size_t>(c.rows * c.K), rng);
    auto w = randomSparseVec(static_cast<size_t>(c.N * c.K), rng);
    auto bias = randomSparseVec(static_cast<size_t>(c.N), rng);
    const Epilogue e = gemmEpilogue(c.act);
    std::vector<float> ref(static_cast<size_t>(c.rows * c.N));
    PackedWeights pn = transformGemmWeights(GemmKernel::Naive, c.K, c.N, w.data(), true, bias.data(), 1, 1);
    runGemm(GemmKernel::Naive, c.K, c.N, pn, x.data(), c.rows, ref.data(), e, 1);
    auto panels = MatmulPanels::make(w.data(), c.K, c.N, c.rows);
    if (!panels) continue;  // no optimised oneDNN matmul on this CPU
    ++built;
    EXPECT_EQ(panels->rows(), c.rows);
    EXPECT_GE(panels->bytes(), static_cast<size_t>(c.N * c.K * 4));
    std::vector<float> one(ref.size(), NAN), two(ref.size(), NAN);
    panels->run(x.data(), bias.data(), e, one.data(), 1);
    panels->run(x.data(), bias.data(), e, two.data(), 2);
    EXPECT_LE(relErr(one, ref), 5e-5) << c.rows << "x" << c.K << "x" << c.N;  // float sums of up to 300 terms
    EXPECT_EQ(std::memcmp(one.data(), two.data(), one.size() * 4), 0) << "thread count changed the result";
  }
  if (gemmLibraryName(GemmLibrary::OneDnn).find("avx512") != std::string::npos) {
    EXPECT_EQ(built, 6);
  }
}

// Tiles cut at every edge (sizes around 16), planes at scattered offsets, leading
// dimensions wider than the planes, one and two threads.
TEST_P(TransposeKernel, MatchesTheDefinitionOnRandomPlanes) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int64_t> side(1, 70), extra(0, 5), planes(1, 4);
  for (int trial = 0; trial < 60; ++trial) {
    const int64_t rows = side(rng), cols = side(rng), ld = rows + extra(rng), p = planes(rng);
    const int64_t planeSize = ld * cols + extra(rng);
    std::vector<uint32_t> src(static_cast<size_t>(p * planeSize));
    for (auto& v : src) v = static_cast<uint32_t>(rng());
    std::vector<int64_t> offsets;
    for (int64_t i = p; i-- > 0;) offsets.push_back(i * planeSize);  // planes in reverse order
    for (int threads : {1, 2}) {
      std::vector<uint32_t> dst(static_cast<size_t>(p * rows * cols + 1), 0xdeadbeef);
      transposePlanes(src.data(), offsets, rows, cols, ld, dst.data(), threads);
      int64_t wrong = 0;
      for (int64_t q = 0; q < p; ++q)
        for (int64_t a = 0; a < rows; ++a)
          for (int64_t b = 0; b < cols; ++b)
            wrong += dst[static_cast<size_t>((q * rows + a) * cols + b)] !=
                     src[static_cast<size_t>(offsets[static_cast<size_t>(q)] + a + b * ld)];
      EXPECT_EQ(wrong, 0) << rows << "x" << cols << " ld " << ld << " planes " << p << " threads " << threads;
      EXPECT_EQ(dst.back(), 0xdeadbeefu) << "wrote past the planes";
    }
  }
}

// Both GEMM libraries against the definition with transposes, leading dimensions
// wider than the matrices, alpha and beta, and products split over threads.
TEST(GemmLibraries, MatchTheDefinitionWithTransposesAndStrides) {
  std::mt19937 rng(4);
  struct Case { int64_t M, N, K; bool tA, tB; float alpha, beta; int threads; };
  for (const Case& c : std::vector<Case>{{3, 5, 7, false, false, 1, 0, 1},
                                         {17, 9, 33, true, false, 0.5f, 1, 1},
                                         {8, 31, 4, false, true, 2, -1, 1},
                                         {65, 70, 19, true, true, 1, 0.5f, 1},
                                         {129, 160, 100, false, false, 1, 0, 2},   // over the split threshold
                                         {200, 40, 300, false, true, 1, 1, 2}}) {
    const int64_t lda = (c.tA ? c.M : c.K) + 3, ldb = (c.tB ? c.K : c.N) + 2, ldc = c.N + 5;
    auto A = randomSparseVec(static_cast<size_t>((c.tA ? c.K : c.M) * lda), rng);
    auto B = randomSparseVec(static_cast<size_t>((c.tB ? c.N : c.K) * ldb), rng);
    auto C0 = randomSparseVec(static_cast<size_t>(c.M * ldc), rng);
    std::vector<float> ref = C0;
    for (int64_t i = 0; i < c.M; ++i)
      for (int64_t j = 0; j < c.N; ++j) {
        double s = 0;
        for (int64_t k = 0; k < c.K; ++k)
          s += static_cast<double>(c.tA ? A[static_cast<size_t>(k * lda + i)] : A[static_cast<size_t>(i * lda + k)]) *
               (c.tB ? B[static_cast<size_t>(j * ldb + k)] : B[static_cast<size_t>(k * ldb + j)]);
        float& r = ref[static_cast<size_t>(i * ldc + j)];
        r = static_cast<float>(c.alpha * s + c.beta * r);
      }
    for (GemmLibrary gemm : kAllGemmLibraries) {
      std::vector<float> C = C0;
      sgemmRowMajor(c.tA, c.tB, c.M, c.N, c.K, c.alpha, A.data(), lda, B.data(), ldb, c.beta, C.data(), ldc,
                    c.threads, gemm);
      EXPECT_LE(relErr(C, ref), 1e-5) << gemmLibraryKey(gemm) << " M " << c.M << " N " << c.N << " K " << c.K;
      // Padding between rows is left alone.
      for (int64_t i = 0; i < c.M; ++i)
        for (int64_t j = c.N; j < ldc; ++j)
          ASSERT_EQ(C[static_cast<size_t>(i * ldc + j)], C0[static_cast<size_t>(i * ldc + j)]) << gemmLibraryKey(gemm);
    }
  }
}

TEST(GemmLibraries, NamesParseAndReportTheLibrary) {
  for (GemmLibrary g : kAllGemmLibraries) {
    GemmLibrary back{};
    ASSERT_TRUE(parseGemmLibrary(gemmLibraryKey(g), &back));
    EXPECT_EQ(back, g);
  }
  GemmLibrary unused{};
  EXPECT_FALSE(parseGemmLibrary("openblas", &unused));
  EXPECT_EQ(gemmLibraryName(GemmLibrary::Blis).rfind("BLIS ", 0), 0u) << gemmLibraryName(GemmLibrary::Blis);
  EXPECT_EQ(gemmLibraryName(GemmLibrary::OneDnn).rfind("oneDNN ", 0), 0u) << gemmLibraryName(GemmLibrary::OneDnn);
}

TEST_P(ConvKernels, SparseTransformStoresOnlyNonzeros) {
  std::mt19937 rng(4);
  ConvAttrs a;
  a.M = 16; a.Cg = 16; a.kh = a.kw = 3;
  auto w = randomSparseVec(16 * 16 * 9, rng, 0.9);
  int64_t nz = 0;
  for (float v : w) nz += v != 0;
  PackedWeights pw = transformConvWeights(ConvKernel::Sparse, a, w.data(), nullptr);
  EXPECT_EQ(pw.get("vals").count, nz);
  EXPECT_EQ(pw.get("code").count, nz);
  EXPECT_EQ(pw.get("segptr").count, 16 * 3);  // 16 input channels: 2 segments of 8, plus the end
  EXPECT_EQ(pw.get("segptr").as<int32_t>()[16 * 3 - 1], nz);
  PackedWeights wino = transformConvWeights(ConvKernel::Winograd, a, w.data(), nullptr);
  EXPECT_EQ(wino.get("U").count, 16 * 16 * 16);  // 4x4 tiles: 16/9 of the raw weights
}

// The sparse kernel's own paths: stride phases (2, 3, with dilation), flat planes of
// small maps and their partial register blocks, several channel chunks, many tiles,
// empty rows and all-zero weights.
TEST_P(ConvKernels, SparseMatchesNaiveOnItsPaths) {
  std::mt19937 rng(6);
  const std::vector<ConvCase> cases = {
      {1, 64, 30, 30, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0.9, Epilogue::Relu},    // chunks, tiles
      {1, 96, 14, 14, 40, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0.9, Epilogue::None},    // 14x14, 12 segments
      {2, 130, 7, 7, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0.9, Epilogue::Clip},     // 7x7: 63 flat outputs
      {1, 40, 3, 5, 9, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0.8, Epilogue::None},       // one partial vector
      {1, 20, 1, 1, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0.5, Epilogue::Relu},       // 1x1 map, padded
      {1, 64, 29, 31, 48, 3, 3, 1, 2, 2, 1, 1, 1, 1, 1, 1, 0.9, Epilogue::Relu},    // stride 2, odd sizes
      {1, 3, 45, 47, 16, 7, 7, 1, 2, 2, 1, 1, 3, 3, 3, 3, 0.9, Epilogue::Relu},     // stem 7x7/2
      {1, 72, 28, 28, 32, 1, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, 0.9, Epilogue::None},    // 1x1/2: one phase
      {1, 16, 20, 19, 12, 3, 3, 1, 3, 2, 1, 1, 2, 1, 0, 2, 0.7, Epilogue::None},    // strides 3x2, odd pads
      {1, 12, 21, 22, 10, 3, 3, 1, 2, 2, 2, 2, 2, 2, 2, 2, 0.7, Epilogue::Relu},    // stride 2, dilation 2
      {1, 12, 17, 23, 10, 3, 5, 1, 2, 3, 2, 1, 1, 2, 2, 1, 0.7, Epilogue::Clip},    // all phases mixed
      {1, 10, 5, 40, 6, 1, 9, 1, 1, 1, 1, 1, 0, 4, 0, 4, 0.8, Epilogue::None},      // 1x9, long rows
      {2, 24, 12, 11, 18, 3, 3, 3, 1, 2, 1, 1, 1, 1, 1, 1, 0.85, Epilogue::Relu},   // groups, stride 1x2
      {1, 32, 9, 9, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0.99, Epilogue::None},     // mostly empty rows
      {1, 8, 6, 6, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1.0, Epilogue::Relu},        // no nonzeros at all
      // No extra plane columns (kw = 1): accumulated in the output itself.
      {1, 200, 9, 9, 24, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0.8, Epilogue::Clip},     // 2 chunks, partial vector
      {2, 16, 12, 10, 8, 3, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0, 0.7, Epilogue::Relu},     // 3x1, row padding
      {1, 24, 33, 35, 40, 1, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, 0.9, Epilogue::None},    // 1x1/2, several tiles
  };
  for (int threads : {1, 2})
    for (const auto& c : cases) {
      std::map<std::string, int> covered;
      checkConvCase(c, rng, threads, &covered);
      EXPECT_EQ(covered["sparse"], 1) << describe(c);
    }
}

// Output channels whose nonzeros all sit in the first input channels: later channel
// chunks are empty for them, and the activation must still be applied after the last.
TEST_P(ConvKernels, SparseAppliesTheActivationAfterEmptyChunks) {
  std::mt19937 rng(8);
  for (int64_t k : {1, 3}) {
    ConvAttrs a;
    a.M = 6; a.Cg = 256; a.kh = a.kw = k; a.padT = a.padL = a.padB = a.padR = k / 2;
    const int64_t H = 9, W = 9, khw = k * k;
    auto x = randomSparseVec(static_cast<size_t>(a.Cg * H * W), rng);
    auto w = randomSparseVec(static_cast<size_t>(a.M * a.Cg * khw), rng, 0.5);
    for (int64_t m = 0; m < a.M; ++m)
      std::fill(w.begin() + (m * a.Cg + 96) * khw, w.begin() + (m + 1) * a.Cg * khw, 0.0f);
    auto b = randomSparseVec(static_cast<size_t>(a.M), rng);
    for (Epilogue::Kind act : {Epilogue::Relu, Epilogue::Clip}) {
      Epilogue e;
      e.kind = act;
      e.lo = -0.25f;
      e.hi = 0.5f;
      Scratch scratch;
      std::vector<float> ref(static_cast<size_t>(a.M * H * W)), y(ref.size());
      PackedWeights naive = transformConvWeights(ConvKernel::Naive, a, w.data(), b.data());
      runConv(ConvKernel::Naive, a, naive, x.data(), 1, H, W, ref.data(), e, scratch, 1);
      PackedWeights sparse = transformConvWeights(ConvKernel::Sparse, a, w.data(), b.data());
      runConv(ConvKernel::Sparse, a, sparse, x.data(), 1, H, W, y.data(), e, scratch, 1);
      EXPECT_LE(relErr(y, ref), 1e-5) << "k " << k << " act " << int(act);
    }
  }
}

// The vectorized activation functions against the std:: ones, on random inputs and the
// edges of each approximation's ranges; and the same bits for a value wherever it
// sits in an array (tails go through the vector code too).
TEST_P(Activation, MatchesTheStdFunctionsAndDoesNotDependOnPosition) {
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> d(-12, 12);
  std::vector<float> x = {0.0f, -0.0f, 1e-8f, -1e-8f, 0.49f, -0.49f, 0.5f, -0.5f, 0.51f, 3.0f, -3.0f,
                          20.0f, -20.0f, 80.0f, -80.0f, 88.5f, -88.5f, 100.0f, -100.0f, 300.0f, -300.0f};
  for (int i = 0; i < 2000; ++i) x.push_back(d(rng));
  ActParams p;
  p.alpha = 1.0f / 6;
  for (ActFn f : {ActFn::Sigmoid, ActFn::Silu, ActFn::HardSigmoid, ActFn::HardSwish, ActFn::Gelu, ActFn::Tanh,
                  ActFn::Erf, ActFn::Exp}) {
    std::vector<float> y(x.size());
    applyActivation(f, p, x.data(), y.data(), static_cast<int64_t>(x.size()));
    for (size_t i = 0; i < x.size(); ++i) {
      const float ref = activationReference(f, p, x[i]);
      if (f == ActFn::Exp && (x[i] > 88.0f || x[i] < -87.0f)) continue;  // clamped to the normal range
      const float tol = f == ActFn::Exp ? 1e-6f * std::fabs(ref) : 1e-6f * std::max(1.0f, std::fabs(ref));
      ASSERT_NEAR(y[i], ref, tol) << "fn " << int(f) << " x " << x[i];
    }
    // Shifted by 1..17 positions and cut to odd lengths: the same bits.
    for (size_t shift = 1; shift < 18; shift += 4) {
      const int64_t n = static_cast<int64_t>(x.size() - shift) - 3;
      std::vector<float> z(static_cast<size_t>(n));
      applyActivation(f, p, x.data() + shift, z.data(), n);
      ASSERT_EQ(std::memcmp(z.data(), y.data() + shift, z.size() * 4), 0) << "fn " << int(f) << " shift " << shift;
    }
    // With a bias: f(x + bias).
    std::vector<float> yb(x.size()), xb(x.size());
    for (size_t i = 0; i < x.size(); ++i) xb[i] = x[i] + 0.25f;
    applyActivation(f, p, x.data(), yb.data(), static_cast<int64_t>(x.size()), 0.25f);
    applyActivation(f, p, xb.data(), y.data(), static_cast<int64_t>(x.size()));
    ASSERT_EQ(std::memcmp(yb.data(), y.data(), y.size() * 4), 0) << "fn " << int(f);
  }
}

}  // namespace
}  // namespace zp::runtime
