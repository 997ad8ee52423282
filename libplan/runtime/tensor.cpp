#include "libplan/runtime/tensor.h"

#include <cstdlib>
#include <cstring>

#include <onnx/onnx_pb.h>

namespace zp::runtime {

size_t dtypeSize(DType t) {
  switch (t) {
    case DType::F32: case DType::I32: return 4;
    case DType::I64: return 8;
    case DType::I8: case DType::U8: case DType::Bool: return 1;
  }
  return 0;
}

const char* dtypeName(DType t) {
  switch (t) {
    case DType::F32: return "float32";
    case DType::I64: return "int64";
    case DType::I32: return "int32";
    case DType::I8: return "int8";
    case DType::U8: return "uint8";
    case DType::Bool: return "bool";
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
    default: return makeError("element type {} is not supported by the runtime", e);
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
  assert(p && "out of memory");
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
    }
  }
  return r;
}

std::vector<int64_t> Tensor::toI64() const { return convertAll<int64_t>(*this); }
std::vector<float> Tensor::toF32() const { return convertAll<float>(*this); }

}  // namespace zp::runtime
