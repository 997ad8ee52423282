// Calling a generic lambda with the C++ type of a runtime dtype, so that one
// template serves every element type an op accepts.
#pragma once
#include <cstdint>
#include <type_traits>

#include "libplan/runtime/tensor.h"

namespace zp::runtime::detail {

// The 16-bit float types, stored as bit patterns; ops compute them in float.
struct Float16 { uint16_t bits; };
struct BFloat16 { uint16_t bits; };

template <typename T>
struct TypeTag { using type = T; };

template <typename T>
inline constexpr bool kIsHalf = std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>;
// float, double, and the integer types (bool aside): what arithmetic runs on.
template <typename T>
inline constexpr bool kIsArithmetic = std::is_arithmetic_v<T> && !std::is_same_v<T, bool>;

// f(TypeTag<T>{}) for the element type T of `t` (bool for Bool, Float16/BFloat16 for
// the halves). Every instantiation must return the same type.
template <typename F>
decltype(auto) visitDType(DType t, F&& f) {
  switch (t) {
    case DType::F32: return f(TypeTag<float>{});
    case DType::F64: return f(TypeTag<double>{});
    case DType::I64: return f(TypeTag<int64_t>{});
    case DType::I32: return f(TypeTag<int32_t>{});
    case DType::I16: return f(TypeTag<int16_t>{});
    case DType::I8: return f(TypeTag<int8_t>{});
    case DType::U64: return f(TypeTag<uint64_t>{});
    case DType::U32: return f(TypeTag<uint32_t>{});
    case DType::U16: return f(TypeTag<uint16_t>{});
    case DType::U8: return f(TypeTag<uint8_t>{});
    case DType::Bool: return f(TypeTag<bool>{});
    case DType::F16: return f(TypeTag<Float16>{});
    case DType::BF16: return f(TypeTag<BFloat16>{});
  }
  return f(TypeTag<float>{});
}

// Element i of `t` as T, converted from whatever `t` holds (float -> integer truncates;
// the halves widen to float first).
template <typename T>
T elementAs(const Tensor& t, int64_t i) {
  return visitDType(t.dtype, [&](auto tag) -> T {
    using S = typename decltype(tag)::type;
    if constexpr (std::is_same_v<S, Float16>) return static_cast<T>(halfToFloat(t.ptr<uint16_t>()[i]));
    else if constexpr (std::is_same_v<S, BFloat16>) return static_cast<T>(bf16ToFloat(t.ptr<uint16_t>()[i]));
    else return static_cast<T>(t.ptr<S>()[i]);
  });
}

}  // namespace zp::runtime::detail
