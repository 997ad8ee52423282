// Elementwise, shape, data-movement, reduction and quantization ops.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "libplan/graph/tensor.h"
#include "libplan/runtime/ops_internal.h"

namespace zp::runtime {
namespace detail {

int64_t normAxis(int64_t axis, int64_t rank) { return axis < 0 ? axis + rank : axis; }

std::string nodeLabel(const onnx::NodeProto& n) { return fmt::format("node '{}' ({})", n.name(), n.op_type()); }

Expected<Shape> broadcastShapes(const std::vector<Shape>& shapes) {
  size_t r = 0;
  for (const auto& s : shapes) r = std::max(r, s.size());
  Shape out(r, 1);
  for (const auto& s : shapes)
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t& o = out[r - s.size() + i];
      int64_t d = s[i];
      if (d == o || d == 1) continue;
      if (o == 1) { o = d; continue; }
      std::string all;
      for (const auto& t : shapes) all += shapeString(t) + " ";
      return makeError("shapes {}cannot be broadcast", all);
    }
  return out;
}

Broadcast makeBroadcast(const Shape& out, const std::vector<Shape>& ins) {
  Broadcast b;
  b.out = out;
  const size_t r = out.size(), n = ins.size();
  std::vector<std::vector<int64_t>> full(n, std::vector<int64_t>(r, 0));
  for (size_t i = 0; i < n; ++i) {
    int64_t st = 1;
    for (size_t d = r; d-- > 0;) {
      size_t off = r - ins[i].size();
      int64_t dim = d >= off ? ins[i][d - off] : 1;
      full[i][d] = (dim == 1) ? 0 : st;
      st *= dim;
    }
  }
  b.strides.assign(n, {});
  for (size_t d = 0; d < r; ++d) {
    if (out[d] == 1) continue;
    if (!b.dims.empty()) {
      bool merge = true;
      for (size_t i = 0; i < n; ++i)
        if (b.strides[i].back() != full[i][d] * out[d]) { merge = false; break; }
      if (merge) {
        b.dims.back() *= out[d];
        for (size_t i = 0; i < n; ++i) b.strides[i].back() = full[i][d];
        continue;
      }
    }
    b.dims.push_back(out[d]);
    for (size_t i = 0; i < n; ++i) b.strides[i].push_back(full[i][d]);
  }
  return b;
}

namespace {

template <typename T, typename R, typename F>
void binaryLoop(const Broadcast& bc, const T* a, const T* b, R* out, F f) {
  forEachRow(bc, [&](int64_t o, const int64_t* offs, int64_t len, const int64_t* s) {
    const T* pa = a + offs[0];
    const T* pb = b + offs[1];
    R* po = out + o;
    if (s[0] == 1 && s[1] == 1) {
      for (int64_t i = 0; i < len; ++i) po[i] = f(pa[i], pb[i]);
    } else if (s[0] == 1 && s[1] == 0) {
      const T bv = *pb;
      for (int64_t i = 0; i < len; ++i) po[i] = f(pa[i], bv);
    } else if (s[0] == 0 && s[1] == 1) {
      const T av = *pa;
      for (int64_t i = 0; i < len; ++i) po[i] = f(av, pb[i]);
    } else {
      for (int64_t i = 0; i < len; ++i) po[i] = f(pa[i * s[0]], pb[i * s[1]]);
    }
  });
}

enum class Bin { Add, Sub, Mul, Div, Pow, Max, Min, Equal, Less, Greater, LessOrEqual, GreaterOrEqual, And, Or, Mod };

template <typename T>
Status arith(Bin op, const Broadcast& bc, const T* a, const T* b, T* o) {
  switch (op) {
    case Bin::Add: binaryLoop(bc, a, b, o, [](T x, T y) { return x + y; }); break;
    case Bin::Sub: binaryLoop(bc, a, b, o, [](T x, T y) { return x - y; }); break;
    case Bin::Mul: binaryLoop(bc, a, b, o, [](T x, T y) { return x * y; }); break;
    case Bin::Div:
      if constexpr (std::is_integral_v<T>) binaryLoop(bc, a, b, o, [](T x, T y) { return y == 0 ? T(0) : T(x / y); });
      else binaryLoop(bc, a, b, o, [](T x, T y) { return x / y; });
      break;
    case Bin::Mod:
      if constexpr (std::is_integral_v<T>)
        binaryLoop(bc, a, b, o, [](T x, T y) { if (y == 0) return T(0); T m = x % y; return (m != 0 && ((m < 0) != (y < 0))) ? T(m + y) : m; });
      else binaryLoop(bc, a, b, o, [](T x, T y) { return std::fmod(x, y); });
      break;
    case Bin::Pow:
      binaryLoop(bc, a, b, o, [](T x, T y) {
        if constexpr (std::is_floating_point_v<T>) { if (y == T(2)) return x * x; if (y == T(0.5)) return std::sqrt(x); }
        return static_cast<T>(std::pow(static_cast<double>(x), static_cast<double>(y)));
      });
      break;
    case Bin::Max: binaryLoop(bc, a, b, o, [](T x, T y) { return x > y ? x : y; }); break;
    case Bin::Min: binaryLoop(bc, a, b, o, [](T x, T y) { return x < y ? x : y; }); break;
    default: return makeError("not an arithmetic op");
  }
  return {};
}

template <typename T>
void compare(Bin op, const Broadcast& bc, const T* a, const T* b, uint8_t* o) {
  switch (op) {
    case Bin::Equal: binaryLoop(bc, a, b, o, [](T x, T y) -> uint8_t { return x == y; }); break;
    case Bin::Less: binaryLoop(bc, a, b, o, [](T x, T y) -> uint8_t { return x < y; }); break;
    case Bin::Greater: binaryLoop(bc, a, b, o, [](T x, T y) -> uint8_t { return x > y; }); break;
    case Bin::LessOrEqual: binaryLoop(bc, a, b, o, [](T x, T y) -> uint8_t { return x <= y; }); break;
    case Bin::GreaterOrEqual: binaryLoop(bc, a, b, o, [](T x, T y) -> uint8_t { return x >= y; }); break;
    case Bin::And: binaryLoop(bc, a, b, o, [](T x, T y) -> uint8_t { return x && y; }); break;
    case Bin::Or: binaryLoop(bc, a, b, o, [](T x, T y) -> uint8_t { return x || y; }); break;
    default: break;
  }
}

Factory binaryFactory(Bin op) {
  return [op](const BuildContext& bc) -> Expected<std::unique_ptr<Op>> {
    return fnOp([op](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
      const Tensor& a = *in[0];
      const Tensor& b = *in[1];
      if (a.dtype != b.dtype)
        return makeError("operand types differ ({} vs {})", dtypeName(a.dtype), dtypeName(b.dtype));
      ZP_ASSIGN_OR_RETURN(Shape out, broadcastShapes({a.shape, b.shape}));
      Broadcast br = makeBroadcast(out, {a.shape, b.shape});
      const bool cmp = op >= Bin::Equal && op <= Bin::Or;
      Tensor& o = ctx.alloc(0, cmp ? DType::Bool : a.dtype, out);
      if (cmp) {
        switch (a.dtype) {
          case DType::F32: compare(op, br, a.ptr<float>(), b.ptr<float>(), o.ptr<uint8_t>()); break;
          case DType::I64: compare(op, br, a.ptr<int64_t>(), b.ptr<int64_t>(), o.ptr<uint8_t>()); break;
          case DType::I32: compare(op, br, a.ptr<int32_t>(), b.ptr<int32_t>(), o.ptr<uint8_t>()); break;
          case DType::Bool: case DType::U8: compare(op, br, a.ptr<uint8_t>(), b.ptr<uint8_t>(), o.ptr<uint8_t>()); break;
          case DType::I8: compare(op, br, a.ptr<int8_t>(), b.ptr<int8_t>(), o.ptr<uint8_t>()); break;
        }
        return {};
      }
      switch (a.dtype) {
        case DType::F32: return arith(op, br, a.ptr<float>(), b.ptr<float>(), o.ptr<float>());
        case DType::I64: return arith(op, br, a.ptr<int64_t>(), b.ptr<int64_t>(), o.ptr<int64_t>());
        case DType::I32: return arith(op, br, a.ptr<int32_t>(), b.ptr<int32_t>(), o.ptr<int32_t>());
        default: return makeError("arithmetic on {} is not supported", dtypeName(a.dtype));
      }
    });
  };
}

// Variadic Sum/Max/Min/Mean folded pairwise.
Factory variadicFactory(Bin op, bool mean) {
  return [op, mean](const BuildContext&) -> Expected<std::unique_ptr<Op>> {
    return fnOp([op, mean](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
      std::vector<Shape> shapes;
      for (auto* t : in) {
        if (t->dtype != DType::F32) return makeError("only float32 operands are supported");
        shapes.push_back(t->shape);
      }
      ZP_ASSIGN_OR_RETURN(Shape out, broadcastShapes(shapes));
      Tensor& o = ctx.alloc(0, DType::F32, out);
      Broadcast b0 = makeBroadcast(out, {in[0]->shape});
      float* po = o.ptr<float>();
      forEachRow(b0, [&](int64_t oo, const int64_t* offs, int64_t len, const int64_t* s) {
        for (int64_t i = 0; i < len; ++i) po[oo + i] = in[0]->ptr<float>()[offs[0] + i * s[0]];
      });
      for (size_t k = 1; k < in.size(); ++k) {
        Broadcast br = makeBroadcast(out, {out, in[k]->shape});
        ZP_TRY(arith(op, br, po, in[k]->ptr<float>(), po));
      }
      if (mean) {
        const float inv = 1.0f / static_cast<float>(in.size());
        for (int64_t i = 0; i < o.size(); ++i) po[i] *= inv;
      }
      return {};
    });
  };
}

template <typename F>
Factory unaryFloat(F f) {
  return [f](const BuildContext&) -> Expected<std::unique_ptr<Op>> {
    return fnOp([f](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
      const Tensor& x = *in[0];
      if (x.dtype != DType::F32) return makeError("input must be float32, got {}", dtypeName(x.dtype));
      Tensor& y = ctx.alloc(0, DType::F32, x.shape);
      const float* px = x.ptr<float>();
      float* py = y.ptr<float>();
      const int64_t n = x.size();
#pragma omp parallel for num_threads(ctx.threads) if (ctx.threads > 1 && n > 65536) schedule(static)
      for (int64_t i = 0; i < n; ++i) py[i] = f(px[i]);
      return {};
    });
  };
}

Factory unaryNumeric(float (*ff)(float), int64_t (*fi)(int64_t)) {
  return [ff, fi](const BuildContext&) -> Expected<std::unique_ptr<Op>> {
    return fnOp([ff, fi](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
      const Tensor& x = *in[0];
      Tensor& y = ctx.alloc(0, x.dtype, x.shape);
      if (x.dtype == DType::F32) {
        for (int64_t i = 0; i < x.size(); ++i) y.ptr<float>()[i] = ff(x.ptr<float>()[i]);
      } else if (x.dtype == DType::I64) {
        for (int64_t i = 0; i < x.size(); ++i) y.ptr<int64_t>()[i] = fi(x.ptr<int64_t>()[i]);
      } else {
        return makeError("input type {} is not supported", dtypeName(x.dtype));
      }
      return {};
    });
  };
}

// Copies a tensor with a new shape into a fresh output (used when aliasing is not possible).
Status viewOrCopy(ExecContext& ctx, const Tensor& x, Shape shape) {
  if (numel(shape) != x.size())
    return makeError("cannot reshape {} ({} elements) to {}", shapeString(x.shape), x.size(), shapeString(shape));
  ctx.alias(0, x, std::move(shape));
  return {};
}

std::vector<int64_t> axesFrom(const BuildContext& bc, const std::vector<const Tensor*>& in, size_t inputIndex) {
  if (bc.opset >= 13 || findAttr(*bc.node, "axes") == nullptr) {
    if (in.size() > inputIndex && in[inputIndex]) return in[inputIndex]->toI64();
    return {};
  }
  return attrInts(*bc.node, "axes");
}

template <typename T>
void castLoop(const Tensor& x, Tensor& y) {
  T* out = y.ptr<T>();
  const int64_t n = x.size();
  switch (x.dtype) {
    case DType::F32:
      for (int64_t i = 0; i < n; ++i) {
        float v = x.ptr<float>()[i];
        if constexpr (std::is_integral_v<T>) out[i] = std::isfinite(v) ? static_cast<T>(v) : T(0);
        else out[i] = static_cast<T>(v);
      }
      break;
    case DType::I64: for (int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(x.ptr<int64_t>()[i]); break;
    case DType::I32: for (int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(x.ptr<int32_t>()[i]); break;
    case DType::I8: for (int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(x.ptr<int8_t>()[i]); break;
    case DType::U8: case DType::Bool: for (int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(x.ptr<uint8_t>()[i]); break;
  }
}

// Generic strided copy: out[i] = in[sum idx_d * inStride_d], used by Transpose/Slice/Expand.
void stridedCopy(const uint8_t* src, uint8_t* dst, size_t esize, const Shape& outShape,
                 const std::vector<int64_t>& inStrides, int64_t base) {
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

float roundHalfEven(float v) { return std::nearbyint(v); }

}  // namespace

void registerBasicOps(std::map<std::string, Factory>& r) {
  r["Add"] = binaryFactory(Bin::Add);
  r["Sub"] = binaryFactory(Bin::Sub);
  r["Mul"] = binaryFactory(Bin::Mul);
  r["Div"] = binaryFactory(Bin::Div);
  r["Pow"] = binaryFactory(Bin::Pow);
  r["Mod"] = binaryFactory(Bin::Mod);
  r["Equal"] = binaryFactory(Bin::Equal);
  r["Less"] = binaryFactory(Bin::Less);
  r["Greater"] = binaryFactory(Bin::Greater);
  r["LessOrEqual"] = binaryFactory(Bin::LessOrEqual);
  r["GreaterOrEqual"] = binaryFactory(Bin::GreaterOrEqual);
  r["And"] = binaryFactory(Bin::And);
  r["Or"] = binaryFactory(Bin::Or);
  r["Max"] = variadicFactory(Bin::Max, false);
  r["Min"] = variadicFactory(Bin::Min, false);
  r["Sum"] = variadicFactory(Bin::Add, false);
  r["Mean"] = variadicFactory(Bin::Add, true);

  r["Relu"] = unaryFloat([](float v) { return v > 0 ? v : 0.0f; });
  r["Sigmoid"] = unaryFloat([](float v) { return 1.0f / (1.0f + std::exp(-v)); });
  r["Tanh"] = unaryFloat([](float v) { return std::tanh(v); });
  r["Erf"] = unaryFloat([](float v) { return std::erf(v); });
  r["Sqrt"] = unaryFloat([](float v) { return std::sqrt(v); });
  r["Exp"] = unaryFloat([](float v) { return std::exp(v); });
  r["Log"] = unaryFloat([](float v) { return std::log(v); });
  r["Reciprocal"] = unaryFloat([](float v) { return 1.0f / v; });
  r["Floor"] = unaryFloat([](float v) { return std::floor(v); });
  r["Ceil"] = unaryFloat([](float v) { return std::ceil(v); });
  r["Round"] = unaryFloat([](float v) { return std::nearbyint(v); });
  r["Softplus"] = unaryFloat([](float v) { return v > 20 ? v : std::log1p(std::exp(v)); });
  r["Neg"] = unaryNumeric([](float v) { return -v; }, [](int64_t v) { return -v; });
  r["Abs"] = unaryNumeric([](float v) { return std::fabs(v); }, [](int64_t v) { return v < 0 ? -v : v; });
  r["HardSwish"] = unaryFloat([](float v) { return v * std::min(std::max(v / 6.0f + 0.5f, 0.0f), 1.0f); });
  r["HardSigmoid"] = [](const BuildContext& bc) -> Expected<std::unique_ptr<Op>> {
    float alpha = attrFloat(*bc.node, "alpha", 0.2f), beta = attrFloat(*bc.node, "beta", 0.5f);
    return unaryFloat([alpha, beta](float v) { return std::min(std::max(alpha * v + beta, 0.0f), 1.0f); })(bc);
  };
  r["LeakyRelu"] = [](const BuildContext& bc) -> Expected<std::unique_ptr<Op>> {
    float alpha = attrFloat(*bc.node, "alpha", 0.01f);
    return unaryFloat([alpha](float v) { return v >= 0 ? v : alpha * v; })(bc);
  };
  r["Elu"] = [](const BuildContext& bc) -> Expected<std::unique_ptr<Op>> {
    float alpha = attrFloat(*bc.node, "alpha", 1.0f);
    return unaryFloat([alpha](float v) { return v >= 0 ? v : alpha * (std::exp(v) - 1.0f); })(bc);
  };
  r["Clip"] = [](const BuildContext& bc) -> Expected<std::unique_ptr<Op>> {
    const int opset = bc.opset;
    const float amin = attrFloat(*bc.node, "min", -INFINITY), amax = attrFloat(*bc.node, "max", INFINITY);
    return fnOp([opset, amin, amax](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
      float lo = amin, hi = amax;
      if (opset >= 11) {
        lo = (in.size() > 1 && in[1]) ? in[1]->toF32()[0] : -INFINITY;
        hi = (in.size() > 2 && in[2]) ? in[2]->toF32()[0] : INFINITY;
      }
      const Tensor& x = *in[0];
      if (x.dtype != DType::F32) return makeError("input must be float32");
      Tensor& y = ctx.alloc(0, DType::F32, x.shape);
      for (int64_t i = 0; i < x.size(); ++i) y.ptr<float>()[i] = std::min(std::max(x.ptr<float>()[i], lo), hi);
      return {};
    });
  };
  r["Not"] = [](const BuildContext&) -> Expected<std::unique_ptr<Op>> {
    return fnOp([](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
      Tensor& y = ctx.alloc(0, DType::Bool, in[0]->shape);
      for (int64_t i = 0; i < y.size(); ++i) y.ptr<uint8_t>()[i] = !in[0]->ptr<uint8_t>()[i];
      return {};
    });
  };

  auto identity = [](const BuildContext&) -> Expected<std::unique_ptr<Op>> {
    return fnOp([](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
      return viewOrCopy(ctx, *in[0], in[0]->shape);
    }, true);
  };
  r["Identity"] = identity;
  // Dropout at inference is the identity; its optional mask output is not supported.
  r["Dropout"] = [identity](const BuildContext& bc) -> Expected<std::unique_ptr<Op>> {
    if (bc.node->output_size() > 1 && !bc.node->output(1).empty())
      return makeError("Dropout's mask output is not supported");
    return identity(bc);
  };

  r["Cast"] = [](const BuildContext& bc) -> Expected<std::unique_ptr<Op>> {
    ZP_ASSIGN_OR_RETURN(DType to, dtypeFromOnnx(static_cast<int32_t>(attrInt(*bc.node, "to", 1))));
    return fnOp([to](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
      const Tensor& x = *in[0];
      Tensor& y = ctx.alloc(0, to, x.shape);
      switch (to) {
        case DType::F32: castLoop<float>(x, y); break;
        case DType::I64: castLoop<int64_t>(x, y); break;
        case DType::I32: castLoop<int32_t>(x, y); break;
        case DType::I8: castLoop<int8_t>(x, y); break;
        case DType::U8: castLoop<uint8_t>(x, y); break;
        case DType::Bool: {
          std::vector<float> v = x.toF32();
          for (int64_t i = 0; i < x.size(); ++i) y.ptr<uint8_t>()[i] = v[static_cast<size_t>(i)] != 0;
          break;
        }
      }
      return {};
    });
  };

  r["Constant"] = [](const BuildContext& bc) -> Expected<std::unique_ptr<Op>> {
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
  };

  r["ConstantOfShape"] = [](const BuildContext& bc) -> Expected<std::unique_ptr<Op>> {
    Tensor value = Tensor::fromFloats({0.0f}, {1});
    if (const auto* a = findAttr(*bc.node, "value")) { ZP_ASSIGN_OR_RETURN(value, tensorFromProto(a->t())); }
    return fnOp([value](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
      Shape s = in[0]->toI64();
      Tensor& y = ctx.alloc(0, value.dtype, s);
      const size_t es = dtypeSize(value.dtype);
      for (int64_t i = 0; i < y.size(); ++i) std::memcpy(y.ptr<uint8_t>() + i * static_cast<int64_t>(es), value.data, es);
      return {};
    });
  };

  r["Shape"] = [](const BuildContext& bc) -> Expected<std::unique_ptr<Op>> {
    int64_t start = attrInt(*bc.node, "start", 0), end = attrInt(*bc.node, "end", INT64_MAX);
    return fnOp([start, end](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
      const int64_t r = in[0]->rank();
      int64_t s = std::clamp(start < 0 ? start + r : start, int64_t{0}, r);
      int64_t e = std::clamp(end < 0 ? end + r : end, int64_t{0}, r);
      e = std::max(e, s);
      Tensor& y = ctx.alloc(0, DType::I64, {e - s});
      for (int64_t i = s; i < e; ++i) y.ptr<int64_t>()[i - s] = in[0]->shape[static_cast<size_t>(i)];
      return {};
    });
  };
  r["Size"] = [](const BuildContext&) -> Expected<std::unique_ptr<Op>> {
    return fnOp([](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
      ctx.alloc(0, DType::I64, {}).ptr<int64_t>()[0] = in[0]->size();
      return {};
    });
  };

  r["Reshape"] = [](const BuildContext& bc) -> Expected<std::unique_ptr<Op>> {
    const bool allowzero = attrInt(*bc.node, "allowzero", 0) != 0;
    return fnOp([allowzero](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
      const Tensor& x = *in[0];
      Shape s = in[1]->toI64();
      int64_t known = 1, infer = -1;
      for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] == 0 && !allowzero) {
          if (i >= x.shape.size()) return makeError("shape {} copies a dimension the input lacks", shapeString(s));
          s[i] = x.shape[i];
        }
        if (s[i] == -1) {
          if (infer >= 0) return makeError("shape {} has two -1 dimensions", shapeString(s));
          infer = static_cast<int64_t>(i);
        } else {
          known *= s[i];
        }
      }
      if (infer >= 0) {
        if (known == 0 || x.size() % known != 0)
          return makeError("cannot reshape {} to {}", shapeString(x.shape), shapeString(s));
        s[static_cast<size_t>(infer)] = x.size() / known;
      }
      return viewOrCopy(ctx, x, s);
    }, true);
  };

  r["Flatten"] = [](const BuildContext& bc) -> Expected<std::unique_ptr<Op>> {
    const int64_t axis = attrInt(*bc.node, "axis", 1);
    return fnOp([axis](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
      const Tensor& x = *in[0];
      const int64_t a = normAxis(axis, x.rank());
      int64_t outer = 1;
      for (int64_t i = 0; i < a; ++i) outer *= x.shape[static_cast<size_t>(i)];
      return viewOrCopy(ctx, x, {outer, outer == 0 ? 0 : x.size() / outer});
    }, true);
  };

  r["Squeeze"] = [](const BuildContext& bc) -> Expected<std::unique_ptr<Op>> {
    BuildContext copy = bc;
    return fnOp([copy](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
      const Tensor& x = *in[0];
      std::vector<int64_t> axes = axesFrom(copy, in, 1);
      std::vector<bool> drop(x.shape.size(), false);
      if (axes.empty()) {
        for (size_t i = 0; i < x.shape.size(); ++i) drop[i] = x.shape[i] == 1;
      } else {
        for (auto a : axes) {
          a = normAxis(a, x.rank());
          if (a < 0 || a >= x.rank() || x.shape[static_cast<size_t>(a)] != 1)
            return makeError("cannot squeeze axis {} of {}", a, shapeString(x.shape));
          drop[static_cast<size_t>(a)] = true;
        }
      }
      Shape s;
      for (size_t i = 0; i < x.shape.size(); ++i)
        if (!drop[i]) s.push_back(x.shape[i]);
      return viewOrCopy(ctx, x, s);
    }, true);
  };

  r["Unsqueeze"] = [](const BuildContext& bc) -> Expected<std::unique_ptr<Op>> {
    BuildContext copy = bc;
    return fnOp([copy](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
      const Tensor& x = *in[0];
      std::vector<int64_t> axes = axesFrom(copy, in, 1);
      const int64_t outRank = x.rank() + static_cast<int64_t>(axes.size());
      std::vector<bool> ins(static_cast<size_t>(outRank), false);
      for (auto a : axes) {
        a = normAxis(a, outRank);
        if (a < 0 || a >= outRank || ins[static_cast<size_t>(a)]) return makeError("bad unsqueeze axis {}", a);
        ins[static_cast<size_t>(a)] = true;
      }
      Shape s;
      size_t j = 0;
      for (int64_t i = 0; i < outRank; ++i) s.push_back(ins[static_cast<size_t>(i)] ? 1 : x.shape[j++]);
      return viewOrCopy(ctx, x, s);
    }, true);
  };

  r["Transpose"] = [](const BuildContext& bc) -> Expected<std::unique_ptr<Op>> {
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
      stridedCopy(x.ptr<uint8_t>(), y.ptr<uint8_t>(), dtypeSize(x.dtype), s, ist, 0);
      return {};
    });
  };

