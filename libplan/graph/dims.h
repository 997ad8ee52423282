// Symbolic dimensions: binding a model's dynamic dims (a batch exported with
// dynamic axes, or other named dims) to numbers so that shapes, FLOPs and
// boundary signatures can be computed, and so that profiling runs a known size.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "libplan/util/error.h"
#include "libplan/util/dim_limits.h"

namespace zp::graph {

// How symbolic dims are bound. The batch is the leading dim of a graph input
// (named or not); any dim carrying the same name as a leading one is the batch
// too. Every other symbolic dim must be named in `named`.
struct DimBinding {
  int64_t batch = 1;
  std::map<std::string, int64_t> named;  // --dim NAME=VALUE; also overrides a batch name
  bool operator==(const DimBinding&) const = default;
};

// True when a graph input has a dim that is not a fixed number.
bool hasSymbolicInputs(const onnx::ModelProto& model);

// A copy of `model` whose graph inputs carry fixed dims only, with shapes
// re-inferred (value_info recomputed, graph outputs' symbolic dims filled in,
// Reshape targets computed from shapes followed: completeReshapeShapes).
// `applied` (optional) receives each dim bound through `binding.named` and its value.
// A symbolic dim that is neither the batch nor in `binding.named` is a
// one-line error naming `label` (the model), the input and the dim. A model
// without symbolic inputs comes back as it was, with completeReshapeShapes run.
Expected<onnx::ModelProto> bindDims(const onnx::ModelProto& model, const DimBinding& binding, const std::string& label,
                                    std::map<std::string, int64_t>* applied = nullptr);

// A copy of `model` whose graph inputs named in `shapes` have their symbolic
// dims set from those shapes, with shapes re-inferred (as bindDims does).
Expected<onnx::ModelProto> bindInputShapes(const onnx::ModelProto& model,
                                           const std::map<std::string, std::vector<int64_t>>& shapes,
                                           const std::string& label);

// "NAME=VALUE" of --dim; errors name the option.
Expected<std::pair<std::string, int64_t>> parseDimSpec(const std::string& spec);

// True when graph input `name` of `model` exists and its leading dim is not a
// fixed number (the model runs at any batch).
bool leadingDimSymbolic(const onnx::ModelProto& model, const std::string& name);

}  // namespace zp::graph
