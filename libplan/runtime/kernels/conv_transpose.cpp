#include "libplan/runtime/kernels/conv_transpose.h"

#include <algorithm>

#include "libplan/runtime/kernels/parallel.h"

namespace zp::runtime {
namespace {

// Every output element starts as its channel's bias (or 0).
void fillBias(const ConvTransposeGeom& g, const float* bias, float* y) {
  const int64_t plane = g.outSize();
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t m = 0; m < g.M; ++m)
      std::fill(y + (n * g.M + m) * plane, y + (n * g.M + m + 1) * plane, bias ? bias[m] : 0.0f);
}

// Each input element times each weight tap, added where that tap lands.
void naive(const ConvTransposeGeom& g, const float* x, const float* w, const float* bias, float* y) {
  fillBias(g, bias, y);
  const int64_t Cg = g.C / g.group, Mg = g.M / g.group, K = g.kernelSize(), L = g.inSize(), P = g.outSize();
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t c = 0; c < g.C; ++c) {
      const int64_t grp = c / Cg;
      for (int64_t i = 0; i < L; ++i) {
        const int64_t id = i / (g.in[1] * g.in[2]), ih = (i / g.in[2]) % g.in[1], iw = i % g.in[2];
        const float xv = x[(n * g.C + c) * L + i];
        for (int64_t m = 0; m < Mg; ++m)
          for (int64_t k = 0; k < K; ++k) {
            const int64_t kd = k / (g.kernel[1] * g.kernel[2]), kh = (k / g.kernel[2]) % g.kernel[1], kw = k % g.kernel[2];
            const int64_t od = id * g.stride[0] - g.padBegin[0] + kd * g.dil[0];
            const int64_t oh = ih * g.stride[1] - g.padBegin[1] + kh * g.dil[1];
            const int64_t ow = iw * g.stride[2] - g.padBegin[2] + kw * g.dil[2];
            if (od < 0 || od >= g.out[0] || oh < 0 || oh >= g.out[1] || ow < 0 || ow >= g.out[2]) continue;
            y[(n * g.M + grp * Mg + m) * P + (od * g.out[1] + oh) * g.out[2] + ow] += xv * w[(c * Mg + m) * K + k];
          }
      }
    }
}

// The input positions i in [0, in) with 0 <= i * stride + offset < out.
void validRange(int64_t in, int64_t out, int64_t stride, int64_t offset, int64_t* lo, int64_t* hi) {
  *lo = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
  *hi = out - 1 - offset < 0 ? 0 : std::min(in, (out - 1 - offset) / stride + 1);
}

// cols [Mg * K, L] (row m * K + k: tap k of output channel m at every input
// position) added into y [Mg, out]: one output channel per thread.
void col2im(const ConvTransposeGeom& g, const float* cols, int64_t Mg, float* y, int threads) {
  const int64_t K = g.kernelSize(), L = g.inSize(), P = g.outSize();
  parallelForEach(threads, Mg, [&](int64_t m, int) {
    float* ym = y + m * P;
    for (int64_t k = 0; k < K; ++k) {
      const int64_t kd = k / (g.kernel[1] * g.kernel[2]), kh = (k / g.kernel[2]) % g.kernel[1], kw = k % g.kernel[2];
      const float* row = cols + (m * K + k) * L;
      int64_t d0, d1, h0, h1, w0, w1;
      validRange(g.in[0], g.out[0], g.stride[0], kd * g.dil[0] - g.padBegin[0], &d0, &d1);
      validRange(g.in[1], g.out[1], g.stride[1], kh * g.dil[1] - g.padBegin[1], &h0, &h1);
      validRange(g.in[2], g.out[2], g.stride[2], kw * g.dil[2] - g.padBegin[2], &w0, &w1);
      for (int64_t id = d0; id < d1; ++id) {
        const int64_t od = id * g.stride[0] + kd * g.dil[0] - g.padBegin[0];
        for (int64_t ih = h0; ih < h1; ++ih) {
          const int64_t oh = ih * g.stride[1] + kh * g.dil[1] - g.padBegin[1];
          const float* src = row + (id * g.in[1] + ih) * g.in[2];
          float* dst = ym + (od * g.out[1] + oh) * g.out[2];
          const int64_t sw = g.stride[2], off = kw * g.dil[2] - g.padBegin[2];
          for (int64_t iw = w0; iw < w1; ++iw) dst[iw * sw + off] += src[iw];
        }
      }
    }
  });
}

void viaGemm(const ConvTransposeGeom& g, const float* x, const float* w, const float* bias, float* y, Scratch& scratch,
             int threads, GemmLibrary gemm) {
  fillBias(g, bias, y);
  const int64_t Cg = g.C / g.group, Mg = g.M / g.group, K = g.kernelSize(), L = g.inSize(), P = g.outSize();
  float* cols = scratch.floats(static_cast<size_t>(Mg * K * L), 1);
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t grp = 0; grp < g.group; ++grp) {
      // cols [Mg*K, L] = W_g^T [Mg*K, Cg] x X_g [Cg, L]; W_g is [Cg, Mg*K] row-major.
      const float* wg = w + grp * Cg * Mg * K;
      const float* xg = x + (n * g.C + grp * Cg) * L;
      sgemmRowMajor(true, false, Mg * K, L, Cg, 1.0f, wg, Mg * K, xg, L, 0.0f, cols, L, threads, gemm);
      col2im(g, cols, Mg, y + (n * g.M + grp * Mg) * P, threads);
    }
}

}  // namespace

const char* convTransposeKernelName(ConvTransposeKernel k) { return k == ConvTransposeKernel::Naive ? "naive" : "col2im"; }

void runConvTranspose(ConvTransposeKernel k, const ConvTransposeGeom& g, const float* x, const float* w,
                      const float* bias, float* y, Scratch& scratch, int threads, GemmLibrary gemm) {
  if (k == ConvTransposeKernel::Naive) naive(g, x, w, bias, y);
  else viaGemm(g, x, w, bias, y, scratch, threads, gemm);
}

}  // namespace zp::runtime
