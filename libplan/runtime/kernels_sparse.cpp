// Sparse (CSR) convolution: the work is proportional to the nonzero weights.
//
// Layout. Each image is copied once into "phase planes": with strides (sh, sw) the
// zero-padded input splits into sh*sw phases (rows r*sh + pi, columns c*sw + pj), so
// every kernel tap (i, j) reads a single phase plane with unit stride, shifted by
// (di, dj) = (i*dh / sh, j*dw / sw). Stride 1 is the one-phase case (the padded
// input); phases no tap reads (3 of 4 for a 1x1 stride-2 conv) are not copied. A
// plane is Hq x Wq with Hq = OH + max di and Wq = OW + max dj, and output (oh, ow)
// sits at the "flat" position q = oh*Wq + ow of its plane. A nonzero weight
// (c, i, j) of output channel m then adds vals * plane[c, phase(i, j)][q + di*Wq + dj]
// for every q: one contiguous vector load per 16 outputs (8 with AVX2), across row
// ends, so a 7x7 map is four AVX-512 vectors; the Wq - OW extra columns per row are
// computed and dropped when the results are copied out.
//
// Blocking. Outputs go in tiles of T flat positions. The input channels are split
// into chunks whose window of a tile (T + halo positions of each of their planes)
// fits in L1; for each chunk the tile runs through all output channels, keeping
// partial sums in a flat accumulator buffer, so the input is read from L1 once per
// nonzero and from L2 once per tile. In registers, one output channel's NV vectors
// accumulate a chunk's nonzeros in S interleaved sets (S*NV independent FMA chains).
#include "libplan/runtime/kernels_sparse.h"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <climits>
#include <cstdlib>
#include <cstring>

#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define ZP_SPARSE_X86 1
#endif

