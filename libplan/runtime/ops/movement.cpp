// Data movement: copies of the input, or parts of it, in another order.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <vector>

#include "libplan/runtime/kernels/parallel.h"
#include "libplan/runtime/kernels/transpose.h"
#include "libplan/runtime/ops/attributes.h"
#include "libplan/runtime/ops/broadcast.h"
#include "libplan/runtime/ops/factories.h"
#include "libplan/runtime/ops/fn_op.h"

namespace zp::runtime::detail {
namespace {

enum class PadMode { Constant, Reflect, Edge };

// Adjacent output dims whose input strides nest (stride[d] = stride[d+1] * shape[d+1])
// are one dim, and dims of size 1 none: a slice of whole rows or channels is then
// one long copy instead of many short ones.
void coalesceDims(Shape& shape, std::vector<int64_t>& strides) {
  Shape s;
  std::vector<int64_t> st;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    if (!s.empty() && st.back() == strides[d] * shape[d]) {
      s.back() *= shape[d];
      st.back() = strides[d];
      continue;
    }
    s.push_back(shape[d]);
    st.push_back(strides[d]);
  }
  shape = std::move(s);
  strides = std::move(st);
}

// Generic strided copy: out[i] = in[sum idx_d * inStride_d], used by Transpose/Slice/Expand.
void stridedCopy(const uint8_t* src, uint8_t* dst, size_t esize, Shape outShape, std::vector<int64_t> inStrides,
                 int64_t base) {
  if (numel(outShape) == 0) return;
  coalesceDims(outShape, inStrides);
  const size_t r = outShape.size();
  const int64_t total = numel(outShape);
  if (total == 0) return;
  if (r == 0) { std::memcpy(dst, src + base * static_cast<int64_t>(esize), esize); return; }
  std::vector<int64_t> idx(r, 0);
  int64_t off = base;
  const int64_t inner = outShape[r - 1], st = inStrides[r - 1];
  for (int64_t o = 0; o < total; o += inner) {
    if (st == 1) {
      std::memcpy(dst + o * static_cast<int64_t>(esize), src + off * static_cast<int64_t>(esize), static_cast<size_t>(inner) * esize);
    } else if (esize == 4) {
      const uint32_t* s = reinterpret_cast<const uint32_t*>(src) + off;
      uint32_t* d = reinterpret_cast<uint32_t*>(dst) + o;
      for (int64_t i = 0; i < inner; ++i) d[i] = s[i * st];
    } else {
      for (int64_t i = 0; i < inner; ++i)
        std::memcpy(dst + (o + i) * static_cast<int64_t>(esize), src + (off + i * st) * static_cast<int64_t>(esize), esize);
    }
    for (size_t d = r - 1; d-- > 0;) {
      ++idx[d];
      off += inStrides[d];
      if (idx[d] < outShape[d]) break;
      off -= inStrides[d] * idx[d];
      idx[d] = 0;
    }
  }
}

std::vector<int64_t> contiguousStrides(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t d = s.size(); d-- > 1;) st[d - 1] = st[d] * s[d];
  return st;
}

// A permutation that, its dims coalesced, leaves the input's contiguous dim second
// to last is a stack of plane transposes (NCHW <-> NHWC, attention's K^T).
bool transposeAsPlanes(const uint32_t* src, Shape shape, std::vector<int64_t> strides, uint32_t* dst, int threads) {
  coalesceDims(shape, strides);
  const size_t r = shape.size();
  if (r < 2 || strides[r - 2] != 1 || strides[r - 1] == 1) return false;
  std::vector<int64_t> planeOffsets{0};
  for (size_t d = r - 2; d-- > 0;) {
    std::vector<int64_t> outer;
    outer.reserve(planeOffsets.size() * static_cast<size_t>(shape[d]));
    for (int64_t i = 0; i < shape[d]; ++i)
      for (int64_t o : planeOffsets) outer.push_back(i * strides[d] + o);
    planeOffsets = std::move(outer);
  }
  transposePlanes(src, planeOffsets, shape[r - 2], shape[r - 1], strides[r - 1], dst, threads);
  return true;
}

}  // namespace

