// Tensors made from attributes or scalars: Constant, ConstantOfShape, Range.
#include <cmath>
#include <cstring>

#include "libplan/runtime/ops/attributes.h"
#include "libplan/runtime/ops/factories.h"
#include "libplan/runtime/ops/fn_op.h"

namespace zp::runtime::detail {

Expected<std::unique_ptr<Op>> makeConstant(const BuildContext& bc) {
  const auto& n = *bc.node;
  Tensor value;
  if (const auto* a = findAttr(n, "value")) {
    ZP_ASSIGN_OR_RETURN(value, tensorFromProto(a->t()));
  } else if (const auto* a = findAttr(n, "value_float")) {
    value = Tensor::fromFloats({a->f()}, {});
  } else if (const auto* a = findAttr(n, "value_floats")) {
    value = Tensor::fromFloats(std::vector<float>(a->floats().begin(), a->floats().end()), {a->floats_size()});
  } else if (const auto* a = findAttr(n, "value_int")) {
    value = Tensor::fromI64({a->i()}, {});
  } else if (const auto* a = findAttr(n, "value_ints")) {
    value = Tensor::fromI64(std::vector<int64_t>(a->ints().begin(), a->ints().end()), {a->ints_size()});
  } else {
    return makeError("Constant without a supported value attribute");
  }
  return fnOp([value](ExecContext& ctx, const std::vector<const Tensor*>&) -> Status {
    ctx.alias(0, value, value.shape);
    return {};
  }, false);
}

Expected<std::unique_ptr<Op>> makeConstantOfShape(const BuildContext& bc) {
  Tensor value = Tensor::fromFloats({0.0f}, {1});
  if (const auto* a = findAttr(*bc.node, "value")) { ZP_ASSIGN_OR_RETURN(value, tensorFromProto(a->t())); }
  return fnOp([value](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    Shape s = in[0]->toI64();
    Tensor& y = ctx.alloc(0, value.dtype, s);
    const size_t es = dtypeSize(value.dtype);
    for (int64_t i = 0; i < y.size(); ++i) std::memcpy(y.ptr<uint8_t>() + i * static_cast<int64_t>(es), value.data, es);
    return {};
  });
}

Expected<std::unique_ptr<Op>> makeRange(const BuildContext& bc) {
  return fnOp([](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    if (in[0]->dtype == DType::F32) {
      float st = in[0]->toF32()[0], li = in[1]->toF32()[0], de = in[2]->toF32()[0];
      int64_t n = std::max<int64_t>(0, static_cast<int64_t>(std::ceil((li - st) / de)));
      Tensor& y = ctx.alloc(0, DType::F32, {n});
      for (int64_t i = 0; i < n; ++i) y.ptr<float>()[i] = st + static_cast<float>(i) * de;
    } else {
      int64_t st = in[0]->toI64()[0], li = in[1]->toI64()[0], de = in[2]->toI64()[0];
      if (de == 0) return makeError("Range delta 0");
      int64_t n = std::max<int64_t>(0, (li - st + de + (de > 0 ? -1 : 1)) / de);
      Tensor& y = ctx.alloc(0, in[0]->dtype, {n});
      for (int64_t i = 0; i < n; ++i) {
        if (in[0]->dtype == DType::I64) y.ptr<int64_t>()[i] = st + i * de;
        else y.ptr<int32_t>()[i] = static_cast<int32_t>(st + i * de);
      }
    }
    return {};
  });
}

}  // namespace zp::runtime::detail
