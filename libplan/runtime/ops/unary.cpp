// One input, element by element: float math and activations, Neg/Abs on floats and
// int64, Clip, Not, and Cast between the runtime's types.
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "libplan/runtime/kernels/parallel.h"
#include "libplan/runtime/ops/attributes.h"
#include "libplan/runtime/ops/factories.h"
#include "libplan/runtime/ops/fn_op.h"

namespace zp::runtime::detail {
namespace {

template <typename F>
Expected<std::unique_ptr<Op>> unaryFloatOp(F f) {
  return fnOp([f](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    const Tensor& x = *in[0];
    if (x.dtype != DType::F32) return makeError("input must be float32, got {}", dtypeName(x.dtype));
    Tensor& y = ctx.alloc(0, DType::F32, x.shape);
    const float* px = x.ptr<float>();
    float* py = y.ptr<float>();
    const int64_t n = x.size();
    parallelFor(n > 65536 ? ctx.threads : 1, n, 0, [&](int64_t lo, int64_t hi, int) {
      for (int64_t i = lo; i < hi; ++i) py[i] = f(px[i]);
    });
    return {};
  });
}

// The functions activation.h vectorizes.
Expected<std::unique_ptr<Op>> unaryActivationOp(ActFn fn, ActParams params = {}) {
  return fnOp([fn, params](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    const Tensor& x = *in[0];
    if (x.dtype != DType::F32) return makeError("input must be float32, got {}", dtypeName(x.dtype));
    Tensor& y = ctx.alloc(0, DType::F32, x.shape);
    const float* px = x.ptr<float>();
    float* py = y.ptr<float>();
    const int64_t n = x.size();
    parallelFor(n > 32768 ? ctx.threads : 1, n, 0, [&](int64_t lo, int64_t hi, int) {
      applyActivation(fn, params, px + lo, py + lo, hi - lo);
    });
    return {};
  });
}

Expected<std::unique_ptr<Op>> unaryNumericOp(float (*ff)(float), int64_t (*fi)(int64_t)) {
  return fnOp([ff, fi](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    const Tensor& x = *in[0];
    Tensor& y = ctx.alloc(0, x.dtype, x.shape);
    if (x.dtype == DType::F32) {
      for (int64_t i = 0; i < x.size(); ++i) y.ptr<float>()[i] = ff(x.ptr<float>()[i]);
    } else if (x.dtype == DType::I64) {
      for (int64_t i = 0; i < x.size(); ++i) y.ptr<int64_t>()[i] = fi(x.ptr<int64_t>()[i]);
    } else {
      return makeError("input type {} is not supported", dtypeName(x.dtype));
    }
    return {};
  });
}

template <typename T>
void castLoop(const Tensor& x, Tensor& y) {
  T* out = y.ptr<T>();
  const int64_t n = x.size();
  switch (x.dtype) {
    case DType::F32:
      for (int64_t i = 0; i < n; ++i) {
        float v = x.ptr<float>()[i];
        if constexpr (std::is_integral_v<T>) out[i] = std::isfinite(v) ? static_cast<T>(v) : T(0);
        else out[i] = static_cast<T>(v);
      }
      break;
    case DType::I64: for (int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(x.ptr<int64_t>()[i]); break;
    case DType::I32: for (int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(x.ptr<int32_t>()[i]); break;
    case DType::I8: for (int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(x.ptr<int8_t>()[i]); break;
    case DType::U8: case DType::Bool: for (int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(x.ptr<uint8_t>()[i]); break;
  }
}

}  // namespace

Expected<std::unique_ptr<Op>> makeRelu(const BuildContext& bc) {
  return unaryFloatOp([](float v) { return v > 0 ? v : 0.0f; });
}

Expected<std::unique_ptr<Op>> makeSigmoid(const BuildContext& bc) { return unaryActivationOp(ActFn::Sigmoid); }

Expected<std::unique_ptr<Op>> makeTanh(const BuildContext& bc) { return unaryActivationOp(ActFn::Tanh); }

Expected<std::unique_ptr<Op>> makeErf(const BuildContext& bc) { return unaryActivationOp(ActFn::Erf); }

Expected<std::unique_ptr<Op>> makeSqrt(const BuildContext& bc) {
  return unaryFloatOp([](float v) { return std::sqrt(v); });
}

Expected<std::unique_ptr<Op>> makeExp(const BuildContext& bc) {
  // exp overflows to inf above 88.7: activation.h clamps (to stay normal), so not used here.
  return unaryFloatOp([](float v) { return std::exp(v); });
}

Expected<std::unique_ptr<Op>> makeLog(const BuildContext& bc) {
  return unaryFloatOp([](float v) { return std::log(v); });
}

Expected<std::unique_ptr<Op>> makeReciprocal(const BuildContext& bc) {
  return unaryFloatOp([](float v) { return 1.0f / v; });
}

Expected<std::unique_ptr<Op>> makeFloor(const BuildContext& bc) {
  return unaryFloatOp([](float v) { return std::floor(v); });
}

Expected<std::unique_ptr<Op>> makeCeil(const BuildContext& bc) {
  return unaryFloatOp([](float v) { return std::ceil(v); });
}

Expected<std::unique_ptr<Op>> makeRound(const BuildContext& bc) {
  return unaryFloatOp([](float v) { return std::nearbyint(v); });
}

Expected<std::unique_ptr<Op>> makeSoftplus(const BuildContext& bc) {
  return unaryFloatOp([](float v) { return v > 20 ? v : std::log1p(std::exp(v)); });
}

Expected<std::unique_ptr<Op>> makeNeg(const BuildContext& bc) {
  return unaryNumericOp([](float v) { return -v; }, [](int64_t v) { return -v; });
}

Expected<std::unique_ptr<Op>> makeAbs(const BuildContext& bc) {
  return unaryNumericOp([](float v) { return std::fabs(v); }, [](int64_t v) { return v < 0 ? -v : v; });
}

Expected<std::unique_ptr<Op>> makeHardSwish(const BuildContext& bc) {
  ActParams p;
  p.alpha = 1.0f / 6;
  return unaryActivationOp(ActFn::HardSwish, p);
}

Expected<std::unique_ptr<Op>> makeHardSigmoid(const BuildContext& bc) {
  ActParams p;
  p.alpha = attrFloat(*bc.node, "alpha", 0.2f);
  p.beta = attrFloat(*bc.node, "beta", 0.5f);
  return unaryActivationOp(ActFn::HardSigmoid, p);
}

Expected<std::unique_ptr<Op>> makeLeakyRelu(const BuildContext& bc) {
  float alpha = attrFloat(*bc.node, "alpha", 0.01f);
  return unaryFloatOp([alpha](float v) { return v >= 0 ? v : alpha * v; });
}

Expected<std::unique_ptr<Op>> makeElu(const BuildContext& bc) {
  float alpha = attrFloat(*bc.node, "alpha", 1.0f);
  return unaryFloatOp([alpha](float v) { return v >= 0 ? v : alpha * (std::exp(v) - 1.0f); });
}

Expected<std::unique_ptr<Op>> makeClip(const BuildContext& bc) {
  const int opset = bc.opset;
  const float amin = attrFloat(*bc.node, "min", -INFINITY), amax = attrFloat(*bc.node, "max", INFINITY);
  return fnOp([opset, amin, amax](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    float lo = amin, hi = amax;
    if (opset >= 11) {
      lo = (in.size() > 1 && in[1]) ? in[1]->toF32()[0] : -INFINITY;
      hi = (in.size() > 2 && in[2]) ? in[2]->toF32()[0] : INFINITY;
    }
    const Tensor& x = *in[0];
    if (x.dtype != DType::F32) return makeError("input must be float32");
    Tensor& y = ctx.alloc(0, DType::F32, x.shape);
    const float* px = x.ptr<float>();
    float* py = y.ptr<float>();
    parallelFor(x.size() > 65536 ? ctx.threads : 1, x.size(), 0, [&](int64_t b, int64_t e, int) {
      for (int64_t i = b; i < e; ++i) py[i] = std::min(std::max(px[i], lo), hi);
    });
    return {};
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
  return fnOp([to](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    const Tensor& x = *in[0];
    Tensor& y = ctx.alloc(0, to, x.shape);
    switch (to) {
      case DType::F32: castLoop<float>(x, y); break;
      case DType::I64: castLoop<int64_t>(x, y); break;
      case DType::I32: castLoop<int32_t>(x, y); break;
      case DType::I8: castLoop<int8_t>(x, y); break;
      case DType::U8: castLoop<uint8_t>(x, y); break;
      case DType::Bool: {
        std::vector<float> v = x.toF32();
        for (int64_t i = 0; i < x.size(); ++i) y.ptr<uint8_t>()[i] = v[static_cast<size_t>(i)] != 0;
        break;
      }
    }
    return {};
  });
}

}  // namespace zp::runtime::detail