Expected<std::unique_ptr<Op>> makeTranspose(const BuildContext& bc) {
  std::vector<int64_t> perm = attrInts(*bc.node, "perm");
  return fnOp([perm](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    const Tensor& x = *in[0];
    std::vector<int64_t> p = perm;
    if (p.empty())
      for (int64_t i = x.rank(); i-- > 0;) p.push_back(i);
    if (static_cast<int64_t>(p.size()) != x.rank()) return makeError("perm has {} entries for rank {}", p.size(), x.rank());
    auto st = contiguousStrides(x.shape);
    Shape s;
    std::vector<int64_t> ist;
    for (auto d : p) {
      if (d < 0 || d >= x.rank()) return makeError("bad perm entry {}", d);
      s.push_back(x.shape[static_cast<size_t>(d)]);
      ist.push_back(st[static_cast<size_t>(d)]);
    }
    Tensor& y = ctx.alloc(0, x.dtype, s);
    if (dtypeSize(x.dtype) == 4 && transposeAsPlanes(x.ptr<uint32_t>(), s, ist, y.ptr<uint32_t>(), ctx.threads)) return {};
    stridedCopy(x.ptr<uint8_t>(), y.ptr<uint8_t>(), dtypeSize(x.dtype), s, ist, 0);
    return {};
  });
}

constexpr int64_t kConcatPieceBytes = int64_t{64} << 10;
constexpr int64_t kConcatParallelBytes = int64_t{64} << 10;  // below: one thread

Expected<std::unique_ptr<Op>> makeConcat(const BuildContext& bc) {
  const int64_t axis = attrInt(*bc.node, "axis", 0);
  return fnOp([axis](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    const Tensor& f = *in[0];
    const int64_t a = normAxis(axis, f.rank());
    if (a < 0 || a >= f.rank()) return makeError("axis {} out of range for rank {}", axis, f.rank());
    Shape s = f.shape;
    s[static_cast<size_t>(a)] = 0;
    for (auto* t : in) {
      if (t->rank() != f.rank() || t->dtype != f.dtype) return makeError("inputs differ in rank or type");
      for (int64_t d = 0; d < f.rank(); ++d)
        if (d != a && t->shape[static_cast<size_t>(d)] != f.shape[static_cast<size_t>(d)])
          return makeError("input shapes {} and {} differ outside axis {}", shapeString(f.shape), shapeString(t->shape), a);
      s[static_cast<size_t>(a)] += t->shape[static_cast<size_t>(a)];
    }
    Tensor& y = ctx.alloc(0, f.dtype, s);
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < a; ++d) outer *= s[static_cast<size_t>(d)];
    for (int64_t d = a + 1; d < f.rank(); ++d) inner *= s[static_cast<size_t>(d)];
    const int64_t es = static_cast<int64_t>(dtypeSize(f.dtype));
    const int64_t rowOut = s[static_cast<size_t>(a)] * inner;
    // The copies as pieces of at most kConcatPieceBytes, split over the threads: at two
    // threads the inputs come half from the other core's cache, and one thread copying
    // them all took 1.2x its one-thread time (SqueezeNet's Concats).
    struct Piece {
      uint8_t* dst;
      const uint8_t* src;
      int64_t bytes;
    };
    std::vector<Piece> pieces;
    int64_t pos = 0, total = 0;
    for (auto* t : in) {
      const int64_t row = t->shape[static_cast<size_t>(a)] * inner * es;
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t b = 0; b < row; b += kConcatPieceBytes)
          pieces.push_back({y.ptr<uint8_t>() + o * rowOut * es + pos + b, t->ptr<uint8_t>() + o * row + b,
                            std::min(kConcatPieceBytes, row - b)});
      pos += row;
      total += row * outer;
    }
    parallelForEach(total >= kConcatParallelBytes ? ctx.threads : 1, static_cast<int64_t>(pieces.size()),
                    [&](int64_t i, int) {
                      const Piece& p = pieces[static_cast<size_t>(i)];
                      std::memcpy(p.dst, p.src, static_cast<size_t>(p.bytes));
                    });
    return {};
  });
}

