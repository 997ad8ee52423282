// Per-node host profile of a whole ONNX model: the runtime executes it node by
// node under one processor's execution configuration (kernel policy x
// threads); each executed node gets its warm latency and the operator
// features of SparOA (estimate/op_features.h), shapes from ONNX shape
// inference, activation sparsity from one run on the given inputs. The one
// per-node measurement: zoo-profile's node_profile.csv and the operator
// placement flow's both come from here.
#pragma once
#include <map>
#include <set>
#include <string>
#include <vector>

#include "libplan/artifacts/node_profile_csv.h"
#include "libplan/graph/analysis.h"
#include "libplan/runtime/session.h"
#include "passes/measure/host_measure.h"

namespace zp::measure {

// `model` is shape-inferred (graph::loadModel does it); its symbolic dims take
// the sizes of `inputs` for the features. `warmup` untimed runs,
// then `repeat` timed ones (medians per node). Rows in execution order, named
// `modelName`, keyed by the config's policy and threads.
Expected<std::vector<artifacts::NodeProfileRow>> profileNodes(const onnx::ModelProto& model, const std::string& modelName,
                                                              const Processor& config, const runtime::TensorMap& inputs,
                                                              const MeasureParams& params);

// The tensors an executed node writes, by ONNX node index: the runtime folds
// BatchNorm into a Conv and fuses activations into heavy nodes, and the fused
// node (named after its anchor) writes the last fused node's outputs. From each
// executed node's outputs, follow single consumers that are not executed.
std::map<int, std::vector<std::string>> executedOutputs(const graph::GraphView& view,
                                                        const std::set<std::string>& executedNames);

// The tensors an executed node reads, by ONNX node index: its own inputs and those of
// the nodes fused into it (executedOutputs' chains) that the chain does not write, such
// as the value a residual Add fused into a Conv adds.
std::map<int, std::vector<std::string>> executedInputs(const graph::GraphView& view,
                                                       const std::set<std::string>& executedNames);

// The static features of node `index` of `view` (no sparsity of activations, no kernel).
estimate::OpFeatures staticOpFeatures(const graph::GraphView& view, int index);

}  // namespace zp::measure