namespace zp::runtime {

void sparseConvWeights(const ConvAttrs& a, const float* w, PackedWeights* pw) {
  const int64_t khw = a.kh * a.kw, K = a.Cg * khw;
  std::vector<int32_t> rowptr(static_cast<size_t>(a.M + 1), 0), chan, tap;
  std::vector<float> vals;
  for (int64_t m = 0; m < a.M; ++m) {
    for (int64_t kk = 0; kk < K; ++kk) {
      const float v = w[m * K + kk];
      if (v == 0.0f) continue;
      chan.push_back(static_cast<int32_t>(kk / khw));
      tap.push_back(static_cast<int32_t>(kk % khw));
      vals.push_back(v);
    }
    rowptr[static_cast<size_t>(m + 1)] = static_cast<int32_t>(vals.size());
  }
  pw->arrays.push_back(PackedWeights::make("rowptr", rowptr, DType::I32));
  pw->arrays.push_back(PackedWeights::make("chan", chan, DType::I32));
  pw->arrays.push_back(PackedWeights::make("tap", tap, DType::I32));
  pw->arrays.push_back(PackedWeights::make("vals", vals, DType::F32));
}

namespace {

// out[0, len) = (in ? in : b) + sum over z in [z0, z1) of vals[z] * rb[off[z] + (0 .. len)].
// May read up to one register block past rb[off + len] and writes whole vectors (the
// accumulator rows are padded).
using RowFn = void (*)(const float* rb, const int32_t* off, const float* vals, int32_t z0, int32_t z1,
                       const float* in, float b, float* out, int64_t len);

#ifdef ZP_SPARSE_X86
// AVX-512: NV vectors of 16 outputs, S accumulator sets taking alternate nonzeros.
template <int NV, int S>
__attribute__((target("avx512f"))) inline void block512(const float* rb, const int32_t* off, const float* vals,
                                                         int32_t z0, int32_t z1, const float* in, float b,
                                                         float* out) {
  __m512 acc[S][NV];
  for (int v = 0; v < NV; ++v) {
    acc[0][v] = in ? _mm512_loadu_ps(in + 16 * v) : _mm512_set1_ps(b);
    for (int s = 1; s < S; ++s) acc[s][v] = _mm512_setzero_ps();
  }
  int32_t z = z0;
  for (; z + S <= z1; z += S)
    for (int s = 0; s < S; ++s) {
      const float* src = rb + off[z + s];
      const __m512 wv = _mm512_set1_ps(vals[z + s]);
      for (int v = 0; v < NV; ++v) acc[s][v] = _mm512_fmadd_ps(wv, _mm512_loadu_ps(src + 16 * v), acc[s][v]);
    }
  for (; z < z1; ++z) {
    const float* src = rb + off[z];
    const __m512 wv = _mm512_set1_ps(vals[z]);
    for (int v = 0; v < NV; ++v) acc[0][v] = _mm512_fmadd_ps(wv, _mm512_loadu_ps(src + 16 * v), acc[0][v]);
  }
  for (int v = 0; v < NV; ++v) {
    __m512 r = acc[0][v];
    for (int s = 1; s < S; ++s) r = _mm512_add_ps(r, acc[s][v]);
    _mm512_storeu_ps(out + 16 * v, r);
  }
}

template <int NV>
__attribute__((target("avx512f"))) void row512(const float* rb, const int32_t* off, const float* vals, int32_t z0,
                                                int32_t z1, const float* in, float b, float* out, int64_t len) {
  constexpr int64_t kB = 16 * NV;
  int64_t q = 0;
  for (; q + kB <= len; q += kB) block512<NV, 2>(rb + q, off, vals, z0, z1, in ? in + q : nullptr, b, out + q);
  // The last partial block (< 16*NV outputs): as few vectors as cover it.
  switch ((len - q + 15) / 16) {
    case 0: break;
    case 1: block512<1, 4>(rb + q, off, vals, z0, z1, in ? in + q : nullptr, b, out + q); break;
    case 2: block512<2, 4>(rb + q, off, vals, z0, z1, in ? in + q : nullptr, b, out + q); break;
    case 3: block512<3, 2>(rb + q, off, vals, z0, z1, in ? in + q : nullptr, b, out + q); break;
    default: block512<NV, 2>(rb + q, off, vals, z0, z1, in ? in + q : nullptr, b, out + q);
  }
}

// The AVX2 twin of block512 (every x86-64 this runtime targets has AVX2).
template <int NV, int S>
inline void block256(const float* rb, const int32_t* off, const float* vals, int32_t z0, int32_t z1,
                     const float* in, float b, float* out) {
  __m256 acc[S][NV];
  for (int v = 0; v < NV; ++v) {
    acc[0][v] = in ? _mm256_loadu_ps(in + 8 * v) : _mm256_set1_ps(b);
    for (int s = 1; s < S; ++s) acc[s][v] = _mm256_setzero_ps();
  }
  int32_t z = z0;
  for (; z + S <= z1; z += S)
    for (int s = 0; s < S; ++s) {
      const float* src = rb + off[z + s];
      const __m256 wv = _mm256_set1_ps(vals[z + s]);
      for (int v = 0; v < NV; ++v) acc[s][v] = _mm256_fmadd_ps(wv, _mm256_loadu_ps(src + 8 * v), acc[s][v]);
    }
  for (; z < z1; ++z) {
    const float* src = rb + off[z];
    const __m256 wv = _mm256_set1_ps(vals[z]);
    for (int v = 0; v < NV; ++v) acc[0][v] = _mm256_fmadd_ps(wv, _mm256_loadu_ps(src + 8 * v), acc[0][v]);
  }
  for (int v = 0; v < NV; ++v) {
    __m256 r = acc[0][v];
    for (int s = 1; s < S; ++s) r = _mm256_add_ps(r, acc[s][v]);
    _mm256_storeu_ps(out + 8 * v, r);
  }
}

template <int NV>
void row256(const float* rb, const int32_t* off, const float* vals, int32_t z0, int32_t z1, const float* in,
            float b, float* out, int64_t len) {
  constexpr int64_t kB = 8 * NV;
  int64_t q = 0;
  for (; q + kB <= len; q += kB) block256<NV, 2>(rb + q, off, vals, z0, z1, in ? in + q : nullptr, b, out + q);
  switch ((len - q + 7) / 8) {
    case 0: break;
    case 1: block256<1, 4>(rb + q, off, vals, z0, z1, in ? in + q : nullptr, b, out + q); break;
    case 2: block256<2, 4>(rb + q, off, vals, z0, z1, in ? in + q : nullptr, b, out + q); break;
    case 3: block256<3, 2>(rb + q, off, vals, z0, z1, in ? in + q : nullptr, b, out + q); break;
    default: block256<NV, 2>(rb + q, off, vals, z0, z1, in ? in + q : nullptr, b, out + q);
  }
}
#endif

// Portable fallback (non-x86 builds), in blocks of 8.
[[maybe_unused]] void rowScalar(const float* rb, const int32_t* off, const float* vals, int32_t z0, int32_t z1,
                                const float* in, float b, float* out, int64_t len) {
  for (int64_t q = 0; q < len; q += 8) {
    float acc[8];
    for (int l = 0; l < 8; ++l) acc[l] = in ? in[q + l] : b;
    for (int32_t z = z0; z < z1; ++z)
      for (int l = 0; l < 8; ++l) acc[l] += vals[z] * rb[off[z] + q + l];
    std::memcpy(out + q, acc, sizeof acc);
  }
}

struct RowKernel {
  RowFn fn;
  int64_t block;  // outputs per full register block (tiles are multiples of it)
};

std::atomic<bool> gAllowAvx512{true};

RowKernel rowKernel() {
#ifdef ZP_SPARSE_X86
  static const bool avx512 = __builtin_cpu_supports("avx512f");
  if (avx512 && gAllowAvx512.load(std::memory_order_relaxed)) return {row512<4>, 64};
  return {row256<4>, 32};
#else
  return {rowScalar, 8};
#endif
}

int64_t envInt(const char* name, int64_t dflt) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoll(v) : dflt;
}

inline float act(float v, const Epilogue& e) {
  if (e.kind == Epilogue::Relu) return v > 0 ? v : 0;
  if (e.kind == Epilogue::Clip) return std::min(std::max(v, e.lo), e.hi);
  return v;
}

// Where each tap reads: the phase planes an image is copied into and the offset of
// every tap within its channel's planes.
struct Geometry {
  int64_t OH, OW, Hq, Wq, plane, L;  // L = OH * Wq flat positions per plane
  int64_t phases;                      // planes per input channel
  int64_t chanStride;                  // floats per input channel (phases * plane)
  int64_t halo;                        // max tap shift in flat positions
  std::vector<int32_t> phaseOf;        // plane slot -> pi * sw + pj
  std::vector<int32_t> tapOff;         // tap -> slot * plane + di * Wq + dj

