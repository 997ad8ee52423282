// What the SIMD kernels share, written once over Highway and compiled per target
// by each kernel file that includes hwy/foreach_target.h: lane masks over a range
// of lanes, and an in-register transpose of a square block of vectors. Vectors are
// of fixed size on every target built (the build disables Highway's scalable SVE
// targets), so a block of them can live in an array.
#if defined(ZP_RUNTIME_KERNELS_SIMD_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ZP_RUNTIME_KERNELS_SIMD_INL_H_
#undef ZP_RUNTIME_KERNELS_SIMD_INL_H_
#else
#define ZP_RUNTIME_KERNELS_SIMD_INL_H_
#endif

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace zp::runtime::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using DF = hn::ScalableTag<float>;
using VF = hn::Vec<DF>;
// Floats in the widest vector of this target: 16 on AVX-512, 8 on AVX2, 4 on NEON.
constexpr int64_t kLanes = static_cast<int64_t>(hn::MaxLanes(DF()));

// Architectural vector registers: what bounds how many accumulators a kernel keeps.
#if HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_SSE4 || HWY_TARGET == HWY_SSSE3
constexpr int kVectorRegisters = 16;
#else
constexpr int kVectorRegisters = 32;
#endif

// Lanes l with lo <= l < hi (both clamped to the vector).
template <class D>
HWY_INLINE hn::Mask<D> LaneRange(D d, int64_t lo, int64_t hi) {
  const int64_t n = static_cast<int64_t>(hn::MaxLanes(d));
  lo = std::clamp<int64_t>(lo, 0, n);
  hi = std::clamp<int64_t>(hi, 0, n);
  if (hi <= lo) return hn::FirstN(d, 0);
  return hn::AndNot(hn::FirstN(d, static_cast<size_t>(lo)), hn::FirstN(d, static_cast<size_t>(hi)));
}

// Masked loads and stores that touch only their lanes' memory: AVX2 and AVX-512
// have them; elsewhere Highway's read (or read and write back) the whole vector,
// which may run past a buffer's end or race with a thread writing next to it.
#undef ZP_SIMD_EXACT_MASKED_MEMORY
#if HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
#define ZP_SIMD_EXACT_MASKED_MEMORY 1
#else
#define ZP_SIMD_EXACT_MASKED_MEMORY 0
#endif

// Lanes [lo, hi) of p (clamped to the vector), zero elsewhere.
template <class D>
HWY_INLINE hn::Vec<D> LoadRange(D d, const hn::TFromD<D>* p, int64_t lo, int64_t hi) {
#if ZP_SIMD_EXACT_MASKED_MEMORY
  return hn::MaskedLoad(LaneRange(d, lo, hi), d, p);
#else
  const int64_t n = static_cast<int64_t>(hn::MaxLanes(d));
  lo = std::clamp<int64_t>(lo, 0, n);
  hi = std::clamp<int64_t>(hi, 0, n);
  HWY_ALIGN hn::TFromD<D> buf[hn::MaxLanes(D())] = {};
  if (hi > lo) std::memcpy(buf + lo, p + lo, static_cast<size_t>(hi - lo) * sizeof(buf[0]));
  return hn::Load(d, buf);
#endif
}

// The first n lanes of p, zero elsewhere.
template <class D>
HWY_INLINE hn::Vec<D> LoadFirst(D d, const hn::TFromD<D>* p, int64_t n) {
  return n >= static_cast<int64_t>(hn::MaxLanes(d)) ? hn::LoadU(d, p) : LoadRange(d, p, 0, n);
}

// The first n lanes of v to p.
template <class D>
HWY_INLINE void StoreFirst(hn::Vec<D> v, D d, hn::TFromD<D>* p, int64_t n) {
  if (n >= static_cast<int64_t>(hn::MaxLanes(d))) return hn::StoreU(v, d, p);
  if (n <= 0) return;
#if ZP_SIMD_EXACT_MASKED_MEMORY
  hn::BlendedStore(v, hn::FirstN(d, static_cast<size_t>(n)), d, p);
#else
  HWY_ALIGN hn::TFromD<D> buf[hn::MaxLanes(D())];
  hn::Store(v, d, buf);
  std::memcpy(p, buf, static_cast<size_t>(n) * sizeof(buf[0]));
#endif
}

namespace detail {

// Rows r[0..3] transposed within each 128-bit block: afterwards r[k]'s block b holds
// column 4b + k of the four rows.
template <class D>
HWY_INLINE void Transpose4InBlocks(D d, hn::Vec<D>* r) {
  const hn::Repartition<uint64_t, D> d64;
  const auto t0 = hn::BitCast(d64, hn::InterleaveLower(d, r[0], r[1]));
  const auto t1 = hn::BitCast(d64, hn::InterleaveUpper(d, r[0], r[1]));
  const auto t2 = hn::BitCast(d64, hn::InterleaveLower(d, r[2], r[3]));
  const auto t3 = hn::BitCast(d64, hn::InterleaveUpper(d, r[2], r[3]));
  r[0] = hn::BitCast(d, hn::InterleaveLower(d64, t0, t2));
  r[1] = hn::BitCast(d, hn::InterleaveUpper(d64, t0, t2));
  r[2] = hn::BitCast(d, hn::InterleaveLower(d64, t1, t3));
  r[3] = hn::BitCast(d, hn::InterleaveUpper(d64, t1, t3));
}

}  // namespace detail