Expected<std::unique_ptr<Op>> makeSplit(const BuildContext& bc) {
  const int64_t axis = attrInt(*bc.node, "axis", 0);
  const int nOut = bc.node->output_size();
  std::vector<int64_t> attrSplit = attrInts(*bc.node, "split");
  return fnOp([axis, nOut, attrSplit](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    const Tensor& x = *in[0];
    const int64_t a = normAxis(axis, x.rank());
    if (a < 0 || a >= x.rank()) return makeError("axis {} out of range", axis);
    const int64_t dim = x.shape[static_cast<size_t>(a)];
    std::vector<int64_t> split = (in.size() > 1 && in[1]) ? in[1]->toI64() : attrSplit;
    if (split.empty()) {
      const int64_t chunk = (dim + nOut - 1) / nOut;
      for (int i = 0; i < nOut; ++i) split.push_back(std::min(chunk, dim - chunk * i));
    }
    if (static_cast<int>(split.size()) != nOut || std::accumulate(split.begin(), split.end(), int64_t{0}) != dim)
      return makeError("split sizes do not add up to dimension {}", dim);
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < a; ++d) outer *= x.shape[static_cast<size_t>(d)];
    for (int64_t d = a + 1; d < x.rank(); ++d) inner *= x.shape[static_cast<size_t>(d)];
    const size_t es = dtypeSize(x.dtype);
    int64_t pos = 0;
    for (int i = 0; i < nOut; ++i) {
      Shape s = x.shape;
      s[static_cast<size_t>(a)] = split[static_cast<size_t>(i)];
      Tensor& y = ctx.alloc(static_cast<size_t>(i), x.dtype, s);
      const int64_t row = split[static_cast<size_t>(i)] * inner;
      for (int64_t o = 0; o < outer; ++o)
        std::memcpy(y.ptr<uint8_t>() + o * row * static_cast<int64_t>(es),
                    x.ptr<uint8_t>() + (o * dim * inner + pos) * static_cast<int64_t>(es), static_cast<size_t>(row) * es);
      pos += row;
    }
    return {};
  });
}

Expected<std::unique_ptr<Op>> makeSlice(const BuildContext& bc) {
  const int opset = bc.opset;
  std::vector<int64_t> aStarts = attrInts(*bc.node, "starts"), aEnds = attrInts(*bc.node, "ends"),
                       aAxes = attrInts(*bc.node, "axes");
  return fnOp([=](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    const Tensor& x = *in[0];
    std::vector<int64_t> starts = aStarts, ends = aEnds, axes = aAxes, steps;
    if (opset >= 10) {
      starts = in[1]->toI64();
      ends = in[2]->toI64();
      axes = (in.size() > 3 && in[3]) ? in[3]->toI64() : std::vector<int64_t>{};
      if (in.size() > 4 && in[4]) steps = in[4]->toI64();
    }
    if (axes.empty())
      for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
    if (steps.empty()) steps.assign(starts.size(), 1);
    if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
      return makeError("starts/ends/axes/steps lengths differ");
    Shape s = x.shape;
    auto st = contiguousStrides(x.shape);
    std::vector<int64_t> ist = st;
    int64_t base = 0;
    for (size_t i = 0; i < starts.size(); ++i) {
      const int64_t a = normAxis(axes[i], x.rank());
      if (a < 0 || a >= x.rank()) return makeError("slice axis {} out of range", axes[i]);
      const int64_t dim = x.shape[static_cast<size_t>(a)], step = steps[i];
      if (step == 0) return makeError("slice step 0");
      int64_t b = starts[i], e = ends[i];
      if (b < 0) b += dim;
      if (e < 0) e += dim;
      int64_t len;
      if (step > 0) {
        b = std::clamp(b, int64_t{0}, dim);
        e = std::clamp(e, int64_t{0}, dim);
        len = e > b ? (e - b + step - 1) / step : 0;
      } else {
        b = std::clamp(b, int64_t{0}, dim - 1);
        e = std::clamp(e, int64_t{-1}, dim - 1);
        len = b > e ? (b - e + (-step) - 1) / (-step) : 0;
      }
      s[static_cast<size_t>(a)] = len;
      base += b * st[static_cast<size_t>(a)];
      ist[static_cast<size_t>(a)] = st[static_cast<size_t>(a)] * step;
    }
    Tensor& y = ctx.alloc(0, x.dtype, s);
    stridedCopy(x.ptr<uint8_t>(), y.ptr<uint8_t>(), dtypeSize(x.dtype), s, ist, base);
    return {};
  });
}

