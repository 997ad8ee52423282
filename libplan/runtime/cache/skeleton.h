// The model skeleton a weight cache carries: the model with the data of the large
// initializers that only cached heavy nodes read taken out, so that a session can
// be built from the cache alone. A cache written for a cold-start plan may instead
// point an initializer at its bytes in the model file (the weights of a node the
// plan transforms at load are read from the model, as NNV12 reads raw weights).
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "libplan/util/error.h"

namespace zp::runtime {

// An initializer the skeleton left to the cache: no data, EXTERNAL with location
// kSkeletonStrippedLocation (name, dims and data_type kept).
bool isStrippedInitializer(const onnx::TensorProto& t);

// Where an initializer's bytes lie in the model file: EXTERNAL with location
// kSkeletonModelFileLocation and the keys "offset", "length" (bytes, decimal) and
// "crc32c" (of those bytes, decimal).
inline constexpr const char* kSkeletonModelFileLocation = "zooplan-model-file";
struct ModelFileRef {
  uint64_t offset = 0, bytes = 0;
  uint32_t crc = 0;
  bool operator==(const ModelFileRef&) const = default;
};
// Nothing when `t` is no model-file reference; an error when it is one with
// missing or malformed keys.
Expected<std::optional<ModelFileRef>> modelFileRef(const onnx::TensorProto& t);

// The serialized skeleton of `model`: every initializer that `refs` names points
// at the model file; every other initializer larger than kSkeletonStripBytes that
// `keep` does not name loses its data.
// `metadata`: entries added to the skeleton's metadata_props (what a cold start
// prepares, such as kSkeletonScratchKey).
std::string serializeSkeleton(const onnx::ModelProto& model, const std::function<bool(const std::string&)>& keep,
                              const std::map<std::string, ModelFileRef>& refs = {},
                              const std::map<std::string, std::string>& metadata = {});

// metadata_props key of a cold plan's skeleton: the scratch bytes per slot its cold
// run needs ("b0,b1,..."), allocated at load so the run allocates none.
inline constexpr const char* kSkeletonScratchKey = "zooplan.cold_scratch_bytes";
// The value of that key in `model`, each at most `maxBytes`; none when absent.
Expected<std::vector<size_t>> skeletonScratchBytes(const onnx::ModelProto& model, size_t maxBytes);

}  // namespace zp::runtime
