// Matrix-shaped generators and masks: Trilu (triangular part of the last two dims)
// and EyeLike (ones on a diagonal).
#include <cstring>
#include <optional>

#include "libplan/runtime/ops/attributes.h"
#include "libplan/runtime/ops/dispatch.h"
#include "libplan/runtime/ops/factories.h"
#include "libplan/runtime/ops/fn_op.h"

namespace zp::runtime::detail {

// Trilu: keeps j - i >= k (upper) or j - i <= k (lower) of each [rows, cols]
// matrix, zero elsewhere; k is the optional second input.
Expected<std::unique_ptr<Op>> makeTrilu(const BuildContext& bc) {
  const bool upper = attrInt(*bc.node, "upper", 1) != 0;
  return fnOp([upper](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    const Tensor& x = *in[0];
    if (x.rank() < 2) return makeError("input {} has rank below 2", shapeString(x.shape));
    const int64_t k = in.size() > 1 && in[1] && in[1]->size() > 0 ? in[1]->toI64()[0] : 0;
    const int64_t rows = x.shape[x.shape.size() - 2], cols = x.shape.back();
    const int64_t mats = rows * cols != 0 ? x.size() / (rows * cols) : 0;
    const size_t es = dtypeSize(x.dtype);
    Tensor& y = ctx.alloc(0, x.dtype, x.shape);
    std::memset(y.data, 0, y.bytes());
    for (int64_t m = 0; m < mats; ++m)
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j) {
          const bool keep = upper ? j - i >= k : j - i <= k;
          if (!keep) continue;
          const int64_t at = (m * rows + i) * cols + j;
          std::memcpy(y.ptr<uint8_t>() + at * static_cast<int64_t>(es), x.ptr<uint8_t>() + at * static_cast<int64_t>(es), es);
        }
    return {};
  });
}

// EyeLike: a matrix of the input's shape with ones where column - row == k, of the
// `dtype` attribute's type (the input's when absent).
Expected<std::unique_ptr<Op>> makeEyeLike(const BuildContext& bc) {
  const int64_t k = attrInt(*bc.node, "k", 0);
  std::optional<DType> dtype;
  if (const auto* a = findAttr(*bc.node, "dtype")) { ZP_ASSIGN_OR_RETURN(dtype, dtypeFromOnnx(static_cast<int32_t>(a->i()))); }
  return fnOp([k, dtype](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    const Tensor& x = *in[0];
    if (x.rank() != 2) return makeError("input {} is not 2-D", shapeString(x.shape));
    const DType dt = dtype ? *dtype : x.dtype;
    Tensor& y = ctx.alloc(0, dt, x.shape);
    std::memset(y.data, 0, y.bytes());
    return visitDType(dt, [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      T one;
      if constexpr (std::is_same_v<T, Float16>) one = Float16{floatToHalf(1.0f)};
      else if constexpr (std::is_same_v<T, BFloat16>) one = BFloat16{floatToBf16(1.0f)};
      else one = T(1);
      for (int64_t i = 0; i < x.shape[0]; ++i) {
        const int64_t j = i + k;
        if (j >= 0 && j < x.shape[1]) y.ptr<T>()[i * x.shape[1] + j] = one;
      }
      return {};
    });
  });
}

}  // namespace zp::runtime::detail