Expected<std::unique_ptr<Op>> makeGather(const BuildContext& bc) {
  const int64_t axis = attrInt(*bc.node, "axis", 0);
  return fnOp([axis](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    const Tensor& x = *in[0];
    std::vector<int64_t> idx = in[1]->toI64();
    const int64_t a = normAxis(axis, x.rank());
    if (a < 0 || a >= x.rank()) return makeError("axis {} out of range", axis);
    const int64_t dim = x.shape[static_cast<size_t>(a)];
    Shape s(x.shape.begin(), x.shape.begin() + a);
    s.insert(s.end(), in[1]->shape.begin(), in[1]->shape.end());
    s.insert(s.end(), x.shape.begin() + a + 1, x.shape.end());
    Tensor& y = ctx.alloc(0, x.dtype, s);
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < a; ++d) outer *= x.shape[static_cast<size_t>(d)];
    for (int64_t d = a + 1; d < x.rank(); ++d) inner *= x.shape[static_cast<size_t>(d)];
    const size_t es = dtypeSize(x.dtype);
    const int64_t ni = static_cast<int64_t>(idx.size());
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < ni; ++i) {
        int64_t k = idx[static_cast<size_t>(i)];
        if (k < 0) k += dim;
        if (k < 0 || k >= dim) return makeError("index {} out of range [0, {})", idx[static_cast<size_t>(i)], dim);
        std::memcpy(y.ptr<uint8_t>() + ((o * ni + i) * inner) * static_cast<int64_t>(es),
                    x.ptr<uint8_t>() + ((o * dim + k) * inner) * static_cast<int64_t>(es), static_cast<size_t>(inner) * es);
      }
    return {};
  });
}

Expected<std::unique_ptr<Op>> makeExpand(const BuildContext& bc) {
  return fnOp([](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    const Tensor& x = *in[0];
    ZP_ASSIGN_OR_RETURN(Shape s, broadcastShapes({x.shape, in[1]->toI64()}));
    Tensor& y = ctx.alloc(0, x.dtype, s);
    // Strides of x within s (0 where broadcast).
    std::vector<int64_t> ist(s.size(), 0);
    auto st = contiguousStrides(x.shape);
    for (size_t i = 0; i < x.shape.size(); ++i) {
      size_t d = s.size() - x.shape.size() + i;
      ist[d] = x.shape[i] == 1 ? 0 : st[i];
    }
    stridedCopy(x.ptr<uint8_t>(), y.ptr<uint8_t>(), dtypeSize(x.dtype), s, ist, 0);
    return {};
  });
}

Expected<std::unique_ptr<Op>> makeTile(const BuildContext& bc) {
  return fnOp([](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    const Tensor& x = *in[0];
    std::vector<int64_t> reps = in[1]->toI64();
    if (static_cast<int64_t>(reps.size()) != x.rank()) return makeError("repeats length differs from rank");
    Shape s = x.shape;
    for (size_t i = 0; i < s.size(); ++i) s[i] *= reps[i];
    Tensor& y = ctx.alloc(0, x.dtype, s);
    auto st = contiguousStrides(x.shape);
    const size_t es = dtypeSize(x.dtype);
    std::vector<int64_t> idx(s.size(), 0);
    for (int64_t o = 0; o < y.size(); ++o) {
      int64_t rem = o, off = 0;
      for (size_t d = s.size(); d-- > 0;) {
        int64_t i = rem % s[d];
        rem /= s[d];
        off += (i % x.shape[d]) * st[d];
      }
      std::memcpy(y.ptr<uint8_t>() + o * static_cast<int64_t>(es), x.ptr<uint8_t>() + off * static_cast<int64_t>(es), es);
    }
    return {};
  });
}

// Source index along one axis of length n for padded position i (i < 0 or i >= n
// lies in the padding): reflect mirrors about the edge elements (again and again for
// pads longer than the axis, as numpy does), edge repeats them. -1 means the constant.
static int64_t padSource(int64_t i, int64_t n, PadMode mode) {
  if (i >= 0 && i < n) return i;
  if (mode == PadMode::Constant) return -1;
  if (mode == PadMode::Edge || n == 1) return std::clamp<int64_t>(i, 0, n - 1);
  const int64_t period = 2 * (n - 1);  // reflect: ... 2 1 | 0 1 2 .. n-1 | n-2 ...
  int64_t m = ((i % period) + period) % period;
  return m < n ? m : period - m;
}

