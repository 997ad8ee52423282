// The vol2col 3-D Conv kernel against the naive one on random geometries: groups,
// strides, dilations, pads, bias and activation, 1 and 2 threads, both GEMM libraries.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "libplan/runtime/kernels/conv_volumetric.h"
#include "tests/runtime/test_util.h"

namespace zp::runtime {
namespace {

using test_util::randomVec;

ConvVolumetricGeom randomVolumetricGeom(std::mt19937& rng) {
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  ConvVolumetricGeom g;
  g.N = pick(1, 2);
  g.group = pick(1, 3);
  g.C = g.group * pick(1, 3);
  g.M = g.group * pick(1, 4);
  for (size_t d = 0; d < 3; ++d) {
    g.in[d] = pick(1, 7);
    g.kernel[d] = pick(1, 3);
    g.stride[d] = pick(1, 3);
    g.dil[d] = pick(1, 2);
    const int64_t ek = g.dil[d] * (g.kernel[d] - 1) + 1;
    g.padBegin[d] = pick(0, 2);
    const int64_t padEnd = std::max<int64_t>(pick(0, 2), ek - g.in[d] - g.padBegin[d]);  // window fits at least once
    g.out[d] = (g.in[d] + g.padBegin[d] + padEnd - ek) / g.stride[d] + 1;
  }
  return g;
}

TEST(ConvVolumetricKernels, Vol2colMatchesNaiveOnRandomGeometries) {
  std::mt19937 rng(17);
  for (int trial = 0; trial < 200; ++trial) {
    const ConvVolumetricGeom g = randomVolumetricGeom(rng);
    auto x = randomVec(g.N * g.C * g.inSize(), rng);
    auto w = randomVec(g.M * (g.C / g.group) * g.kernelSize(), rng);
    auto b = randomVec(g.M, rng);
    const float* bias = trial % 2 == 0 ? b.data() : nullptr;
    Epilogue e;
    if (trial % 3 == 1) e.kind = Epilogue::Relu;
    if (trial % 3 == 2) { e.kind = Epilogue::Clip; e.lo = -0.5f; e.hi = 0.5f; }
    Scratch scratch;
    std::vector<float> ref(static_cast<size_t>(g.N * g.M * g.outSize()), NAN);
    runConvVolumetric(ConvVolumetricKernel::Naive, g, x.data(), w.data(), bias, e, ref.data(), scratch, 1);
    for (GemmLibrary lib : kAllGemmLibraries)
      for (int threads : {1, 2}) {
        std::vector<float> y(ref.size(), NAN);
        runConvVolumetric(ConvVolumetricKernel::Vol2col, g, x.data(), w.data(), bias, e, y.data(), scratch, threads, lib);
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

// A 2x2x2 kernel over a 2x2x2 input without padding: one output, the dot product.
TEST(ConvVolumetricKernels, BothKernelsMatchTheDefinitionOnAHandExample) {
  ConvVolumetricGeom g;
  g.in = {2, 2, 2};
  g.kernel = {2, 2, 2};
  g.out = {1, 1, 1};
  const float x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, w[8] = {1, 0, 0, 0, 0, 0, 0, 10}, b[1] = {0.5f};
  Scratch scratch;
  for (auto k : {ConvVolumetricKernel::Naive, ConvVolumetricKernel::Vol2col}) {
    float y = 0;
    runConvVolumetric(k, g, x, w, b, Epilogue{}, &y, scratch, 1);
    EXPECT_FLOAT_EQ(y, 81.5f) << convVolumetricKernelName(k);
  }
}

}  // namespace
}  // namespace zp::runtime
