#include "libplan/runtime/tensor.h"

#include <cstdlib>
#include <cstring>
#include <new>

#include <onnx/onnx_pb.h>

namespace zp::runtime {

size_t dtypeSize(DType t) {
  switch (t) {
    case DType::F32: case DType::I32: case DType::U32: return 4;
    case DType::I64: case DType::F64: case DType::U64: return 8;
    case DType::F16: case DType::BF16: case DType::I16: case DType::U16: return 2;
    case DType::I8: case DType::U8: case DType::Bool: return 1;
  }
  return 0;
}

bool dtypeIsFloat(DType t) { return t == DType::F32 || t == DType::F64 || t == DType::F16 || t == DType::BF16; }

bool dtypeIsSigned(DType t) {
  return dtypeIsFloat(t) || t == DType::I8 || t == DType::I16 || t == DType::I32 || t == DType::I64;
}

float halfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  const uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  } else if (mant == 0) {
    bits = sign;
  } else {  // subnormal half: a normal float
    int e = -1;
    uint32_t m = mant;
    do { m <<= 1; ++e; } while ((m & 0x400) == 0);
    bits = sign | (static_cast<uint32_t>(112 - e) << 23) | ((m & 0x3ff) << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t floatToHalf(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
  const uint32_t absBits = bits & 0x7fffffffu;
  if (absBits >= 0x7f800000u) return sign | (absBits > 0x7f800000u ? 0x7e00 : 0x7c00);
  if (absBits >= 0x477ff000u) return sign | 0x7c00;  // rounds past the largest half
  if (absBits < 0x38800000u) {                        // a half subnormal (or zero)
    if (absBits < 0x33000000u) return sign;           // below half the smallest subnormal
    const uint32_t exp = absBits >> 23, mant = (absBits & 0x7fffff) | 0x800000;
    const uint32_t shift = 126 - exp;                 // 14..24
    uint32_t v = mant >> shift;
    const uint32_t rest = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rest > half || (rest == half && (v & 1))) ++v;
    return sign | static_cast<uint16_t>(v);
  }
  uint32_t v = ((absBits - 0x38000000u) >> 13);
  const uint32_t rest = absBits & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (v & 1))) ++v;
  return sign | static_cast<uint16_t>(v);
}

float bf16ToFloat(uint16_t b) {
  const uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t floatToBf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40);  // quiet NaN
  bits += 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>(bits >> 16);
}

const char* dtypeName(DType t) {
  switch (t) {
    case DType::F32: return "float32";
    case DType::I64: return "int64";
    case DType::I32: return "int32";
    case DType::I8: return "int8";
    case DType::U8: return "uint8";
    case DType::Bool: return "bool";
    case DType::F64: return "float64";
    case DType::F16: return "float16";
    case DType::BF16: return "bfloat16";
    case DType::I16: return "int16";
    case DType::U16: return "uint16";
    case DType::U32: return "uint32";
    case DType::U64: return "uint64";
  }
  return "?";
}

Expected<DType> dtypeFromOnnx(int32_t e) {
  switch (e) {
    case onnx::TensorProto::FLOAT: return DType::F32;
    case onnx::TensorProto::INT64: return DType::I64;
    case onnx::TensorProto::INT32: return DType::I32;
    case onnx::TensorProto::INT8: return DType::I8;
    case onnx::TensorProto::UINT8: return DType::U8;
    case onnx::TensorProto::BOOL: return DType::Bool;
    case onnx::TensorProto::DOUBLE: return DType::F64;
    case onnx::TensorProto::FLOAT16: return DType::F16;
    case onnx::TensorProto::BFLOAT16: return DType::BF16;
    case onnx::TensorProto::INT16: return DType::I16;
    case onnx::TensorProto::UINT16: return DType::U16;
    case onnx::TensorProto::UINT32: return DType::U32;
    case onnx::TensorProto::UINT64: return DType::U64;
    default:
      return makeError("element type {} ({}) is not supported by the runtime",
                       onnx::TensorProto_DataType_IsValid(e) ? onnx::TensorProto_DataType_Name(e) : "unknown", e);
  }
}