// Constant Pad row by row along the last axis: the padding filled with the value's
// bytes, the inside copied with one memcpy per row instead of element by element
// (the zero pads in front of convolutions and pools are on the warm path).
static void padConstantRows(const Tensor& x, Tensor& y, const std::vector<int64_t>& pads, const uint8_t* value) {
  const size_t r = static_cast<size_t>(x.rank()), last = r - 1;
  const size_t es = dtypeSize(x.dtype);
  const auto ist = contiguousStrides(x.shape);
  const int64_t OW = y.shape[last], IW = x.shape[last], padL = pads[last];
  const int64_t cLo = std::clamp<int64_t>(padL, 0, OW), cHi = std::clamp<int64_t>(IW + padL, cLo, OW);
  const bool zero = std::all_of(value, value + es, [](uint8_t b) { return b == 0; });
  auto fill = [&](uint8_t* dst, int64_t n) {
    if (zero) std::memset(dst, 0, static_cast<size_t>(n) * es);
    else for (int64_t i = 0; i < n; ++i) std::memcpy(dst + static_cast<size_t>(i) * es, value, es);
  };
  const uint8_t* px = x.ptr<uint8_t>();
  uint8_t* py = y.ptr<uint8_t>();
  std::vector<int64_t> idx(last, 0);
  for (int64_t row = 0; row < y.size() / OW; ++row) {
    uint8_t* dst = py + static_cast<size_t>(row * OW) * es;
    int64_t off = 0;
    bool inside = true;
    for (size_t d = 0; d < last && inside; ++d) {
      const int64_t i = idx[d] - pads[d];
      inside = i >= 0 && i < x.shape[d];
      off += i * ist[d];
    }
    if (inside && cHi > cLo) {
      fill(dst, cLo);
      std::memcpy(dst + static_cast<size_t>(cLo) * es, px + static_cast<size_t>(off + cLo - padL) * es,
                  static_cast<size_t>(cHi - cLo) * es);
      fill(dst + static_cast<size_t>(cHi) * es, OW - cHi);
    } else {
      fill(dst, OW);
    }
    for (size_t d = last; d-- > 0;) {
      if (++idx[d] < y.shape[d]) break;
      idx[d] = 0;
    }
  }
}

Expected<std::unique_ptr<Op>> makePad(const BuildContext& bc) {
  const std::string modeName = attrString(*bc.node, "mode", "constant");
  PadMode mode;
  if (modeName == "constant") mode = PadMode::Constant;
  else if (modeName == "reflect") mode = PadMode::Reflect;
  else if (modeName == "edge") mode = PadMode::Edge;
  else return makeError("Pad mode '{}' is not supported", modeName);
  const int opset = bc.opset;
  std::vector<int64_t> aPads = attrInts(*bc.node, "pads");
  float aValue = attrFloat(*bc.node, "value", 0.0f);
  return fnOp([=](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    const Tensor& x = *in[0];
    std::vector<int64_t> pads = opset >= 11 ? in[1]->toI64() : aPads;
    const int64_t r = x.rank();
    if (static_cast<int64_t>(pads.size()) != 2 * r) return makeError("pads has {} entries for rank {}", pads.size(), r);
    Shape s = x.shape;
    for (size_t d = 0; d < static_cast<size_t>(r); ++d) {
      s[d] += pads[d] + pads[d + static_cast<size_t>(r)];
      if (s[d] < 0) return makeError("pads {} crop more than the input {} holds", shapeString(pads), shapeString(x.shape));
      if (mode != PadMode::Constant && s[d] > 0 && x.shape[d] == 0)
        return makeError("Pad mode '{}' needs a non-empty input along axis {}", modeName, d);
    }
    // The constant's bytes in x's type: the value input (same type), the opset < 11
    // attribute (float), or zero.
    const size_t es = dtypeSize(x.dtype);
    std::vector<uint8_t> value(es, 0);
    if (opset >= 11 && in.size() > 2 && in[2] && in[2]->size() > 0) {
      if (in[2]->dtype != x.dtype) return makeError("constant_value has another type than the data");
      std::memcpy(value.data(), in[2]->ptr<uint8_t>(), es);
    } else if (opset < 11) {
      if (x.dtype != DType::F32) return makeError("Pad before opset 11 supports float32 only");
      std::memcpy(value.data(), &aValue, es);
    }
    Tensor& y = ctx.alloc(0, x.dtype, s);
    if (y.size() == 0) return {};
    if (mode == PadMode::Constant && r > 0) {
      padConstantRows(x, y, pads, value.data());
      return {};
    }
    const auto ist = contiguousStrides(x.shape);
    const uint8_t* px = x.ptr<uint8_t>();
    uint8_t* py = y.ptr<uint8_t>();
    for (int64_t o = 0; o < y.size(); ++o) {
      int64_t rem = o, off = 0;
      bool inside = true;
      for (size_t d = static_cast<size_t>(r); d-- > 0;) {
        const int64_t i = padSource(rem % s[d] - pads[d], x.shape[d], mode);
        rem /= s[d];
        if (i < 0) { inside = false; break; }
        off += i * ist[d];
      }
      std::memcpy(py + o * static_cast<int64_t>(es), inside ? px + off * static_cast<int64_t>(es) : value.data(), es);
    }
    return {};
  });
}

