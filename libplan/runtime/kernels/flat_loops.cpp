// The vector loops of kernels whose layout work is scalar (window.cpp, winograd.cpp,
// kernels.cpp): a depthwise conv's flat rows, the stride-2 column splits, and
// Winograd's tile transforms, a vector of tiles at a time.
#include "libplan/runtime/kernels/internal.h"

#include <algorithm>
#include <cstring>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "libplan/runtime/kernels/flat_loops.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "libplan/runtime/kernels/simd-inl.h"

HWY_BEFORE_NAMESPACE();
namespace zp::runtime::HWY_NAMESPACE {
namespace {

HWY_INLINE VF Clamp(DF d, VF v, const Epilogue& e) {
  if (e.kind != Epilogue::None) v = hn::Max(v, hn::Set(d, e.kind == Epilogue::Clip ? e.lo : 0.0f));
  if (e.kind == Epilogue::Clip) v = hn::Min(v, hn::Set(d, e.hi));
  return v;
}

}  // namespace

static_assert(4 * kLanes <= kFlatBlockMax, "a flat block is four vectors");

void DepthwiseFlatRow(const float* q, const int64_t* off, int64_t taps, int64_t L, const float* wm, float bias,
                      const Epilogue& e, float* flat) {
  const DF d;
  const VF vb = hn::Set(d, bias);
  for (int64_t f = 0; f < L; f += 4 * kLanes) {
    VF a0 = vb, a1 = vb, a2 = vb, a3 = vb;
    for (int64_t t = 0; t < taps; ++t) {
      const VF w = hn::Set(d, wm[t]);
      const float* s = q + off[t] + f;
      a0 = hn::MulAdd(w, hn::LoadU(d, s), a0);
      a1 = hn::MulAdd(w, hn::LoadU(d, s + kLanes), a1);
      a2 = hn::MulAdd(w, hn::LoadU(d, s + 2 * kLanes), a2);
      a3 = hn::MulAdd(w, hn::LoadU(d, s + 3 * kLanes), a3);
    }
    hn::StoreU(Clamp(d, a0, e), d, flat + f);
    hn::StoreU(Clamp(d, a1, e), d, flat + f + kLanes);
    hn::StoreU(Clamp(d, a2, e), d, flat + f + 2 * kLanes);
    hn::StoreU(Clamp(d, a3, e), d, flat + f + 3 * kLanes);
  }
}

void CopyEven(const float* s, int64_t lo, int64_t hi, float* d) {
  const DF df;
  int64_t k = lo;
  // A vector of outputs loads two: stop while they still end before s[2 * (hi - 1)].
  for (; k + kLanes < hi; k += kLanes) {
    const VF a = hn::LoadU(df, s + 2 * k), b = hn::LoadU(df, s + 2 * k + kLanes);
    hn::StoreU(hn::ConcatEven(df, b, a), df, d + k);
  }
  for (; k < hi; ++k) d[k] = s[2 * k];
}

void SplitEvenOdd(const float* s, int64_t lo, int64_t hi, float* even, float* odd) {
  const DF df;
  int64_t k = lo;
  for (; k + kLanes <= hi; k += kLanes) {
    const VF a = hn::LoadU(df, s + 2 * k), b = hn::LoadU(df, s + 2 * k + kLanes);
    hn::StoreU(hn::ConcatEven(df, b, a), df, even + k);
    hn::StoreU(hn::ConcatOdd(df, b, a), df, odd + k);
  }
  for (; k < hi; ++k) { even[k] = s[2 * k]; odd[k] = s[2 * k + 1]; }
}

void WinogradInputTiles(const float* even, const float* odd, int64_t Wq, int64_t TH, int64_t TW, float* V,
                        int64_t xiStride) {
  const DF d;
  for (int64_t th = 0; th < TH; ++th)
    for (int64_t tw = 0; tw < TW; tw += kLanes) {
      VF t[4][4];
      {
        VF x[4][4];
        for (int i = 0; i < 4; ++i) {
          const int64_t r = (2 * th + i) * Wq + tw;
          x[i][0] = hn::LoadU(d, even + r);
          x[i][1] = hn::LoadU(d, odd + r);
          x[i][2] = hn::LoadU(d, even + r + 1);
          x[i][3] = hn::LoadU(d, odd + r + 1);
        }
        for (int j = 0; j < 4; ++j) {
          t[0][j] = hn::Sub(x[0][j], x[2][j]);
          t[1][j] = hn::Add(x[1][j], x[2][j]);
          t[2][j] = hn::Sub(x[2][j], x[1][j]);
          t[3][j] = hn::Sub(x[1][j], x[3][j]);
        }
      }
      const int64_t tile = th * TW + tw, n = std::min<int64_t>(kLanes, TW - tw);
      for (int i = 0; i < 4; ++i) {
        const VF v[4] = {hn::Sub(t[i][0], t[i][2]), hn::Add(t[i][1], t[i][2]), hn::Sub(t[i][2], t[i][1]),
                         hn::Sub(t[i][1], t[i][3])};
        for (int j = 0; j < 4; ++j) StoreFirst(v[j], d, V + (i * 4 + j) * xiStride + tile, n);
      }
    }
}

void WinogradOutputTiles(const float* Mx, int64_t xiStride, int64_t TH, int64_t TW, int64_t OH, int64_t OW,
                         float bias, const Epilogue& e, const float* res, float* dst) {
  const DF d;
  const VF vb = hn::Set(d, bias);
  for (int64_t th = 0; th < TH; ++th)
    for (int64_t tw = 0; tw < TW; tw += kLanes) {
      const int64_t tile = th * TW + tw;
      VF r[2][4];
      for (int j = 0; j < 4; ++j) {
        const VF m0 = hn::LoadU(d, Mx + (0 * 4 + j) * xiStride + tile);
        const VF m1 = hn::LoadU(d, Mx + (1 * 4 + j) * xiStride + tile);
        const VF m2 = hn::LoadU(d, Mx + (2 * 4 + j) * xiStride + tile);
        const VF m3 = hn::LoadU(d, Mx + (3 * 4 + j) * xiStride + tile);
        r[0][j] = hn::Add(hn::Add(m0, m1), m2);
        r[1][j] = hn::Sub(hn::Sub(m1, m2), m3);
      }
      for (int i = 0; i < 2; ++i) {
        const int64_t oh = th * 2 + i;
        if (oh >= OH) break;
        VF o0 = hn::Add(hn::Add(hn::Add(r[i][0], r[i][1]), r[i][2]), vb);
        VF o1 = hn::Add(hn::Sub(hn::Sub(r[i][1], r[i][2]), r[i][3]), vb);
        // Columns 2*tw + 2q come from o0, 2*tw + 2q + 1 from o1.
        float* out = dst + oh * OW + 2 * tw;
        const int64_t n = std::min<int64_t>(2 * kLanes, OW - 2 * tw);
        if (res) {
          const float* rr = res + oh * OW + 2 * tw;
          VF r0, r1;
          if (n == 2 * kLanes) {
            hn::LoadInterleaved2(d, rr, r0, r1);
          } else {
            HWY_ALIGN float tmp[2 * kLanes] = {};
            std::memcpy(tmp, rr, static_cast<size_t>(n) * 4);
            hn::LoadInterleaved2(d, tmp, r0, r1);
          }
          o0 = hn::Add(o0, r0);
          o1 = hn::Add(o1, r1);
        }
        o0 = Clamp(d, o0, e);
        o1 = Clamp(d, o1, e);
        if (n == 2 * kLanes) {
          hn::StoreInterleaved2(o0, o1, d, out);
        } else {
          HWY_ALIGN float tmp[2 * kLanes];
          hn::StoreInterleaved2(o0, o1, d, tmp);
          std::memcpy(out, tmp, static_cast<size_t>(n) * 4);
        }
      }
    }
}

}  // namespace zp::runtime::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace zp::runtime {

