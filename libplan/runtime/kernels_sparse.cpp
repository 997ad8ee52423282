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

#include <omp.h>

#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define ZP_SPARSE_X86 1
#endif

namespace zp::runtime {

namespace {

// Where each tap reads, from the strides and dilations alone: its phase (a plane slot
// per input channel; phases no tap reads get none) and its shift (di, dj) in that plane.
struct TapPhases {
  int64_t phases = 0;               // plane slots per input channel
  std::vector<int32_t> phaseOf;     // slot -> pi * sw + pj
  std::vector<int32_t> slot, di, dj;  // per tap i * kw + j

  explicit TapPhases(const ConvAttrs& a) {
    std::vector<int32_t> slotOfPhase(static_cast<size_t>(a.sh * a.sw), -1);
    for (int64_t i = 0; i < a.kh; ++i)
      for (int64_t j = 0; j < a.kw; ++j) {
        const int64_t p = (i * a.dh % a.sh) * a.sw + j * a.dw % a.sw;
        int32_t& s = slotOfPhase[static_cast<size_t>(p)];
        if (s < 0) {
          s = static_cast<int32_t>(phaseOf.size());
          phaseOf.push_back(static_cast<int32_t>(p));
        }
        slot.push_back(s);
        di.push_back(static_cast<int32_t>(i * a.dh / a.sh));
        dj.push_back(static_cast<int32_t>(j * a.dw / a.sw));
      }
    phases = static_cast<int64_t>(phaseOf.size());
    const auto bits = [](int32_t v) { int b = 0; while (v >> b) ++b; return b; };
    bitsJ = bits(*std::max_element(dj.begin(), dj.end()));
    bitsI = bits(*std::max_element(di.begin(), di.end()));
  }