int32_t dtypeToOnnx(DType t) {
  switch (t) {
    case DType::F32: return onnx::TensorProto::FLOAT;
    case DType::I64: return onnx::TensorProto::INT64;
    case DType::I32: return onnx::TensorProto::INT32;
    case DType::I8: return onnx::TensorProto::INT8;
    case DType::U8: return onnx::TensorProto::UINT8;
    case DType::Bool: return onnx::TensorProto::BOOL;
    case DType::F64: return onnx::TensorProto::DOUBLE;
    case DType::F16: return onnx::TensorProto::FLOAT16;
    case DType::BF16: return onnx::TensorProto::BFLOAT16;
    case DType::I16: return onnx::TensorProto::INT16;
    case DType::U16: return onnx::TensorProto::UINT16;
    case DType::U32: return onnx::TensorProto::UINT32;
    case DType::U64: return onnx::TensorProto::UINT64;
  }
  return 0;
}

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

std::string shapeString(const Shape& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? "," : "") + std::to_string(s[i]);
  return r + "]";
}

std::shared_ptr<void> allocAligned(size_t bytes) {
  size_t rounded = (bytes + 63) / 64 * 64;
  if (rounded == 0) rounded = 64;
  void* p = std::aligned_alloc(64, rounded);
  // Out of memory: what operator new does (the tools' new handler ends them
  // with one line), never a null tensor written through.
  while (!p) {
    std::new_handler handler = std::get_new_handler();
    if (!handler) throw std::bad_alloc();
    handler();
    p = std::aligned_alloc(64, rounded);
  }
  return std::shared_ptr<void>(p, [](void* q) { std::free(q); });
}

Tensor Tensor::empty(DType dtype, Shape shape) {
  Tensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.owner = allocAligned(t.bytes());
  t.data = t.owner.get();
  return t;
}

Tensor Tensor::zeros(DType dtype, Shape shape) {
  Tensor t = empty(dtype, std::move(shape));
  std::memset(t.data, 0, t.bytes());
  return t;
}

Tensor Tensor::scalarI64(int64_t v) { return fromI64({v}, {}); }

Tensor Tensor::fromFloats(const std::vector<float>& v, Shape shape) {
  Tensor t = empty(DType::F32, std::move(shape));
  assert(static_cast<size_t>(t.size()) == v.size());
  if (!v.empty()) std::memcpy(t.data, v.data(), v.size() * 4);
  return t;
}

Tensor Tensor::fromI64(const std::vector<int64_t>& v, Shape shape) {
  Tensor t = empty(DType::I64, std::move(shape));
  assert(static_cast<size_t>(t.size()) == v.size());
  if (!v.empty()) std::memcpy(t.data, v.data(), v.size() * 8);
  return t;
}

Tensor Tensor::clone() const {
  Tensor t = empty(dtype, shape);
  if (bytes()) std::memcpy(t.data, data, bytes());
  return t;
}

template <typename Out>
static std::vector<Out> convertAll(const Tensor& t) {
  std::vector<Out> r(static_cast<size_t>(t.size()));
  for (size_t i = 0; i < r.size(); ++i) {
    switch (t.dtype) {
      case DType::F32: r[i] = static_cast<Out>(t.ptr<float>()[i]); break;
      case DType::I64: r[i] = static_cast<Out>(t.ptr<int64_t>()[i]); break;
      case DType::I32: r[i] = static_cast<Out>(t.ptr<int32_t>()[i]); break;
      case DType::I8: r[i] = static_cast<Out>(t.ptr<int8_t>()[i]); break;
      case DType::U8: case DType::Bool: r[i] = static_cast<Out>(t.ptr<uint8_t>()[i]); break;
      case DType::F64: r[i] = static_cast<Out>(t.ptr<double>()[i]); break;
      case DType::F16: r[i] = static_cast<Out>(halfToFloat(t.ptr<uint16_t>()[i])); break;
      case DType::BF16: r[i] = static_cast<Out>(bf16ToFloat(t.ptr<uint16_t>()[i])); break;
      case DType::I16: r[i] = static_cast<Out>(t.ptr<int16_t>()[i]); break;
      case DType::U16: r[i] = static_cast<Out>(t.ptr<uint16_t>()[i]); break;
      case DType::U32: r[i] = static_cast<Out>(t.ptr<uint32_t>()[i]); break;
      case DType::U64: r[i] = static_cast<Out>(t.ptr<uint64_t>()[i]); break;
    }
  }
  return r;
}

std::vector<int64_t> Tensor::toI64() const { return convertAll<int64_t>(*this); }
std::vector<float> Tensor::toF32() const { return convertAll<float>(*this); }
std::vector<double> Tensor::toF64() const { return convertAll<double>(*this); }

}  // namespace zp::runtime
