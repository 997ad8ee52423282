// QDQ: QuantizeLinear and DequantizeLinear, per tensor or per axis.
#include <algorithm>
#include <cmath>

#include "libplan/runtime/ops/attributes.h"
#include "libplan/runtime/ops/factories.h"
#include "libplan/runtime/ops/fn_op.h"

namespace zp::runtime::detail {
namespace {

float roundHalfEven(float v) { return std::nearbyint(v); }

// Which of the scales (and zero points) element i of x takes: one for the whole
// tensor, or one per index along the axis.
struct ScaleIndex {
  int64_t inner = 1, channels = 1;
  size_t operator()(int64_t i) const { return channels > 1 ? static_cast<size_t>((i / inner) % channels) : 0; }
};

Expected<ScaleIndex> scaleIndex(const Tensor& x, int64_t axis, size_t scales, size_t zeroPoints) {
  if (scales == 0) return makeError("scale is empty");
  if (zeroPoints != scales) return makeError("zero point has {} entries for {} scales", zeroPoints, scales);
  ScaleIndex s;
  if (scales == 1) return s;
  const int64_t a = normAxis(axis, x.rank());
  if (a < 0 || a >= x.rank()) return makeError("axis {} out of range for rank {}", axis, x.rank());
  s.channels = x.shape[static_cast<size_t>(a)];
  for (int64_t d = a + 1; d < x.rank(); ++d) s.inner *= x.shape[static_cast<size_t>(d)];
  if (static_cast<int64_t>(scales) != s.channels) return makeError("scale has {} entries for {} channels", scales, s.channels);
  return s;
}

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
    ZP_ASSIGN_OR_RETURN(const ScaleIndex at, scaleIndex(x, axis, scale.size(), zp.size()));
    const float lo = outType == DType::U8 ? 0.0f : -128.0f, hi = outType == DType::U8 ? 255.0f : 127.0f;
    for (int64_t i = 0; i < x.size(); ++i) {
      const size_t c = at(i);
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
    ZP_ASSIGN_OR_RETURN(const ScaleIndex at, scaleIndex(x, axis, scale.size(), zp.size()));
    std::vector<float> v = x.toF32();
    for (int64_t i = 0; i < x.size(); ++i) {
      const size_t c = at(i);
      y.ptr<float>()[i] = (v[static_cast<size_t>(i)] - static_cast<float>(zp[c])) * scale[c];
    }
    return {};
  });
}

}  // namespace zp::runtime::detail
