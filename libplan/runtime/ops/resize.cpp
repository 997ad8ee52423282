// Resize (opset 10, 11, 13) and Upsample: nearest, linear and cubic interpolation
// of any number of axes, with every coordinate_transformation_mode and
// nearest_mode. Interpolation is separable: each axis whose size or mapping
// changes is resized in one pass, [outer, in, inner] -> [outer, out, inner], from
// a table of taps (source index and weight per output position) made once per run.
// Nearest copies elements of any type; linear and cubic compute in float32 or float64.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "libplan/runtime/ops/attributes.h"
#include "libplan/runtime/ops/dispatch.h"
#include "libplan/runtime/ops/factories.h"
#include "libplan/runtime/ops/fn_op.h"

namespace zp::runtime::detail {
namespace {

enum class Mode { Nearest, Linear, Cubic };
enum class Coord { HalfPixel, PytorchHalfPixel, AlignCorners, Asymmetric, TfHalfPixelForNn, TfCropAndResize };
// Simple: ORT's rule before opset 11 (truncate when upsampling, ceil when downsampling).
enum class Nearest { RoundPreferFloor, RoundPreferCeil, Floor, Ceil, Simple };

struct ResizeAttrs {
  Mode mode = Mode::Nearest;
  Coord coord = Coord::HalfPixel;
  Nearest nearest = Nearest::RoundPreferFloor;
  double cubicA = -0.75;
  bool excludeOutside = false;
  double extrapolation = 0;
  int scalesInput = 2;   // where scales are (1 before opset 11)
  int sizesInput = 3;    // -1 before opset 11
  int roiInput = 1;      // -1 before opset 11
};

// The taps of one axis: for output position j, `taps` source indices and weights.
struct AxisTaps {
  int taps = 1;
  std::vector<int64_t> index;
  std::vector<double> weight;
  std::vector<uint8_t> outside;  // tf_crop_and_resize: j maps outside the input
  bool identity = true;          // out == in and every j reads exactly j
};

Expected<Mode> parseMode(const std::string& s) {
  if (s == "nearest") return Mode::Nearest;
  if (s == "linear" || s == "bilinear" || s == "trilinear") return Mode::Linear;
  if (s == "cubic" || s == "bicubic") return Mode::Cubic;
  return makeError("mode '{}' is not supported", s);
}

Expected<Coord> parseCoord(const std::string& s) {
  if (s == "half_pixel") return Coord::HalfPixel;
  if (s == "pytorch_half_pixel") return Coord::PytorchHalfPixel;
  if (s == "align_corners") return Coord::AlignCorners;
  if (s == "asymmetric") return Coord::Asymmetric;
  if (s == "tf_half_pixel_for_nn") return Coord::TfHalfPixelForNn;
  if (s == "tf_crop_and_resize") return Coord::TfCropAndResize;
  return makeError("coordinate_transformation_mode '{}' is not supported", s);
}

Expected<Nearest> parseNearest(const std::string& s) {
  if (s == "round_prefer_floor") return Nearest::RoundPreferFloor;
  if (s == "round_prefer_ceil") return Nearest::RoundPreferCeil;
  if (s == "floor") return Nearest::Floor;
  if (s == "ceil") return Nearest::Ceil;
  return makeError("nearest_mode '{}' is not supported", s);
}

// Output position x of an axis in input coordinates. `length` is the resized length
// the formulas divide by: the size when sizes are given, else input size x scale
// unrounded (as ONNX's reference computes it; ONNX Runtime takes the rounded output
// size, which differs for align_corners and tf_crop_and_resize when in x scale is
// not a whole number).
double originalCoordinate(const ResizeAttrs& a, double x, int64_t in, double length, double scale, double roiStart,
                          double roiEnd) {
  switch (a.coord) {
    case Coord::HalfPixel: return (x + 0.5) / scale - 0.5;
    case Coord::PytorchHalfPixel: return length > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
    case Coord::AlignCorners: return length > 1 ? x * static_cast<double>(in - 1) / (length - 1) : 0.0;
    case Coord::Asymmetric: return x / scale;
    case Coord::TfHalfPixelForNn: return (x + 0.5) / scale;
    case Coord::TfCropAndResize:
      return length > 1 ? roiStart * static_cast<double>(in - 1) +
                              x * (roiEnd - roiStart) * static_cast<double>(in - 1) / (length - 1)
                        : 0.5 * (roiStart + roiEnd) * static_cast<double>(in - 1);
  }
  return x;
}

int64_t nearestIndex(Nearest mode, double x, bool downsampling) {
  const double f = std::floor(x);
  switch (mode) {
    case Nearest::RoundPreferFloor: return static_cast<int64_t>(x - f == 0.5 ? f : std::round(x));
    case Nearest::RoundPreferCeil: return static_cast<int64_t>(x - f == 0.5 ? f + 1 : std::round(x));
    case Nearest::Floor: return static_cast<int64_t>(f);
    case Nearest::Ceil: return static_cast<int64_t>(std::ceil(x));
    case Nearest::Simple: return static_cast<int64_t>(downsampling ? std::ceil(x) : std::trunc(x));
  }
  return static_cast<int64_t>(f);
}

void cubicCoefficients(double r, double A, double c[4]) {
  const double s = 1 - r;
  c[0] = ((A * (r + 1) - 5 * A) * (r + 1) + 8 * A) * (r + 1) - 4 * A;
  c[1] = ((A + 2) * r - (A + 3)) * r * r + 1;
  c[2] = ((A + 2) * s - (A + 3)) * s * s + 1;
  c[3] = ((A * (s + 1) - 5 * A) * (s + 1) + 8 * A) * (s + 1) - 4 * A;
}

AxisTaps axisTaps(const ResizeAttrs& a, int64_t in, int64_t out, double length, double scale, double roiStart,
                  double roiEnd) {
  AxisTaps t;
  t.taps = a.mode == Mode::Nearest ? 1 : (a.mode == Mode::Linear ? 2 : 4);
  t.index.resize(static_cast<size_t>(out * t.taps));
  t.weight.resize(static_cast<size_t>(out * t.taps));
  t.outside.assign(static_cast<size_t>(out), 0);
  t.identity = in == out;
  for (int64_t j = 0; j < out; ++j) {
    const double x = originalCoordinate(a, static_cast<double>(j), in, length, scale, roiStart, roiEnd);
    if (a.coord == Coord::TfCropAndResize && (x < 0 || x > static_cast<double>(in - 1))) {
      t.outside[static_cast<size_t>(j)] = 1;
      t.identity = false;
    }
    int64_t* idx = &t.index[static_cast<size_t>(j * t.taps)];
    double* w = &t.weight[static_cast<size_t>(j * t.taps)];
    if (a.mode == Mode::Nearest) {
      idx[0] = std::clamp<int64_t>(nearestIndex(a.nearest, x, scale < 1), 0, in - 1);
      w[0] = 1;
    } else {
      const double f = std::floor(x), r = x - f;
      const int64_t first = static_cast<int64_t>(f) - (a.mode == Mode::Cubic ? 1 : 0);
      if (a.mode == Mode::Linear) { w[0] = 1 - r; w[1] = r; }
      else cubicCoefficients(r, a.cubicA, w);
      double sum = 0;
      for (int k = 0; k < t.taps; ++k) {
        const int64_t i = first + k;
        if (a.excludeOutside && (i < 0 || i >= in)) w[k] = 0;
        idx[k] = std::clamp<int64_t>(i, 0, in - 1);  // edge padding
        sum += w[k];
      }
      if (a.excludeOutside && sum != 0)
        for (int k = 0; k < t.taps; ++k) w[k] /= sum;
    }
    for (int k = 0; k < t.taps; ++k)
      if (w[k] != 0 && idx[k] != j) t.identity = false;
  }
  return t;
}

// One axis, nearest: element copies of any type.
void gatherAxis(const uint8_t* src, uint8_t* dst, size_t es, int64_t outer, int64_t in, int64_t out, int64_t inner,
                const AxisTaps& t, const uint8_t* extrapolation) {
  const size_t row = static_cast<size_t>(inner) * es;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < out; ++j) {
      uint8_t* d = dst + static_cast<size_t>(o * out + j) * row;
      if (t.outside[static_cast<size_t>(j)]) {
        for (int64_t i = 0; i < inner; ++i) std::memcpy(d + static_cast<size_t>(i) * es, extrapolation, es);
        continue;
      }
      std::memcpy(d, src + static_cast<size_t>(o * in + t.index[static_cast<size_t>(j)]) * row, row);
    }
}

// One axis, linear or cubic: weighted sums of taps.
template <typename T>
void interpolateAxis(const T* src, T* dst, int64_t outer, int64_t in, int64_t out, int64_t inner, const AxisTaps& t,
                     T extrapolation) {
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < out; ++j) {
      T* d = dst + (o * out + j) * inner;
      if (t.outside[static_cast<size_t>(j)]) {
        std::fill(d, d + inner, extrapolation);
        continue;
      }
      const int64_t* idx = &t.index[static_cast<size_t>(j * t.taps)];
      const double* w = &t.weight[static_cast<size_t>(j * t.taps)];
      for (int64_t i = 0; i < inner; ++i) {
        double acc = 0;
        for (int k = 0; k < t.taps; ++k) acc += w[k] * static_cast<double>(src[(o * in + idx[k]) * inner + i]);
        d[i] = static_cast<T>(acc);
      }
    }
}

