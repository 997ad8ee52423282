// Elementwise ops with numpy broadcasting: arithmetic, comparison, logic and bit
// shifts on two operands of any numeric type, the variadic Sum/Max/Min/Mean, and Where.
#include <algorithm>
#include <cassert>
#include <optional>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "libplan/runtime/kernels/parallel.h"
#include "libplan/runtime/kernels/simd_target.h"
#include "libplan/runtime/ops/attributes.h"
#include "libplan/runtime/ops/broadcast.h"
#include "libplan/runtime/ops/dispatch.h"
#include "libplan/runtime/ops/factories.h"
#include "libplan/runtime/ops/fn_op.h"
#include "libplan/runtime/ops/heavy_weights.h"

namespace zp::runtime::detail {
namespace {

// Outputs over four pieces are cut into pieces of rows (or of one long row) run on the
// session's threads. From 16K elements up: an operand another thread just wrote comes
// from that core's cache, and on one thread RegNet-Y's residual Adds and SE Muls at
// 14x14 took 3-5x as long beside a second thread as alone (27 against 5 us).
constexpr int64_t kPiece = 4096;

template <typename T, typename R, typename F>
void binaryLoop(const Broadcast& bc, const T* a, const T* b, R* out, F f, int threads = 1) {
  auto body = [&](int64_t o, const int64_t* offs, int64_t len, const int64_t* s) {
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
  };
  if (threads <= 1 || numel(bc.out) <= 4 * kPiece) {
    forEachRow(bc, body);
    return;
  }
  parallelFor(threads, pieceCount(bc, kPiece), 0,
              [&](int64_t lo, int64_t hi, int) { forEachPiece(bc, kPiece, lo, hi, body); });
}

enum class Bin { Add, Sub, Mul, Div, Pow, Max, Min, Equal, Less, Greater, LessOrEqual, GreaterOrEqual, And, Or, Xor,
                 Mod, FMod, ShiftLeft, ShiftRight };

bool isComparison(Bin op) { return op >= Bin::Equal && op <= Bin::Xor; }

// Integer Mod takes the divisor's sign (Python's %); FMod the dividend's (C's % and
// fmod). ONNX defines Mod on floats only with fmod=1.
template <typename T>
T pythonMod(T x, T y) {
  if constexpr (std::is_floating_point_v<T>) {
    return x;  // not reached: refused above
  } else {
    if (y == 0) return T(0);
    T m = static_cast<T>(x % y);
    if constexpr (std::is_signed_v<T>) return (m != 0 && ((m < 0) != (y < 0))) ? T(m + y) : m;
    else return m;
  }
}

template <typename T>
Status arith(Bin op, const Broadcast& bc, const T* a, const T* b, T* o, int threads = 1) {
  switch (op) {
    case Bin::Add: binaryLoop(bc, a, b, o, [](T x, T y) { return T(x + y); }, threads); break;
    case Bin::Sub: binaryLoop(bc, a, b, o, [](T x, T y) { return T(x - y); }, threads); break;
    case Bin::Mul: binaryLoop(bc, a, b, o, [](T x, T y) { return T(x * y); }, threads); break;
    case Bin::Div:
      if constexpr (std::is_integral_v<T>) binaryLoop(bc, a, b, o, [](T x, T y) { return y == 0 ? T(0) : T(x / y); }, threads);
      else binaryLoop(bc, a, b, o, [](T x, T y) { return x / y; }, threads);
      break;
    case Bin::Mod:
      if constexpr (std::is_floating_point_v<T>) return makeError("Mod on floats needs fmod=1");
      binaryLoop(bc, a, b, o, [](T x, T y) { return pythonMod(x, y); }, threads);
      break;
    case Bin::FMod:
      if constexpr (std::is_integral_v<T>) binaryLoop(bc, a, b, o, [](T x, T y) { return y == 0 ? T(0) : T(x % y); }, threads);
      else binaryLoop(bc, a, b, o, [](T x, T y) { return T(std::fmod(x, y)); }, threads);
      break;
    case Bin::Pow:
      binaryLoop(bc, a, b, o, [](T x, T y) {
        if constexpr (std::is_floating_point_v<T>) { if (y == T(2)) return T(x * x); if (y == T(0.5)) return T(std::sqrt(x)); }
        return static_cast<T>(std::pow(static_cast<double>(x), static_cast<double>(y)));
      }, threads);
      break;
    case Bin::Max: binaryLoop(bc, a, b, o, [](T x, T y) { return x > y || x != x ? x : y; }, threads); break;
    case Bin::Min: binaryLoop(bc, a, b, o, [](T x, T y) { return x < y || x != x ? x : y; }, threads); break;
    case Bin::ShiftLeft:
    case Bin::ShiftRight:
      if constexpr (std::is_integral_v<T> && std::is_unsigned_v<T>) {
        constexpr T bits = sizeof(T) * 8;
        if (op == Bin::ShiftLeft) binaryLoop(bc, a, b, o, [](T x, T y) { return y >= bits ? T(0) : T(x << y); }, threads);
        else binaryLoop(bc, a, b, o, [](T x, T y) { return y >= bits ? T(0) : T(x >> y); }, threads);
        break;
      }
      return makeError("BitShift needs unsigned integers");
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
    case Bin::Xor: binaryLoop(bc, a, b, o, [](T x, T y) -> uint8_t { return (x != 0) != (y != 0); }); break;
    default: break;
  }
}

// Pow's exponent may have another type than its base: the output has the base's.
Status powMixed(const Broadcast& br, const Tensor& a, const Tensor& b, Tensor& o) {
  std::vector<double> e = b.toF64();
  return visitDType(a.dtype, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    if constexpr (!kIsArithmetic<T>) {
      return makeError("Pow on {} is not supported", dtypeName(a.dtype));
    } else {
      const T* pa = a.ptr<T>();
      T* po = o.ptr<T>();
      forEachRow(br, [&](int64_t oo, const int64_t* offs, int64_t len, const int64_t* st) {
        for (int64_t i = 0; i < len; ++i)
          po[oo + i] = static_cast<T>(std::pow(static_cast<double>(pa[offs[0] + i * st[0]]),
                                               e[static_cast<size_t>(offs[1] + i * st[1])]));
      });
      return {};
    }
  });
}

Expected<std::unique_ptr<Op>> binaryOp(Bin op) {
  return fnOp([op](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    const Tensor& a = *in[0];
    const Tensor& b = *in[1];
    if (a.dtype != b.dtype && op != Bin::Pow)
      return makeError("operand types differ ({} vs {})", dtypeName(a.dtype), dtypeName(b.dtype));
    ZP_ASSIGN_OR_RETURN(Shape out, broadcastShapes({a.shape, b.shape}));
    Broadcast br = makeBroadcast(out, {a.shape, b.shape});
    const bool cmp = isComparison(op);
    Tensor& o = ctx.alloc(0, cmp ? DType::Bool : a.dtype, out);
    if (op == Bin::Pow && a.dtype != b.dtype) return powMixed(br, a, b, o);
    return visitDType(a.dtype, [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      if constexpr (kIsHalf<T>) {
        return makeError("{} on {} is not supported", cmp ? "comparison" : "arithmetic", dtypeName(a.dtype));
      } else if constexpr (std::is_same_v<T, bool>) {
        if (op != Bin::And && op != Bin::Or && op != Bin::Xor && op != Bin::Equal)
          return makeError("this operation on bool is not supported");
        compare(op, br, a.ptr<uint8_t>(), b.ptr<uint8_t>(), o.ptr<uint8_t>());
        return {};
      } else {
        if (cmp) {
          compare(op, br, a.ptr<T>(), b.ptr<T>(), o.ptr<uint8_t>());
          return {};
        }
        return arith(op, br, a.ptr<T>(), b.ptr<T>(), o.ptr<T>(), ctx.threads);
      }
    });
  });
}

// Variadic Sum/Max/Min/Mean folded pairwise.
Expected<std::unique_ptr<Op>> variadicOp(Bin op, bool mean) {
  return fnOp([op, mean](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    std::vector<Shape> shapes;
    for (auto* t : in) {
      if (t->dtype != in[0]->dtype)
        return makeError("operand types differ ({} vs {})", dtypeName(in[0]->dtype), dtypeName(t->dtype));
      shapes.push_back(t->shape);
    }
    ZP_ASSIGN_OR_RETURN(Shape out, broadcastShapes(shapes));
    Tensor& o = ctx.alloc(0, in[0]->dtype, out);
    return visitDType(in[0]->dtype, [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      if constexpr (!kIsArithmetic<T>) {
        return makeError("operands of type {} are not supported", dtypeName(in[0]->dtype));
      } else {
        Broadcast b0 = makeBroadcast(out, {in[0]->shape});
        T* po = o.ptr<T>();
        forEachRow(b0, [&](int64_t oo, const int64_t* offs, int64_t len, const int64_t* s) {
          for (int64_t i = 0; i < len; ++i) po[oo + i] = in[0]->ptr<T>()[offs[0] + i * s[0]];
        });
        for (size_t k = 1; k < in.size(); ++k) {
          Broadcast br = makeBroadcast(out, {out, in[k]->shape});
          ZP_TRY(arith(op, br, po, in[k]->ptr<T>(), po));
        }
        if (mean) {
          if constexpr (std::is_floating_point_v<T>) {
            const T inv = T(1) / static_cast<T>(in.size());
            for (int64_t i = 0; i < o.size(); ++i) po[i] *= inv;
          } else {
            for (int64_t i = 0; i < o.size(); ++i) po[i] = static_cast<T>(po[i] / static_cast<T>(in.size()));
          }
        }
        return {};
      }
    });
  });
}

}  // namespace

