// Indexing: gathers and scatters by index tensors (GatherElements, GatherND,
// ScatterElements and its old name Scatter, ScatterND), and the ops whose output
// positions depend on values (NonZero, Compress, OneHot). Elements of any type
// move as bytes; ScatterND's add/mul reductions compute in the element type.
#include <cstring>
#include <numeric>

#include "libplan/runtime/ops/attributes.h"
#include "libplan/runtime/ops/dispatch.h"
#include "libplan/runtime/ops/factories.h"
#include "libplan/runtime/ops/fn_op.h"

namespace zp::runtime::detail {
namespace {

std::vector<int64_t> stridesOf(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t d = s.size(); d-- > 1;) st[d - 1] = st[d] * s[d];
  return st;
}

// f(flat, index) for every index of `shape` in row-major order.
template <typename F>
void forEachIndex(const Shape& shape, F&& f) {
  const int64_t total = numel(shape);
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t flat = 0; flat < total; ++flat) {
    f(flat, idx);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
}

// An index into a dimension of size `dim`, negative counting from the end.
Expected<int64_t> wrapIndex(int64_t i, int64_t dim) {
  const int64_t k = i < 0 ? i + dim : i;
  if (k < 0 || k >= dim) return makeError("index {} is out of range for a dimension of {}", i, dim);
  return k;
}

enum class Reduction { None, Add, Mul };

Expected<Reduction> parseReduction(const onnx::NodeProto& n) {
  const std::string r = attrString(n, "reduction", "none");
  if (r == "none") return Reduction::None;
  if (r == "add") return Reduction::Add;
  if (r == "mul") return Reduction::Mul;
  return makeError("reduction '{}' is not supported", r);
}

// dst[0] (op)= src[0], one element of type dtype.
Status combine(Reduction r, DType dtype, uint8_t* dst, const uint8_t* src) {
  const size_t es = dtypeSize(dtype);
  if (r == Reduction::None) {
    std::memcpy(dst, src, es);
    return {};
  }
  return visitDType(dtype, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    if constexpr (!kIsArithmetic<T>) {
      return makeError("reduction on {} is not supported", dtypeName(dtype));
    } else {
      T a, b;
      std::memcpy(&a, dst, sizeof(T));
      std::memcpy(&b, src, sizeof(T));
      a = r == Reduction::Add ? T(a + b) : T(a * b);
      std::memcpy(dst, &a, sizeof(T));
      return {};
    }
  });
}

// GatherElements' and ScatterElements' walk: f(flat, off) for every element of the
// index tensor, off the flat position in data (of shape `data`) its index names: the
// element's own position with the index along axis a. Stops at the first index out
// of range or error from f.
template <typename F>
Status forEachElementTarget(const Tensor& ind, const Shape& data, int64_t a, F&& f) {
  const auto idx = ind.toI64();
  const auto st = stridesOf(data);
  Status status;
  forEachIndex(ind.shape, [&](int64_t flat, const std::vector<int64_t>& p) {
    if (!status.ok()) return;
    auto k = wrapIndex(idx[static_cast<size_t>(flat)], data[static_cast<size_t>(a)]);
    if (!k.ok()) { status = k.error(); return; }
    int64_t off = 0;
    for (size_t d = 0; d < p.size(); ++d) off += (static_cast<int64_t>(d) == a ? *k : p[d]) * st[d];
    status = f(flat, off);
  });
  return status;
}

Expected<std::unique_ptr<Op>> gatherElementsOp(int64_t axis) {
  return fnOp([axis](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    const Tensor& x = *in[0];
    const Tensor& ind = *in[1];
    if (ind.rank() != x.rank()) return makeError("indices {} and data {} differ in rank", shapeString(ind.shape), shapeString(x.shape));
    const int64_t a = normAxis(axis, x.rank());
    if (a < 0 || a >= x.rank()) return makeError("axis {} out of range", axis);
    const size_t es = dtypeSize(x.dtype);
    Tensor& y = ctx.alloc(0, x.dtype, ind.shape);
    return forEachElementTarget(ind, x.shape, a, [&](int64_t flat, int64_t off) -> Status {
      std::memcpy(y.ptr<uint8_t>() + flat * static_cast<int64_t>(es), x.ptr<uint8_t>() + off * static_cast<int64_t>(es), es);
      return {};
    });
  });
}

