// Sparse (CSR) convolution: the work is proportional to the nonzero weights.
//
// Layout. Each image is copied once into "phase planes": with strides (sh, sw) the
// zero-padded input splits into sh*sw phases (rows r*sh + pi, columns c*sw + pj), so
// every kernel tap (i, j) reads a single phase plane with unit stride, shifted by
// (di, dj) = (i*dh / sh, j*dw / sw). Stride 1 is the one-phase case (the padded
// input); phases no tap reads (3 of 4 for a 1x1 stride-2 conv) are not copied. This
// replaces im2col for strided convs: the copy is the size of the input, and loads stay
// contiguous. A plane is Hq x Wq with Hq = OH + max di and Wq = OW + max dj, and output
// (oh, ow) sits at the "flat" position q = oh*Wq + ow of its plane. A nonzero weight
// (c, i, j) of output channel m then adds vals * plane[c, phase(i, j)][q + di*Wq + dj]
// for every q: one contiguous vector load per vector of outputs that runs across
// row ends, so a 7x7 map is four AVX-512 vectors; the Wq - OW extra columns per row
// are computed and dropped when the results are copied out.
//
// Blocking. Outputs go in tiles of T flat positions. The input channels are split
// into chunks whose window of a tile (T + halo positions of each of their planes)
// roughly fits in L1; for each chunk the tile runs through all output channels,
// keeping partial sums in a per-thread [M, T] accumulator, so the input is read from
// L1 once per nonzero and from L2 once per tile. In registers, one output channel's
// NV vectors accumulate a chunk's nonzeros in S interleaved sets (S*NV independent
// FMA chains hide the FMA latency).
//
// Packed weights ("csr_phase"): per output channel its nonzeros, ordered by input
// channel, as "vals" and "code" = plane << (bitsI + bitsJ) | di << bitsJ | dj with
// plane = input channel * phases + phase slot; "segptr" [M, S + 1] points at the
// nonzeros of input channels 8s, 8s + 8, ... (S = ceil(Cg / 8)), the granularity of
// the channel chunks. Only plane sizes depend on the input shape: offsets are decoded
// at run time (once per call, or per chunk when a map is one tile).
#include "libplan/runtime/kernels/sparse.h"

#include <algorithm>
#include <cassert>
#include <climits>
#include <cstring>
#include <limits>

#include "libplan/runtime/kernels/parallel.h"

#include "libplan/runtime/kernels/internal.h"

namespace zp::runtime {

namespace {

// Measured on ResNet-18 shapes (bench/runtime, AVX-512 host): tiles of 128 to 512 and
// budgets of 40 to 64 KB are within noise of each other; 32 KB chunks cost ~10% more
// accumulator reloads than they save in L1 misses.
constexpr int64_t kSegment = 8;        // input channels per segment
constexpr int64_t kTileTarget = 256;   // flat outputs per tile, about
constexpr int64_t kL1Budget = 65536;   // bytes of input window per chunk (L1 plus what streams in well)
constexpr int64_t kPrefetchAhead = 2;  // output channels
constexpr int64_t kMinChunkNz = 24;    // nonzeros per output channel and chunk, about, at least (twice
                                       // that when a tile is a single register block)

int bitsFor(int64_t v) {
  int b = 0;
  while (v >> b) ++b;
  return b;
}

// The phases the taps read. Tap rows read the residues {i*dh % sh}, columns {j*dw % sw};
// the phases read are all their pairs, one plane slot each: slot = rank(pi) * |cols| + rank(pj).
struct Phases {
  std::vector<int32_t> rows, cols;    // residues in use, ascending
  std::vector<int32_t> rankR, rankC;  // residue -> rank, -1 if unused
  int64_t count = 0;                  // plane slots per input channel
  int bitsI = 0, bitsJ = 0;           // bits of di and dj in a code

