// MaxPool and AveragePool over 1 to 3 spatial dims by the definition (spatial dims
// padded to 3 with leading 1s), MaxPool on float and integer types with its Indices
// output, and MaxUnpool, which scatters values back to the indices MaxPool found.
#include "libplan/runtime/ops/pool_general.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>

#include "libplan/runtime/ops/attributes.h"
#include "libplan/runtime/ops/dispatch.h"
#include "libplan/runtime/ops/factories.h"
#include "libplan/runtime/ops/fn_op.h"
#include "libplan/runtime/ops/sliding_window.h"

namespace zp::runtime::detail {
namespace {

struct PoolAttrs {
  std::vector<int64_t> kernel, strides, pads, dil;
  bool ceil = false, includePad = false, columnMajor = false;
  std::string autoPad = "NOTSET";
};

// One pooling's geometry with its spatial dims padded to 3.
struct NdPoolGeom {
  int64_t NC = 1;
  std::array<int64_t, 3> in{1, 1, 1}, out{1, 1, 1}, k{1, 1, 1}, s{1, 1, 1}, d{1, 1, 1}, pb{0, 0, 0}, pe{0, 0, 0};
  int64_t inSize() const { return in[0] * in[1] * in[2]; }
  int64_t outSize() const { return out[0] * out[1] * out[2]; }
};

Expected<NdPoolGeom> geometry(const PoolAttrs& a, const Shape& x) {
  const size_t sd = a.kernel.size();
  if (x.size() != sd + 2) return makeError("input {} does not have the {} spatial dims of kernel_shape", shapeString(x), sd);
  NdPoolGeom g;
  g.NC = x[0] * x[1];
  for (size_t i = 0; i < sd; ++i) {
    const size_t j = 3 - sd + i;
    g.in[j] = x[i + 2];
    g.k[j] = a.kernel[i];
    g.s[j] = a.strides.empty() ? 1 : a.strides[i];
    g.d[j] = a.dil.empty() ? 1 : a.dil[i];
    g.pb[j] = a.pads.empty() ? 0 : a.pads[i];
    g.pe[j] = a.pads.empty() ? 0 : a.pads[i + sd];
    g.out[j] = slidingWindowOut(g.in[j], g.k[j], g.s[j], g.d[j], g.pb[j], g.pe[j], a.ceil, a.autoPad);
    if (g.out[j] <= 0) return makeError("pooling output of input {} would be empty", shapeString(x));
  }
  return g;
}

// The taps of output o along dim j that fall inside the input: [lo, hi) over tap index.
void validTaps(const NdPoolGeom& g, size_t j, int64_t o, int64_t* lo, int64_t* hi) {
  const int64_t start = o * g.s[j] - g.pb[j];
  *lo = 0;
  while (*lo < g.k[j] && start + *lo * g.d[j] < 0) ++*lo;
  *hi = g.k[j];
  while (*hi > *lo && start + (*hi - 1) * g.d[j] >= g.in[j]) --*hi;
}

template <typename T>
void maxPool(const NdPoolGeom& g, bool columnMajor, const T* x, T* y, int64_t* indices) {
  const int64_t L = g.inSize(), P = g.outSize();
  for (int64_t nc = 0; nc < g.NC; ++nc)
    for (int64_t p = 0; p < P; ++p) {
      const std::array<int64_t, 3> o{p / (g.out[1] * g.out[2]), (p / g.out[2]) % g.out[1], p % g.out[2]};
      std::array<int64_t, 3> lo{}, hi{};
      for (size_t j = 0; j < 3; ++j) validTaps(g, j, o[j], &lo[j], &hi[j]);
      T best = std::numeric_limits<T>::lowest();
      int64_t at = -1;
      for (int64_t a = lo[0]; a < hi[0]; ++a)
        for (int64_t b = lo[1]; b < hi[1]; ++b)
          for (int64_t c = lo[2]; c < hi[2]; ++c) {
            const int64_t i0 = o[0] * g.s[0] - g.pb[0] + a * g.d[0], i1 = o[1] * g.s[1] - g.pb[1] + b * g.d[1],
                          i2 = o[2] * g.s[2] - g.pb[2] + c * g.d[2];
            const int64_t i = (i0 * g.in[1] + i1) * g.in[2] + i2;
            const T v = x[nc * L + i];
            if (at < 0 || v > best) {
              best = v;
              // Column-major storage counts the spatial dims innermost-first.
              at = columnMajor ? (i2 * g.in[1] + i1) * g.in[0] + i0 : i;
            }
          }
      y[nc * P + p] = best;
      if (indices) indices[nc * P + p] = nc * L + at;
    }
}

template <typename T>
void averagePool(const NdPoolGeom& g, bool includePad, const T* x, T* y) {
  const int64_t L = g.inSize(), P = g.outSize();
  for (int64_t nc = 0; nc < g.NC; ++nc)
    for (int64_t p = 0; p < P; ++p) {
      const std::array<int64_t, 3> o{p / (g.out[1] * g.out[2]), (p / g.out[2]) % g.out[1], p % g.out[2]};
      std::array<int64_t, 3> lo{}, hi{};
      int64_t padded = 1;
      for (size_t j = 0; j < 3; ++j) {
        validTaps(g, j, o[j], &lo[j], &hi[j]);
        // count_include_pad counts the taps inside input and pads, not those past the end pad (ceil_mode).
        const int64_t start = o[j] * g.s[j] - g.pb[j];
        padded *= std::min(start + g.k[j], g.in[j] + g.pe[j]) - start;
      }
      double sum = 0;
      for (int64_t a = lo[0]; a < hi[0]; ++a)
        for (int64_t b = lo[1]; b < hi[1]; ++b)
          for (int64_t c = lo[2]; c < hi[2]; ++c) {
            const int64_t i0 = o[0] * g.s[0] - g.pb[0] + a, i1 = o[1] * g.s[1] - g.pb[1] + b, i2 = o[2] * g.s[2] - g.pb[2] + c;
            sum += static_cast<double>(x[nc * L + (i0 * g.in[1] + i1) * g.in[2] + i2]);
          }
      const int64_t count = includePad ? padded : (hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]);
      y[nc * P + p] = count > 0 ? static_cast<T>(sum / static_cast<double>(count)) : T(0);
    }
}

Expected<PoolAttrs> poolAttrs(const onnx::NodeProto& n) {
  PoolAttrs a;
  a.kernel = attrInts(n, "kernel_shape");
  a.strides = attrInts(n, "strides");
  a.pads = attrInts(n, "pads");
  a.dil = attrInts(n, "dilations");
  a.ceil = attrInt(n, "ceil_mode", 0) != 0;
  a.includePad = attrInt(n, "count_include_pad", 0) != 0;
  a.columnMajor = attrInt(n, "storage_order", 0) != 0;
  a.autoPad = attrString(n, "auto_pad", "NOTSET");
  const size_t sd = a.kernel.size();
  if (sd < 1 || sd > 3) return makeError("kernel_shape has {} dims (1 to 3 are supported)", sd);
  if ((!a.strides.empty() && a.strides.size() != sd) || (!a.dil.empty() && a.dil.size() != sd) ||
      (!a.pads.empty() && a.pads.size() != 2 * sd))
    return makeError("strides, dilations or pads do not have one entry per spatial dim");
  return a;
}

}  // namespace