Expected<std::unique_ptr<Op>> scatterElementsOp(int64_t axis, Reduction red) {
  return fnOp([axis, red](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    const Tensor& x = *in[0];
    const Tensor& ind = *in[1];
    const Tensor& upd = *in[2];
    if (ind.shape != upd.shape || ind.rank() != x.rank())
      return makeError("indices {} and updates {} do not fit data {}", shapeString(ind.shape), shapeString(upd.shape),
                       shapeString(x.shape));
    if (upd.dtype != x.dtype) return makeError("updates are {}, data {}", dtypeName(upd.dtype), dtypeName(x.dtype));
    const int64_t a = normAxis(axis, x.rank());
    if (a < 0 || a >= x.rank()) return makeError("axis {} out of range", axis);
    const size_t es = dtypeSize(x.dtype);
    Tensor& y = ctx.alloc(0, x.dtype, x.shape);
    std::memcpy(y.data, x.data, x.bytes());
    return forEachElementTarget(ind, x.shape, a, [&](int64_t flat, int64_t off) {
      return combine(red, x.dtype, y.ptr<uint8_t>() + off * static_cast<int64_t>(es),
                     upd.ptr<uint8_t>() + flat * static_cast<int64_t>(es));
    });
  });
}

// The data offset (in elements) a GatherND/ScatterND index tuple selects, past `batch` leading dims.
Expected<int64_t> tupleOffset(const Shape& data, const std::vector<int64_t>& st, const int64_t* tuple, int64_t k,
                              int64_t batch) {
  int64_t off = 0;
  for (int64_t j = 0; j < k; ++j) {
    const size_t d = static_cast<size_t>(batch + j);
    ZP_ASSIGN_OR_RETURN(int64_t i, wrapIndex(tuple[j], data[d]));
    off += i * st[d];
  }
  return off;
}

}  // namespace

Expected<std::unique_ptr<Op>> makeGatherElements(const BuildContext& bc) {
  return gatherElementsOp(attrInt(*bc.node, "axis", 0));
}

Expected<std::unique_ptr<Op>> makeScatterElements(const BuildContext& bc) {
  ZP_ASSIGN_OR_RETURN(Reduction red, parseReduction(*bc.node));
  return scatterElementsOp(attrInt(*bc.node, "axis", 0), red);
}

// Scatter (opset 9-10) is ScatterElements without reductions.
Expected<std::unique_ptr<Op>> makeScatter(const BuildContext& bc) {
  return scatterElementsOp(attrInt(*bc.node, "axis", 0), Reduction::None);
}

