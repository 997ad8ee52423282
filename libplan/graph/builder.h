// Rewrites that produce new models: extracting the part of a graph between
// boundary tensors, and chaining extracted parts back into one model.
#pragma once
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "libplan/graph/analysis.h"
#include "libplan/util/error.h"

namespace zp::graph {

// The stand-alone model computing `outputs` from `inputs`: the nodes reached by
// walking back from the outputs, stopping at the inputs and at initializers, in
// topological order, with only the initializers they read and value_info for
// every tensor they touch. Constant nodes are copied wherever they are needed.
// Fails when the walk reaches a graph input that is not among `inputs` (the
// boundary does not close) or a tensor without type information.
Expected<onnx::ModelProto> extractSubgraph(const GraphView& view, const std::vector<std::string>& inputs,
                                           const std::vector<std::string>& outputs, const std::string& graphName);

// Chains parts into one model: part k's i-th input is fed by part k-1's i-th
// output; the first part's inputs and the last part's outputs become the
// model's. Names that collide between parts get a "p<k>/" prefix; initializers
// with identical content are stored once. The result uses the highest opset of
// the parts and is checked by the caller.
Expected<onnx::ModelProto> chainModels(const std::vector<const onnx::ModelProto*>& parts, const std::string& graphName);

}  // namespace zp::graph