  Geometry(const ConvAttrs& a, int64_t H, int64_t W) {
    OH = a.outH(H);
    OW = a.outW(W);
    Hq = OH + (a.kh - 1) * a.dh / a.sh;
    Wq = OW + (a.kw - 1) * a.dw / a.sw;
    plane = Hq * Wq;
    L = OH * Wq;
    halo = (Hq - OH) * Wq + (Wq - OW);
    std::vector<int32_t> slot(static_cast<size_t>(a.sh * a.sw), -1);
    tapOff.resize(static_cast<size_t>(a.kh * a.kw));
    for (int64_t i = 0; i < a.kh; ++i)
      for (int64_t j = 0; j < a.kw; ++j) {
        const int64_t p = (i * a.dh % a.sh) * a.sw + j * a.dw % a.sw;
        if (slot[static_cast<size_t>(p)] < 0) {
          slot[static_cast<size_t>(p)] = static_cast<int32_t>(phaseOf.size());
          phaseOf.push_back(static_cast<int32_t>(p));
        }
        tapOff[static_cast<size_t>(i * a.kw + j)] =
            static_cast<int32_t>(slot[static_cast<size_t>(p)] * plane + (i * a.dh / a.sh) * Wq + j * a.dw / a.sw);
      }
    phases = static_cast<int64_t>(phaseOf.size());
    chanStride = phases * plane;
  }
};

// Copies channel c of one image into its phase planes (zeros where padding).
void copyPhases(const ConvAttrs& a, const Geometry& g, const float* xc, int64_t H, int64_t W, float* dst) {
  for (int64_t s = 0; s < g.phases; ++s) {
    const int64_t pi = g.phaseOf[static_cast<size_t>(s)] / a.sw, pj = g.phaseOf[static_cast<size_t>(s)] % a.sw;
    // Plane column cc reads input column cc*sw + off: inside [0, W) for cc in [lo, hi).
    const int64_t off = pj - a.padL;
    const int64_t lo = std::min(g.Wq, off >= 0 ? 0 : (-off + a.sw - 1) / a.sw);
    const int64_t hi = std::max(lo, std::min(g.Wq, W - off <= 0 ? 0 : (W - off + a.sw - 1) / a.sw));
    float* d = dst + s * g.plane;
    for (int64_t r = 0; r < g.Hq; ++r, d += g.Wq) {
      const int64_t ih = r * a.sh + pi - a.padT;
      if (ih < 0 || ih >= H) { std::memset(d, 0, static_cast<size_t>(g.Wq) * 4); continue; }
      const float* src = xc + ih * W + off;
      std::memset(d, 0, static_cast<size_t>(lo) * 4);
      if (a.sw == 1) std::memcpy(d + lo, src + lo, static_cast<size_t>(hi - lo) * 4);
      else if (a.sw == 2)
        for (int64_t cc = lo; cc < hi; ++cc) d[cc] = src[2 * cc];
      else
        for (int64_t cc = lo; cc < hi; ++cc) d[cc] = src[cc * a.sw];
      std::memset(d + hi, 0, static_cast<size_t>(g.Wq - hi) * 4);
    }
  }
}

}  // namespace

