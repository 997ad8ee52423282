// Reading, checking, shape-inferring and writing ONNX models.
#pragma once
#include <filesystem>
#include <string>
#include <string_view>

#include <onnx/onnx_pb.h>

#include "libplan/util/error.h"

namespace zp::graph {

struct LoadOptions {
  bool check = true;         // run onnx::checker::check_model
  bool inferShapes = true;   // fill value_info by ONNX shape inference
};

// Parses the file, inlines external data (resolved against the model's folder),
// checks it and infers shapes. Errors name the file.
Expected<onnx::ModelProto> loadModel(const std::filesystem::path& path, const LoadOptions& options = {});

// Parses serialized ModelProto bytes as they are: no external data, no check, no
// shape inference. `label` names them in the error.
Expected<onnx::ModelProto> parseModelBytes(std::string_view bytes, const std::string& label);

// Parses ONNX textual syntax (onnx/defs/parser.h) — the form tests write models in.
// The 1.12 grammar cannot name nodes: unnamed nodes get "<op_type>_<index>".
Expected<onnx::ModelProto> parseModelText(const std::string& text, const LoadOptions& options = {});

// check_model on an in-memory model; `label` names it in the error.
Status checkModel(const onnx::ModelProto& model, const std::string& label);

// Runs ONNX shape inference in place (node-level failures leave shapes unknown).
Status inferShapes(onnx::ModelProto& model, const std::string& label);

// Deterministic serialization (map fields ordered): same model, same bytes.
std::string serializeModel(const onnx::ModelProto& model);

// Serializes deterministically and writes atomically.
Status saveModel(const onnx::ModelProto& model, const std::filesystem::path& path);

}  // namespace zp::graph