Expected<std::unique_ptr<Op>> makeGeneralPool(const BuildContext& bc, bool isMax) {
  ZP_ASSIGN_OR_RETURN(PoolAttrs a, poolAttrs(*bc.node));
  if (!isMax && std::any_of(a.dil.begin(), a.dil.end(), [](int64_t d) { return d != 1; }))
    return makeError("AveragePool with dilations is not supported");
  const bool wantIndices = isMax && bc.node->output_size() > 1 && !bc.node->output(1).empty();
  return fnOp([=](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    const Tensor& x = *in[0];
    ZP_ASSIGN_OR_RETURN(NdPoolGeom g, geometry(a, x.shape));
    Shape os = {x.shape[0], x.shape[1]};
    for (size_t j = 3 - a.kernel.size(); j < 3; ++j) os.push_back(g.out[j]);
    return visitDType(x.dtype, [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      if constexpr (!kIsArithmetic<T>) {
        return makeError("pooling does not take {}", dtypeName(x.dtype));
      } else {
        if (!isMax && !std::is_floating_point_v<T>) return makeError("AveragePool does not take {}", dtypeName(x.dtype));
        Tensor& y = ctx.alloc(0, x.dtype, os);
        int64_t* indices = wantIndices ? ctx.alloc(1, DType::I64, os).template ptr<int64_t>() : nullptr;
        if (isMax) maxPool(g, a.columnMajor, x.ptr<T>(), y.ptr<T>(), indices);
        else averagePool(g, a.includePad, x.ptr<T>(), y.ptr<T>());
        return {};
      }
    });
  });
}

