// AVX-512 helpers shared by the kernels that work on blocks of 16 channels: a lane
// mask and an in-register transpose of a 16x16 block of floats.
#pragma once
#if defined(__x86_64__)
#include <immintrin.h>

#include <cstdint>

namespace zp::runtime::avx512 {

// The first n of 16 lanes.
__attribute__((target("avx512f"))) inline __mmask16 laneMask(int64_t n) {
  return static_cast<__mmask16>(n >= 16 ? 0xffff : (1u << n) - 1u);
}

// Masked forms with every lane set: GCC 12 warns about the plain ones (its bug 105593).
__attribute__((target("avx512f"))) inline __m512 lo32(__m512 a, __m512 b) { return _mm512_mask_unpacklo_ps(a, 0xffff, a, b); }
__attribute__((target("avx512f"))) inline __m512 hi32(__m512 a, __m512 b) { return _mm512_mask_unpackhi_ps(a, 0xffff, a, b); }
__attribute__((target("avx512f"))) inline __m512 lo64(__m512 a, __m512 b) {
  const __m512d x = _mm512_castps_pd(a);
  return _mm512_castpd_ps(_mm512_mask_unpacklo_pd(x, 0xff, x, _mm512_castps_pd(b)));
}
__attribute__((target("avx512f"))) inline __m512 hi64(__m512 a, __m512 b) {
  const __m512d x = _mm512_castps_pd(a);
  return _mm512_castpd_ps(_mm512_mask_unpackhi_pd(x, 0xff, x, _mm512_castps_pd(b)));
}
// 128-bit lanes: 0x88 takes a's 0 and 2, then b's 0 and 2; 0xdd the odd ones.
template <int Imm>
__attribute__((target("avx512f"))) inline __m512 lanes(__m512 a, __m512 b) {
  return _mm512_mask_shuffle_f32x4(a, 0xffff, a, b, Imm);
}

// In place: r[k] becomes column k of the 16x16 matrix whose rows were r[0..15].
__attribute__((target("avx512f"))) inline void transpose16(__m512 r[16]) {
  __m512 t[16];
  for (int k = 0; k < 16; k += 2) {
    t[k] = lo32(r[k], r[k + 1]);
    t[k + 1] = hi32(r[k], r[k + 1]);
  }
  for (int k = 0; k < 16; k += 4) {  // per 128-bit lane L: rows k..k+3 of columns 4L, 4L+1, 4L+2, 4L+3
    r[k] = lo64(t[k], t[k + 2]);
    r[k + 1] = hi64(t[k], t[k + 2]);
    r[k + 2] = lo64(t[k + 1], t[k + 3]);
    r[k + 3] = hi64(t[k + 1], t[k + 3]);
  }
  for (int k = 0; k < 4; ++k) {
    t[k] = lanes<0x88>(r[k], r[k + 4]);
    t[k + 4] = lanes<0xdd>(r[k], r[k + 4]);
    t[k + 8] = lanes<0x88>(r[k + 8], r[k + 12]);
    t[k + 12] = lanes<0xdd>(r[k + 8], r[k + 12]);
  }
  for (int k = 0; k < 4; ++k) {
    r[k] = lanes<0x88>(t[k], t[k + 8]);
    r[k + 4] = lanes<0x88>(t[k + 4], t[k + 12]);
    r[k + 8] = lanes<0xdd>(t[k], t[k + 8]);
    r[k + 12] = lanes<0xdd>(t[k + 4], t[k + 12]);
  }
}

}  // namespace zp::runtime::avx512
#endif
