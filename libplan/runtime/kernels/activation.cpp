#include "libplan/runtime/kernels/activation.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include "libplan/runtime/kernels/cpu_features.h"

namespace zp::runtime {
namespace {

// The math is written once on GCC vector types; compiled for 8 lanes (AVX2) and, in
// a target("avx512f") function, for 16.
template <int W>
struct Lanes {
  typedef float F __attribute__((vector_size(4 * W)));
  typedef int32_t I __attribute__((vector_size(4 * W)));
};

template <typename F>
[[gnu::always_inline]] inline F splat(float v) {
  return F{} + v;
}

template <typename F>
[[gnu::always_inline]] inline F vmin(F a, F b) {
  return a < b ? a : b;
}

template <typename F>
[[gnu::always_inline]] inline F vmax(F a, F b) {
  return a > b ? a : b;
}

// exp(x) = 2^n e^r with n = round(x / ln 2) and r = x - n ln 2 (in two parts), e^r by
// its Taylor polynomial to degree 6 on |r| <= ln(2)/2. x is clamped to where 2^n
// stays a normal float.
template <typename F, typename I>
[[gnu::always_inline]] inline F vexp(F x) {
  x = vmax(vmin(x, splat<F>(88.0f)), splat<F>(-87.3365478515625f));
  const F magic = splat<F>(12582912.0f);  // 1.5 * 2^23: adding it rounds to an integer
  const F t = x * 1.44269504088896341f + magic;
  const F n = t - magic;
  F r = x - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  F p = splat<F>(1.0f / 720);
  p = p * r + 1.0f / 120;
  p = p * r + 1.0f / 24;
  p = p * r + 1.0f / 6;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const I ni = (I)t - 0x4B400000;  // t's low mantissa bits hold n (a vector cast keeps the bits)
  return p * (F)((ni + 127) << 23);
}

// erf(x): odd Taylor series to x^13 for |x| < 0.5; 1 - t (a1 + t (a2 + ...)) e^{-x^2}
// with t = 1 / (1 + p|x|) (Abramowitz and Stegun 7.1.26) above, with x's sign.
template <typename F, typename I>
[[gnu::always_inline]] inline F verf(F x) {
  const F ax = vmax(x, -x);
  const F x2 = x * x;
  F s = splat<F>(-1.0f / 75600);  // erf(x) / (2x / sqrt(pi)) = 1 - x^2/3 + x^4/10 - ... - x^14/75600
  s = s * x2 + 1.0f / 9360;
  s = s * x2 - 1.0f / 1320;
  s = s * x2 + 1.0f / 216;
  s = s * x2 - 1.0f / 42;
  s = s * x2 + 1.0f / 10;
  s = s * x2 - 1.0f / 3;
  s = s * x2 + 1.0f;
  const F small = s * x * 1.12837916709551257f;
  const F t = 1.0f / (ax * 0.3275911f + 1.0f);
  F q = splat<F>(1.061405429f);
  q = q * t - 1.453152027f;
  q = q * t + 1.421413741f;
  q = q * t - 0.284496736f;
  q = q * t + 0.254829592f;
  F big = 1.0f - q * t * vexp<F, I>(-x2);
  big = x < 0.0f ? -big : big;
  return ax < 0.5f ? small : big;
}

template <typename F, typename I>
[[gnu::always_inline]] inline F vapply(ActFn f, const ActParams& p, F x) {
  switch (f) {
    case ActFn::Sigmoid: return 1.0f / (1.0f + vexp<F, I>(-x));
    case ActFn::Silu: return x / (1.0f + vexp<F, I>(-x));
    case ActFn::HardSigmoid: return vmin(vmax(x * p.alpha + p.beta, splat<F>(0.0f)), splat<F>(1.0f));
    case ActFn::HardSwish: return x * vmin(vmax(x * p.alpha + p.beta, splat<F>(0.0f)), splat<F>(1.0f));
    case ActFn::Gelu: return x * 0.5f * (1.0f + verf<F, I>(x * 0.707106781186547524f));
    case ActFn::Tanh: {
      // tanh(x) = sign(x) (1 - 2 / (e^{2|x|} + 1)): no overflow, absolute error ~1e-7.
      const F ax = vmax(x, -x);
      const F r = 1.0f - 2.0f / (vexp<F, I>(ax * 2.0f) + 1.0f);
      return x < 0.0f ? -r : r;
    }
    case ActFn::Erf: return verf<F, I>(x);
    case ActFn::Exp: return vexp<F, I>(x);
  }
  return x;
}

template <int W>
[[gnu::always_inline]] inline void applyLanes(ActFn f, const ActParams& p, const float* x, float* y, int64_t n,
                                              float bias) {
  using F = typename Lanes<W>::F;
  using I = typename Lanes<W>::I;
  int64_t i = 0;
  for (; i + W <= n; i += W) {
    F v;
    std::memcpy(&v, x + i, sizeof(F));
    v = vapply<F, I>(f, p, v + bias);
    std::memcpy(y + i, &v, sizeof(F));
  }
  if (i < n) {
    float buf[W] = {};
    std::memcpy(buf, x + i, static_cast<size_t>(n - i) * 4);
    F v;
    std::memcpy(&v, buf, sizeof(F));
    v = vapply<F, I>(f, p, v + bias);
    std::memcpy(buf, &v, sizeof(F));
    std::memcpy(y + i, buf, static_cast<size_t>(n - i) * 4);
  }
}

void apply8(ActFn f, const ActParams& p, const float* x, float* y, int64_t n, float bias) {
  applyLanes<8>(f, p, x, y, n, bias);
}

#if defined(__x86_64__)
__attribute__((target("avx512f"))) void apply16(ActFn f, const ActParams& p, const float* x, float* y, int64_t n,
                                                float bias) {
  applyLanes<16>(f, p, x, y, n, bias);
}
#endif

}  // namespace

void applyActivation(ActFn f, const ActParams& p, const float* x, float* y, int64_t n, float bias) {
  if (n <= 0) return;
#if defined(__x86_64__)
  if (kHaveAvx512) return apply16(f, p, x, y, n, bias);
#endif
  apply8(f, p, x, y, n, bias);
}

float activationReference(ActFn f, const ActParams& p, float v) {
  const double x = v;
  switch (f) {
    case ActFn::Sigmoid: return static_cast<float>(1.0 / (1.0 + std::exp(-x)));
    case ActFn::Silu: return static_cast<float>(x / (1.0 + std::exp(-x)));
    case ActFn::HardSigmoid: return std::min(std::max(p.alpha * v + p.beta, 0.0f), 1.0f);
    case ActFn::HardSwish: return v * std::min(std::max(p.alpha * v + p.beta, 0.0f), 1.0f);
    case ActFn::Gelu: return static_cast<float>(0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))));
    case ActFn::Tanh: return static_cast<float>(std::tanh(x));
    case ActFn::Erf: return static_cast<float>(std::erf(x));
    case ActFn::Exp: return static_cast<float>(std::exp(x));
  }
  return v;
}

}  // namespace zp::runtime
