// Depthwise conv straight from the input, without the window kernel's padded copy
// of each plane: every tap loads a vector of inputs at a constant offset with the
// lanes outside the input zero, and results are stored straight into the output.
// Stride 1 with "same" output size runs each plane as one flat array of vector
// blocks (short rows lose no lanes; on targets with exact masked loads, AVX2 and
// AVX-512); otherwise each output row is cut into vectors (stride 2: two vectors of
// inputs loaded, the even lanes kept). Four blocks or rows are summed at once,
// which keeps four independent FMA chains going.
#include "libplan/runtime/kernels/internal.h"

#include <algorithm>
#include <vector>

#include "libplan/runtime/kernels/parallel.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "libplan/runtime/kernels/depthwise_rows.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "libplan/runtime/kernels/simd-inl.h"

#ifndef ZP_RUNTIME_KERNELS_DEPTHWISE_ROWS_ONCE_
#define ZP_RUNTIME_KERNELS_DEPTHWISE_ROWS_ONCE_
namespace zp::runtime {
constexpr int64_t kRowsMaxKw = 16;  // tap columns whose load ranges are kept
}  // namespace zp::runtime
#endif

HWY_BEFORE_NAMESPACE();
namespace zp::runtime::HWY_NAMESPACE {
namespace {

constexpr int kRows = 4;

// The lanes [lo, hi) of a vector loaded at `first` that lie inside a row of W floats.
struct Inside {
  int64_t lo = 0, hi = 0;
};

Inside inside(int64_t first, int64_t W) {
  return {std::clamp<int64_t>(-first, 0, kLanes), std::clamp<int64_t>(W - first, 0, kLanes)};
}

HWY_INLINE VF LoadInside(DF d, const float* p, Inside r) {
  if (r.lo == 0 && r.hi == kLanes) return hn::LoadU(d, p);
  if (r.hi <= r.lo) return hn::Zero(d);
  return LoadRange(d, p, r.lo, r.hi);
}

HWY_INLINE VF Clamp(DF d, VF v, const Epilogue& e) {
  if (e.kind != Epilogue::None) v = hn::Max(v, hn::Set(d, e.kind == Epilogue::Clip ? e.lo : 0.0f));
  if (e.kind == Epilogue::Clip) v = hn::Min(v, hn::Set(d, e.hi));
  return v;
}

// One channel plane: x [H, W] -> y [OH, OW].
template <int SW>
void planeRows(const ConvAttrs& a, const float* x, int64_t H, int64_t W, const float* wm, float bias,
               const Epilogue& e, float* y) {
  const DF d;
  const int64_t OH = a.outH(H), OW = a.outW(W), kh = a.kh, kw = a.kw;
  const VF vb = hn::Set(d, bias);
  Inside rLo[kRowsMaxKw], rHi[kRowsMaxKw];  // per tap column: the loads' lanes inside the row
  int64_t colOff[kRowsMaxKw];
  for (int64_t ow0 = 0; ow0 < OW; ow0 += kLanes) {
    for (int64_t j = 0; j < kw; ++j) {
      colOff[j] = ow0 * SW + j * a.dw - a.padL;
      rLo[j] = inside(colOff[j], W);
      if (SW == 2) rHi[j] = inside(colOff[j] + kLanes, W);
    }
    for (int64_t oh0 = 0; oh0 < OH; oh0 += kRows) {
      VF acc[kRows] = {vb, vb, vb, vb};
      const int64_t rows = std::min<int64_t>(kRows, OH - oh0);
      for (int64_t i = 0; i < kh; ++i) {
        const float* wi = wm + i * kw;
        for (int r = 0; r < kRows; ++r) {
          const int64_t ih = (oh0 + r) * a.sh + i * a.dh - a.padT;
          if (r >= rows || ih < 0 || ih >= H) continue;
          const float* row = x + ih * W;
          for (int64_t j = 0; j < kw; ++j) {
            VF v;
            if (SW == 1) {
              v = LoadInside(d, row + colOff[j], rLo[j]);
            } else {
              const VF l = LoadInside(d, row + colOff[j], rLo[j]);
              const VF h = LoadInside(d, row + colOff[j] + kLanes, rHi[j]);
              v = hn::ConcatEven(d, h, l);
            }
            acc[r] = hn::MulAdd(hn::Set(d, wi[j]), v, acc[r]);
          }
        }
      }
      for (int r = 0; r < rows; ++r) StoreFirst(Clamp(d, acc[r], e), d, y + (oh0 + r) * OW + ow0, OW - ow0);
    }
  }
}

// Stride 1 with the output as wide as the input ("same" padding): output o = oh*W + ow
// reads input o + (i*dh - padT)*W + j*dw - padL for tap (i, j), a constant offset, so
// the plane runs as one flat array of vector blocks (no lanes lost to short rows);
// per tap and block a mask (the same for every channel) drops the inputs outside.
// Needs loads that read only their mask's lanes: the mask has holes where rows wrap.
constexpr bool kFlatLoads = ZP_SIMD_EXACT_MASKED_MEMORY;
constexpr int64_t kMaskBytes = 8;  // per mask: LoadMaskBits reads up to 8 bytes

struct FlatMasks {
  int64_t blocks = 0;
  std::vector<int64_t> offset;  // per tap
  std::vector<uint8_t> bits;    // [tap][block][kMaskBytes], lane l in bit l % 8 of byte l / 8
};

FlatMasks flatMasks(const ConvAttrs& a, int64_t H, int64_t W) {
  FlatMasks f;
  const int64_t P = H * W;
  f.blocks = (P + kLanes - 1) / kLanes;
  f.bits.assign(static_cast<size_t>(a.kh * a.kw * f.blocks * kMaskBytes), 0);
  for (int64_t i = 0; i < a.kh; ++i)
    for (int64_t j = 0; j < a.kw; ++j) {
      const int64_t t = i * a.kw + j, di = i * a.dh - a.padT, dj = j * a.dw - a.padL;
      f.offset.push_back(di * W + dj);
      for (int64_t o = 0; o < P; ++o) {
        const int64_t ih = o / W + di, iw = o % W + dj, lane = o % kLanes;
        if (ih >= 0 && ih < H && iw >= 0 && iw < W)
          f.bits[static_cast<size_t>((t * f.blocks + o / kLanes) * kMaskBytes + lane / 8)] |=
              static_cast<uint8_t>(1u << (lane % 8));
      }
    }
  return f;
}

void planeFlat(const FlatMasks& f, int64_t P, const float* x, const float* wm, float bias, const Epilogue& e,
               float* y) {
  const DF d;
  const int64_t taps = static_cast<int64_t>(f.offset.size()), nb = f.blocks;
  const VF vb = hn::Set(d, bias);
  for (int64_t b0 = 0; b0 < nb; b0 += kRows) {
    const int64_t nq = std::min<int64_t>(kRows, nb - b0);
    VF acc[kRows] = {vb, vb, vb, vb};
    for (int64_t t = 0; t < taps; ++t) {
      const VF w = hn::Set(d, wm[t]);
      const float* s = x + f.offset[static_cast<size_t>(t)] + b0 * kLanes;
      const uint8_t* bits = f.bits.data() + (t * nb + b0) * kMaskBytes;
      for (int q = 0; q < kRows; ++q)
        if (q < nq)
          acc[q] = hn::MulAdd(w, hn::MaskedLoad(hn::LoadMaskBits(d, bits + q * kMaskBytes), d, s + q * kLanes), acc[q]);
    }
    for (int q = 0; q < nq; ++q) {
      const int64_t o = (b0 + q) * kLanes;
      StoreFirst(Clamp(d, acc[q], e), d, y + o, P - o);
    }
  }
}

bool flatApplies(const ConvAttrs& a, int64_t H, int64_t W) {
  return kFlatLoads && a.sh == 1 && a.sw == 1 && a.outH(H) == H && a.outW(W) == W;
}

}  // namespace

// Measured against the window kernel, one thread, on EfficientNet-B0's and MobileNetV2's
// depthwise shapes (AVX-512 host): "same" stride 1 on 7x7 maps 0.57-0.73x its time, 14x14
// 3x3 0.83x but 14x14 5x5 1.08x, 28x28 and 56x56 1.4x; stride 2 from 28x28 and 56x56
// inputs 0.53-0.87x, from 112x112 1.1x.
bool DepthwiseRowsPay(const ConvAttrs& a, int64_t H, int64_t W) {
  if (flatApplies(a, H, W)) return H * W <= 100 || (H * W <= 256 && a.kh * a.kw <= 9);
  return a.sw == 2 && W <= 64;
}

void ConvDepthwiseRows(const ConvAttrs& a, const PackedWeights& pw, const float* x, int64_t N, int64_t H, int64_t W,
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

}  // namespace zp::runtime::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace zp::runtime {

HWY_EXPORT(DepthwiseRowsPay);
HWY_EXPORT(ConvDepthwiseRows);

bool depthwiseRowsApplies(const ConvAttrs& a) { return a.kw <= kRowsMaxKw && (a.sw == 1 || a.sw == 2); }

bool depthwiseRowsPay(const ConvAttrs& a, int64_t H, int64_t W) {
  return depthwiseRowsApplies(a) && HWY_DYNAMIC_DISPATCH(DepthwiseRowsPay)(a, H, W);
}

void convDepthwiseRows(const ConvAttrs& a, const PackedWeights& pw, const float* x, int64_t N, int64_t H, int64_t W,
                       float* y, const Epilogue& epilogue, int threads) {
  HWY_DYNAMIC_DISPATCH(ConvDepthwiseRows)(a, pw, x, N, H, W, y, epilogue, threads);
}

}  // namespace zp::runtime
#endif  // HWY_ONCE