// Output shape, per-axis scales and roi from the node's inputs.
struct ResizeGeometry {
  Shape out;
  std::vector<double> scale, length, roiStart, roiEnd;
};

Expected<ResizeGeometry> resizeGeometry(const ResizeAttrs& a, const Tensor& x, const std::vector<const Tensor*>& in) {
  const size_t r = x.shape.size();
  auto input = [&](int i) -> const Tensor* {
    return i >= 0 && static_cast<size_t>(i) < in.size() && in[static_cast<size_t>(i)] && in[static_cast<size_t>(i)]->size() > 0
               ? in[static_cast<size_t>(i)] : nullptr;
  };
  ResizeGeometry g;
  g.roiStart.assign(r, 0.0);
  g.roiEnd.assign(r, 1.0);
  if (const Tensor* roi = input(a.roiInput); roi && a.coord == Coord::TfCropAndResize) {
    auto v = roi->toF64();
    if (v.size() != 2 * r) return makeError("roi has {} values for rank {}", v.size(), r);
    for (size_t d = 0; d < r; ++d) { g.roiStart[d] = v[d]; g.roiEnd[d] = v[d + r]; }
  }
  const Tensor* sizes = input(a.sizesInput);
  const Tensor* scales = input(a.scalesInput);
  if (sizes && scales) return makeError("both scales and sizes are given");
  if (!sizes && !scales) return makeError("neither scales nor sizes is given");
  if (sizes) {
    g.out = sizes->toI64();
    if (g.out.size() != r) return makeError("sizes has {} values for rank {}", g.out.size(), r);
    for (size_t d = 0; d < r; ++d) {
      if (g.out[d] < 0) return makeError("sizes {} has a negative size", shapeString(g.out));
      g.scale.push_back(x.shape[d] ? static_cast<double>(g.out[d]) / static_cast<double>(x.shape[d]) : 1.0);
      g.length.push_back(static_cast<double>(g.out[d]));
    }
  } else {
    auto s = scales->toF32();
    if (s.size() != r) return makeError("scales has {} values for rank {}", s.size(), r);
    for (size_t d = 0; d < r; ++d) {
      if (!(s[d] > 0)) return makeError("scale {} is not positive", s[d]);
      g.scale.push_back(s[d]);
      g.length.push_back(static_cast<double>(x.shape[d]) * static_cast<double>(s[d]));
      g.out.push_back(static_cast<int64_t>(std::floor(static_cast<double>(x.shape[d]) * static_cast<double>(s[d]))));
    }
  }
  return g;
}

