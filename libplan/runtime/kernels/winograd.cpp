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
// (tile tw starts at column 2*tw), so the 4x4 inputs of 8 consecutive tiles are 16
// contiguous loads; with AVX2 the transforms run 8 tiles per vector.
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
#if defined(__AVX2__)
    for (; k + 8 <= kHi; k += 8) {
      __m256 ev, od;
      deinterleave16(sp + 2 * k, &ev, &od);
      _mm256_storeu_ps(e + k, ev);
      _mm256_storeu_ps(o + k, od);
    }
#endif
    for (; k < kHi; ++k) { e[k] = sp[2 * k]; o[k] = sp[2 * k + 1]; }
    for (k = kHi; k < g.Wq; ++k) { e[k] = at(2 * k - padL); o[k] = at(2 * k + 1 - padL); }
  }
}

#if defined(__AVX2__) && defined(__FMA__)
// V[xi][tile] (xi = 4i + j, stride `xiStride`) = (B^T d B)[i][j] for the channel's tiles.
static void winogradInputChannel(const float* even, const float* odd, const WinogradRows& g, int64_t TH, int64_t TW,
                                 float* V, int64_t xiStride) {
  for (int64_t th = 0; th < TH; ++th)
    for (int64_t tw = 0; tw < TW; tw += 8) {
      __m256 t[4][4];
      {
        __m256 d[4][4];
        for (int i = 0; i < 4; ++i) {
          const int64_t r = (2 * th + i) * g.Wq + tw;
          d[i][0] = _mm256_loadu_ps(even + r);
          d[i][1] = _mm256_loadu_ps(odd + r);
          d[i][2] = _mm256_loadu_ps(even + r + 1);
          d[i][3] = _mm256_loadu_ps(odd + r + 1);
        }
        for (int j = 0; j < 4; ++j) {
          t[0][j] = _mm256_sub_ps(d[0][j], d[2][j]);
          t[1][j] = _mm256_add_ps(d[1][j], d[2][j]);
          t[2][j] = _mm256_sub_ps(d[2][j], d[1][j]);
          t[3][j] = _mm256_sub_ps(d[1][j], d[3][j]);
        }
      }
      const int64_t tile = th * TW + tw, n = std::min<int64_t>(8, TW - tw);
      for (int i = 0; i < 4; ++i) {
        const __m256 v[4] = {_mm256_sub_ps(t[i][0], t[i][2]), _mm256_add_ps(t[i][1], t[i][2]),
                             _mm256_sub_ps(t[i][2], t[i][1]), _mm256_sub_ps(t[i][1], t[i][3])};
        for (int j = 0; j < 4; ++j) {
          float* dst = V + (i * 4 + j) * xiStride + tile;
          if (n == 8) {
            _mm256_storeu_ps(dst, v[j]);
          } else {
            alignas(32) float tmp[8];
            _mm256_store_ps(tmp, v[j]);
            std::memcpy(dst, tmp, static_cast<size_t>(n) * 4);
          }
        }
      }
    }
}

// Output tiles of channel m: A^T M A plus bias and epilogue, two output rows of 16
// columns (8 tiles) at a time.
static void winogradOutputChannel(const float* Mx, int64_t xiStride, int64_t TH, int64_t TW, int64_t OH, int64_t OW,
                                  float bias, const Epilogue& e, float* dst) {
  const __m256 vb = _mm256_set1_ps(bias);
  const __m256 lo = _mm256_set1_ps(e.kind == Epilogue::Clip ? e.lo : 0.0f);
  const __m256 hi = _mm256_set1_ps(e.hi);
  auto act = [&](__m256 v) {
    if (e.kind != Epilogue::None) v = _mm256_max_ps(v, lo);
    if (e.kind == Epilogue::Clip) v = _mm256_min_ps(v, hi);
    return v;
  };
  for (int64_t th = 0; th < TH; ++th)
    for (int64_t tw = 0; tw < TW; tw += 8) {
      const int64_t tile = th * TW + tw;
      __m256 r[2][4];
      for (int j = 0; j < 4; ++j) {
        const __m256 m0 = _mm256_loadu_ps(Mx + (0 * 4 + j) * xiStride + tile);
        const __m256 m1 = _mm256_loadu_ps(Mx + (1 * 4 + j) * xiStride + tile);
        const __m256 m2 = _mm256_loadu_ps(Mx + (2 * 4 + j) * xiStride + tile);
        const __m256 m3 = _mm256_loadu_ps(Mx + (3 * 4 + j) * xiStride + tile);
        r[0][j] = _mm256_add_ps(_mm256_add_ps(m0, m1), m2);
        r[1][j] = _mm256_sub_ps(_mm256_sub_ps(m1, m2), m3);
      }
      for (int i = 0; i < 2; ++i) {
        const int64_t oh = th * 2 + i;
        if (oh >= OH) break;
        const __m256 o0 = act(_mm256_add_ps(_mm256_add_ps(_mm256_add_ps(r[i][0], r[i][1]), r[i][2]), vb));
        const __m256 o1 = act(_mm256_add_ps(_mm256_sub_ps(_mm256_sub_ps(r[i][1], r[i][2]), r[i][3]), vb));
        // Interleave: columns 2*tw + 2q come from o0, 2*tw + 2q + 1 from o1.
        const __m256 l = _mm256_unpacklo_ps(o0, o1), h = _mm256_unpackhi_ps(o0, o1);
        const __m256 first = _mm256_permute2f128_ps(l, h, 0x20), second = _mm256_permute2f128_ps(l, h, 0x31);
        float* d = dst + oh * OW + 2 * tw;
        const int64_t n = std::min<int64_t>(16, OW - 2 * tw);
        if (n == 16) {
          _mm256_storeu_ps(d, first);
          _mm256_storeu_ps(d + 8, second);
        } else {
          alignas(32) float tmp[16];
          _mm256_store_ps(tmp, first);
          _mm256_store_ps(tmp + 8, second);
          std::memcpy(d, tmp, static_cast<size_t>(n) * 4);
        }
      }
    }
}