  explicit Phases(const ConvAttrs& a) {
    rankR.assign(static_cast<size_t>(a.sh), -1);
    rankC.assign(static_cast<size_t>(a.sw), -1);
    for (int64_t i = 0; i < a.kh; ++i) rankR[static_cast<size_t>(i * a.dh % a.sh)] = 0;
    for (int64_t j = 0; j < a.kw; ++j) rankC[static_cast<size_t>(j * a.dw % a.sw)] = 0;
    for (int32_t r = 0; r < a.sh; ++r)
      if (rankR[static_cast<size_t>(r)] == 0) {
        rankR[static_cast<size_t>(r)] = static_cast<int32_t>(rows.size());
        rows.push_back(r);
      }
    for (int32_t c = 0; c < a.sw; ++c)
      if (rankC[static_cast<size_t>(c)] == 0) {
        rankC[static_cast<size_t>(c)] = static_cast<int32_t>(cols.size());
        cols.push_back(c);
      }
    count = static_cast<int64_t>(rows.size() * cols.size());
    bitsI = bitsFor((a.kh - 1) * a.dh / a.sh);
    bitsJ = bitsFor((a.kw - 1) * a.dw / a.sw);
  }
};

}  // namespace

void sparseConvWeights(const ConvAttrs& a, const float* w, PackedWeights* pw) {
  const Phases ph(a);
  const int64_t khw = a.kh * a.kw, K = a.Cg * khw, segs = (a.Cg + kSegment - 1) / kSegment;
  assert(a.Cg * ph.count < (int64_t{1} << (31 - ph.bitsI - ph.bitsJ)));
  std::vector<int32_t> segptr(static_cast<size_t>(a.M * (segs + 1))), code;
  std::vector<float> vals;
  for (int64_t m = 0; m < a.M; ++m) {
    int32_t* sp = &segptr[static_cast<size_t>(m * (segs + 1))];
    for (int64_t kk = 0; kk < K; ++kk) {
      if (kk % (kSegment * khw) == 0) sp[kk / (kSegment * khw)] = static_cast<int32_t>(vals.size());
      const float v = w[m * K + kk];
      if (v == 0.0f) continue;
      const int64_t c = kk / khw, i = kk % khw / a.kw, j = kk % a.kw;
      const int64_t slot = ph.rankR[static_cast<size_t>(i * a.dh % a.sh)] * static_cast<int64_t>(ph.cols.size()) +
                           ph.rankC[static_cast<size_t>(j * a.dw % a.sw)];
      code.push_back(static_cast<int32_t>((c * ph.count + slot) << (ph.bitsI + ph.bitsJ) |
                                          (i * a.dh / a.sh) << ph.bitsJ | (j * a.dw / a.sw)));
      vals.push_back(v);
    }
    sp[segs] = static_cast<int32_t>(vals.size());
  }
  pw->arrays.push_back(PackedWeights::make("segptr", segptr, DType::I32));
  pw->arrays.push_back(PackedWeights::make("code", code, DType::I32));
  pw->arrays.push_back(PackedWeights::make("vals", vals, DType::F32));
}

namespace {

// The phase planes of one image and how they are tiled.
struct Geometry {
  int64_t OH, OW, Hq, Wq, plane, L;  // L = OH * Wq flat positions per plane
  int64_t chanStride;                // floats per input channel: phases * plane
  int64_t T, tiles;                  // tile length (a multiple of the register block) and count
  int64_t segsPerChunk, chunks;