// Add with a fused Relu or Clip (graph/rewrite/fuse.h): float32, clamped as it is summed.
Expected<std::unique_ptr<Op>> clampedAddOp(const Epilogue& e) {
  if (e.kind != Epilogue::Relu && e.kind != Epilogue::Clip) return makeError("a fused Add takes Relu or Clip");
  const float lo = e.kind == Epilogue::Clip ? e.lo : 0.0f, hi = e.kind == Epilogue::Clip ? e.hi : INFINITY;
  return fnOp([lo, hi](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    const Tensor& a = *in[0];
    const Tensor& b = *in[1];
    if (a.dtype != DType::F32 || b.dtype != DType::F32)
      return makeError("a fused Add takes float32 operands, not {} and {}", dtypeName(a.dtype), dtypeName(b.dtype));
    ZP_ASSIGN_OR_RETURN(Shape out, broadcastShapes({a.shape, b.shape}));
    Broadcast br = makeBroadcast(out, {a.shape, b.shape});
    Tensor& o = ctx.alloc(0, DType::F32, out);
    binaryLoop(br, a.ptr<float>(), b.ptr<float>(), o.ptr<float>(),
               [lo, hi](float x, float y) { return std::min(std::max(x + y, lo), hi); }, ctx.threads);
    return {};
  });
}