  r["Concat"] = [](const BuildContext& bc) -> Expected<std::unique_ptr<Op>> {
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
      const size_t es = dtypeSize(f.dtype);
      const int64_t rowOut = s[static_cast<size_t>(a)] * inner;
      int64_t pos = 0;
      for (auto* t : in) {
        const int64_t row = t->shape[static_cast<size_t>(a)] * inner;
        for (int64_t o = 0; o < outer; ++o)
          std::memcpy(y.ptr<uint8_t>() + (o * rowOut + pos) * static_cast<int64_t>(es),
                      t->ptr<uint8_t>() + o * row * static_cast<int64_t>(es), static_cast<size_t>(row) * es);
        pos += row;
      }
      return {};
    });
  };

  r["Split"] = [](const BuildContext& bc) -> Expected<std::unique_ptr<Op>> {
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
  };

  r["Slice"] = [](const BuildContext& bc) -> Expected<std::unique_ptr<Op>> {
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
  };

  r["Gather"] = [](const BuildContext& bc) -> Expected<std::unique_ptr<Op>> {
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
  };

  r["Expand"] = [](const BuildContext&) -> Expected<std::unique_ptr<Op>> {
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
  };

  r["Tile"] = [](const BuildContext&) -> Expected<std::unique_ptr<Op>> {
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
  };

  r["Where"] = [](const BuildContext&) -> Expected<std::unique_ptr<Op>> {
    return fnOp([](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
      const Tensor &c = *in[0], &a = *in[1], &b = *in[2];
      if (a.dtype != b.dtype) return makeError("Where branches differ in type");
      ZP_ASSIGN_OR_RETURN(Shape s, broadcastShapes({c.shape, a.shape, b.shape}));
      Tensor& y = ctx.alloc(0, a.dtype, s);
      Broadcast br = makeBroadcast(s, {c.shape, a.shape, b.shape});
      const size_t es = dtypeSize(a.dtype);
      const uint8_t* pc = c.ptr<uint8_t>();
      forEachRow(br, [&](int64_t o, const int64_t* offs, int64_t len, const int64_t* st) {
        for (int64_t i = 0; i < len; ++i) {
          const bool take = pc[offs[0] + i * st[0]] != 0;
          const uint8_t* src = take ? a.ptr<uint8_t>() + (offs[1] + i * st[1]) * static_cast<int64_t>(es)
                                    : b.ptr<uint8_t>() + (offs[2] + i * st[2]) * static_cast<int64_t>(es);
          std::memcpy(y.ptr<uint8_t>() + (o + i) * static_cast<int64_t>(es), src, es);
        }
      });
      return {};
    });
  };

  r["Range"] = [](const BuildContext&) -> Expected<std::unique_ptr<Op>> {
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
  };

  r["Pad"] = [](const BuildContext& bc) -> Expected<std::unique_ptr<Op>> {
    std::string mode = attrString(*bc.node, "mode", "constant");
    if (mode != "constant") return makeError("Pad mode '{}' is not supported", mode);
    const int opset = bc.opset;
    std::vector<int64_t> aPads = attrInts(*bc.node, "pads");
    float aValue = attrFloat(*bc.node, "value", 0.0f);
    return fnOp([=](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
      const Tensor& x = *in[0];
      if (x.dtype != DType::F32) return makeError("Pad supports float32 only");
      std::vector<int64_t> pads = opset >= 11 ? in[1]->toI64() : aPads;
      float value = aValue;
      if (opset >= 11 && in.size() > 2 && in[2] && in[2]->size() > 0) value = in[2]->toF32()[0];
      const int64_t r = x.rank();
      if (static_cast<int64_t>(pads.size()) != 2 * r) return makeError("pads has {} entries for rank {}", pads.size(), r);
      Shape s = x.shape;
      for (int64_t d = 0; d < r; ++d) s[static_cast<size_t>(d)] += pads[static_cast<size_t>(d)] + pads[static_cast<size_t>(d + r)];
      Tensor& y = ctx.alloc(0, DType::F32, s);
      auto ost = contiguousStrides(s), ist = contiguousStrides(x.shape);
      for (int64_t o = 0; o < y.size(); ++o) {
        int64_t rem = o, off = 0;
        bool inside = true;
        for (int64_t d = r; d-- > 0;) {
          int64_t i = rem % s[static_cast<size_t>(d)] - pads[static_cast<size_t>(d)];
          rem /= s[static_cast<size_t>(d)];
          if (i < 0 || i >= x.shape[static_cast<size_t>(d)]) { inside = false; break; }
          off += i * ist[static_cast<size_t>(d)];
        }
        y.ptr<float>()[o] = inside ? x.ptr<float>()[off] : value;
      }
      (void)ost;
      return {};
    });
  };

  // Reductions over an axis set (attribute before opset 18, input for ReduceSum >= 13).
  auto reduceFactory = [](int kind) -> Factory {
    return [kind](const BuildContext& bc) -> Expected<std::unique_ptr<Op>> {
      const bool keep = attrInt(*bc.node, "keepdims", 1) != 0;
      const bool noopEmpty = attrInt(*bc.node, "noop_with_empty_axes", 0) != 0;
      const bool axesInput = (bc.node->op_type() == "ReduceSum" && bc.opset >= 13) || bc.opset >= 18;
      std::vector<int64_t> aAxes = attrInts(*bc.node, "axes");
      return fnOp([=](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
        const Tensor& x = *in[0];
        if (x.dtype != DType::F32) return makeError("reductions support float32 only");
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
        Shape s;
        for (int64_t d = 0; d < r; ++d) {
          if (!red[static_cast<size_t>(d)]) s.push_back(x.shape[static_cast<size_t>(d)]);
          else if (keep) s.push_back(1);
        }
        Tensor& y = ctx.alloc(0, DType::F32, s);
        // Accumulate in double over a broadcast view of y onto x.
        Shape kept;
        for (int64_t d = 0; d < r; ++d) kept.push_back(red[static_cast<size_t>(d)] ? 1 : x.shape[static_cast<size_t>(d)]);
        std::vector<double> acc(static_cast<size_t>(y.size()), kind == 2 ? -INFINITY : (kind == 3 ? INFINITY : 0.0));
        Broadcast br = makeBroadcast(x.shape, {x.shape, kept});
        const float* px = x.ptr<float>();
        forEachRow(br, [&](int64_t, const int64_t* offs, int64_t len, const int64_t* st) {
          for (int64_t i = 0; i < len; ++i) {
            double v = px[offs[0] + i * st[0]];
            double& a = acc[static_cast<size_t>(offs[1] + i * st[1])];
            switch (kind) {
              case 0: case 1: a += v; break;
              case 2: a = std::max(a, v); break;
              case 3: a = std::min(a, v); break;
              case 4: a += v * v; break;
            }
          }
        });
        const double count = y.size() ? static_cast<double>(x.size()) / static_cast<double>(y.size()) : 1.0;
        for (int64_t i = 0; i < y.size(); ++i) {
          double a = acc[static_cast<size_t>(i)];
          y.ptr<float>()[i] = static_cast<float>(kind == 1 ? a / count : a);
        }
        return {};
      });
    };
  };
  r["ReduceSum"] = reduceFactory(0);
  r["ReduceMean"] = reduceFactory(1);
  r["ReduceMax"] = reduceFactory(2);
  r["ReduceMin"] = reduceFactory(3);
  r["ReduceSumSquare"] = reduceFactory(4);

  // QDQ: per-tensor or per-axis scale and zero point.
  r["QuantizeLinear"] = [](const BuildContext& bc) -> Expected<std::unique_ptr<Op>> {
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
  };
  r["DequantizeLinear"] = [](const BuildContext& bc) -> Expected<std::unique_ptr<Op>> {
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
  };
}

}  // namespace detail

