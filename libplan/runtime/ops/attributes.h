// Reading a node's attributes, and ONNX TensorProtos as runtime tensors.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "libplan/runtime/tensor.h"
#include "libplan/util/error.h"

namespace zp::runtime {

const onnx::AttributeProto* findAttr(const onnx::NodeProto& n, const std::string& name);
int64_t attrInt(const onnx::NodeProto& n, const std::string& name, int64_t dflt);
float attrFloat(const onnx::NodeProto& n, const std::string& name, float dflt);
std::string attrString(const onnx::NodeProto& n, const std::string& name, const std::string& dflt);
std::vector<int64_t> attrInts(const onnx::NodeProto& n, const std::string& name);

// TensorProto -> Tensor (any supported dtype), a copy.
Expected<Tensor> tensorFromProto(const onnx::TensorProto& t);

namespace detail {
// A negative axis counts from the end.
int64_t normAxis(int64_t axis, int64_t rank);
// "node 'NAME' (OP)" for messages.
std::string nodeLabel(const onnx::NodeProto& n);
}  // namespace detail

}  // namespace zp::runtime
