// Depthwise conv straight from the input, for CPUs with AVX-512, without the window
// kernel's padded copy of each plane: every tap loads 16 inputs at a constant offset
// with the lanes outside the input masked to zero, and results are stored straight
// into the output. Stride 1 with "same" output size runs each plane as one flat array
// of 16-lane blocks (short rows lose no lanes); otherwise each output row is cut into
// 16-lane vectors (stride 2: 32 inputs loaded, the even ones kept). Four blocks or
// rows are summed at once, which keeps four independent FMA chains going.
#include "libplan/runtime/kernels/internal.h"

#include <algorithm>
#include <vector>

#include "libplan/runtime/kernels/parallel.h"

namespace zp::runtime {

#if defined(__x86_64__)
namespace {

constexpr int kRows = 4;

// The input lanes [first, first + 16) of a row of W floats that lie inside it.
__attribute__((target("avx512f"))) inline __mmask16 insideMask(int64_t first, int64_t W) {
  const int64_t lo = std::clamp<int64_t>(-first, 0, 16), hi = std::clamp<int64_t>(W - first, 0, 16);
  if (hi <= lo) return 0;
  return static_cast<__mmask16>(((1u << hi) - 1u) & ~((1u << lo) - 1u));
}

// One channel plane: x [H, W] -> y [OH, OW].
template <int SW>
__attribute__((target("avx512f"))) void planeRows(const ConvAttrs& a, const float* x, int64_t H, int64_t W,
                                                  const float* wm, float bias, const Epilogue& e, float* y) {
  const int64_t OH = a.outH(H), OW = a.outW(W), kh = a.kh, kw = a.kw;
  const __m512 vb = _mm512_set1_ps(bias);
  const __m512 lo = _mm512_set1_ps(e.kind == Epilogue::Clip ? e.lo : 0.0f), hi = _mm512_set1_ps(e.hi);
  const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
  __mmask16 mLo[16], mHi[16];  // per tap column (kw <= 16): the loads' masks
  int64_t colOff[16];
  for (int64_t ow0 = 0; ow0 < OW; ow0 += 16) {
    const int64_t n = std::min<int64_t>(16, OW - ow0);
    const __mmask16 store = static_cast<__mmask16>((1u << n) - 1u);
    for (int64_t j = 0; j < kw; ++j) {
      colOff[j] = ow0 * SW + j * a.dw - a.padL;
      mLo[j] = insideMask(colOff[j], W);
      if (SW == 2) mHi[j] = insideMask(colOff[j] + 16, W);
    }
    for (int64_t oh0 = 0; oh0 < OH; oh0 += kRows) {
      __m512 acc[kRows] = {vb, vb, vb, vb};
      const int64_t rows = std::min<int64_t>(kRows, OH - oh0);
      for (int64_t i = 0; i < kh; ++i) {
        const float* wi = wm + i * kw;
        for (int r = 0; r < kRows; ++r) {
          const int64_t ih = (oh0 + r) * a.sh + i * a.dh - a.padT;
          if (r >= rows || ih < 0 || ih >= H) continue;
          const float* row = x + ih * W;
          for (int64_t j = 0; j < kw; ++j) {
            __m512 v;
            if (SW == 1) {
              v = _mm512_maskz_loadu_ps(mLo[j], row + colOff[j]);
            } else {
              const __m512 l = _mm512_maskz_loadu_ps(mLo[j], row + colOff[j]);
              const __m512 h = _mm512_maskz_loadu_ps(mHi[j], row + colOff[j] + 16);
              v = _mm512_permutex2var_ps(l, even, h);
            }
            acc[r] = _mm512_fmadd_ps(_mm512_set1_ps(wi[j]), v, acc[r]);
          }
        }
      }
      for (int r = 0; r < rows; ++r) {
        __m512 v = acc[r];
        // Masked forms with every lane set: GCC 12 warns about the plain ones (its bug 105593).
        if (e.kind != Epilogue::None) v = _mm512_mask_max_ps(v, 0xffff, v, lo);
        if (e.kind == Epilogue::Clip) v = _mm512_mask_min_ps(v, 0xffff, v, hi);
        _mm512_mask_storeu_ps(y + (oh0 + r) * OW + ow0, store, v);
      }
    }
  }
}

// Stride 1 with the output as wide as the input ("same" padding): output o = oh*W + ow
// reads input o + (i*dh - padT)*W + j*dw - padL for tap (i, j), a constant offset, so
// the plane runs as one flat array of 16-lane blocks (no lanes lost to short rows);
// per tap and block a mask (the same for every channel) drops the inputs outside.
struct FlatMasks {
  int64_t blocks = 0;
  std::vector<int64_t> offset;  // per tap
  std::vector<__mmask16> mask;  // [tap][block]
};

FlatMasks flatMasks(const ConvAttrs& a, int64_t H, int64_t W) {
  FlatMasks f;
  const int64_t P = H * W;
  f.blocks = (P + 15) / 16;
  f.mask.assign(static_cast<size_t>(a.kh * a.kw * f.blocks), 0);
  for (int64_t i = 0; i < a.kh; ++i)
    for (int64_t j = 0; j < a.kw; ++j) {
      const int64_t t = i * a.kw + j, di = i * a.dh - a.padT, dj = j * a.dw - a.padL;
      f.offset.push_back(di * W + dj);
      for (int64_t o = 0; o < P; ++o) {
        const int64_t ih = o / W + di, iw = o % W + dj;
        if (ih >= 0 && ih < H && iw >= 0 && iw < W)
          f.mask[static_cast<size_t>(t * f.blocks + o / 16)] |= static_cast<__mmask16>(1u << (o % 16));
      }
    }
  return f;
}

__attribute__((target("avx512f"))) void planeFlat(const FlatMasks& f, int64_t P, const float* x, const float* wm,
                                                  float bias, const Epilogue& e, float* y) {
  const int64_t taps = static_cast<int64_t>(f.offset.size()), nb = f.blocks;
  const __m512 vb = _mm512_set1_ps(bias);
  const __m512 lo = _mm512_set1_ps(e.kind == Epilogue::Clip ? e.lo : 0.0f), hi = _mm512_set1_ps(e.hi);
  const __mmask16* mk = f.mask.data();
  for (int64_t b0 = 0; b0 < nb; b0 += kRows) {
    const int64_t nq = std::min<int64_t>(kRows, nb - b0);
    __m512 acc[kRows] = {vb, vb, vb, vb};
    for (int64_t t = 0; t < taps; ++t) {
      const __m512 w = _mm512_set1_ps(wm[t]);
      const float* s = x + f.offset[static_cast<size_t>(t)] + b0 * 16;
      const __mmask16* m = mk + t * nb + b0;
      for (int q = 0; q < kRows; ++q)
        if (q < nq) acc[q] = _mm512_fmadd_ps(w, _mm512_maskz_loadu_ps(m[q], s + q * 16), acc[q]);
    }
    for (int q = 0; q < nq; ++q) {
      __m512 v = acc[q];
      if (e.kind != Epilogue::None) v = _mm512_mask_max_ps(v, 0xffff, v, lo);
      if (e.kind == Epilogue::Clip) v = _mm512_mask_min_ps(v, 0xffff, v, hi);
      const int64_t o = (b0 + q) * 16, n = std::min<int64_t>(16, P - o);
      _mm512_mask_storeu_ps(y + o, static_cast<__mmask16>((1u << n) - 1u), v);
    }
  }
}

bool flatApplies(const ConvAttrs& a, int64_t H, int64_t W) {
  return a.sh == 1 && a.sw == 1 && a.outH(H) == H && a.outW(W) == W;
}

const bool kHaveAvx512Rows = __builtin_cpu_supports("avx512f");

}  // namespace

// Measured against the window kernel, one thread, on EfficientNet-B0's and MobileNetV2's
// depthwise shapes (AVX-512 host): "same" stride 1 on 7x7 maps 0.57-0.73x its time, 14x14
// 3x3 0.83x but 14x14 5x5 1.08x, 28x28 and 56x56 1.4x; stride 2 from 28x28 and 56x56
// inputs 0.53-0.87x, from 112x112 1.1x.
bool depthwiseRowsApplies(const ConvAttrs& a) { return kHaveAvx512Rows && a.kw <= 16 && (a.sw == 1 || a.sw == 2); }

bool depthwiseRowsPay(const ConvAttrs& a, int64_t H, int64_t W) {
  if (!depthwiseRowsApplies(a)) return false;
  if (flatApplies(a, H, W)) return H * W <= 100 || (H * W <= 256 && a.kh * a.kw <= 9);
  return a.sw == 2 && W <= 64;
}

void convDepthwiseRows(const ConvAttrs& a, const PackedWeights& pw, const float* x, int64_t N, int64_t H, int64_t W,
                       float* y, const Epilogue& epilogue, int threads) {
  const Epilogue e = epilogue.clampOnly() ? epilogue : Epilogue{};
  const int64_t mult = a.M / a.group, C = a.C(), taps = a.kh * a.kw, P = a.outH(H) * a.outW(W);
  const float* w = pw.get("w").as<float>();
  const float* bias = pw.get("bias").as<float>();
  const bool flat = flatApplies(a, H, W);
  const FlatMasks masks = flat ? flatMasks(a, H, W) : FlatMasks{};
  parallelForEach(threads, N * a.M, [&](int64_t nm, int) {
    const int64_t n = nm / a.M, m = nm % a.M, c = m / mult;
    const float* xp = x + (n * C + c) * H * W;
    float* yp = y + nm * P;
    if (flat) planeFlat(masks, P, xp, w + m * taps, bias[m], e, yp);
    else if (a.sw == 1) planeRows<1>(a, xp, H, W, w + m * taps, bias[m], e, yp);
    else planeRows<2>(a, xp, H, W, w + m * taps, bias[m], e, yp);
    if (!epilogue.clampOnly()) applyActivation(epilogue.fn, epilogue.params, yp, yp, P);
  });
}
#else
bool depthwiseRowsApplies(const ConvAttrs&) { return false; }
bool depthwiseRowsPay(const ConvAttrs&, int64_t, int64_t) { return false; }
void convDepthwiseRows(const ConvAttrs&, const PackedWeights&, const float*, int64_t, int64_t, int64_t, float*,
                       const Epilogue&, int) {}
#endif

}  // namespace zp::runtime