// ---- attribute and tensor helpers ------------------------------------------

const onnx::AttributeProto* findAttr(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}
int64_t attrInt(const onnx::NodeProto& n, const std::string& name, int64_t dflt) {
  const auto* a = findAttr(n, name);
  return a ? a->i() : dflt;
}
float attrFloat(const onnx::NodeProto& n, const std::string& name, float dflt) {
  const auto* a = findAttr(n, name);
  return a ? a->f() : dflt;
}
std::string attrString(const onnx::NodeProto& n, const std::string& name, const std::string& dflt) {
  const auto* a = findAttr(n, name);
  return a ? a->s() : dflt;
}
std::vector<int64_t> attrInts(const onnx::NodeProto& n, const std::string& name) {
  const auto* a = findAttr(n, name);
  if (!a) return {};
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

Expected<Tensor> tensorFromProto(const onnx::TensorProto& t) {
  ZP_ASSIGN_OR_RETURN(DType dt, dtypeFromOnnx(t.data_type()));
  Shape s(t.dims().begin(), t.dims().end());
  Tensor out = Tensor::empty(dt, s);
  if (dt == DType::F32 && !t.has_raw_data() && t.float_data_size() == 0 && t.double_data_size() > 0) {
    auto v = graph::toFloats(t);
    std::memcpy(out.data, v.data(), out.bytes());
    return out;
  }
  std::string raw = graph::rawBytes(t);
  if (raw.size() != out.bytes())
    return makeError("initializer '{}' holds {} bytes, expected {} for {} {}", t.name(), raw.size(), out.bytes(),
                     dtypeName(dt), shapeString(s));
  if (!raw.empty()) std::memcpy(out.data, raw.data(), raw.size());
  return out;
}

}  // namespace zp::runtime
