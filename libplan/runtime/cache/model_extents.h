// Where the weights of a serialized ONNX model lie in its file, so that a weight
// cache's skeleton can point at them (skeleton.h) and a cold start read them from
// the model without parsing it.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "libplan/util/error.h"

namespace zp::runtime {

struct ByteExtent {
  uint64_t offset = 0, bytes = 0;
  bool operator==(const ByteExtent&) const = default;
};

// The byte extent of every top-level graph initializer whose data is stored as
// its little-endian bytes: raw_data of any type, or packed float_data of a FLOAT
// or packed double_data of a DOUBLE tensor. Initializers stored otherwise
// (varints, strings, external data) or named twice are left out. An error only
// when the bytes are not a well-formed protobuf message where they are walked.
Expected<std::map<std::string, ByteExtent>> initializerExtents(std::string_view model, const std::string& label);

}  // namespace zp::runtime