Status runResize(const ResizeAttrs& a, ExecContext& ctx, const std::vector<const Tensor*>& in) {
  const Tensor& x = *in[0];
  ZP_ASSIGN_OR_RETURN(ResizeGeometry g, resizeGeometry(a, x, in));
  if (a.mode != Mode::Nearest && x.dtype != DType::F32 && x.dtype != DType::F64)
    return makeError("{} interpolation of {} is not supported", a.mode == Mode::Linear ? "linear" : "cubic",
                     dtypeName(x.dtype));
  const size_t es = dtypeSize(x.dtype), r = x.shape.size();
  Tensor cur = x;  // a view; replaced by each pass's result
  Shape shape = x.shape;
  std::vector<uint8_t> extra(es, 0);
  visitDType(x.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (kIsArithmetic<T>) { T v = static_cast<T>(a.extrapolation); std::memcpy(extra.data(), &v, es); }
  });
  std::vector<size_t> passes;
  std::vector<AxisTaps> taps(r);
  for (size_t d = 0; d < r; ++d) {
    taps[d] = axisTaps(a, x.shape[d], g.out[d], g.length[d], g.scale[d], g.roiStart[d], g.roiEnd[d]);
    if (!taps[d].identity) passes.push_back(d);
  }
  Tensor& y = ctx.alloc(0, x.dtype, g.out);
  if (passes.empty()) {
    std::memcpy(y.data, x.data, x.bytes());
    return {};
  }
  for (size_t p = 0; p < passes.size(); ++p) {
    const size_t d = passes[p];
    int64_t outer = 1, inner = 1;
    for (size_t k = 0; k < d; ++k) outer *= shape[k];
    for (size_t k = d + 1; k < r; ++k) inner *= shape[k];
    Shape next = shape;
    next[d] = g.out[d];
    Tensor dst = p + 1 == passes.size() ? y : Tensor::empty(x.dtype, next);
    if (a.mode == Mode::Nearest) {
      gatherAxis(cur.ptr<uint8_t>(), dst.ptr<uint8_t>(), es, outer, shape[d], next[d], inner, taps[d], extra.data());
    } else if (x.dtype == DType::F32) {
      interpolateAxis(cur.ptr<float>(), dst.ptr<float>(), outer, shape[d], next[d], inner, taps[d],
                      static_cast<float>(a.extrapolation));
    } else {
      interpolateAxis(cur.ptr<double>(), dst.ptr<double>(), outer, shape[d], next[d], inner, taps[d], a.extrapolation);
    }
    cur = dst;
    shape = next;
  }
  return {};
}

}  // namespace