Expected<std::unique_ptr<Op>> makeGatherND(const BuildContext& bc) {
  const int64_t batch = attrInt(*bc.node, "batch_dims", 0);
  return fnOp([batch](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    const Tensor& x = *in[0];
    const Tensor& ind = *in[1];
    const int64_t q = ind.rank(), r = x.rank();
    if (q < 1 || batch < 0 || batch >= std::min(q, r)) return makeError("batch_dims {} does not fit", batch);
    const int64_t k = ind.shape.back();
    if (k < 1 || batch + k > r) return makeError("index tuples of {} do not fit data {}", k, shapeString(x.shape));
    for (int64_t d = 0; d < batch; ++d)
      if (ind.shape[static_cast<size_t>(d)] != x.shape[static_cast<size_t>(d)]) return makeError("batch dims differ");
    Shape os(ind.shape.begin(), ind.shape.end() - 1);
    os.insert(os.end(), x.shape.begin() + batch + k, x.shape.end());
    Tensor& y = ctx.alloc(0, x.dtype, os);
    const auto idx = ind.toI64();
    const auto st = stridesOf(x.shape);
    const int64_t slice = numel(Shape(x.shape.begin() + batch + k, x.shape.end()));
    const int64_t batchCount = numel(Shape(x.shape.begin(), x.shape.begin() + batch));
    const int64_t tuples = numel(Shape(ind.shape.begin(), ind.shape.end() - 1)), perBatch = tuples / std::max<int64_t>(batchCount, 1);
    const int64_t batchStride = batch > 0 ? st[static_cast<size_t>(batch - 1)] : 0;
    const size_t es = dtypeSize(x.dtype);
    for (int64_t t = 0; t < tuples; ++t) {
      ZP_ASSIGN_OR_RETURN(int64_t off, tupleOffset(x.shape, st, &idx[static_cast<size_t>(t * k)], k, batch));
      off += (t / std::max<int64_t>(perBatch, 1)) * batchStride;
      std::memcpy(y.ptr<uint8_t>() + t * slice * static_cast<int64_t>(es), x.ptr<uint8_t>() + off * static_cast<int64_t>(es),
                  static_cast<size_t>(slice) * es);
    }
    return {};
  });
}

Expected<std::unique_ptr<Op>> makeScatterND(const BuildContext& bc) {
  ZP_ASSIGN_OR_RETURN(Reduction red, parseReduction(*bc.node));
  return fnOp([red](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    const Tensor& x = *in[0];
    const Tensor& ind = *in[1];
    const Tensor& upd = *in[2];
    if (ind.rank() < 1) return makeError("indices must have rank >= 1");
    const int64_t k = ind.shape.back();
    if (k < 1 || k > x.rank()) return makeError("index tuples of {} do not fit data {}", k, shapeString(x.shape));
    Shape us(ind.shape.begin(), ind.shape.end() - 1);
    us.insert(us.end(), x.shape.begin() + k, x.shape.end());
    if (upd.shape != us) return makeError("updates {} should be {}", shapeString(upd.shape), shapeString(us));
    if (upd.dtype != x.dtype) return makeError("updates are {}, data {}", dtypeName(upd.dtype), dtypeName(x.dtype));
    Tensor& y = ctx.alloc(0, x.dtype, x.shape);
    std::memcpy(y.data, x.data, x.bytes());
    const auto idx = ind.toI64();
    const auto st = stridesOf(x.shape);
    const int64_t slice = numel(Shape(x.shape.begin() + k, x.shape.end()));
    const int64_t tuples = numel(Shape(ind.shape.begin(), ind.shape.end() - 1));
    const size_t es = dtypeSize(x.dtype);
    for (int64_t t = 0; t < tuples; ++t) {
      ZP_ASSIGN_OR_RETURN(int64_t off, tupleOffset(x.shape, st, &idx[static_cast<size_t>(t * k)], k, 0));
      for (int64_t e = 0; e < slice; ++e)
        ZP_TRY(combine(red, x.dtype, y.ptr<uint8_t>() + (off + e) * static_cast<int64_t>(es),
                       upd.ptr<uint8_t>() + (t * slice + e) * static_cast<int64_t>(es)));
    }
    return {};
  });
}

// NonZero: the indices of the nonzero elements, [rank, count] in row-major order.
Expected<std::unique_ptr<Op>> makeNonZero(const BuildContext& bc) {
  return fnOp([](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    const Tensor& x = *in[0];
    const auto v = x.toF64();
    std::vector<int64_t> hits;
    for (int64_t i = 0; i < x.size(); ++i)
      if (v[static_cast<size_t>(i)] != 0) hits.push_back(i);
    const int64_t r = x.rank(), n = static_cast<int64_t>(hits.size());
    Tensor& y = ctx.alloc(0, DType::I64, {r, n});
    const auto st = stridesOf(x.shape);
    for (int64_t j = 0; j < n; ++j)
      for (int64_t d = 0; d < r; ++d)
        y.ptr<int64_t>()[d * n + j] = (hits[static_cast<size_t>(j)] / st[static_cast<size_t>(d)]) % x.shape[static_cast<size_t>(d)];
    return {};
  });
}

