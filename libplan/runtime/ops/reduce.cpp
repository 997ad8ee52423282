// Reductions over an axis set (Sum, Mean, Max, Min, SumSquare, Prod, L1, L2, LogSum,
// LogSumExp), accumulated in double for floats and in 64-bit integers for integers;
// and CumSum.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "libplan/runtime/kernels/parallel.h"
#include "libplan/runtime/ops/attributes.h"
#include "libplan/runtime/ops/broadcast.h"
#include "libplan/runtime/ops/dispatch.h"
#include "libplan/runtime/ops/factories.h"
#include "libplan/runtime/ops/fn_op.h"

namespace zp::runtime::detail {
namespace {

enum class Kind { Sum, Mean, Max, Min, SumSquare, Prod, L1, L2, LogSum, LogSumExp };

// Accumulates x into acc (one slot per output element) over the broadcast of the
// kept shape onto x; Acc is double for floats and the widest integer for integers.
template <typename T, typename Acc>
void accumulate(Kind kind, const Tensor& x, const Shape& kept, std::vector<Acc>& acc) {
  Broadcast br = makeBroadcast(x.shape, {x.shape, kept});
  const T* px = x.ptr<T>();
  forEachRow(br, [&](int64_t, const int64_t* offs, int64_t len, const int64_t* st) {
    for (int64_t i = 0; i < len; ++i) {
      const Acc v = static_cast<Acc>(px[offs[0] + i * st[0]]);
      Acc& a = acc[static_cast<size_t>(offs[1] + i * st[1])];
      switch (kind) {
        case Kind::Sum: case Kind::Mean: case Kind::LogSum: a += v; break;
        case Kind::Max: a = std::max(a, v); break;
        case Kind::Min: a = std::min(a, v); break;
        case Kind::SumSquare: case Kind::L2: a += v * v; break;
        case Kind::Prod: a *= v; break;
        case Kind::L1: a += v < Acc(0) ? Acc(-v) : v; break;
        case Kind::LogSumExp: a += static_cast<Acc>(std::exp(static_cast<double>(v))); break;
      }
    }
  });
}

template <typename Acc>
Acc initial(Kind kind) {
  if (kind == Kind::Prod) return Acc(1);
  if (kind == Kind::Max) return std::numeric_limits<Acc>::has_infinity ? -std::numeric_limits<Acc>::infinity() : std::numeric_limits<Acc>::lowest();
  if (kind == Kind::Min) return std::numeric_limits<Acc>::has_infinity ? std::numeric_limits<Acc>::infinity() : std::numeric_limits<Acc>::max();
  return Acc(0);
}

template <typename T, typename Acc>
Status reduceInto(Kind kind, const Tensor& x, const Shape& kept, Tensor& y) {
  if constexpr (std::is_integral_v<Acc>) {
    if (kind == Kind::L2 || kind == Kind::LogSum || kind == Kind::LogSumExp)
      return makeError("this reduction of {} is not supported", dtypeName(x.dtype));
  }
  std::vector<Acc> acc(static_cast<size_t>(y.size()), initial<Acc>(kind));
  accumulate<T, Acc>(kind, x, kept, acc);
  const double count = y.size() ? static_cast<double>(x.size()) / static_cast<double>(y.size()) : 1.0;
  for (int64_t i = 0; i < y.size(); ++i) {
    const Acc a = acc[static_cast<size_t>(i)];
    T& out = y.ptr<T>()[i];
    switch (kind) {
      case Kind::Mean:
        if constexpr (std::is_integral_v<Acc>) out = static_cast<T>(a / static_cast<Acc>(count));
        else out = static_cast<T>(a / count);
        break;
      case Kind::L2: out = static_cast<T>(std::sqrt(static_cast<double>(a))); break;
      case Kind::LogSum: case Kind::LogSumExp: out = static_cast<T>(std::log(static_cast<double>(a))); break;
      default: out = static_cast<T>(a);
    }
  }
  return {};
}

// Float32 reductions over the innermost axes only (global pools, the mean over the
// channels' last axis): each output reduces one contiguous block, outputs split over
// the threads. False when the axes or the kind do not fit.
bool innerReductionF32(Kind kind, const std::vector<bool>& red, const Tensor& x, Tensor& y, int threads) {
  if (kind != Kind::Sum && kind != Kind::Mean && kind != Kind::Max && kind != Kind::Min && kind != Kind::SumSquare)
    return false;
  const int64_t r = x.rank();
  int64_t firstRed = r;
  while (firstRed > 0 && red[static_cast<size_t>(firstRed - 1)]) --firstRed;
  if (firstRed == r || std::count(red.begin(), red.end(), true) != r - firstRed || y.size() == 0) return false;
  const int64_t inner = x.size() / y.size();
  const float* px = x.ptr<float>();
  float* py = y.ptr<float>();
  parallelForEach(x.size() > 65536 ? threads : 1, y.size(), [&](int64_t o, int) {
    const float* p = px + o * inner;
    double a = initial<double>(kind);
    switch (kind) {
      case Kind::Max: for (int64_t i = 0; i < inner; ++i) a = std::max(a, static_cast<double>(p[i])); break;
      case Kind::Min: for (int64_t i = 0; i < inner; ++i) a = std::min(a, static_cast<double>(p[i])); break;
      case Kind::SumSquare: for (int64_t i = 0; i < inner; ++i) a += static_cast<double>(p[i]) * p[i]; break;
      default: for (int64_t i = 0; i < inner; ++i) a += p[i]; break;
    }
    py[o] = static_cast<float>(kind == Kind::Mean ? a / static_cast<double>(inner) : a);
  });
  return true;
}

// The axes are an attribute before opset 18, an input for ReduceSum from opset 13
// and for all from 18.
Expected<std::unique_ptr<Op>> reduceOp(const BuildContext& bc, Kind kind) {
  const bool keep = attrInt(*bc.node, "keepdims", 1) != 0;
  const bool noopEmpty = attrInt(*bc.node, "noop_with_empty_axes", 0) != 0;
  const bool axesInput = (bc.node->op_type() == "ReduceSum" && bc.opset >= 13) || bc.opset >= 18;
  std::vector<int64_t> aAxes = attrInts(*bc.node, "axes");
  return fnOp([=](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    const Tensor& x = *in[0];
    std::vector<int64_t> axes = axesInput ? ((in.size() > 1 && in[1]) ? in[1]->toI64() : std::vector<int64_t>{}) : aAxes;
    const int64_t r = x.rank();
    std::vector<bool> red(static_cast<size_t>(r), false);
    if (axes.empty()) {
      if (noopEmpty) { Tensor& y = ctx.alloc(0, x.dtype, x.shape); std::memcpy(y.data, x.data, x.bytes()); return {}; }
      red.assign(static_cast<size_t>(r), true);
    }
    for (auto a : axes) {
      a = normAxis(a, r);
      if (a < 0 || a >= r) return makeError("axis out of range");
      red[static_cast<size_t>(a)] = true;
    }
    Shape s, kept;
    for (int64_t d = 0; d < r; ++d) {
      if (!red[static_cast<size_t>(d)]) s.push_back(x.shape[static_cast<size_t>(d)]);
      else if (keep) s.push_back(1);
      kept.push_back(red[static_cast<size_t>(d)] ? 1 : x.shape[static_cast<size_t>(d)]);
    }
    Tensor& y = ctx.alloc(0, x.dtype, s);
    if (x.dtype == DType::F32 && innerReductionF32(kind, red, x, y, ctx.threads)) return {};
    return visitDType(x.dtype, [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_floating_point_v<T>) return reduceInto<T, double>(kind, x, kept, y);
      else if constexpr (kIsArithmetic<T> && std::is_signed_v<T>) return reduceInto<T, int64_t>(kind, x, kept, y);
      else if constexpr (kIsArithmetic<T>) return reduceInto<T, uint64_t>(kind, x, kept, y);
      else return makeError("reductions of {} are not supported", dtypeName(x.dtype));
    });
  });
}

template <typename T>
void cumulativeSum(const T* x, T* y, int64_t outer, int64_t len, int64_t inner, bool exclusive, bool reverse) {
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      T acc = T(0);
      for (int64_t j = 0; j < len; ++j) {
        const int64_t k = reverse ? len - 1 - j : j;
        const int64_t at = (o * len + k) * inner + i;
        if (exclusive) { y[at] = acc; acc = T(acc + x[at]); }
        else { acc = T(acc + x[at]); y[at] = acc; }
      }
    }
}

}  // namespace