  Geometry(const ConvAttrs& a, const Phases& ph, int64_t H, int64_t W, int64_t block, int64_t nnz) {
    OH = a.outH(H);
    OW = a.outW(W);
    Hq = OH + (a.kh - 1) * a.dh / a.sh;
    Wq = OW + (a.kw - 1) * a.dw / a.sw;
    plane = Hq * Wq;
    L = OH * Wq;
    chanStride = ph.count * plane;
    tiles = std::max<int64_t>(1, (L + kTileTarget - 1) / kTileTarget);
    T = ((L + tiles - 1) / tiles + block - 1) / block * block;
    // Chunks: a window within budget, unless that leaves too few nonzeros per output
    // channel to pay for reloading its accumulators.
    const int64_t segs = (a.Cg + kSegment - 1) / kSegment;
    const int64_t window = (T + plane - L + block) * ph.count * 4 * kSegment;  // bytes per segment
    const double nzPerSeg = static_cast<double>(nnz) / static_cast<double>(std::max<int64_t>(1, a.M * segs));
    const double minNz = static_cast<double>(kMinChunkNz * (T == block ? 2 : 1));
    segsPerChunk = std::min(segs, std::max<int64_t>({1, kL1Budget / window,
                                                     static_cast<int64_t>(minNz / std::max(nzPerSeg, 1e-3))}));
    chunks = (segs + segsPerChunk - 1) / segsPerChunk;
  }
};

// Copies one input channel into its phase planes (zeros where padding). With column
// stride 1 rows are copied in place; otherwise each input row is first laid out padded
// in `row` (Wq * sw floats), then split into its column phases in one pass.
void copyPhases(const ConvAttrs& a, const Phases& ph, const Geometry& g, const float* xc, int64_t H, int64_t W,
                float* dst, float* __restrict row) {
  const int64_t nc = static_cast<int64_t>(ph.cols.size()), rowLen = g.Wq * a.sw;
  // Padded row position u holds input column u - padL: inside [0, W) for u in [lo, hi).
  const int64_t lo = std::min(rowLen, a.padL), hi = std::max(lo, std::min(rowLen, a.padL + W));
  for (size_t ri = 0; ri < ph.rows.size(); ++ri) {
    float* d = dst + static_cast<int64_t>(ri) * nc * g.plane;  // slot (ri, 0)
    for (int64_t r = 0; r < g.Hq; ++r, d += g.Wq) {
      const int64_t ih = r * a.sh + ph.rows[ri] - a.padT;
      if (ih < 0 || ih >= H) {
        for (int64_t ci = 0; ci < nc; ++ci) std::memset(d + ci * g.plane, 0, static_cast<size_t>(g.Wq) * 4);
        continue;
      }
      float* t = a.sw == 1 ? d : row;
      std::memset(t, 0, static_cast<size_t>(lo) * 4);
      std::memcpy(t + lo, xc + ih * W + lo - a.padL, static_cast<size_t>(hi - lo) * 4);
      std::memset(t + hi, 0, static_cast<size_t>(rowLen - hi) * 4);
      if (a.sw == 1) continue;
      const int64_t sw = a.sw, Wq = g.Wq;
      if (sw == 2 && nc == 2) {  // constant strides, so that these loops vectorize
        float* __restrict d0 = d;
        float* __restrict d1 = d + g.plane;
        for (int64_t cc = 0; cc < Wq; ++cc) { d0[cc] = row[2 * cc]; d1[cc] = row[2 * cc + 1]; }
        continue;
      }
      for (int64_t ci = 0; ci < nc; ++ci) {
        float* __restrict dc = d + ci * g.plane;
        const float* src = row + ph.cols[static_cast<size_t>(ci)];
        if (sw == 2)
          for (int64_t cc = 0; cc < Wq; ++cc) dc[cc] = src[2 * cc];
        else
          for (int64_t cc = 0; cc < Wq; ++cc) dc[cc] = src[cc * sw];
      }
    }
  }
}

void storeActivated(float* d, const float* s, int64_t n, const Epilogue& e) {
  switch (e.kind) {
    case Epilogue::None:
    case Epilogue::Function:  // not passed in (asserted in convSparse): the caller applies it afterwards
      std::memcpy(d, s, static_cast<size_t>(n) * 4);
      break;
    case Epilogue::Relu: for (int64_t i = 0; i < n; ++i) d[i] = s[i] > 0 ? s[i] : 0; break;
    case Epilogue::Clip: for (int64_t i = 0; i < n; ++i) d[i] = std::min(std::max(s[i], e.lo), e.hi); break;
  }
}

// Runs body(i, worker) for i in [0, n), on `threads` threads when more than one.
template <typename F>
void forEach(int64_t n, int threads, F&& body) {
  parallelForEach(threads, n, body, 1);
}

}  // namespace

void convSparse(const ConvAttrs& a, const PackedWeights& pw, const float* x, int64_t N, int64_t H, int64_t W,
                float* y, const Epilogue& e, Scratch& scratch, int threads) {
  const SparseRowKernel rk = sparseRowKernel();
  const Phases ph(a);
  const WeightArray& valsArr = pw.get("vals");
  const Geometry g(a, ph, H, W, rk.block, valsArr.count);
  const int64_t C = a.C(), M = a.M, Mg = a.M / a.group, P = g.OH * g.OW, segs = (a.Cg + kSegment - 1) / kSegment;
  const int32_t* segptr = pw.get("segptr").as<int32_t>();
  const int32_t* code = pw.get("code").as<int32_t>();
  const float* vals = valsArr.as<float>();
  const float* bias = pw.get("bias").as<float>();

  const int bitsJ = ph.bitsJ, bitsIJ = ph.bitsI + ph.bitsJ;
  const int32_t maskI = (1 << ph.bitsI) - 1, maskJ = (1 << ph.bitsJ) - 1;
  const int32_t planeSize = static_cast<int32_t>(g.plane), Wq = static_cast<int32_t>(g.Wq);
  assert(a.Cg * g.chanStride + g.Wq + rk.block < INT32_MAX);
  assert(e.clampOnly());

  // Without extra plane columns (Wq == OW) flat positions are output positions: the
  // accumulators are y itself, no copy out.
  const bool direct = g.Wq == g.OW;
  constexpr float kNoLo = -std::numeric_limits<float>::infinity(), kNoHi = std::numeric_limits<float>::infinity();
  const float actLo = e.kind == Epilogue::None ? kNoLo : e.kind == Epilogue::Relu ? 0.0f : e.lo;
  const float actHi = e.kind == Epilogue::Clip ? e.hi : kNoHi;
  // Work items: tiles x output-channel ranges (ranges only to give threads work).
  const int64_t mParts = threads > 1 ? std::min(M, (4 * threads + g.tiles - 1) / g.tiles) : 1;
  const int64_t mStep = (M + mParts - 1) / mParts;
  // Offsets: decoded once for all tiles when there are several, else per chunk just
  // before use (into a small per-thread buffer, hot in L1).
  const int64_t nnz = valsArr.count;
  const bool decodeAll = g.tiles > 1;
  const auto decode = [&](int32_t cz) {
    return (cz >> bitsIJ) * planeSize + ((cz >> bitsJ) & maskI) * Wq + (cz & maskJ);
  };
  const int64_t maxSeg = std::min(a.Cg, g.segsPerChunk * kSegment) * a.kh * a.kw;  // nonzeros per chunk
  const int64_t offCount = decodeAll ? nnz : threads * maxSeg;
  const int64_t slack = g.Wq + rk.block;  // the last block of the last plane reads past it
  float* buf = scratch.floats(static_cast<size_t>(C * g.chanStride + slack), 0);
  std::memset(buf + C * g.chanStride, 0, static_cast<size_t>(slack) * 4);
  float* accAll = scratch.floats(static_cast<size_t>(threads * mStep * g.T), 1);
  int32_t* __restrict offAll =
      reinterpret_cast<int32_t*>(scratch.floats(static_cast<size_t>(std::max<int64_t>(1, offCount)), 2));
  float* rows = scratch.floats(static_cast<size_t>(threads * (g.Wq * a.sw + 16)), 3);
  if (decodeAll)
    for (int64_t z = 0; z < nnz; ++z) offAll[z] = decode(code[z]);

  for (int64_t n = 0; n < N; ++n) {
    const float* xn = x + n * C * H * W;
    forEach(C, threads, [&](int64_t c, int t) {
      copyPhases(a, ph, g, xn + c * H * W, H, W, buf + c * g.chanStride, rows + t * (g.Wq * a.sw + 16));
    });
    float* yn = y + n * M * P;
    forEach(g.tiles * mParts, threads, [&](int64_t task, int t) {
      const int64_t q0 = task / mParts * g.T, len = std::min(g.T, g.L - q0);
      const int64_t m0 = task % mParts * mStep, m1 = std::min(M, m0 + mStep);
      float* acc = accAll + (t * mStep - m0) * g.T;  // output channel m at acc + m * T
      int32_t* __restrict offT = offAll + t * maxSeg;
      const auto rb = [&](int64_t m) { return buf + (a.group == 1 ? 0 : m / Mg * a.Cg * g.chanStride) + q0; };
      for (int64_t k = 0; k < g.chunks; ++k)
        for (int64_t m = m0; m < m1; ++m) {
          const int32_t* sp = segptr + m * (segs + 1);
          const int32_t z0 = sp[k * g.segsPerChunk], z1 = sp[std::min(segs, (k + 1) * g.segsPerChunk)];
          // A chunk's nonzeros of consecutive output channels are a row length apart in
          // memory, too far for the hardware prefetcher: fetch the next channels' ahead.
          if (m + kPrefetchAhead < m1) {
            const int32_t* np = sp + kPrefetchAhead * (segs + 1);
            const int32_t p0 = np[k * g.segsPerChunk], p1 = np[std::min(segs, (k + 1) * g.segsPerChunk)];
            for (int32_t z = p0; z < p1; z += 16) {
              __builtin_prefetch(vals + z);
              __builtin_prefetch((decodeAll ? offAll : code) + z);
            }
          }
          // An empty chunk adds nothing, except that the last one applies the activation
          // when accumulating in y.
          if (k > 0 && z0 == z1 && !(direct && k + 1 == g.chunks && e.kind != Epilogue::None)) continue;
          const int32_t* off = offAll + z0;
          if (!decodeAll) {
            for (int32_t z = z0; z < z1; ++z) offT[z - z0] = decode(code[z]);
            off = offT;
          }
          if (!direct) {
            float* am = acc + m * g.T;
            rk.fn(rb(m), off, vals + z0, 0, z1 - z0, k > 0 ? am : nullptr, bias[m], am, len, kNoLo, kNoHi);
            continue;
          }
          // Straight into y, with the activation after the last chunk: whole vectors,
          // then the last partial one through a buffer.
          const float lo = k + 1 == g.chunks ? actLo : kNoLo, hi = k + 1 == g.chunks ? actHi : kNoHi;
          float* am = yn + m * P + q0;
          const int64_t full = len / rk.lanes * rk.lanes;
          rk.fn(rb(m), off, vals + z0, 0, z1 - z0, k > 0 ? am : nullptr, bias[m], am, full, lo, hi);
          if (full < len) {
            alignas(64) float part[16];
            if (k > 0) std::memcpy(part, am + full, static_cast<size_t>(len - full) * 4);
            rk.fn(rb(m) + full, off, vals + z0, 0, z1 - z0, k > 0 ? part : nullptr, bias[m], part, len - full, lo, hi);
            std::memcpy(am + full, part, static_cast<size_t>(len - full) * 4);
          }
        }
      if (direct) return;
      // The tile's valid columns, with the activation.
      for (int64_t m = m0; m < m1; ++m)
        for (int64_t oh = q0 / g.Wq; oh < g.OH && oh * g.Wq < q0 + len; ++oh) {
          const int64_t c0 = std::max(q0 - oh * g.Wq, int64_t{0}), c1 = std::min(q0 + len - oh * g.Wq, g.OW);
          if (c0 < c1)
            storeActivated(yn + (m * g.OH + oh) * g.OW + c0, acc + m * g.T + oh * g.Wq - q0 + c0, c1 - c0, e);
        }
    });
  }
}

}  // namespace zp::runtime
