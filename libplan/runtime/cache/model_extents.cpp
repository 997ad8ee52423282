#include "libplan/runtime/cache/model_extents.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>

#include <set>

namespace zp::runtime {

namespace {
using google::protobuf::io::CodedInputStream;
using google::protobuf::internal::WireFormatLite;

// ONNX field numbers (onnx.proto): ModelProto.graph, GraphProto.initializer and
// the TensorProto fields that say where its data is.
constexpr uint32_t kModelGraph = 7, kGraphInitializer = 5;
constexpr uint32_t kTensorDataType = 2, kTensorFloatData = 4, kTensorName = 8, kTensorRawData = 9,
                   kTensorDoubleData = 10, kTensorDataLocation = 14;
constexpr int kFloat = 1, kDouble = 11;  // TensorProto.DataType

struct Scan {
  std::string_view bytes;
  std::map<std::string, ByteExtent> found;
  std::set<std::string> named;
};

// Reads a length-delimited field's length and where its content starts in the file.
bool delimited(CodedInputStream& in, uint64_t base, uint64_t* offset, uint32_t* length) {
  if (!in.ReadVarint32(length)) return false;
  *offset = base + static_cast<uint64_t>(in.CurrentPosition());
  return true;
}

bool scanTensor(Scan& s, uint64_t base, uint32_t size) {
  CodedInputStream in(reinterpret_cast<const uint8_t*>(s.bytes.data() + base), static_cast<int>(size));
  std::string name;
  uint64_t dataType = 0, location = 0;
  int dataFields = 0;
  ByteExtent extent;
  uint32_t dataField = 0;
  while (uint32_t tag = in.ReadTag()) {
    const uint32_t field = static_cast<uint32_t>(WireFormatLite::GetTagFieldNumber(tag));
    const auto wire = WireFormatLite::GetTagWireType(tag);
    const bool isData = field == kTensorRawData || field == kTensorFloatData || field == kTensorDoubleData;
    if (field == kTensorName && wire == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
      if (!WireFormatLite::ReadString(&in, &name)) return false;
    } else if ((field == kTensorDataType || field == kTensorDataLocation) && wire == WireFormatLite::WIRETYPE_VARINT) {
      if (!in.ReadVarint64(field == kTensorDataType ? &dataType : &location)) return false;
    } else if (isData && wire == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
      uint32_t length = 0;
      if (!delimited(in, base, &extent.offset, &length) || !in.Skip(static_cast<int>(length))) return false;
      extent.bytes = length;
      dataField = field;
      ++dataFields;
    } else {
      dataFields += isData ? 2 : 0;  // unpacked repeated values: not one extent
      if (!WireFormatLite::SkipField(&in, tag)) return false;
    }
  }
  if (!in.ConsumedEntireMessage()) return false;
  const bool littleEndianBytes = dataField == kTensorRawData || (dataField == kTensorFloatData && dataType == kFloat) ||
                                 (dataField == kTensorDoubleData && dataType == kDouble);
  if (name.empty()) return true;
  // A name seen twice is ambiguous whatever either tensor holds: the parser
  // keeps both initializers, so no single extent is "the" data of that name.
  if (!s.named.insert(name).second) {
    s.found.erase(name);
    return true;
  }
  if (dataFields == 1 && location == 0 && littleEndianBytes) s.found.emplace(name, extent);
  return true;
}

// Walks the message at [base, base + size) and calls `inner` on each
// length-delimited field numbered `wanted` (its content's offset and size).
template <typename Inner>
bool walk(Scan& s, uint64_t base, uint64_t size, uint32_t wanted, Inner inner) {
  if (size > static_cast<uint64_t>(INT32_MAX)) return false;
  CodedInputStream in(reinterpret_cast<const uint8_t*>(s.bytes.data() + base), static_cast<int>(size));
  in.SetTotalBytesLimit(INT32_MAX);
  while (uint32_t tag = in.ReadTag()) {
    if (static_cast<uint32_t>(WireFormatLite::GetTagFieldNumber(tag)) == wanted &&
        WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
      uint64_t offset = 0;
      uint32_t length = 0;
      if (!delimited(in, base, &offset, &length) || offset + length > base + size) return false;
      if (!inner(offset, length) || !in.Skip(static_cast<int>(length))) return false;
    } else if (!WireFormatLite::SkipField(&in, tag)) {
      return false;
    }
  }
  return in.ConsumedEntireMessage();
}

}  // namespace

Expected<std::map<std::string, ByteExtent>> initializerExtents(std::string_view model, const std::string& label) {
  Scan s{model, {}, {}};
  const bool ok = walk(s, 0, model.size(), kModelGraph, [&](uint64_t graph, uint32_t graphBytes) {
    return walk(s, graph, graphBytes, kGraphInitializer,
                [&](uint64_t tensor, uint32_t tensorBytes) { return scanTensor(s, tensor, tensorBytes); });
  });
  if (!ok) return makeError("{}: not a well-formed ONNX model (protobuf wire format)", label);
  return std::move(s.found);
}

}  // namespace zp::runtime