Expected<std::unique_ptr<Op>> makeReduceSum(const BuildContext& bc) { return reduceOp(bc, Kind::Sum); }
Expected<std::unique_ptr<Op>> makeReduceMean(const BuildContext& bc) { return reduceOp(bc, Kind::Mean); }
Expected<std::unique_ptr<Op>> makeReduceMax(const BuildContext& bc) { return reduceOp(bc, Kind::Max); }
Expected<std::unique_ptr<Op>> makeReduceMin(const BuildContext& bc) { return reduceOp(bc, Kind::Min); }
Expected<std::unique_ptr<Op>> makeReduceSumSquare(const BuildContext& bc) { return reduceOp(bc, Kind::SumSquare); }
Expected<std::unique_ptr<Op>> makeReduceProd(const BuildContext& bc) { return reduceOp(bc, Kind::Prod); }
Expected<std::unique_ptr<Op>> makeReduceL1(const BuildContext& bc) { return reduceOp(bc, Kind::L1); }
Expected<std::unique_ptr<Op>> makeReduceL2(const BuildContext& bc) { return reduceOp(bc, Kind::L2); }
Expected<std::unique_ptr<Op>> makeReduceLogSum(const BuildContext& bc) { return reduceOp(bc, Kind::LogSum); }
Expected<std::unique_ptr<Op>> makeReduceLogSumExp(const BuildContext& bc) { return reduceOp(bc, Kind::LogSumExp); }

// CumSum along the axis given as an input, inclusive or exclusive, forward or reversed.
Expected<std::unique_ptr<Op>> makeCumSum(const BuildContext& bc) {
  const bool exclusive = attrInt(*bc.node, "exclusive", 0) != 0, reverse = attrInt(*bc.node, "reverse", 0) != 0;
  return fnOp([=](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    const Tensor& x = *in[0];
    if (in[1]->size() != 1) return makeError("axis must be one value");
    const int64_t a = normAxis(in[1]->toI64()[0], x.rank());
    if (a < 0 || a >= x.rank()) return makeError("axis {} out of range for rank {}", in[1]->toI64()[0], x.rank());
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < a; ++d) outer *= x.shape[static_cast<size_t>(d)];
    for (int64_t d = a + 1; d < x.rank(); ++d) inner *= x.shape[static_cast<size_t>(d)];
    Tensor& y = ctx.alloc(0, x.dtype, x.shape);
    return visitDType(x.dtype, [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      if constexpr (!kIsArithmetic<T>) {
        return makeError("input type {} is not supported", dtypeName(x.dtype));
      } else {
        cumulativeSum(x.ptr<T>(), y.ptr<T>(), outer, x.shape[static_cast<size_t>(a)], inner, exclusive, reverse);
        return {};
      }
    });
  });
}

}  // namespace zp::runtime::detail