// Compress: the slices along `axis` (of the flattened input without it) whose condition holds.
Expected<std::unique_ptr<Op>> makeCompress(const BuildContext& bc) {
  const bool hasAxis = findAttr(*bc.node, "axis") != nullptr;
  const int64_t axis = attrInt(*bc.node, "axis", 0);
  return fnOp([hasAxis, axis](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    const Tensor& x = *in[0];
    const auto cond = in[1]->toI64();
    Shape s = hasAxis ? x.shape : Shape{x.size()};
    const int64_t a = hasAxis ? normAxis(axis, x.rank()) : 0;
    if (a < 0 || a >= static_cast<int64_t>(s.size())) return makeError("axis {} out of range", axis);
    const int64_t dim = s[static_cast<size_t>(a)];
    if (static_cast<int64_t>(cond.size()) > dim) return makeError("condition has {} values for a dimension of {}", cond.size(), dim);
    std::vector<int64_t> keep;
    for (size_t i = 0; i < cond.size(); ++i)
      if (cond[i]) keep.push_back(static_cast<int64_t>(i));
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < a; ++d) outer *= s[static_cast<size_t>(d)];
    for (size_t d = static_cast<size_t>(a) + 1; d < s.size(); ++d) inner *= s[d];
    s[static_cast<size_t>(a)] = static_cast<int64_t>(keep.size());
    Tensor& y = ctx.alloc(0, x.dtype, s);
    const size_t row = static_cast<size_t>(inner) * dtypeSize(x.dtype);
    for (int64_t o = 0; o < outer; ++o)
      for (size_t j = 0; j < keep.size(); ++j)
        std::memcpy(y.ptr<uint8_t>() + (o * static_cast<int64_t>(keep.size()) + static_cast<int64_t>(j)) * static_cast<int64_t>(row),
                    x.ptr<uint8_t>() + (o * dim + keep[j]) * static_cast<int64_t>(row), row);
    return {};
  });
}

// OneHot: a new axis of `depth` holding values[1] at each index and values[0] elsewhere.
Expected<std::unique_ptr<Op>> makeOneHot(const BuildContext& bc) {
  const int64_t axis = attrInt(*bc.node, "axis", -1);
  return fnOp([axis](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    const Tensor& ind = *in[0];
    const Tensor& values = *in[2];
    if (in[1]->size() != 1) return makeError("depth must be one value");
    const int64_t depth = static_cast<int64_t>(in[1]->toF64()[0]);
    if (depth < 1) return makeError("depth {} is not positive", depth);
    if (values.size() != 2) return makeError("values must hold [off, on]");
    const int64_t a = normAxis(axis, ind.rank() + 1);
    if (a < 0 || a > ind.rank()) return makeError("axis {} out of range", axis);
    Shape s = ind.shape;
    s.insert(s.begin() + a, depth);
    Tensor& y = ctx.alloc(0, values.dtype, s);
    const size_t es = dtypeSize(values.dtype);
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < a; ++d) outer *= ind.shape[static_cast<size_t>(d)];
    for (int64_t d = a; d < ind.rank(); ++d) inner *= ind.shape[static_cast<size_t>(d)];
    const auto idx = ind.toF64();
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t k = 0; k < depth; ++k)
        for (int64_t i = 0; i < inner; ++i) {
          int64_t v = static_cast<int64_t>(idx[static_cast<size_t>(o * inner + i)]);
          if (v < 0) v += depth;
          std::memcpy(y.ptr<uint8_t>() + ((o * depth + k) * inner + i) * static_cast<int64_t>(es),
                      values.ptr<uint8_t>() + (v == k ? es : 0), es);
        }
    return {};
  });
}

}  // namespace zp::runtime::detail
