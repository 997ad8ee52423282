#include "libplan/graph/model_io.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <onnx/checker.h>
#include <onnx/defs/parser.h>
#include <onnx/shape_inference/implementation.h>

#include <fstream>

#include "libplan/util/file.h"

namespace zp::graph {
namespace fs = std::filesystem;

namespace {

// Moves external tensor data into raw_data so the rest of zooplan sees one
// self-contained model.
Status inlineExternalData(onnx::GraphProto& graph, const fs::path& baseDir, const std::string& label) {
  for (auto& t : *graph.mutable_initializer()) {
    if (t.data_location() != onnx::TensorProto::EXTERNAL) continue;
    std::string location;
    int64_t offset = 0, length = -1;
    for (const auto& kv : t.external_data()) {
      if (kv.key() == "location") location = kv.value();
      else if (kv.key() == "offset") offset = std::stoll(kv.value());
      else if (kv.key() == "length") length = std::stoll(kv.value());
    }
    if (location.empty())
      return makeError("{}: initializer '{}' has external data without a location", label, t.name());
    fs::path file = baseDir / location;
    std::ifstream in(file, std::ios::binary);
    if (!in) return makeError("{}: initializer '{}': cannot open external data file {}", label, t.name(), file.string());
    in.seekg(0, std::ios::end);
    int64_t size = in.tellg();
    if (length < 0) length = size - offset;
    if (offset < 0 || offset + length > size)
      return makeError("{}: initializer '{}': external data range [{}, {}) exceeds {} ({} bytes)", label, t.name(),
                       offset, offset + length, file.string(), size);
    std::string bytes(static_cast<size_t>(length), '\0');
    in.seekg(offset);
    in.read(bytes.data(), length);
    t.set_raw_data(std::move(bytes));
    t.clear_external_data();
    t.set_data_location(onnx::TensorProto::DEFAULT);
  }
  return {};
}

void nameUnnamedNodes(onnx::GraphProto& graph) {
  int index = 0;
  for (auto& n : *graph.mutable_node()) {
    if (n.name().empty()) n.set_name(n.op_type() + "_" + std::to_string(index));
    ++index;
  }
}

Status finishLoad(onnx::ModelProto& model, const std::string& label, const LoadOptions& options) {
  if (options.check) ZP_TRY(checkModel(model, label));
  if (options.inferShapes) ZP_TRY(inferShapes(model, label));
  return {};
}

}  // namespace

Status checkModel(const onnx::ModelProto& model, const std::string& label) {
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception& e) {
    std::string what = e.what();
    // The checker's messages span lines; the first one says what is wrong.
    if (auto nl = what.find('\n'); nl != std::string::npos) what.resize(nl);
    return makeError("{}: invalid ONNX model: {}", label, what);
  }
  return {};
}

Status inferShapes(onnx::ModelProto& model, const std::string& label) {
  try {
    onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(),
                                       onnx::ShapeInferenceOptions(false, 0, true));
  } catch (const std::exception& e) {
    std::string what = e.what();
    if (auto nl = what.find('\n'); nl != std::string::npos) what.resize(nl);
    return makeError("{}: shape inference failed: {}", label, what);
  }
  return {};
}

Expected<onnx::ModelProto> parseModelBytes(std::string_view bytes, const std::string& label) {
  onnx::ModelProto model;
  if (bytes.size() > static_cast<size_t>(INT32_MAX)) return makeError("{}: model is larger than 2 GiB", label);
  google::protobuf::io::ArrayInputStream raw(bytes.data(), static_cast<int>(bytes.size()));
  google::protobuf::io::CodedInputStream coded(&raw);
  coded.SetTotalBytesLimit(INT32_MAX);
  if (bytes.empty() || !model.ParseFromCodedStream(&coded) || !coded.ConsumedEntireMessage() ||
      !model.has_graph())
    return makeError("{}: not an ONNX model (protobuf parse failed)", label);
  return model;
}

Expected<onnx::ModelProto> loadModel(const fs::path& path, const LoadOptions& options) {
  const std::string label = path.string();
  ZP_ASSIGN_OR_RETURN(std::string bytes, readFile(path));
  ZP_ASSIGN_OR_RETURN(onnx::ModelProto model, parseModelBytes(bytes, label));
  ZP_TRY(inlineExternalData(*model.mutable_graph(), path.parent_path(), label));
  nameUnnamedNodes(*model.mutable_graph());
  ZP_TRY(finishLoad(model, label, options));
  return model;
}

Expected<onnx::ModelProto> parseModelText(const std::string& text, const LoadOptions& options) {
  onnx::ModelProto model;
  onnx::OnnxParser parser(text.c_str());
  auto status = parser.Parse(model);
  if (!status.IsOK()) return makeError("<onnx text>: parse error: {}", status.ErrorMessage());
  nameUnnamedNodes(*model.mutable_graph());
  ZP_TRY(finishLoad(model, "<onnx text>", options));
  return model;
}

std::string serializeModel(const onnx::ModelProto& model) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream sos(&out);
    google::protobuf::io::CodedOutputStream cos(&sos);
    cos.SetSerializationDeterministic(true);
    model.SerializeToCodedStream(&cos);
  }
  return out;
}

Status saveModel(const onnx::ModelProto& model, const fs::path& path) {
  return writeFileAtomic(path, serializeModel(model));
}

}  // namespace zp::graph
