// Ops that rank the values along one axis: ArgMax, ArgMin, TopK and Hardmax, on
// every arithmetic type. Ties keep the lowest index (the last with
// select_last_index); TopK sorts stably, so equal values keep their order.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "libplan/runtime/ops/attributes.h"
#include "libplan/runtime/ops/dispatch.h"
#include "libplan/runtime/ops/factories.h"
#include "libplan/runtime/ops/fn_op.h"

namespace zp::runtime::detail {
namespace {

// The input seen as [outer, len, inner] around axis `a`.
struct AxisView {
  int64_t outer = 1, len = 1, inner = 1;
};

Expected<AxisView> axisView(const Shape& s, int64_t axis, int64_t* normalized) {
  const int64_t r = static_cast<int64_t>(s.size());
  const int64_t a = normAxis(axis, r);
  if (a < 0 || a >= r) return makeError("axis {} out of range for rank {}", axis, r);
  AxisView v;
  for (int64_t d = 0; d < a; ++d) v.outer *= s[static_cast<size_t>(d)];
  v.len = s[static_cast<size_t>(a)];
  for (int64_t d = a + 1; d < r; ++d) v.inner *= s[static_cast<size_t>(d)];
  *normalized = a;
  return v;
}

Expected<std::unique_ptr<Op>> argOp(const BuildContext& bc, bool isMax) {
  const int64_t axis = attrInt(*bc.node, "axis", 0);
  const bool keep = attrInt(*bc.node, "keepdims", 1) != 0, last = attrInt(*bc.node, "select_last_index", 0) != 0;
  return fnOp([=](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    const Tensor& x = *in[0];
    int64_t a = 0;
    ZP_ASSIGN_OR_RETURN(AxisView v, axisView(x.shape, axis, &a));
    if (v.len == 0) return makeError("cannot take the arg{} of an empty axis", isMax ? "max" : "min");
    Shape s = x.shape;
    if (keep) s[static_cast<size_t>(a)] = 1;
    else s.erase(s.begin() + a);
    Tensor& y = ctx.alloc(0, DType::I64, s);
    return visitDType(x.dtype, [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      if constexpr (!kIsArithmetic<T>) {
        return makeError("input type {} is not supported", dtypeName(x.dtype));
      } else {
        const T* px = x.ptr<T>();
        for (int64_t o = 0; o < v.outer; ++o)
          for (int64_t i = 0; i < v.inner; ++i) {
            const T* p = px + o * v.len * v.inner + i;
            int64_t best = 0;
            for (int64_t k = 1; k < v.len; ++k) {
              const T c = p[k * v.inner], b = p[best * v.inner];
              const bool better = isMax ? (c > b) : (c < b);
              if (better || (last && c == b)) best = k;
            }
            y.ptr<int64_t>()[o * v.inner + i] = best;
          }
        return {};
      }
    });
  });
}

template <typename T>
void topKRow(const T* p, int64_t len, int64_t stride, int64_t k, bool largest, std::vector<int64_t>& order) {
  order.resize(static_cast<size_t>(len));
  std::iota(order.begin(), order.end(), int64_t{0});
  auto before = [&](int64_t i, int64_t j) {
    const T a = p[i * stride], b = p[j * stride];
    return largest ? a > b : a < b;
  };
  std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int64_t i, int64_t j) {
    if (before(i, j)) return true;
    if (before(j, i)) return false;
    return i < j;
  });
}

}  // namespace

Expected<std::unique_ptr<Op>> makeArgMax(const BuildContext& bc) { return argOp(bc, true); }
Expected<std::unique_ptr<Op>> makeArgMin(const BuildContext& bc) { return argOp(bc, false); }

// TopK: the k largest (or smallest) values along `axis` and their indices, sorted.
Expected<std::unique_ptr<Op>> makeTopK(const BuildContext& bc) {
  const int64_t axis = attrInt(*bc.node, "axis", -1);
  const bool largest = attrInt(*bc.node, "largest", 1) != 0;
  const int opset = bc.opset;
  const int64_t attrK = attrInt(*bc.node, "k", -1);
  return fnOp([=](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    const Tensor& x = *in[0];
    const int64_t k = opset >= 10 ? (in[1]->size() == 1 ? in[1]->toI64()[0] : -1) : attrK;
    int64_t a = 0;
    ZP_ASSIGN_OR_RETURN(AxisView v, axisView(x.shape, axis, &a));
    if (k < 0 || k > v.len) return makeError("k {} is out of range for an axis of {}", k, v.len);
    Shape s = x.shape;
    s[static_cast<size_t>(a)] = k;
    Tensor& values = ctx.alloc(0, x.dtype, s);
    Tensor& indices = ctx.alloc(1, DType::I64, s);
    return visitDType(x.dtype, [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      if constexpr (!kIsArithmetic<T>) {
        return makeError("input type {} is not supported", dtypeName(x.dtype));
      } else {
        std::vector<int64_t> order;
        for (int64_t o = 0; o < v.outer; ++o)
          for (int64_t i = 0; i < v.inner; ++i) {
            const T* p = x.ptr<T>() + o * v.len * v.inner + i;
            topKRow(p, v.len, v.inner, k, largest, order);
            for (int64_t j = 0; j < k; ++j) {
              const int64_t at = (o * k + j) * v.inner + i;
              values.ptr<T>()[at] = p[order[static_cast<size_t>(j)] * v.inner];
              indices.ptr<int64_t>()[at] = order[static_cast<size_t>(j)];
            }
          }
        return {};
      }
    });
  });
}

// Hardmax: 1 at the first maximum along `axis` (opset 13) or over the flattened tail
// from `axis` (before), 0 elsewhere.
Expected<std::unique_ptr<Op>> makeHardmax(const BuildContext& bc) {
  const int opset = bc.opset;
  const int64_t axis = attrInt(*bc.node, "axis", opset >= 13 ? -1 : 1);
  return fnOp([=](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    const Tensor& x = *in[0];
    if (x.dtype != DType::F32 && x.dtype != DType::F64) return makeError("input must be float32 or float64");
    int64_t a = 0;
    ZP_ASSIGN_OR_RETURN(AxisView v, axisView(x.shape, axis, &a));
    if (opset < 13) {
      v.len *= v.inner;
      v.inner = 1;
    }
    Tensor& y = ctx.alloc(0, x.dtype, x.shape);
    const auto vals = x.toF64();
    std::vector<double> out(vals.size(), 0.0);
    for (int64_t o = 0; o < v.outer; ++o)
      for (int64_t i = 0; i < v.inner; ++i) {
        const int64_t base = o * v.len * v.inner + i;
        int64_t best = 0;
        for (int64_t k = 1; k < v.len; ++k)
          if (vals[static_cast<size_t>(base + k * v.inner)] > vals[static_cast<size_t>(base + best * v.inner)]) best = k;
        if (v.len > 0) out[static_cast<size_t>(base + best * v.inner)] = 1.0;
      }
    for (size_t i = 0; i < out.size(); ++i) {
      if (x.dtype == DType::F32) y.ptr<float>()[i] = static_cast<float>(out[i]);
      else y.ptr<double>()[i] = out[i];
    }
    return {};
  });
}

}  // namespace zp::runtime::detail
