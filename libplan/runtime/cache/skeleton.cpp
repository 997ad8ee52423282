#include "libplan/runtime/cache/skeleton.h"

#include "libplan/graph/model_io.h"
#include "libplan/runtime/cache/weight_cache.h"

namespace zp::runtime {

bool isStrippedInitializer(const onnx::TensorProto& t) {
  if (t.data_location() != onnx::TensorProto::EXTERNAL) return false;
  for (const auto& kv : t.external_data())
    if (kv.key() == "location" && kv.value() == kSkeletonStrippedLocation) return true;
  return false;
}

std::string serializeSkeleton(const onnx::ModelProto& model, const std::function<bool(const std::string&)>& keep) {
  onnx::ModelProto skeleton;
  skeleton.CopyFrom(model);
  for (auto& init : *skeleton.mutable_graph()->mutable_initializer()) {
    if (isStrippedInitializer(init) || keep(init.name())) continue;
    auto dt = dtypeFromOnnx(init.data_type());
    if (!dt.ok() || init.data_location() == onnx::TensorProto::EXTERNAL) continue;
    int64_t n = 1;
    for (int64_t d : init.dims()) n *= d;
    if (static_cast<size_t>(n) * dtypeSize(*dt) <= kSkeletonStripBytes) continue;
    init.clear_raw_data();
    init.clear_float_data();
    init.clear_int32_data();
    init.clear_int64_data();
    init.clear_double_data();
    init.clear_uint64_data();
    init.set_data_location(onnx::TensorProto::EXTERNAL);
    auto* kv = init.add_external_data();
    kv->set_key("location");
    kv->set_value(kSkeletonStrippedLocation);
  }
  return graph::serializeModel(skeleton);
}

}  // namespace zp::runtime
