// Runtime tensors: a dtype, a shape and a pointer to storage that is either
// owned (shared, 64-byte aligned heap block or a mapped cache file) or borrowed
// from the session's planned arena.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "libplan/util/error.h"

namespace zp::runtime {

// Booleans are one byte (0 or 1); F16 (IEEE half) and BF16 are stored as their
// 16-bit patterns.
enum class DType : uint8_t { F32, I64, I32, I8, U8, Bool, F64, F16, BF16, I16, U16, U32, U64 };

size_t dtypeSize(DType t);
const char* dtypeName(DType t);
bool dtypeIsFloat(DType t);   // F32, F64, F16, BF16
bool dtypeIsSigned(DType t);  // the floats and I8..I64

// IEEE half and bfloat16 <-> float, rounding to nearest even.
float halfToFloat(uint16_t h);
uint16_t floatToHalf(float f);
float bf16ToFloat(uint16_t b);
uint16_t floatToBf16(float f);
// ONNX TensorProto::DataType -> DType; an error for types the runtime does not run.
Expected<DType> dtypeFromOnnx(int32_t elemType);
int32_t dtypeToOnnx(DType t);

using Shape = std::vector<int64_t>;
int64_t numel(const Shape& s);
std::string shapeString(const Shape& s);

// 64-byte aligned heap block shared by the tensors that view it.
std::shared_ptr<void> allocAligned(size_t bytes);

struct Tensor {
  DType dtype = DType::F32;
  Shape shape;
  void* data = nullptr;
  std::shared_ptr<void> owner;  // null when the storage is the session arena

  static Tensor empty(DType dtype, Shape shape);  // owned, uninitialized
  static Tensor zeros(DType dtype, Shape shape);
  static Tensor scalarI64(int64_t v);
  static Tensor fromFloats(const std::vector<float>& v, Shape shape);
  static Tensor fromI64(const std::vector<int64_t>& v, Shape shape);

  int64_t size() const { return numel(shape); }
  size_t bytes() const { return static_cast<size_t>(size()) * dtypeSize(dtype); }
  int rank() const { return static_cast<int>(shape.size()); }
  template <typename T> T* ptr() { return static_cast<T*>(data); }
  template <typename T> const T* ptr() const { return static_cast<const T*>(data); }
  bool valid() const { return data != nullptr || size() == 0; }
  // A deep copy into owned storage.
  Tensor clone() const;
  // Values as int64 / float, converted from any integer or float dtype.
  std::vector<int64_t> toI64() const;
  std::vector<float> toF32() const;
  std::vector<double> toF64() const;
};

}  // namespace zp::runtime