HWY_EXPORT(DepthwiseFlatRow);
HWY_EXPORT(CopyEven);
HWY_EXPORT(SplitEvenOdd);
HWY_EXPORT(WinogradInputTiles);
HWY_EXPORT(WinogradOutputTiles);

void depthwiseFlatRow(const float* q, const int64_t* off, int64_t taps, int64_t L, const float* wm, float bias,
                      const Epilogue& e, float* flat) {
  HWY_DYNAMIC_DISPATCH(DepthwiseFlatRow)(q, off, taps, L, wm, bias, e, flat);
}

void copyEven(const float* s, int64_t lo, int64_t hi, float* d) { HWY_DYNAMIC_DISPATCH(CopyEven)(s, lo, hi, d); }

void splitEvenOdd(const float* s, int64_t lo, int64_t hi, float* even, float* odd) {
  HWY_DYNAMIC_DISPATCH(SplitEvenOdd)(s, lo, hi, even, odd);
}

void winogradInputTiles(const float* even, const float* odd, int64_t Wq, int64_t TH, int64_t TW, float* V,
                        int64_t xiStride) {
  HWY_DYNAMIC_DISPATCH(WinogradInputTiles)(even, odd, Wq, TH, TW, V, xiStride);
}

void winogradOutputTiles(const float* Mx, int64_t xiStride, int64_t TH, int64_t TW, int64_t OH, int64_t OW, float bias,
                         const Epilogue& e, const float* res, float* dst) {
  HWY_DYNAMIC_DISPATCH(WinogradOutputTiles)(Mx, xiStride, TH, TW, OH, OW, bias, e, res, dst);
}

}  // namespace zp::runtime
#endif  // HWY_ONCE