Expected<std::unique_ptr<Op>> makeAdd(const BuildContext& bc) {
  if (bc.node->domain() != graph::kFusedDomain) return binaryOp(Bin::Add);
  ZP_ASSIGN_OR_RETURN(Epilogue e, fusedEpilogue(*bc.node));
  return clampedAddOp(e);
}
Expected<std::unique_ptr<Op>> makeSub(const BuildContext& bc) { return binaryOp(Bin::Sub); }
// Mul of a [N, C, H, W] float tensor by a [N, C, 1, 1] one (static shapes; a squeeze-
// and-excite block's scaling) also reads and writes the big operand channel-blocked
// (kernels.h BlockedLayouts), both or neither; in planes, the general op. Each output is
// the same product either way.
class ChannelScaleOp : public Op {
 public:
  ChannelScaleOp(std::unique_ptr<Op> planes, size_t big) : planes_(std::move(planes)), big_(big) {}
  Status run(ExecContext& ctx, const std::vector<const Tensor*>& in) override {
    if (!layouts_.blockedInput) return planes_->run(ctx, in);
    const Tensor& x = *in[big_];
    const Tensor& s = *in[1 - big_];
    const int64_t b = simdFloatLanes();
    assert(x.dtype == DType::F32 && s.dtype == DType::F32 && x.rank() == 4 && x.shape[1] % b == 0 &&
           s.size() == x.shape[0] * x.shape[1]);
    const int64_t blocks = x.shape[0] * x.shape[1] / b, P = x.shape[2] * x.shape[3];
    Tensor& y = ctx.alloc(0, DType::F32, x.shape);
    const bool scaleFirst = big_ == 1;
    parallelForEach(blocks * P * b >= 4 * kPiece ? ctx.threads : 1, blocks, [&](int64_t blk, int) {
      const float* px = x.ptr<float>() + blk * P * b;
      const float* ps = s.ptr<float>() + blk * b;
      float* py = y.ptr<float>() + blk * P * b;
      for (int64_t i = 0; i < P; ++i)
        for (int64_t l = 0; l < b; ++l) py[i * b + l] = scaleFirst ? ps[l] * px[i * b + l] : px[i * b + l] * ps[l];
    });
    return {};
  }
  std::optional<size_t> blockableInput() const override { return big_; }
  bool takesBlockedOutput() const override { return true; }
  bool blocksTogether() const override { return true; }
  BlockedLayouts layouts() const override { return layouts_; }
  void setLayouts(BlockedLayouts layouts) override {
    assert(layouts.blockedInput == layouts.blockedOutput);
    layouts_ = layouts;
  }

 private:
  std::unique_ptr<Op> planes_;
  size_t big_;
  BlockedLayouts layouts_;
};

