// One input, element by element: float math (float32 and float64) and activations,
// Neg/Abs/Sign/Shrink/Clip on every arithmetic type, float predicates, Not, and
// Cast/CastLike between every pair of the runtime's types.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <type_traits>

#include "libplan/runtime/kernels/parallel.h"
#include "libplan/runtime/ops/attributes.h"
#include "libplan/runtime/ops/dispatch.h"
#include "libplan/runtime/ops/factories.h"
#include "libplan/runtime/ops/fn_op.h"

namespace zp::runtime::detail {
namespace {

// A float32 or float64 tensor element by element: f64 on each float64 element,
// f32(x, y, n) on pieces of a float32 tensor, run on the session's threads when the
// tensor has more than `parallelAbove` elements.
template <typename F64, typename F32>
Expected<std::unique_ptr<Op>> unaryFloatPiecesOp(F64 f64, F32 f32, int64_t parallelAbove) {
  return fnOp([f64, f32, parallelAbove](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    const Tensor& x = *in[0];
    if (x.dtype == DType::F64) {
      Tensor& y = ctx.alloc(0, DType::F64, x.shape);
      const double* px = x.ptr<double>();
      double* py = y.ptr<double>();
      for (int64_t i = 0; i < x.size(); ++i) py[i] = f64(px[i]);
      return {};
    }
    if (x.dtype != DType::F32) return makeError("input must be float32 or float64, got {}", dtypeName(x.dtype));
    Tensor& y = ctx.alloc(0, DType::F32, x.shape);
    const float* px = x.ptr<float>();
    float* py = y.ptr<float>();
    const int64_t n = x.size();
    parallelFor(n > parallelAbove ? ctx.threads : 1, n, 0,
                [&](int64_t lo, int64_t hi, int) { f32(px + lo, py + lo, hi - lo); });
    return {};
  });
}

// f on every element of a float32 or float64 tensor; f is generic over the two.
template <typename F>
Expected<std::unique_ptr<Op>> unaryFloatOp(F f) {
  return unaryFloatPiecesOp(
      f, [f](const float* x, float* y, int64_t n) { for (int64_t i = 0; i < n; ++i) y[i] = f(x[i]); }, 65536);
}

// The functions activation.h vectorizes (float32); float64 through f64.
template <typename F>
Expected<std::unique_ptr<Op>> unaryActivationOp(ActFn fn, ActParams params, F f64) {
  return unaryFloatPiecesOp(
      f64, [fn, params](const float* x, float* y, int64_t n) { applyActivation(fn, params, x, y, n); }, 32768);
}

// f on every element of a tensor of any arithmetic type (bool and the halves aside),
// the output of the input's type.
template <typename F>
Expected<std::unique_ptr<Op>> unaryNumericOp(F f) {
  return fnOp([f](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    const Tensor& x = *in[0];
    Tensor& y = ctx.alloc(0, x.dtype, x.shape);
    return visitDType(x.dtype, [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      if constexpr (!kIsArithmetic<T>) {
        return makeError("input type {} is not supported", dtypeName(x.dtype));
      } else {
        const T* px = x.ptr<T>();
        T* py = y.ptr<T>();
        for (int64_t i = 0; i < x.size(); ++i) py[i] = static_cast<T>(f(px[i]));
        return {};
      }
    });
  });
}

// A predicate on a float tensor: a bool tensor.
template <typename F>
Expected<std::unique_ptr<Op>> floatPredicateOp(F f) {
  return fnOp([f](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    const Tensor& x = *in[0];
    if (x.dtype != DType::F32 && x.dtype != DType::F64)
      return makeError("input must be float32 or float64, got {}", dtypeName(x.dtype));
    Tensor& y = ctx.alloc(0, DType::Bool, x.shape);
    for (int64_t i = 0; i < x.size(); ++i)
      y.ptr<uint8_t>()[i] = x.dtype == DType::F32 ? f(double(x.ptr<float>()[i])) : f(x.ptr<double>()[i]);
    return {};
  });
}

// One element of type S as type T: floats to integers truncate toward zero (a
// non-finite value gives 0); anything to bool tests against zero.
template <typename T, typename S>
T castValue(S v) {
  if constexpr (std::is_same_v<S, Float16>) return castValue<T>(halfToFloat(v.bits));
  else if constexpr (std::is_same_v<S, BFloat16>) return castValue<T>(bf16ToFloat(v.bits));
  else if constexpr (std::is_same_v<T, Float16>) return Float16{floatToHalf(static_cast<float>(v))};
  else if constexpr (std::is_same_v<T, BFloat16>) return BFloat16{floatToBf16(static_cast<float>(v))};
  else if constexpr (std::is_same_v<T, bool>) return v != S(0);
  else if constexpr (std::is_integral_v<T> && std::is_floating_point_v<S>) return std::isfinite(v) ? static_cast<T>(v) : T(0);
  else return static_cast<T>(v);
}

Status castTensor(const Tensor& x, Tensor& y) {
  return visitDType(y.dtype, [&](auto outTag) -> Status {
    using T = typename decltype(outTag)::type;
    return visitDType(x.dtype, [&](auto inTag) -> Status {
      using S = typename decltype(inTag)::type;
      const S* px = x.ptr<S>();
      T* py = y.ptr<T>();
      for (int64_t i = 0; i < x.size(); ++i) py[i] = castValue<T>(px[i]);
      return {};
    });
  });
}

Expected<std::unique_ptr<Op>> castOp(std::optional<DType> to) {
  return fnOp([to](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    const Tensor& x = *in[0];
    Tensor& y = ctx.alloc(0, to ? *to : in[1]->dtype, x.shape);
    return castTensor(x, y);
  });
}

}  // namespace

Expected<std::unique_ptr<Op>> makeRelu(const BuildContext& bc) {
  return unaryFloatOp([](auto v) { return v > decltype(v)(0) ? v : decltype(v)(0); });
}

Expected<std::unique_ptr<Op>> makeSigmoid(const BuildContext& bc) {
  return unaryActivationOp(ActFn::Sigmoid, {}, [](double v) { return 1.0 / (1.0 + std::exp(-v)); });
}

Expected<std::unique_ptr<Op>> makeTanh(const BuildContext& bc) {
  return unaryActivationOp(ActFn::Tanh, {}, [](double v) { return std::tanh(v); });
}

Expected<std::unique_ptr<Op>> makeErf(const BuildContext& bc) {
  return unaryActivationOp(ActFn::Erf, {}, [](double v) { return std::erf(v); });
}

Expected<std::unique_ptr<Op>> makeSqrt(const BuildContext& bc) {
  return unaryFloatOp([](auto v) { return std::sqrt(v); });
}

Expected<std::unique_ptr<Op>> makeExp(const BuildContext& bc) {
  // exp overflows to inf above 88.7: activation.h clamps (to stay normal), so not used here.
  return unaryFloatOp([](auto v) { return std::exp(v); });
}

Expected<std::unique_ptr<Op>> makeLog(const BuildContext& bc) {
  return unaryFloatOp([](auto v) { return std::log(v); });
}

Expected<std::unique_ptr<Op>> makeReciprocal(const BuildContext& bc) {
  return unaryFloatOp([](auto v) { return decltype(v)(1) / v; });
}

Expected<std::unique_ptr<Op>> makeFloor(const BuildContext& bc) {
  return unaryFloatOp([](auto v) { return std::floor(v); });
}

Expected<std::unique_ptr<Op>> makeCeil(const BuildContext& bc) {
  return unaryFloatOp([](auto v) { return std::ceil(v); });
}

Expected<std::unique_ptr<Op>> makeRound(const BuildContext& bc) {
  return unaryFloatOp([](auto v) { return std::nearbyint(v); });
}

Expected<std::unique_ptr<Op>> makeSoftplus(const BuildContext& bc) {
  return unaryFloatOp([](auto v) { return v > decltype(v)(20) ? v : std::log1p(std::exp(v)); });
}

Expected<std::unique_ptr<Op>> makeNeg(const BuildContext& bc) {
  return unaryNumericOp([](auto v) { return -v; });
}

Expected<std::unique_ptr<Op>> makeAbs(const BuildContext& bc) {
  return unaryNumericOp([](auto v) {
    if constexpr (std::is_floating_point_v<decltype(v)>) return std::fabs(v);
    else if constexpr (std::is_signed_v<decltype(v)>) return v < 0 ? -v : v;
    else return v;
  });
}

Expected<std::unique_ptr<Op>> makeSign(const BuildContext& bc) {
  return unaryNumericOp([](auto v) {
    using T = decltype(v);
    return v > T(0) ? T(1) : (v < T(0) ? T(-1) : T(0));
  });
}

Expected<std::unique_ptr<Op>> makeHardSwish(const BuildContext& bc) {
  ActParams p;
  p.alpha = 1.0f / 6;
  return unaryActivationOp(ActFn::HardSwish, p, [](double v) { return v * std::min(std::max(v / 6 + 0.5, 0.0), 1.0); });
}

Expected<std::unique_ptr<Op>> makeHardSigmoid(const BuildContext& bc) {
  ActParams p;
  p.alpha = attrFloat(*bc.node, "alpha", 0.2f);
  p.beta = attrFloat(*bc.node, "beta", 0.5f);
  return unaryActivationOp(ActFn::HardSigmoid, p, [alpha = double(p.alpha), beta = double(p.beta)](double v) {
    return std::min(std::max(alpha * v + beta, 0.0), 1.0);
  });
}

Expected<std::unique_ptr<Op>> makeLeakyRelu(const BuildContext& bc) {
  float alpha = attrFloat(*bc.node, "alpha", 0.01f);
  return unaryFloatOp([alpha](auto v) { return v >= 0 ? v : decltype(v)(alpha) * v; });
}

Expected<std::unique_ptr<Op>> makeElu(const BuildContext& bc) {
  float alpha = attrFloat(*bc.node, "alpha", 1.0f);
  return unaryFloatOp([alpha](auto v) {
    using T = decltype(v);
    return v >= 0 ? v : T(alpha) * (std::exp(v) - T(1));
  });
}

// Clip on floats, and on integers from opset 12 (bounds of the input's type).
Expected<std::unique_ptr<Op>> makeClip(const BuildContext& bc) {
  const int opset = bc.opset;
  const float amin = attrFloat(*bc.node, "min", -INFINITY), amax = attrFloat(*bc.node, "max", INFINITY);
  return fnOp([opset, amin, amax](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    const Tensor& x = *in[0];
    if (x.dtype == DType::F32) {
      float lo = amin, hi = amax;
      if (opset >= 11) {
        lo = (in.size() > 1 && in[1]) ? in[1]->toF32()[0] : -INFINITY;
        hi = (in.size() > 2 && in[2]) ? in[2]->toF32()[0] : INFINITY;
      }
      Tensor& y = ctx.alloc(0, DType::F32, x.shape);
      const float* px = x.ptr<float>();
      float* py = y.ptr<float>();
      parallelFor(x.size() > 65536 ? ctx.threads : 1, x.size(), 0, [&](int64_t b, int64_t e, int) {
        for (int64_t i = b; i < e; ++i) py[i] = std::min(std::max(px[i], lo), hi);
      });
      return {};
    }
    Tensor& y = ctx.alloc(0, x.dtype, x.shape);
    return visitDType(x.dtype, [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      if constexpr (!kIsArithmetic<T>) {
        return makeError("input type {} is not supported", dtypeName(x.dtype));
      } else {
        const T lo = (in.size() > 1 && in[1]) ? elementAs<T>(*in[1], 0) : std::numeric_limits<T>::lowest();
        const T hi = (in.size() > 2 && in[2]) ? elementAs<T>(*in[2], 0) : std::numeric_limits<T>::max();
        for (int64_t i = 0; i < x.size(); ++i) y.ptr<T>()[i] = std::min(std::max(x.ptr<T>()[i], lo), hi);
        return {};
      }
    });
  });
}

Expected<std::unique_ptr<Op>> makeNot(const BuildContext& bc) {
  return fnOp([](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    Tensor& y = ctx.alloc(0, DType::Bool, in[0]->shape);
    for (int64_t i = 0; i < y.size(); ++i) y.ptr<uint8_t>()[i] = !in[0]->ptr<uint8_t>()[i];
    return {};
  });
}

Expected<std::unique_ptr<Op>> makeCast(const BuildContext& bc) {
  ZP_ASSIGN_OR_RETURN(DType to, dtypeFromOnnx(static_cast<int32_t>(attrInt(*bc.node, "to", 1))));
  return castOp(to);
}

// CastLike: Cast to the element type of the second input.
Expected<std::unique_ptr<Op>> makeCastLike(const BuildContext& bc) { return castOp(std::nullopt); }

Expected<std::unique_ptr<Op>> makeSin(const BuildContext& bc) { return unaryFloatOp([](auto v) { return std::sin(v); }); }
Expected<std::unique_ptr<Op>> makeCos(const BuildContext& bc) { return unaryFloatOp([](auto v) { return std::cos(v); }); }
Expected<std::unique_ptr<Op>> makeTan(const BuildContext& bc) { return unaryFloatOp([](auto v) { return std::tan(v); }); }
Expected<std::unique_ptr<Op>> makeAsin(const BuildContext& bc) { return unaryFloatOp([](auto v) { return std::asin(v); }); }
Expected<std::unique_ptr<Op>> makeAcos(const BuildContext& bc) { return unaryFloatOp([](auto v) { return std::acos(v); }); }
Expected<std::unique_ptr<Op>> makeAtan(const BuildContext& bc) { return unaryFloatOp([](auto v) { return std::atan(v); }); }
Expected<std::unique_ptr<Op>> makeSinh(const BuildContext& bc) { return unaryFloatOp([](auto v) { return std::sinh(v); }); }
Expected<std::unique_ptr<Op>> makeCosh(const BuildContext& bc) { return unaryFloatOp([](auto v) { return std::cosh(v); }); }
Expected<std::unique_ptr<Op>> makeAsinh(const BuildContext& bc) { return unaryFloatOp([](auto v) { return std::asinh(v); }); }
Expected<std::unique_ptr<Op>> makeAcosh(const BuildContext& bc) { return unaryFloatOp([](auto v) { return std::acosh(v); }); }
Expected<std::unique_ptr<Op>> makeAtanh(const BuildContext& bc) { return unaryFloatOp([](auto v) { return std::atanh(v); }); }

Expected<std::unique_ptr<Op>> makeSoftsign(const BuildContext& bc) {
  return unaryFloatOp([](auto v) { return v / (decltype(v)(1) + std::fabs(v)); });
}

Expected<std::unique_ptr<Op>> makeSelu(const BuildContext& bc) {
  const double alpha = attrFloat(*bc.node, "alpha", 1.67326319217681884765625f);
  const double gamma = attrFloat(*bc.node, "gamma", 1.05070102214813232421875f);
  return unaryFloatOp([alpha, gamma](auto v) {
    using T = decltype(v);
    return v > T(0) ? T(gamma * v) : T(gamma * (alpha * std::exp(double(v)) - alpha));
  });
}

Expected<std::unique_ptr<Op>> makeCelu(const BuildContext& bc) {
  const double alpha = attrFloat(*bc.node, "alpha", 1.0f);
  return unaryFloatOp([alpha](auto v) {
    using T = decltype(v);
    return std::max(T(0), v) + std::min(T(0), T(alpha * (std::exp(double(v) / alpha) - 1)));
  });
}

Expected<std::unique_ptr<Op>> makeThresholdedRelu(const BuildContext& bc) {
  const double alpha = attrFloat(*bc.node, "alpha", 1.0f);
  return unaryFloatOp([alpha](auto v) { return v > alpha ? v : decltype(v)(0); });
}

// Shrink on any arithmetic type: x < -lambd -> x + bias, x > lambd -> x - bias, else 0.
Expected<std::unique_ptr<Op>> makeShrink(const BuildContext& bc) {
  const double bias = attrFloat(*bc.node, "bias", 0.0f), lambd = attrFloat(*bc.node, "lambd", 0.5f);
  return unaryNumericOp([bias, lambd](auto v) {
    using T = decltype(v);
    const double d = static_cast<double>(v);
    return d < -lambd ? T(d + bias) : (d > lambd ? T(d - bias) : T(0));
  });
}

Expected<std::unique_ptr<Op>> makeIsNaN(const BuildContext& bc) {
  return floatPredicateOp([](double v) { return std::isnan(v); });
}

Expected<std::unique_ptr<Op>> makeIsInf(const BuildContext& bc) {
  const bool neg = attrInt(*bc.node, "detect_negative", 1) != 0, pos = attrInt(*bc.node, "detect_positive", 1) != 0;
  return floatPredicateOp([neg, pos](double v) { return std::isinf(v) && (v > 0 ? pos : neg); });
}

}  // namespace zp::runtime::detail