// DepthToSpace and SpaceToDepth are a reshape to 6-D, a transpose and a reshape back:
// y = transpose(reshape(x, view), perm), with `view` the 6-D shape of x.
static Status blockTranspose(ExecContext& ctx, const Tensor& x, const Shape& view, const std::vector<size_t>& perm,
                             const Shape& outShape) {
  const auto st = contiguousStrides(view);
  Shape s;
  std::vector<int64_t> ist;
  for (size_t d : perm) {
    s.push_back(view[d]);
    ist.push_back(st[d]);
  }
  Tensor& y = ctx.alloc(0, x.dtype, outShape);
  stridedCopy(x.ptr<uint8_t>(), y.ptr<uint8_t>(), dtypeSize(x.dtype), s, ist, 0);
  return {};
}

Expected<std::unique_ptr<Op>> makeDepthToSpace(const BuildContext& bc) {
  const int64_t b = attrInt(*bc.node, "blocksize", 0);
  const std::string mode = attrString(*bc.node, "mode", "DCR");
  if (b <= 0) return makeError("blocksize {} is not positive", b);
  if (mode != "DCR" && mode != "CRD") return makeError("DepthToSpace mode '{}' is not DCR or CRD", mode);
  const bool dcr = mode == "DCR";
  return fnOp([=](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    const Tensor& x = *in[0];
    if (x.rank() != 4 || x.shape[1] % (b * b) != 0)
      return makeError("input {} is not NCHW with channels a multiple of blocksize^2 = {}", shapeString(x.shape), b * b);
    const int64_t N = x.shape[0], C = x.shape[1] / (b * b), H = x.shape[2], W = x.shape[3];
    const Shape out = {N, C, H * b, W * b};
    // DCR: channel = (bh * b + bw) * C + c; CRD: channel = (c * b + bh) * b + bw.
    if (dcr) return blockTranspose(ctx, x, {N, b, b, C, H, W}, {0, 3, 4, 1, 5, 2}, out);
    return blockTranspose(ctx, x, {N, C, b, b, H, W}, {0, 1, 4, 2, 5, 3}, out);
  });
}

Expected<std::unique_ptr<Op>> makeSpaceToDepth(const BuildContext& bc) {
  const int64_t b = attrInt(*bc.node, "blocksize", 0);
  if (b <= 0) return makeError("blocksize {} is not positive", b);
  return fnOp([=](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    const Tensor& x = *in[0];
    if (x.rank() != 4 || x.shape[2] % b != 0 || x.shape[3] % b != 0)
      return makeError("input {} is not NCHW with height and width multiples of blocksize {}", shapeString(x.shape), b);
    const int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2] / b, W = x.shape[3] / b;
    return blockTranspose(ctx, x, {N, C, H, b, W, b}, {0, 3, 5, 1, 2, 4}, {N, C * b * b, H, W});
  });
}

}  // namespace zp::runtime::detail