// The operand of a channel scaling that is the [N, C, H, W] tensor, when the static
// shapes and types say the Mul is one.
std::optional<size_t> channelScaled(const BuildContext& bc) {
  if (bc.inputShapes.size() != 2 || !bc.inputShapes[0] || !bc.inputShapes[1] || bc.halfInputs) return std::nullopt;
  for (size_t big : {size_t{0}, size_t{1}}) {
    const Shape& x = *bc.inputShapes[big];
    const Shape& s = *bc.inputShapes[1 - big];
    if (x.size() == 4 && s.size() == 4 && s[0] == x[0] && s[1] == x[1] && s[2] == 1 && s[3] == 1 && x[2] * x[3] > 1)
      return big;
  }
  return std::nullopt;
}

Expected<std::unique_ptr<Op>> makeMul(const BuildContext& bc) {
  ZP_ASSIGN_OR_RETURN(std::unique_ptr<Op> planes, binaryOp(Bin::Mul));
  const auto big = channelScaled(bc);
  if (!big) return planes;
  return std::unique_ptr<Op>(std::make_unique<ChannelScaleOp>(std::move(planes), *big));
}
Expected<std::unique_ptr<Op>> makeDiv(const BuildContext& bc) { return binaryOp(Bin::Div); }
Expected<std::unique_ptr<Op>> makePow(const BuildContext& bc) { return binaryOp(Bin::Pow); }
Expected<std::unique_ptr<Op>> makeMod(const BuildContext& bc) {
  return binaryOp(attrInt(*bc.node, "fmod", 0) != 0 ? Bin::FMod : Bin::Mod);
}
Expected<std::unique_ptr<Op>> makeXor(const BuildContext& bc) { return binaryOp(Bin::Xor); }
Expected<std::unique_ptr<Op>> makeBitShift(const BuildContext& bc) {
  const std::string dir = attrString(*bc.node, "direction", "");
  if (dir != "LEFT" && dir != "RIGHT") return makeError("BitShift direction '{}' is not LEFT or RIGHT", dir);
  return binaryOp(dir == "LEFT" ? Bin::ShiftLeft : Bin::ShiftRight);
}
Expected<std::unique_ptr<Op>> makeEqual(const BuildContext& bc) { return binaryOp(Bin::Equal); }
Expected<std::unique_ptr<Op>> makeLess(const BuildContext& bc) { return binaryOp(Bin::Less); }
Expected<std::unique_ptr<Op>> makeGreater(const BuildContext& bc) { return binaryOp(Bin::Greater); }
Expected<std::unique_ptr<Op>> makeLessOrEqual(const BuildContext& bc) { return binaryOp(Bin::LessOrEqual); }
Expected<std::unique_ptr<Op>> makeGreaterOrEqual(const BuildContext& bc) { return binaryOp(Bin::GreaterOrEqual); }
Expected<std::unique_ptr<Op>> makeAnd(const BuildContext& bc) { return binaryOp(Bin::And); }
Expected<std::unique_ptr<Op>> makeOr(const BuildContext& bc) { return binaryOp(Bin::Or); }
Expected<std::unique_ptr<Op>> makeMax(const BuildContext& bc) { return variadicOp(Bin::Max, false); }
Expected<std::unique_ptr<Op>> makeMin(const BuildContext& bc) { return variadicOp(Bin::Min, false); }
Expected<std::unique_ptr<Op>> makeSum(const BuildContext& bc) { return variadicOp(Bin::Add, false); }
Expected<std::unique_ptr<Op>> makeMean(const BuildContext& bc) { return variadicOp(Bin::Add, true); }

// PRelu: x where x >= 0, slope * x elsewhere; slope broadcasts to x.
Expected<std::unique_ptr<Op>> makePRelu(const BuildContext& bc) {
  return fnOp([](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    const Tensor& x = *in[0];
    const Tensor& slope = *in[1];
    if (x.dtype != slope.dtype) return makeError("slope is {}, input {}", dtypeName(slope.dtype), dtypeName(x.dtype));
    ZP_ASSIGN_OR_RETURN(Shape out, broadcastShapes({x.shape, slope.shape}));
    if (out != x.shape) return makeError("slope {} does not broadcast to {}", shapeString(slope.shape), shapeString(x.shape));
    Broadcast br = makeBroadcast(out, {x.shape, slope.shape});
    Tensor& y = ctx.alloc(0, x.dtype, out);
    return visitDType(x.dtype, [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      if constexpr (!kIsArithmetic<T>) {
        return makeError("input type {} is not supported", dtypeName(x.dtype));
      } else {
        binaryLoop(br, x.ptr<T>(), slope.ptr<T>(), y.ptr<T>(), [](T v, T s) { return v < T(0) ? T(s * v) : v; });
        return {};
      }
    });
  });
}

Expected<std::unique_ptr<Op>> makeWhere(const BuildContext& bc) {
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
}

}  // namespace zp::runtime::detail
