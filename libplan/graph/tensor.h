// Read-only helpers over onnx::TensorProto, whichever field holds the data.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

namespace zp::graph {

int64_t numElements(const onnx::TensorProto& t);
// Bytes per element of an ONNX element type (0 for strings / unknown).
int64_t elementSize(int32_t elemType);
int64_t byteSize(const onnx::TensorProto& t);
// Little-endian packed bytes of the tensor, as raw_data would hold them.
std::string rawBytes(const onnx::TensorProto& t);
// Values as float (float, double, float16, int8/uint8/int32/int64 converted).
std::vector<float> toFloats(const onnx::TensorProto& t);
std::vector<int64_t> toInt64s(const onnx::TensorProto& t);
// Count of elements whose stored value is exactly zero.
int64_t countZeros(const onnx::TensorProto& t);
// SHA-256 over element type, dims and raw bytes: two initializers with the
// same hash are interchangeable.
std::string contentHash(const onnx::TensorProto& t);
// "float32", "int8", ... for messages and stitch.json.
std::string elemTypeName(int32_t elemType);

}  // namespace zp::graph
