// QDQ: QuantizeLinear and DequantizeLinear, per tensor or per axis.
#include <algorithm>
#include <cmath>

#include "libplan/runtime/ops/attributes.h"
#include "libplan/runtime/ops/factories.h"
#include "libplan/runtime/ops/fn_op.h"

namespace zp::runtime::detail {
namespace {

float roundHalfEven(float v) { return std::nearbyint(v); }

}  // namespace

Expected<std::unique_ptr<Op>> makeQuantizeLinear(const BuildContext& bc) {
  const int64_t axis = attrInt(*bc.node, "axis", 1);
  return fnOp([axis](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    const Tensor& x = *in[0];
    std::vector<float> scale = in[1]->toF32();
    const Tensor* zpT = (in.size() > 2) ? in[2] : nullptr;
    DType outType = zpT ? zpT->dtype : DType::U8;
    if (outType != DType::U8 && outType != DType::I8) return makeError("zero point must be int8 or uint8");
    std::vector<int64_t> zp = zpT ? zpT->toI64() : std::vector<int64_t>(scale.size(), 0);
    Tensor& y = ctx.alloc(0, outType, x.shape);
    int64_t inner = 1, ch = 1;
    if (scale.size() > 1) {
      const int64_t a = normAxis(axis, x.rank());
      ch = x.shape[static_cast<size_t>(a)];
      for (int64_t d = a + 1; d < x.rank(); ++d) inner *= x.shape[static_cast<size_t>(d)];
      if (static_cast<int64_t>(scale.size()) != ch) return makeError("scale has {} entries for {} channels", scale.size(), ch);
    }
    const float lo = outType == DType::U8 ? 0.0f : -128.0f, hi = outType == DType::U8 ? 255.0f : 127.0f;
    for (int64_t i = 0; i < x.size(); ++i) {
      const size_t c = scale.size() > 1 ? static_cast<size_t>((i / inner) % ch) : 0;
      float q = roundHalfEven(x.ptr<float>()[i] / scale[c]) + static_cast<float>(zp[c]);
      q = std::min(std::max(q, lo), hi);
      if (outType == DType::U8) y.ptr<uint8_t>()[i] = static_cast<uint8_t>(q);
      else y.ptr<int8_t>()[i] = static_cast<int8_t>(q);
    }
    return {};
  });
}

Expected<std::unique_ptr<Op>> makeDequantizeLinear(const BuildContext& bc) {
  const int64_t axis = attrInt(*bc.node, "axis", 1);
  return fnOp([axis](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    const Tensor& x = *in[0];
    std::vector<float> scale = in[1]->toF32();
    std::vector<int64_t> zp = (in.size() > 2 && in[2]) ? in[2]->toI64() : std::vector<int64_t>(scale.size(), 0);
    Tensor& y = ctx.alloc(0, DType::F32, x.shape);
    int64_t inner = 1, ch = 1;
    if (scale.size() > 1) {
      const int64_t a = normAxis(axis, x.rank());
      ch = x.shape[static_cast<size_t>(a)];
      for (int64_t d = a + 1; d < x.rank(); ++d) inner *= x.shape[static_cast<size_t>(d)];
      if (static_cast<int64_t>(scale.size()) != ch) return makeError("scale has {} entries for {} channels", scale.size(), ch);
    }
    std::vector<float> v = x.toF32();
    for (int64_t i = 0; i < x.size(); ++i) {
      const size_t c = scale.size() > 1 ? static_cast<size_t>((i / inner) % ch) : 0;
      y.ptr<float>()[i] = (v[static_cast<size_t>(i)] - static_cast<float>(zp[c])) * scale[c];
    }
    return {};
  });
}

}  // namespace zp::runtime::detail
