#include "libplan/runtime/ops/attributes.h"

#include <cstring>

#include "libplan/graph/tensor.h"

namespace zp::runtime {

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

namespace detail {

int64_t normAxis(int64_t axis, int64_t rank) { return axis < 0 ? axis + rank : axis; }

std::string nodeLabel(const onnx::NodeProto& n) { return fmt::format("node '{}' ({})", n.name(), n.op_type()); }

}  // namespace detail

}  // namespace zp::runtime
