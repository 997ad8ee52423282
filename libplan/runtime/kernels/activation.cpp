#include "libplan/runtime/kernels/activation.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "libplan/runtime/kernels/activation.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace zp::runtime::HWY_NAMESPACE {
namespace {
namespace hn = hwy::HWY_NAMESPACE;

using D = hn::ScalableTag<float>;
using V = hn::Vec<D>;
using DI = hn::RebindToSigned<D>;

// exp(x) = 2^n e^r with n = round(x / ln 2) and r = x - n ln 2 (in two parts), e^r by
// its Taylor polynomial to degree 6 on |r| <= ln(2)/2. x is clamped to where 2^n
// stays a normal float.
HWY_INLINE V Exp(D d, V x) {
  const DI di;
  x = hn::Max(hn::Min(x, hn::Set(d, 88.0f)), hn::Set(d, -87.3365478515625f));
  const V magic = hn::Set(d, 12582912.0f);  // 1.5 * 2^23: adding it rounds to an integer
  const V t = hn::MulAdd(x, hn::Set(d, 1.44269504088896341f), magic);
  const V n = hn::Sub(t, magic);
  V r = hn::NegMulAdd(n, hn::Set(d, 0.693359375f), x);
  r = hn::NegMulAdd(n, hn::Set(d, -2.12194440e-4f), r);
  V p = hn::Set(d, 1.0f / 720);
  p = hn::MulAdd(p, r, hn::Set(d, 1.0f / 120));
  p = hn::MulAdd(p, r, hn::Set(d, 1.0f / 24));
  p = hn::MulAdd(p, r, hn::Set(d, 1.0f / 6));
  p = hn::MulAdd(p, r, hn::Set(d, 0.5f));
  p = hn::MulAdd(p, r, hn::Set(d, 1.0f));
  p = hn::MulAdd(p, r, hn::Set(d, 1.0f));
  // t's low mantissa bits hold n.
  const auto ni = hn::Sub(hn::BitCast(di, t), hn::Set(di, 0x4B400000));
  return hn::Mul(p, hn::BitCast(d, hn::ShiftLeft<23>(hn::Add(ni, hn::Set(di, 127)))));
}

// erf(x): odd Taylor series to x^13 for |x| < 0.5; 1 - t (a1 + t (a2 + ...)) e^{-x^2}
// with t = 1 / (1 + p|x|) (Abramowitz and Stegun 7.1.26) above, with x's sign.
HWY_INLINE V Erf(D d, V x) {
  const V ax = hn::Abs(x);
  const V x2 = hn::Mul(x, x);
  V s = hn::Set(d, -1.0f / 75600);  // erf(x) / (2x / sqrt(pi)) = 1 - x^2/3 + x^4/10 - ... - x^14/75600
  s = hn::MulAdd(s, x2, hn::Set(d, 1.0f / 9360));
  s = hn::MulAdd(s, x2, hn::Set(d, -1.0f / 1320));
  s = hn::MulAdd(s, x2, hn::Set(d, 1.0f / 216));
  s = hn::MulAdd(s, x2, hn::Set(d, -1.0f / 42));
  s = hn::MulAdd(s, x2, hn::Set(d, 1.0f / 10));
  s = hn::MulAdd(s, x2, hn::Set(d, -1.0f / 3));
  s = hn::MulAdd(s, x2, hn::Set(d, 1.0f));
  const V small = hn::Mul(hn::Mul(s, x), hn::Set(d, 1.12837916709551257f));
  const V t = hn::Div(hn::Set(d, 1.0f), hn::MulAdd(ax, hn::Set(d, 0.3275911f), hn::Set(d, 1.0f)));
  V q = hn::Set(d, 1.061405429f);
  q = hn::MulAdd(q, t, hn::Set(d, -1.453152027f));
  q = hn::MulAdd(q, t, hn::Set(d, 1.421413741f));
  q = hn::MulAdd(q, t, hn::Set(d, -0.284496736f));
  q = hn::MulAdd(q, t, hn::Set(d, 0.254829592f));
  V big = hn::NegMulAdd(hn::Mul(q, t), Exp(d, hn::Neg(x2)), hn::Set(d, 1.0f));
  big = hn::IfThenElse(hn::Lt(x, hn::Zero(d)), hn::Neg(big), big);
  return hn::IfThenElse(hn::Lt(ax, hn::Set(d, 0.5f)), small, big);
}

// 0 <= alpha x + beta <= 1.
HWY_INLINE V HardStep(D d, const ActParams& p, V x) {
  return hn::Min(hn::Max(hn::MulAdd(x, hn::Set(d, p.alpha), hn::Set(d, p.beta)), hn::Zero(d)), hn::Set(d, 1.0f));
}

HWY_INLINE V Apply(D d, ActFn f, const ActParams& p, V x) {
  const V one = hn::Set(d, 1.0f);
  switch (f) {
    case ActFn::Sigmoid: return hn::Div(one, hn::Add(one, Exp(d, hn::Neg(x))));
    case ActFn::Silu: return hn::Div(x, hn::Add(one, Exp(d, hn::Neg(x))));
    case ActFn::HardSigmoid: return HardStep(d, p, x);
    case ActFn::HardSwish: return hn::Mul(x, HardStep(d, p, x));
    case ActFn::Gelu:
      return hn::Mul(hn::Mul(x, hn::Set(d, 0.5f)), hn::Add(one, Erf(d, hn::Mul(x, hn::Set(d, 0.707106781186547524f)))));
    case ActFn::Tanh: {
      // tanh(x) = sign(x) (1 - 2 / (e^{2|x|} + 1)): no overflow, absolute error ~1e-7.
      const V r = hn::Sub(one, hn::Div(hn::Set(d, 2.0f), hn::Add(Exp(d, hn::Add(hn::Abs(x), hn::Abs(x))), one)));
      return hn::IfThenElse(hn::Lt(x, hn::Zero(d)), hn::Neg(r), r);
    }
    case ActFn::Erf: return Erf(d, x);
    case ActFn::Exp: return Exp(d, x);
  }
  return x;
}

}  // namespace

void ApplyActivation(ActFn f, const ActParams& p, const float* x, float* y, int64_t n, float bias) {
  const D d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  const V vb = hn::Set(d, bias);
  int64_t i = 0;
  for (; i + N <= n; i += N) hn::StoreU(Apply(d, f, p, hn::Add(hn::LoadU(d, x + i), vb)), d, y + i);
  if (i < n) {  // the tail on a padded copy: the same instructions as every other element
    HWY_ALIGN float buf[hn::MaxLanes(D())] = {};
    std::memcpy(buf, x + i, static_cast<size_t>(n - i) * 4);
    hn::Store(Apply(d, f, p, hn::Add(hn::Load(d, buf), vb)), d, buf);
    std::memcpy(y + i, buf, static_cast<size_t>(n - i) * 4);
  }
}

}  // namespace zp::runtime::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace zp::runtime {

HWY_EXPORT(ApplyActivation);

void applyActivation(ActFn f, const ActParams& p, const float* x, float* y, int64_t n, float bias) {
  if (n <= 0) return;
  HWY_DYNAMIC_DISPATCH(ApplyActivation)(f, p, x, y, n, bias);
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
#endif  // HWY_ONCE