#else
// The same transforms one tile at a time.
static void winogradInputChannel(const float* even, const float* odd, const WinogradRows& g, int64_t TH, int64_t TW,
                                 float* V, int64_t xiStride) {
  for (int64_t th = 0; th < TH; ++th)
    for (int64_t tw = 0; tw < TW; ++tw) {
      float d[4][4];
      for (int i = 0; i < 4; ++i) {
        const int64_t r = (2 * th + i) * g.Wq + tw;
        d[i][0] = even[r];
        d[i][1] = odd[r];
        d[i][2] = even[r + 1];
        d[i][3] = odd[r + 1];
      }
      float t[4][4];
      for (int j = 0; j < 4; ++j) {
        t[0][j] = d[0][j] - d[2][j];
        t[1][j] = d[1][j] + d[2][j];
        t[2][j] = d[2][j] - d[1][j];
        t[3][j] = d[1][j] - d[3][j];
      }
      const int64_t tile = th * TW + tw;
      for (int i = 0; i < 4; ++i) {
        const float v[4] = {t[i][0] - t[i][2], t[i][1] + t[i][2], t[i][2] - t[i][1], t[i][1] - t[i][3]};
        for (int j = 0; j < 4; ++j) V[(i * 4 + j) * xiStride + tile] = v[j];
      }
    }
}

// A^T m A, A^T = [[1,1,1,0],[0,1,-1,-1]], plus bias and epilogue.
static void winogradOutputChannel(const float* Mx, int64_t xiStride, int64_t TH, int64_t TW, int64_t OH, int64_t OW,
                                  float bias, const Epilogue& e, float* dst) {
  for (int64_t th = 0; th < TH; ++th)
    for (int64_t tw = 0; tw < TW; ++tw) {
      const int64_t tile = th * TW + tw;
      float r[2][4];
      for (int j = 0; j < 4; ++j) {
        const float m0 = Mx[(0 * 4 + j) * xiStride + tile], m1 = Mx[(1 * 4 + j) * xiStride + tile];
        const float m2 = Mx[(2 * 4 + j) * xiStride + tile], m3 = Mx[(3 * 4 + j) * xiStride + tile];
        r[0][j] = m0 + m1 + m2;
        r[1][j] = m1 - m2 - m3;
      }
      for (int i = 0; i < 2; ++i) {
        const int64_t oh = th * 2 + i;
        if (oh >= OH) break;
        dst[oh * OW + tw * 2] = actOne(r[i][0] + r[i][1] + r[i][2] + bias, e);
        if (tw * 2 + 1 < OW) dst[oh * OW + tw * 2 + 1] = actOne(r[i][1] - r[i][2] - r[i][3] + bias, e);
      }
    }
}
#endif

void convWinograd(const ConvAttrs& a, const PackedWeights& pw, const float* x, int64_t N, int64_t H,
                  int64_t W, float* y, const Epilogue& e, Scratch& scratch, int threads, GemmLibrary gemm) {
  const int64_t OH = a.outH(H), OW = a.outW(W), C = a.Cg, M = a.M;
  const int64_t TH = (OH + 1) / 2, TW = (OW + 1) / 2, T = TH * TW;
  const float* U = pw.get("U").as<float>();
  const float* bias = pw.get("bias").as<float>();
  WinogradRows g;
  g.R = 2 * TH + 2;
  g.Wq = TW + 1 + 8;  // the last 8-tile block reads up to 8 slots past TW + 1
  float* V = scratch.floats(static_cast<size_t>(16 * C * T), 0);
  float* Mx = scratch.floats(static_cast<size_t>(16 * M * T + 8), 1);
  float* split = scratch.floats(static_cast<size_t>(threads * 2 * g.R * g.Wq), 2);
  for (int64_t n = 0; n < N; ++n) {
    const float* xn = x + n * C * H * W;
    parallelForEach(threads, C, [&](int64_t c, int worker) {
      float* even = split + static_cast<int64_t>(worker) * 2 * g.R * g.Wq;
      float* odd = even + g.R * g.Wq;
      winogradSplitChannel(xn + c * H * W, H, W, a.padT, a.padL, g, even, odd);
      winogradInputChannel(even, odd, g, TH, TW, V + c * T, C * T);
    });
    parallelForEach(threads, 16, [&](int64_t xi, int) {
      sgemmRowMajor(false, false, M, T, C, 1.0f, U + xi * M * C, C, V + xi * C * T, T, 0.0f, Mx + xi * M * T, T, 1, gemm);
    }, 1);
    float* yn = y + n * M * OH * OW;
    parallelForEach(threads, M, [&](int64_t m, int) {
      winogradOutputChannel(Mx + m * T, M * T, TH, TW, OH, OW, bias[m], e, yn + m * OH * OW);
    });
  }
}

}  // namespace zp::runtime
