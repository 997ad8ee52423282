#include "libplan/runtime/cache/skeleton.h"

#include <algorithm>
#include <charconv>
#include <limits>

#include "libplan/graph/model_io.h"
#include "libplan/runtime/cache/weight_cache.h"

namespace zp::runtime {

namespace {

bool externalAt(const onnx::TensorProto& t, const char* location) {
  if (t.data_location() != onnx::TensorProto::EXTERNAL) return false;
  for (const auto& kv : t.external_data())
    if (kv.key() == "location" && kv.value() == location) return true;
  return false;
}

void clearData(onnx::TensorProto& init) {
  init.clear_raw_data();
  init.clear_float_data();
  init.clear_int32_data();
  init.clear_int64_data();
  init.clear_double_data();
  init.clear_uint64_data();
  init.clear_external_data();
  init.set_data_location(onnx::TensorProto::EXTERNAL);
}

void addKey(onnx::TensorProto& init, const char* key, const std::string& value) {
  auto* kv = init.add_external_data();
  kv->set_key(key);
  kv->set_value(value);
}

Expected<uint64_t> decimal(const onnx::TensorProto& t, const char* key, uint64_t max) {
  for (const auto& kv : t.external_data()) {
    if (kv.key() != key) continue;
    uint64_t v = 0;
    const std::string& s = kv.value();
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || s.empty() || v > max)
      return makeError("initializer '{}': model-file reference key '{}' is not an integer up to {}: '{}'", t.name(),
                       key, max, s);
    return v;
  }
  return makeError("initializer '{}': model-file reference has no key '{}'", t.name(), key);
}

}  // namespace

bool isStrippedInitializer(const onnx::TensorProto& t) { return externalAt(t, kSkeletonStrippedLocation); }

Expected<std::optional<ModelFileRef>> modelFileRef(const onnx::TensorProto& t) {
  if (!externalAt(t, kSkeletonModelFileLocation)) return std::optional<ModelFileRef>();
  constexpr uint64_t kMax = std::numeric_limits<int64_t>::max();
  ModelFileRef r;
  ZP_ASSIGN_OR_RETURN(r.offset, decimal(t, "offset", kMax));
  ZP_ASSIGN_OR_RETURN(r.bytes, decimal(t, "length", kMax));
  ZP_ASSIGN_OR_RETURN(uint64_t crc, decimal(t, "crc32c", std::numeric_limits<uint32_t>::max()));
  r.crc = static_cast<uint32_t>(crc);
  return std::optional<ModelFileRef>(r);
}

Expected<std::vector<size_t>> skeletonScratchBytes(const onnx::ModelProto& model, size_t maxBytes) {
  std::vector<size_t> out;
  for (const auto& kv : model.metadata_props()) {
    if (kv.key() != kSkeletonScratchKey) continue;
    const std::string& s = kv.value();
    for (size_t at = 0; at < s.size();) {
      const size_t comma = std::min(s.find(',', at), s.size());
      uint64_t v = 0;
      auto [end, ec] = std::from_chars(s.data() + at, s.data() + comma, v);
      if (ec != std::errc() || end != s.data() + comma || comma == at || v > maxBytes)
        return makeError("skeleton metadata '{}': not a list of byte counts up to {}: '{}'", kSkeletonScratchKey,
                         maxBytes, s);
      out.push_back(static_cast<size_t>(v));
      at = comma + 1;
    }
  }
  return out;
}

std::string serializeSkeleton(const onnx::ModelProto& model, const std::function<bool(const std::string&)>& keep,
                              const std::map<std::string, ModelFileRef>& refs,
                              const std::map<std::string, std::string>& metadata) {
  onnx::ModelProto skeleton;
  skeleton.CopyFrom(model);
  for (const auto& [k, v] : metadata) {
    auto* p = skeleton.add_metadata_props();
    p->set_key(k);
    p->set_value(v);
  }
  for (auto& init : *skeleton.mutable_graph()->mutable_initializer()) {
    if (isStrippedInitializer(init) || externalAt(init, kSkeletonModelFileLocation)) continue;
    if (auto r = refs.find(init.name()); r != refs.end()) {
      clearData(init);
      addKey(init, "location", kSkeletonModelFileLocation);
      addKey(init, "offset", std::to_string(r->second.offset));
      addKey(init, "length", std::to_string(r->second.bytes));
      addKey(init, "crc32c", std::to_string(r->second.crc));
      continue;
    }
    if (keep(init.name())) continue;
    auto dt = dtypeFromOnnx(init.data_type());
    if (!dt.ok() || init.data_location() == onnx::TensorProto::EXTERNAL) continue;
    int64_t n = 1;
    for (int64_t d : init.dims()) n *= d;
    if (static_cast<size_t>(n) * dtypeSize(*dt) <= kSkeletonStripBytes) continue;
    clearData(init);
    addKey(init, "location", kSkeletonStrippedLocation);
  }
  return graph::serializeModel(skeleton);
}

}  // namespace zp::runtime
