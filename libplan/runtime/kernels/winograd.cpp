// Winograd F(2x2, 3x3) for 3x3 stride-1 convs: the weight transform and the kernel.
#include "libplan/runtime/kernels/kernels.h"

#include "libplan/runtime/kernels/internal.h"

#include <algorithm>
#include <cstring>

#include "libplan/runtime/kernels/parallel.h"

namespace zp::runtime {

// Winograd F(2x2, 3x3): U = G g G^T, stored [16][M][C].
std::vector<float> winogradWeights(const ConvAttrs& a, const float* w) {
  const int64_t M = a.M, C = a.Cg;
  std::vector<float> U(static_cast<size_t>(16 * M * C));
  for (int64_t m = 0; m < M; ++m)
    for (int64_t c = 0; c < C; ++c) {
      const float* g = w + (m * C + c) * 9;
      float t[4][3];  // G g
      for (int j = 0; j < 3; ++j) {
        t[0][j] = g[0 * 3 + j];
        t[1][j] = 0.5f * (g[0 * 3 + j] + g[1 * 3 + j] + g[2 * 3 + j]);
        t[2][j] = 0.5f * (g[0 * 3 + j] - g[1 * 3 + j] + g[2 * 3 + j]);
        t[3][j] = g[2 * 3 + j];
      }
      for (int i = 0; i < 4; ++i) {
        float u[4];
        u[0] = t[i][0];
        u[1] = 0.5f * (t[i][0] + t[i][1] + t[i][2]);
        u[2] = 0.5f * (t[i][0] - t[i][1] + t[i][2]);
        u[3] = t[i][2];
        for (int j = 0; j < 4; ++j) U[static_cast<size_t>(((i * 4 + j) * M + m) * C + c)] = u[j];
      }
    }
  return U;
}

// A channel is first copied into zero-padded rows split into even and odd columns
// (tile tw starts at column 2*tw), so the 4x4 inputs of a vector of consecutive
// tiles are 16 contiguous loads, and the transforms (flat_loops.cpp) run a vector of
// tiles at a time.
struct WinogradRows {
  int64_t R = 0, Wq = 0;  // rows, slots per row (even and odd planes)
};

static void winogradSplitChannel(const float* src, int64_t H, int64_t W, int64_t padT, int64_t padL,
                                 const WinogradRows& g, float* even, float* odd) {
  for (int64_t r = 0; r < g.R; ++r) {
    float* e = even + r * g.Wq;
    float* o = odd + r * g.Wq;
    const int64_t ih = r - padT;
    if (ih < 0 || ih >= H) {
      std::memset(e, 0, static_cast<size_t>(g.Wq) * 4);
      std::memset(o, 0, static_cast<size_t>(g.Wq) * 4);
      continue;
    }
    const float* s = src + ih * W;
    auto at = [&](int64_t col) { return (col >= 0 && col < W) ? s[col] : 0.0f; };
    // Slots [kLo, kHi) have both columns 2k - padL and 2k + 1 - padL inside the row.
    const int64_t kLo = std::min(g.Wq, (padL + 1) / 2);
    const int64_t kHi = std::max(kLo, std::min(g.Wq, (W - 1 + padL) / 2));
    for (int64_t k = 0; k < kLo; ++k) { e[k] = at(2 * k - padL); o[k] = at(2 * k + 1 - padL); }
    const float* sp = s - padL;
    int64_t k = kLo;
    splitEvenOdd(sp, k, kHi, e, o);
    for (k = kHi; k < g.Wq; ++k) { e[k] = at(2 * k - padL); o[k] = at(2 * k + 1 - padL); }
  }
}


void convWinograd(const ConvAttrs& a, const PackedWeights& pw, const float* x, int64_t N, int64_t H,
                  int64_t W, float* y, const Epilogue& e, Scratch& scratch, int threads, GemmLibrary gemm,
                  const float* residual) {
  const int64_t OH = a.outH(H), OW = a.outW(W), C = a.Cg, M = a.M;
  const int64_t TH = (OH + 1) / 2, TW = (OW + 1) / 2, T = TH * TW;
  const float* U = pw.get("U").as<float>();
  const float* bias = pw.get("bias").as<float>();
  WinogradRows g;
  g.R = 2 * TH + 2;
  g.Wq = TW + 1 + kSimdMaxLanes;  // the last vector of tiles reads up to a vector of slots past TW + 1
  float* V = scratch.floats(static_cast<size_t>(16 * C * T), 0);
  float* Mx = scratch.floats(static_cast<size_t>(16 * M * T + kSimdMaxLanes), 1);
  const std::vector<float*> split = scratch.workerFloats(threads, static_cast<size_t>(2 * g.R * g.Wq));
  for (int64_t n = 0; n < N; ++n) {
    const float* xn = x + n * C * H * W;
    parallelForEach(threads, C, [&](int64_t c, int worker) {
      float* even = split[static_cast<size_t>(worker)];
      float* odd = even + g.R * g.Wq;
      winogradSplitChannel(xn + c * H * W, H, W, a.padT, a.padL, g, even, odd);
      winogradInputTiles(even, odd, g.Wq, TH, TW, V + c * T, C * T);
    });
    parallelForEach(threads, 16, [&](int64_t xi, int) {
      sgemmRowMajor(false, false, M, T, C, 1.0f, U + xi * M * C, C, V + xi * C * T, T, 0.0f, Mx + xi * M * T, T, 1, gemm);
    }, 1);
    float* yn = y + n * M * OH * OW;
    const float* rn = residual ? residual + n * M * OH * OW : nullptr;
    parallelForEach(threads, M, [&](int64_t m, int) {
      winogradOutputTiles(Mx + m * T, M * T, TH, TW, OH, OW, bias[m], e, rn ? rn + m * OH * OW : nullptr,
                          yn + m * OH * OW);
    });
  }
}

}  // namespace zp::runtime