void sparseConvAllowAvx512(bool allow) { gAllowAvx512.store(allow, std::memory_order_relaxed); }

void convSparse(const ConvAttrs& a, const PackedWeights& pw, const float* x, int64_t N, int64_t H, int64_t W,
                float* y, const Epilogue& e, Scratch& scratch, int threads) {
  const Geometry g(a, H, W);
  const RowKernel rk = rowKernel();
  const int64_t C = a.C(), M = a.M, Mg = a.M / a.group, P = g.OH * g.OW;
  const int32_t* rowptr = pw.get("rowptr").as<int32_t>();
  const int32_t* chan = pw.get("chan").as<int32_t>();
  const int32_t* tap = pw.get("tap").as<int32_t>();
  const float* vals = pw.get("vals").as<float>();
  const float* bias = pw.get("bias").as<float>();
  const int32_t nnz = rowptr[M];

  // Tiles: T flat positions (a multiple of the register block), about kTile at most.
  const int64_t kTile = envInt("ZP_SP_T", 512);
  const int64_t nTiles = std::max<int64_t>(1, (g.L + kTile - 1) / kTile);
  const int64_t T = ((g.L + nTiles - 1) / nTiles + rk.block - 1) / rk.block * rk.block;
  const int64_t Lr = nTiles * T;  // accumulator row length
  // Channel chunks: a chunk's window of one tile fits in ~32 KB of L1.
  const int64_t l1 = envInt("ZP_SP_L1", 32768);
  const int64_t window = (T + g.halo + rk.block) * g.phases * 4;
  const int64_t nChunks = std::max<int64_t>(1, std::min(a.Cg, (a.Cg * window + l1 - 1) / l1));
  const int64_t Cc = (a.Cg + nChunks - 1) / nChunks;

  // Per call: every nonzero's offset within its group's planes, and where each output
  // channel's nonzeros cross into the next channel chunk (they are ordered by channel).
  assert(a.Cg * g.chanStride + g.Wq + rk.block < INT32_MAX);
  int32_t* off = reinterpret_cast<int32_t*>(scratch.floats(static_cast<size_t>(std::max(nnz, 1)), 1));
  for (int32_t z = 0; z < nnz; ++z)
    off[z] = static_cast<int32_t>(chan[z] * g.chanStride) + g.tapOff[static_cast<size_t>(tap[z])];
  int32_t* cptr = reinterpret_cast<int32_t*>(scratch.floats(static_cast<size_t>(M * (nChunks + 1)), 2));
  for (int64_t m = 0; m < M; ++m) {
    int32_t z = rowptr[m];
    int32_t* cp = cptr + m * (nChunks + 1);
    for (int64_t k = 0; k < nChunks; ++k) {
      cp[k] = z;
      while (z < rowptr[m + 1] && chan[z] < (k + 1) * Cc) ++z;
    }
    cp[nChunks] = rowptr[m + 1];
  }

  const int64_t slack = g.Wq + rk.block;  // the last block of the last plane reads past it
  float* buf = scratch.floats(static_cast<size_t>(C * g.chanStride + slack), 0);
  std::memset(buf + C * g.chanStride, 0, static_cast<size_t>(slack) * 4);
  float* acc = scratch.floats(static_cast<size_t>(M * Lr), 3);
  // Work items: tiles x output-channel ranges (ranges only to give threads work).
  const int64_t mParts = threads > 1 ? std::max<int64_t>(1, std::min(M, (4 * threads + nTiles - 1) / nTiles)) : 1;
  const int64_t mStep = (M + mParts - 1) / mParts;

  for (int64_t n = 0; n < N; ++n) {
    const float* xn = x + n * C * H * W;
#pragma omp parallel for num_threads(threads) if (threads > 1) schedule(static)
    for (int64_t c = 0; c < C; ++c) copyPhases(a, g, xn + c * H * W, H, W, buf + c * g.chanStride);
    float* yn = y + n * M * P;
#pragma omp parallel for num_threads(threads) if (threads > 1) schedule(dynamic, 1)
    for (int64_t task = 0; task < nTiles * mParts; ++task) {
      const int64_t q0 = task / mParts * T, len = std::min(T, g.L - q0);
      const int64_t m0 = task % mParts * mStep, m1 = std::min(M, m0 + mStep);
      for (int64_t k = 0; k < nChunks; ++k)
        for (int64_t m = m0; m < m1; ++m) {
          const int32_t* cp = cptr + m * (nChunks + 1);
          if (k > 0 && cp[k] == cp[k + 1]) continue;
          const float* rb = buf + (m / Mg) * a.Cg * g.chanStride + q0;
          float* am = acc + m * Lr + q0;
          rk.fn(rb, off, vals, cp[k], cp[k + 1], k > 0 ? am : nullptr, bias[m], am, len);
        }
      // Copy the tile's valid columns out, with the activation.
      for (int64_t m = m0; m < m1; ++m)
        for (int64_t oh = q0 / g.Wq; oh * g.Wq < q0 + len && oh < g.OH; ++oh) {
          const int64_t c0 = std::max(q0, oh * g.Wq) - oh * g.Wq;
          const int64_t c1 = std::min(q0 + len, oh * g.Wq + g.OW) - oh * g.Wq;
          const float* s = acc + m * Lr + oh * g.Wq;
          float* d = yn + (m * g.OH + oh) * g.OW;
          if (e.kind == Epilogue::None) std::memcpy(d + c0, s + c0, static_cast<size_t>(std::max<int64_t>(0, c1 - c0)) * 4);
          else
            for (int64_t ow = c0; ow < c1; ++ow) d[ow] = act(s[ow], e);
        }
    }
  }
}

}  // namespace zp::runtime
