// The col2im ConvTranspose kernel against the naive one on random geometries:
// 1-3 spatial dims, groups, strides, dilations, pads, output padding, 1 and 2
// threads, both GEMM libraries.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "libplan/runtime/kernels/conv_transpose.h"
#include "tests/runtime/test_util.h"

namespace zp::runtime {
namespace {

using test_util::randomVec;

ConvTransposeGeom randomGeom(std::mt19937& rng) {
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  ConvTransposeGeom g;
  g.N = pick(1, 2);
  g.group = pick(1, 3);
  g.C = g.group * pick(1, 4);
  g.M = g.group * pick(1, 4);
  const int64_t sd = pick(1, 3);
  for (int64_t d = 3 - sd; d < 3; ++d) {
    const size_t i = static_cast<size_t>(d);
    g.in[i] = pick(1, sd == 3 ? 4 : 7);
    g.kernel[i] = pick(1, 4);
    g.stride[i] = pick(1, 3);
    g.dil[i] = pick(1, 2);
    const int64_t full = g.stride[i] * (g.in[i] - 1) + g.dil[i] * (g.kernel[i] - 1) + 1;
    g.padBegin[i] = pick(0, std::min<int64_t>(2, full - 1));
    const int64_t padEnd = pick(0, std::min<int64_t>(2, full - 1 - g.padBegin[i]));
    const int64_t outPad = pick(0, g.stride[i] - 1);
    g.out[i] = full + outPad - g.padBegin[i] - padEnd;
  }
  return g;
}

TEST(ConvTransposeKernels, Col2imMatchesNaiveOnRandomGeometries) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 300; ++trial) {
    const ConvTransposeGeom g = randomGeom(rng);
    auto x = randomVec(g.N * g.C * g.inSize(), rng);
    auto w = randomVec(g.C * (g.M / g.group) * g.kernelSize(), rng);
    auto b = randomVec(g.M, rng);
    const bool bias = trial % 2 == 0;
    Scratch scratch;
    std::vector<float> ref(static_cast<size_t>(g.N * g.M * g.outSize()), NAN);
    runConvTranspose(ConvTransposeKernel::Naive, g, x.data(), w.data(), bias ? b.data() : nullptr, ref.data(), scratch, 1);
    for (GemmLibrary lib : kAllGemmLibraries)
      for (int threads : {1, 2}) {
        std::vector<float> y(ref.size(), NAN);
        runConvTranspose(ConvTransposeKernel::Col2im, g, x.data(), w.data(), bias ? b.data() : nullptr, y.data(),
                         scratch, threads, lib);
        double worst = 0, scale = 1e-6;
        for (size_t i = 0; i < y.size(); ++i) {
          ASSERT_FALSE(std::isnan(y[i])) << "trial " << trial << " element " << i;
          worst = std::max(worst, static_cast<double>(std::fabs(y[i] - ref[i])));
          scale = std::max(scale, static_cast<double>(std::fabs(ref[i])));
        }
        ASSERT_LE(worst / scale, 1e-5) << "trial " << trial << " " << gemmLibraryKey(lib) << " threads " << threads;
      }
  }
}

// Stride 2, kernel 2, no padding on a 1x1 -> 2x2 map: each output is one product.
TEST(ConvTransposeKernels, NaiveMatchesTheDefinitionOnAHandExample) {
  ConvTransposeGeom g;
  g.C = 1;
  g.M = 1;
  g.in = {1, 2, 1};
  g.kernel = {1, 2, 2};
  g.stride = {1, 2, 1};
  g.out = {1, 4, 2};
  const float x[2] = {1, 10}, w[4] = {1, 2, 3, 4}, b[1] = {0.5f};
  float y[8];
  Scratch scratch;
  for (auto k : {ConvTransposeKernel::Naive, ConvTransposeKernel::Col2im}) {
    runConvTranspose(k, g, x, w, b, y, scratch, 1);
    const float expect[8] = {1.5f, 2.5f, 3.5f, 4.5f, 10.5f, 20.5f, 30.5f, 40.5f};
    for (int i = 0; i < 8; ++i) EXPECT_FLOAT_EQ(y[i], expect[i]) << convTransposeKernelName(k) << " " << i;
  }
}

}  // namespace
}  // namespace zp::runtime
