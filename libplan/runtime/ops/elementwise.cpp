// Elementwise ops with numpy broadcasting: arithmetic, comparison and logic on two
// operands, the variadic Sum/Max/Min/Mean, and Where.
#include <cmath>
#include <cstring>
#include <type_traits>

#include "libplan/runtime/kernels/parallel.h"
#include "libplan/runtime/ops/attributes.h"
#include "libplan/runtime/ops/broadcast.h"
#include "libplan/runtime/ops/factories.h"
#include "libplan/runtime/ops/fn_op.h"

namespace zp::runtime::detail {
namespace {

// Large outputs are cut into pieces of rows (or of one long row) run on the
// session's threads.
constexpr int64_t kPiece = 16384;

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

enum class Bin { Add, Sub, Mul, Div, Pow, Max, Min, Equal, Less, Greater, LessOrEqual, GreaterOrEqual, And, Or, Mod };

template <typename T>
Status arith(Bin op, const Broadcast& bc, const T* a, const T* b, T* o, int threads = 1) {
  switch (op) {
    case Bin::Add: binaryLoop(bc, a, b, o, [](T x, T y) { return x + y; }, threads); break;
    case Bin::Sub: binaryLoop(bc, a, b, o, [](T x, T y) { return x - y; }, threads); break;
    case Bin::Mul: binaryLoop(bc, a, b, o, [](T x, T y) { return x * y; }, threads); break;
    case Bin::Div:
      if constexpr (std::is_integral_v<T>) binaryLoop(bc, a, b, o, [](T x, T y) { return y == 0 ? T(0) : T(x / y); }, threads);
      else binaryLoop(bc, a, b, o, [](T x, T y) { return x / y; }, threads);
      break;
    case Bin::Mod:
      if constexpr (std::is_integral_v<T>)
        binaryLoop(bc, a, b, o, [](T x, T y) { if (y == 0) return T(0); T m = x % y; return (m != 0 && ((m < 0) != (y < 0))) ? T(m + y) : m; }, threads);
      else binaryLoop(bc, a, b, o, [](T x, T y) { return std::fmod(x, y); }, threads);
      break;
    case Bin::Pow:
      binaryLoop(bc, a, b, o, [](T x, T y) {
        if constexpr (std::is_floating_point_v<T>) { if (y == T(2)) return x * x; if (y == T(0.5)) return std::sqrt(x); }
        return static_cast<T>(std::pow(static_cast<double>(x), static_cast<double>(y)));
      }, threads);
      break;
    case Bin::Max: binaryLoop(bc, a, b, o, [](T x, T y) { return x > y ? x : y; }, threads); break;
    case Bin::Min: binaryLoop(bc, a, b, o, [](T x, T y) { return x < y ? x : y; }, threads); break;
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

Expected<std::unique_ptr<Op>> binaryOp(Bin op) {
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
      case DType::F32: return arith(op, br, a.ptr<float>(), b.ptr<float>(), o.ptr<float>(), ctx.threads);
      case DType::I64: return arith(op, br, a.ptr<int64_t>(), b.ptr<int64_t>(), o.ptr<int64_t>());
      case DType::I32: return arith(op, br, a.ptr<int32_t>(), b.ptr<int32_t>(), o.ptr<int32_t>());
      default: return makeError("arithmetic on {} is not supported", dtypeName(a.dtype));
    }
  });
}

// Variadic Sum/Max/Min/Mean folded pairwise.
Expected<std::unique_ptr<Op>> variadicOp(Bin op, bool mean) {
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
}

}  // namespace

Expected<std::unique_ptr<Op>> makeAdd(const BuildContext& bc) { return binaryOp(Bin::Add); }
Expected<std::unique_ptr<Op>> makeSub(const BuildContext& bc) { return binaryOp(Bin::Sub); }
Expected<std::unique_ptr<Op>> makeMul(const BuildContext& bc) { return binaryOp(Bin::Mul); }
Expected<std::unique_ptr<Op>> makeDiv(const BuildContext& bc) { return binaryOp(Bin::Div); }
Expected<std::unique_ptr<Op>> makePow(const BuildContext& bc) { return binaryOp(Bin::Pow); }
Expected<std::unique_ptr<Op>> makeMod(const BuildContext& bc) { return binaryOp(Bin::Mod); }
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