Expected<std::unique_ptr<Op>> makeMaxUnpool(const BuildContext& bc) {
  ZP_ASSIGN_OR_RETURN(PoolAttrs a, poolAttrs(*bc.node));
  return fnOp([=](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    const Tensor& x = *in[0];
    const Tensor& idx = *in[1];
    const size_t sd = a.kernel.size();
    if (x.rank() != static_cast<int64_t>(sd) + 2 || idx.shape != x.shape || idx.dtype != DType::I64)
      return makeError("input {} and int64 indices {} do not fit kernel_shape", shapeString(x.shape), shapeString(idx.shape));
    // The indices count positions of the default output (the tensor MaxPool read); an
    // output_shape places that tensor's positions at the same coordinates of a larger one.
    Shape dflt = {x.shape[0], x.shape[1]};
    for (size_t i = 0; i < sd; ++i)
      dflt.push_back((x.shape[i + 2] - 1) * (a.strides.empty() ? 1 : a.strides[i]) + a.kernel[i] -
                     (a.pads.empty() ? 0 : a.pads[i] + a.pads[i + sd]));
    Shape os = dflt;
    if (in.size() > 2 && in[2]) {
      os = in[2]->toI64();
      if (os.size() != x.shape.size() || os[0] != x.shape[0] || os[1] != x.shape[1])
        return makeError("output_shape {} does not fit input {}", shapeString(os), shapeString(x.shape));
    }
    Tensor& y = ctx.alloc(0, x.dtype, os);
    const size_t es = dtypeSize(x.dtype);
    std::fill(y.ptr<uint8_t>(), y.ptr<uint8_t>() + y.bytes(), uint8_t{0});
    if (y.size() == 0 || x.size() == 0) return {};
    const int64_t total = numel(dflt), inPlane = total / (os[0] * os[1]), outPlane = y.size() / (os[0] * os[1]);
    const int64_t* pi = idx.ptr<int64_t>();
    for (int64_t i = 0; i < x.size(); ++i) {
      if (pi[i] < 0 || pi[i] >= total) return makeError("index {} is outside the unpooled {}", pi[i], shapeString(dflt));
      int64_t rem = pi[i] % inPlane, at = 0, stride = 1;
      for (size_t d = dflt.size(); d-- > 2;) {
        const int64_t coord = rem % dflt[d];
        if (coord >= os[d]) return makeError("index {} lies outside output_shape {}", pi[i], shapeString(os));
        at += coord * stride;
        stride *= os[d];
        rem /= dflt[d];
      }
      at += pi[i] / inPlane * outPlane;  // n * C + c, the same in both shapes
      std::memcpy(y.ptr<uint8_t>() + at * static_cast<int64_t>(es), x.ptr<uint8_t>() + i * static_cast<int64_t>(es), es);
    }
    return {};
  });
}

}  // namespace zp::runtime::detail