Expected<std::unique_ptr<Op>> makeResize(const BuildContext& bc) {
  const auto& n = *bc.node;
  ResizeAttrs a;
  ZP_ASSIGN_OR_RETURN(a.mode, parseMode(attrString(n, "mode", "nearest")));
  if (bc.opset < 11) {
    a.coord = Coord::Asymmetric;
    a.nearest = Nearest::Simple;
    a.scalesInput = 1;
    a.sizesInput = a.roiInput = -1;
    if (a.mode == Mode::Cubic) return makeError("cubic mode needs opset 11");
  } else {
    ZP_ASSIGN_OR_RETURN(a.coord, parseCoord(attrString(n, "coordinate_transformation_mode", "half_pixel")));
    ZP_ASSIGN_OR_RETURN(a.nearest, parseNearest(attrString(n, "nearest_mode", "round_prefer_floor")));
  }
  for (const char* unsupported : {"antialias", "axes", "keep_aspect_ratio_policy"})
    if (findAttr(n, unsupported)) return makeError("attribute '{}' is not supported", unsupported);
  a.cubicA = attrFloat(n, "cubic_coeff_a", -0.75f);
  a.excludeOutside = attrInt(n, "exclude_outside", 0) != 0;
  a.extrapolation = attrFloat(n, "extrapolation_value", 0.0f);
  return fnOp([a](ExecContext& ctx, const std::vector<const Tensor*>& in) { return runResize(a, ctx, in); });
}

// Upsample (deprecated in opset 10): Resize-10 with scales as an attribute (opset 7)
// or an input (opset 9).
Expected<std::unique_ptr<Op>> makeUpsample(const BuildContext& bc) {
  const auto& n = *bc.node;
  ResizeAttrs a;
  ZP_ASSIGN_OR_RETURN(a.mode, parseMode(attrString(n, "mode", "nearest")));
  if (a.mode == Mode::Cubic) return makeError("mode 'cubic' is not an Upsample mode");
  a.coord = Coord::Asymmetric;
  a.nearest = Nearest::Simple;
  a.sizesInput = a.roiInput = -1;
  a.scalesInput = 1;
  if (const auto* s = findAttr(n, "scales")) {
    Tensor scales = Tensor::fromFloats(std::vector<float>(s->floats().begin(), s->floats().end()), {s->floats_size()});
    return fnOp([a, scales](ExecContext& ctx, const std::vector<const Tensor*>& in) {
      return runResize(a, ctx, {in[0], &scales});
    });
  }
  return fnOp([a](ExecContext& ctx, const std::vector<const Tensor*>& in) { return runResize(a, ctx, in); });
}

}  // namespace zp::runtime::detail