  // A nonzero's read position packed in one int32: plane << (bitsI + bitsJ) | di << bitsJ | dj.
  int bitsI = 0, bitsJ = 0;
  int32_t code(int64_t plane, int64_t tap) const {
    assert(plane < (int64_t{1} << (31 - bitsI - bitsJ)));
    return static_cast<int32_t>(plane << (bitsI + bitsJ) | di[static_cast<size_t>(tap)] << bitsJ | dj[static_cast<size_t>(tap)]);
  }
};

// Nonzeros are grouped by runs of kSegment input channels, the granularity of the
// channel chunks chosen at run time.
constexpr int64_t kSegment = 8;

}  // namespace

void sparseConvWeights(const ConvAttrs& a, const float* w, PackedWeights* pw) {
  const TapPhases tp(a);
  const int64_t khw = a.kh * a.kw, K = a.Cg * khw, segs = (a.Cg + kSegment - 1) / kSegment;
  std::vector<int32_t> segptr(static_cast<size_t>(a.M * (segs + 1))), code;
  std::vector<float> vals;
  for (int64_t m = 0; m < a.M; ++m) {
    int32_t* sp = &segptr[static_cast<size_t>(m * (segs + 1))];
    for (int64_t kk = 0; kk < K; ++kk) {
      const int64_t c = kk / khw, t = kk % khw;
      if (kk % (kSegment * khw) == 0) sp[c / kSegment] = static_cast<int32_t>(vals.size());
      const float v = w[m * K + kk];
      if (v == 0.0f) continue;
      code.push_back(tp.code(c * tp.phases + tp.slot[static_cast<size_t>(t)], t));
      vals.push_back(v);
    }
    sp[segs] = static_cast<int32_t>(vals.size());
  }
  pw->arrays.push_back(PackedWeights::make("segptr", segptr, DType::I32));
  pw->arrays.push_back(PackedWeights::make("code", code, DType::I32));
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
  // The last partial block: as few vectors as cover it, with more sets when few.
  while (q < len) {
    const int64_t nv = (len - q + 15) / 16;
    const float* i = in ? in + q : nullptr;
    if (nv >= 4) { block512<4, 2>(rb + q, off, vals, z0, z1, i, b, out + q); q += 64; }
    else if (nv == 3) { block512<3, 2>(rb + q, off, vals, z0, z1, i, b, out + q); q += 48; }
    else if (nv == 2) { block512<2, 4>(rb + q, off, vals, z0, z1, i, b, out + q); q += 32; }
    else { block512<1, 4>(rb + q, off, vals, z0, z1, i, b, out + q); q += 16; }
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
  // The last partial block: as few vectors as cover it, with more sets when few.
  while (q < len) {
    const int64_t nv = (len - q + 7) / 8;
    const float* i = in ? in + q : nullptr;
    if (nv >= 4) { block256<4, 2>(rb + q, off, vals, z0, z1, i, b, out + q); q += 32; }
    else if (nv == 3) { block256<3, 2>(rb + q, off, vals, z0, z1, i, b, out + q); q += 24; }
    else if (nv == 2) { block256<2, 4>(rb + q, off, vals, z0, z1, i, b, out + q); q += 16; }
    else { block256<1, 4>(rb + q, off, vals, z0, z1, i, b, out + q); q += 8; }
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

int64_t envInt(const char* name, int64_t dflt) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoll(v) : dflt;
}

RowKernel rowKernel() {
#ifdef ZP_SPARSE_X86
  static const bool avx512 = __builtin_cpu_supports("avx512f");
  const int64_t nv = envInt("ZP_SP_NV", 4);
  if (avx512 && gAllowAvx512.load(std::memory_order_relaxed)) return nv == 8 ? RowKernel{row512<8>, 128} : nv == 2 ? RowKernel{row512<2>, 32} : RowKernel{row512<4>, 64};
  return nv == 8 ? RowKernel{row256<8>, 64} : RowKernel{row256<4>, 32};
#else
  return {rowScalar, 8};
#endif
}


inline float act(float v, const Epilogue& e) {
  if (e.kind == Epilogue::Relu) return v > 0 ? v : 0;
  if (e.kind == Epilogue::Clip) return std::min(std::max(v, e.lo), e.hi);
  return v;
}

// The phase planes of one image: Hq x Wq each, `phases` per input channel.
struct Geometry {
  int64_t OH, OW, Hq, Wq, plane, L;  // L = OH * Wq flat positions per plane
  int64_t halo;                        // largest tap shift in flat positions
  TapPhases tp;
  int64_t chanStride;                  // floats per input channel

  Geometry(const ConvAttrs& a, int64_t H, int64_t W) : tp(a) {
    OH = a.outH(H);
    OW = a.outW(W);
    Hq = OH + (a.kh - 1) * a.dh / a.sh;
    Wq = OW + (a.kw - 1) * a.dw / a.sw;
    plane = Hq * Wq;
    L = OH * Wq;
    halo = (Hq - OH) * Wq + (Wq - OW);
    chanStride = tp.phases * plane;
  }
};

// Copies channel c of one image into its phase planes (zeros where padding).
void copyPhases(const ConvAttrs& a, const Geometry& g, const float* xc, int64_t H, int64_t W, float* dst) {
  for (int64_t s = 0; s < g.tp.phases; ++s) {
    const int64_t pi = g.tp.phaseOf[static_cast<size_t>(s)] / a.sw, pj = g.tp.phaseOf[static_cast<size_t>(s)] % a.sw;
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
  const int64_t segs = (a.Cg + kSegment - 1) / kSegment;
  const int32_t* segptr = pw.get("segptr").as<int32_t>();
  const int32_t* code = pw.get("code").as<int32_t>();
  const float* vals = pw.get("vals").as<float>();
  const float* bias = pw.get("bias").as<float>();

  // Tiles: T flat positions (a multiple of the register block), about kTile at most.
  const int64_t kTile = envInt("ZP_SP_T", 512);
  const int64_t nTiles = std::max<int64_t>(1, (g.L + kTile - 1) / kTile);
  const int64_t T = ((g.L + nTiles - 1) / nTiles + rk.block - 1) / rk.block * rk.block;
  // Channel chunks of whole segments: a chunk's window of one tile fits in ~32 KB of L1.
  const int64_t l1 = envInt("ZP_SP_L1", 32768);
  const int64_t window = (T + g.halo + rk.block) * g.tp.phases * 4;
  const int64_t nnzAll = pw.get("vals").count;
  const double nzPerSeg = static_cast<double>(nnzAll) / static_cast<double>(M * segs);
  const int64_t minNz = envInt("ZP_SP_MINNZ", 0);
  const int64_t segsPerChunk = std::max<int64_t>({1, l1 / (window * kSegment), static_cast<int64_t>(minNz / std::max(nzPerSeg, 1e-9))});
  const int64_t nChunks = (segs + segsPerChunk - 1) / segsPerChunk;

  const int64_t skip = envInt("ZP_SP_SKIP", 0);
  // A nonzero's offset within its group's planes: decoded per tile and chunk (cheap
  // next to the tile's FMAs) into a per-thread buffer, so only code and vals stream in.
  const int bitsJ = g.tp.bitsJ, bitsIJ = g.tp.bitsI + g.tp.bitsJ;
  const int32_t maskI = (1 << g.tp.bitsI) - 1, maskJ = (1 << bitsJ) - 1;
  const int32_t planeSize = static_cast<int32_t>(g.plane), Wq = static_cast<int32_t>(g.Wq);
  assert(a.Cg * g.chanStride + g.Wq + rk.block < INT32_MAX);
  const int64_t maxSeg = std::min(a.Cg, segsPerChunk * kSegment) * a.kh * a.kw;
  int32_t* offAll = reinterpret_cast<int32_t*>(scratch.floats(static_cast<size_t>(threads * maxSeg), 1));

  const int64_t slack = g.Wq + rk.block;  // the last block of the last plane reads past it
  float* buf = scratch.floats(static_cast<size_t>(C * g.chanStride + slack), 0);
  std::memset(buf + C * g.chanStride, 0, static_cast<size_t>(slack) * 4);
  // Work items: tiles x output-channel ranges (ranges only to give threads work),
  // each with its accumulators [mStep, T] in a per-thread buffer.
  const int64_t mParts = threads > 1 ? std::max<int64_t>(1, std::min(M, (4 * threads + nTiles - 1) / nTiles)) : 1;
  const int64_t mStep = (M + mParts - 1) / mParts;
  float* accAll = scratch.floats(static_cast<size_t>(threads * mStep * T), 3);

  for (int64_t n = 0; n < N; ++n) {
    const float* xn = x + n * C * H * W;
#pragma omp parallel for num_threads(threads) if (threads > 1) schedule(static)
    for (int64_t c = 0; c < ((skip & 2) ? 0 : C); ++c) copyPhases(a, g, xn + c * H * W, H, W, buf + c * g.chanStride);
    float* yn = y + n * M * P;
#pragma omp parallel for num_threads(threads) if (threads > 1) schedule(dynamic, 1)
    for (int64_t task = 0; task < nTiles * mParts; ++task) {
      const int64_t q0 = task / mParts * T, len = std::min(T, g.L - q0);
      const int64_t m0 = task % mParts * mStep, m1 = std::min(M, m0 + mStep);
      float* acc = accAll + omp_get_thread_num() * mStep * T - m0 * T;  // row m at acc + m * T
      int32_t* __restrict off = offAll + omp_get_thread_num() * maxSeg;
      for (int64_t k = 0; k < ((skip & 1) ? 0 : nChunks); ++k)
        for (int64_t m = m0; m < m1; ++m) {
          const int32_t* sp = segptr + m * (segs + 1);
          const int32_t z0 = sp[k * segsPerChunk], z1 = sp[std::min(segs, (k + 1) * segsPerChunk)];
          if (k > 0 && z0 == z1) continue;
          const float* rb = buf + (m / Mg) * a.Cg * g.chanStride + q0;
          float* am = acc + m * T;
          for (int32_t z = z0; z < z1; ++z) {
            const int32_t c = code[z];
            off[z - z0] = (c >> bitsIJ) * planeSize + ((c >> bitsJ) & maskI) * Wq + (c & maskJ);
          }
          rk.fn(rb, off, vals + z0, 0, z1 - z0, k > 0 ? am : nullptr, bias[m], am, len);
        }
      // Copy the tile's valid columns out, with the activation.
      for (int64_t m = m0; m < ((skip & 8) ? m0 : m1); ++m)
        for (int64_t oh = q0 / g.Wq; oh * g.Wq < q0 + len && oh < g.OH; ++oh) {
          const int64_t c0 = std::max(q0, oh * g.Wq) - oh * g.Wq;
          const int64_t c1 = std::min(q0 + len, oh * g.Wq + g.OW) - oh * g.Wq;
          const float* s = acc + m * T + oh * g.Wq - q0;
          float* d = yn + (m * g.OH + oh) * g.OW;
          if (e.kind == Epilogue::None) std::memcpy(d + c0, s + c0, static_cast<size_t>(std::max<int64_t>(0, c1 - c0)) * 4);
          else
            for (int64_t ow = c0; ow < c1; ++ow) d[ow] = act(s[ow], e);
        }
    }
  }
}

}  // namespace zp::runtime