// In place: r[k] becomes column k of the square matrix whose rows were r[0..N-1],
// N = MaxLanes(d) (1, 4, 8 or 16 lanes of 32 bits).
template <class D>
HWY_INLINE void TransposeSquare(D d, hn::Vec<D>* r) {
  constexpr size_t N = hn::MaxLanes(D());
  static_assert(sizeof(hn::TFromD<D>) == 4, "32-bit lanes");
  if constexpr (N == 1) {
    return;
  } else if constexpr (N == 4) {
    detail::Transpose4InBlocks(d, r);
  } else if constexpr (N == 8) {
    detail::Transpose4InBlocks(d, r);
    detail::Transpose4InBlocks(d, r + 4);
    for (int k = 0; k < 4; ++k) {
      const auto lo = r[k], hi = r[k + 4];
      r[k] = hn::ConcatLowerLower(d, hi, lo);
      r[k + 4] = hn::ConcatUpperUpper(d, hi, lo);
    }
  } else {
    static_assert(N == 16, "1, 4, 8 or 16 lanes");
    for (int g = 0; g < 16; g += 4) detail::Transpose4InBlocks(d, r + g);
    // r[4g + k]'s block b holds column 4b + k of rows 4g..4g+3: a 4x4 transpose of
    // blocks for each k.
    for (int k = 0; k < 4; ++k) {
      const auto a = r[k], b = r[4 + k], c = r[8 + k], e = r[12 + k];
      const auto p = hn::OddEvenBlocks(hn::SwapAdjacentBlocks(b), a);  // a0 b0 a2 b2
      const auto q = hn::OddEvenBlocks(b, hn::SwapAdjacentBlocks(a));  // a1 b1 a3 b3
      const auto s = hn::OddEvenBlocks(hn::SwapAdjacentBlocks(e), c);  // c0 e0 c2 e2
      const auto t = hn::OddEvenBlocks(e, hn::SwapAdjacentBlocks(c));  // c1 e1 c3 e3
      r[k] = hn::ConcatLowerLower(d, s, p);
      r[4 + k] = hn::ConcatLowerLower(d, t, q);
      r[8 + k] = hn::ConcatUpperUpper(d, s, p);
      r[12 + k] = hn::ConcatUpperUpper(d, t, q);
    }
  }
}

// One row of nc <= kLanes planes into channel-interleaved columns: x is the row in the
// first plane, planes planeFloats apart; dst gets W columns of kLanes floats (lanes
// past nc zero), a vector of columns of a vector of planes at a time, transposed in
// registers.
HWY_INLINE void PlanesRowToBlock(const float* x, int64_t planeFloats, int64_t W, int64_t nc, float* dst) {
  const DF d;
  for (int64_t iw0 = 0; iw0 < W; iw0 += kLanes) {
    const int64_t n = std::min(kLanes, W - iw0);
    // A few last columns of a whole block: a gather each, not a block's loads and a
    // transpose (a 17-wide row's 17th column took as long as the 16 before it).
    if (n * 4 <= kLanes && nc == kLanes) {
      const hn::RebindToSigned<DF> di;
      const auto idx = hn::Mul(hn::Iota(di, 0), hn::Set(di, static_cast<int32_t>(planeFloats)));
      for (int64_t p = 0; p < n; ++p) hn::StoreU(hn::GatherIndex(d, x + iw0 + p, idx), d, dst + (iw0 + p) * kLanes);
      continue;
    }
    VF v[kLanes];
    for (int64_t c = 0; c < kLanes; ++c) v[c] = c < nc ? LoadFirst(d, x + c * planeFloats + iw0, n) : hn::Zero(d);
    TransposeSquare(d, v);
    for (int64_t p = 0; p < n; ++p) hn::StoreU(v[p], d, dst + (iw0 + p) * kLanes);
  }
}

// The reverse: count channel-interleaved positions ([count][kLanes]) into nc planes
// of P floats, from the plane's first position y.
HWY_INLINE void BlockToPlanes(const float* out, int64_t count, int64_t nc, int64_t P, float* y) {
  const DF d;
  for (int64_t p0 = 0; p0 < count; p0 += kLanes) {
    const int64_t n = std::min(kLanes, count - p0);
    VF v[kLanes];
    for (int64_t q = 0; q < kLanes; ++q) v[q] = q < n ? hn::LoadU(d, out + (p0 + q) * kLanes) : hn::Zero(d);
    TransposeSquare(d, v);
    for (int64_t c = 0; c < nc; ++c) StoreFirst(v[c], d, y + c * P + p0, n);
  }
}

}  // namespace zp::runtime::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // ZP_RUNTIME_KERNELS_SIMD_INL_H_
