// The model skeleton a weight cache carries: the model with the data of the large
// initializers that only cached heavy nodes read taken out, so that a session can
// be built from the cache alone.
#pragma once
#include <functional>
#include <string>

#include <onnx/onnx_pb.h>

namespace zp::runtime {

// An initializer the skeleton left to the cache: no data, EXTERNAL with location
// kSkeletonStrippedLocation (name, dims and data_type kept).
bool isStrippedInitializer(const onnx::TensorProto& t);

// The serialized skeleton of `model`: every initializer larger than
// kSkeletonStripBytes that `keep` does not name loses its data.
std::string serializeSkeleton(const onnx::ModelProto& model, const std::function<bool(const std::string&)>& keep);

}  // namespace zp::runtime
