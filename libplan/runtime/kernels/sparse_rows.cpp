// The sparse conv's row kernel (sparse.cpp lays out the rows and tiles): NV vectors
// of outputs per register block, S accumulator sets taking alternate nonzeros, so
// S*NV independent FMA chains hide the FMA latency.
#include "libplan/runtime/kernels/internal.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "libplan/runtime/kernels/sparse_rows.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "libplan/runtime/kernels/simd-inl.h"

HWY_BEFORE_NAMESPACE();
namespace zp::runtime::HWY_NAMESPACE {
namespace {

template <int NV, int S>
HWY_INLINE void Block(const float* rb, const int32_t* off, const float* vals, int32_t z0, int32_t z1, const float* in,
                      float b, float* out, float lo, float hi) {
  const DF d;
  VF acc[S][NV];
  if (in)
    for (int v = 0; v < NV; ++v) acc[0][v] = hn::LoadU(d, in + kLanes * v);
  else
    for (int v = 0; v < NV; ++v) acc[0][v] = hn::Set(d, b);
  for (int s = 1; s < S; ++s)
    for (int v = 0; v < NV; ++v) acc[s][v] = hn::Zero(d);
  int32_t z = z0;
  for (; (z1 - z) % S != 0; ++z) {  // the odd ones first, so that the loop below runs whole sets
    const float* src = rb + off[z];
    const VF wv = hn::Set(d, vals[z]);
    for (int v = 0; v < NV; ++v) acc[0][v] = hn::MulAdd(wv, hn::LoadU(d, src + kLanes * v), acc[0][v]);
  }
  for (; z < z1; z += S)
    for (int s = 0; s < S; ++s) {
      const float* src = rb + off[z + s];
      const VF wv = hn::Set(d, vals[z + s]);
      for (int v = 0; v < NV; ++v) acc[s][v] = hn::MulAdd(wv, hn::LoadU(d, src + kLanes * v), acc[s][v]);
    }
  const VF vlo = hn::Set(d, lo), vhi = hn::Set(d, hi);
  for (int v = 0; v < NV; ++v) {
    VF r = acc[0][v];
    for (int s = 1; s < S; ++s) r = hn::Add(r, acc[s][v]);
    // Max and Min with the bound first: a NaN sum stays NaN (the x86 instructions
    // return their second operand when either is NaN).
    r = hn::Max(vlo, r);
    hn::StoreU(hn::Min(vhi, r), d, out + kLanes * v);
  }
}

template <int NV>
void Row(const float* rb, const int32_t* off, const float* vals, int32_t z0, int32_t z1, const float* in, float b,
         float* out, int64_t len, float lo, float hi) {
  constexpr int64_t kB = kLanes * NV;
  int64_t q = 0;
  for (; q + kB <= len; q += kB) Block<NV, 2>(rb + q, off, vals, z0, z1, in ? in + q : nullptr, b, out + q, lo, hi);
  // The last partial block: as few vectors as cover it, with more sets when few.
  while (q < len) {
    const int64_t nv = (len - q + kLanes - 1) / kLanes;
    const float* i = in ? in + q : nullptr;
    if (nv >= 4) { Block<4, 2>(rb + q, off, vals, z0, z1, i, b, out + q, lo, hi); q += 4 * kLanes; }
    else if (nv == 3) { Block<3, 2>(rb + q, off, vals, z0, z1, i, b, out + q, lo, hi); q += 3 * kLanes; }
    else if (nv == 2) { Block<2, 4>(rb + q, off, vals, z0, z1, i, b, out + q, lo, hi); q += 2 * kLanes; }
    else { Block<1, 4>(rb + q, off, vals, z0, z1, i, b, out + q, lo, hi); q += kLanes; }
  }
}

}  // namespace

SparseRowKernel GetSparseRowKernel() { return {&Row<4>, 4 * kLanes, kLanes}; }

}  // namespace zp::runtime::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace zp::runtime {

HWY_EXPORT(GetSparseRowKernel);

SparseRowKernel sparseRowKernel() { return HWY_DYNAMIC_DISPATCH(GetSparseRowKernel)(); }

}  // namespace zp::runtime
#endif  // HWY_ONCE
