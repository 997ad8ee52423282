#include "libplan/runtime/kernels/conv_volumetric.h"

#include <algorithm>

#include "libplan/runtime/kernels/parallel.h"

#include "libplan/runtime/kernels/internal.h"

namespace zp::runtime {
namespace {

// Input coordinate of output position o and tap k along dim d (may lie in the padding).
inline int64_t tapAt(const ConvVolumetricGeom& g, size_t d, int64_t o, int64_t k) {
  return o * g.stride[d] - g.padBegin[d] + k * g.dil[d];
}

// Every output element as the sum over its window, straight from the definition.
void naive(const ConvVolumetricGeom& g, const float* x, const float* w, float* y) {
  const int64_t Cg = g.C / g.group, Mg = g.M / g.group, K = g.kernelSize(), L = g.inSize(), P = g.outSize();
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t m = 0; m < g.M; ++m) {
      const int64_t grp = m / Mg;
      for (int64_t p = 0; p < P; ++p) {
        const int64_t od = p / (g.out[1] * g.out[2]), oh = (p / g.out[2]) % g.out[1], ow = p % g.out[2];
        double acc = 0;
        for (int64_t c = 0; c < Cg; ++c)
          for (int64_t k = 0; k < K; ++k) {
            const int64_t id = tapAt(g, 0, od, k / (g.kernel[1] * g.kernel[2]));
            const int64_t ih = tapAt(g, 1, oh, (k / g.kernel[2]) % g.kernel[1]);
            const int64_t iw = tapAt(g, 2, ow, k % g.kernel[2]);
            if (id < 0 || id >= g.in[0] || ih < 0 || ih >= g.in[1] || iw < 0 || iw >= g.in[2]) continue;
            acc += static_cast<double>(x[(n * g.C + grp * Cg + c) * L + (id * g.in[1] + ih) * g.in[2] + iw]) *
                   w[(m * Cg + c) * K + k];
          }
        y[(n * g.M + m) * P + p] = static_cast<float>(acc);
      }
    }
}

// cols [Cg * K, count]: row c * K + k holds channel c's input under tap k for the
// output positions [p0, p0 + count) (0 in the padding). One row per thread.
void vol2col(const ConvVolumetricGeom& g, const float* xg, int64_t Cg, int64_t p0, int64_t count, float* cols,
             int threads) {
  const int64_t K = g.kernelSize(), L = g.inSize();
  parallelForEach(threads, Cg * K, [&](int64_t row, int) {
    const int64_t c = row / K, k = row % K;
    const int64_t kd = k / (g.kernel[1] * g.kernel[2]), kh = (k / g.kernel[2]) % g.kernel[1], kw = k % g.kernel[2];
    const float* src = xg + c * L;
    float* dst = cols + row * count;
    for (int64_t j = 0; j < count; ++j) {
      const int64_t p = p0 + j;
      const int64_t id = tapAt(g, 0, p / (g.out[1] * g.out[2]), kd);
      const int64_t ih = tapAt(g, 1, (p / g.out[2]) % g.out[1], kh);
      const int64_t iw = tapAt(g, 2, p % g.out[2], kw);
      const bool inside = id >= 0 && id < g.in[0] && ih >= 0 && ih < g.in[1] && iw >= 0 && iw < g.in[2];
      dst[j] = inside ? src[(id * g.in[1] + ih) * g.in[2] + iw] : 0.0f;
    }
  });
}

void viaGemm(const ConvVolumetricGeom& g, const float* x, const float* w, float* y, Scratch& scratch, int threads,
             GemmLibrary gemm) {
  const int64_t Cg = g.C / g.group, Mg = g.M / g.group, K = g.kernelSize(), L = g.inSize(), P = g.outSize();
  // Output positions per chunk: the column buffer stays near 16 MB whatever the clip length.
  const int64_t chunk = std::clamp<int64_t>((int64_t{1} << 22) / std::max<int64_t>(1, Cg * K), 1, P);
  float* cols = scratch.floats(static_cast<size_t>(Cg * K * chunk), 1);
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t grp = 0; grp < g.group; ++grp) {
      const float* xg = x + (n * g.C + grp * Cg) * L;
      const float* wg = w + grp * Mg * Cg * K;  // [Mg, Cg * K]
      float* yg = y + (n * g.M + grp * Mg) * P;
      for (int64_t p0 = 0; p0 < P; p0 += chunk) {
        const int64_t count = std::min(chunk, P - p0);
        vol2col(g, xg, Cg, p0, count, cols, threads);
        sgemmRowMajor(false, false, Mg, count, Cg * K, 1.0f, wg, Cg * K, cols, count, 0.0f, yg + p0, P, threads, gemm);
      }
    }
}

}  // namespace

const char* convVolumetricKernelName(ConvVolumetricKernel k) {
  return k == ConvVolumetricKernel::Naive ? "naive" : "vol2col";
}

void runConvVolumetric(ConvVolumetricKernel k, const ConvVolumetricGeom& g, const float* x, const float* w,
                       const float* bias, const Epilogue& e, float* y, Scratch& scratch, int threads,
                       GemmLibrary gemm) {
  if (k == ConvVolumetricKernel::Naive) naive(g, x, w, y);
  else viaGemm(g, x, w, y, scratch, threads, gemm);
  for (int64_t n = 0; n < g.N; ++n) applyEpilogueParallel(y + n * g.M * g.outSize(), g.M, g.outSize(), bias, e, threads);
}

}  // namespace zp::runtime
