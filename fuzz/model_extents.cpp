// ONNX model bytes as a cold plan's cache writer walks them for the file extents
// of its weights (initializerExtents): every extent it reports lies inside the
// bytes, and an initializer whose data the protobuf parser also reads there has
// exactly those bytes.
#include "fuzz/fuzz_target.h"
#include "fuzz/fuzz_util.h"
#include "libplan/runtime/cache/model_extents.h"

#include <onnx/onnx_pb.h>

ZP_FUZZ_TARGET(model_extents) {
  using namespace zp;
  const std::string bytes(fuzz::asText(data, size));
  auto extents = runtime::initializerExtents(bytes, "model.onnx");
  if (!extents.ok()) return 0;
  for (const auto& [name, e] : *extents)
    fuzz::require(e.offset <= bytes.size() && e.bytes <= bytes.size() - e.offset,
                  "model extents: an extent lies outside the model's bytes");
  onnx::ModelProto m;
  if (!m.ParseFromString(bytes)) return 0;
  for (const auto& init : m.graph().initializer()) {
    auto it = extents->find(init.name());
    if (it == extents->end() || !init.has_raw_data()) continue;
    fuzz::require(bytes.compare(it->second.offset, it->second.bytes, init.raw_data()) == 0,
                  "model extents: an initializer's raw_data differs from the bytes at its extent");
  }
  return 0;
}
