// Fusion of BatchNormalization and activations into the heavy node before them
// (Conv, Gemm, MatMul), as a rewrite of a graph's nodes.
//
// A fused group becomes one node: the anchor's op type, name and attributes, in
// the domain kFusedDomain, writing the group's last output. BatchNormalization
// folded into a Conv adds its scale, bias, mean and variance as inputs 3-6 (an
// absent Conv bias becomes "") and its epsilon as kFusedBnEpsilon; an activation
// adds kFusedActivation ("Relu" or "Clip") and, for Clip, its bounds. The weights
// themselves are not touched: the runtime folds the numbers when it transforms a
// node's weights, so that a weight cache can record what they were made from.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

namespace zp::graph {

inline constexpr const char* kFusedDomain = "ai.zooplan";
inline constexpr const char* kFusedBnEpsilon = "bn_epsilon";          // float
inline constexpr const char* kFusedActivation = "activation";         // string: Relu or Clip
inline constexpr const char* kFusedActivationMin = "activation_min";  // float: Clip's lower bound
inline constexpr const char* kFusedActivationMax = "activation_max";  // float: Clip's upper bound

// The ops fusion builds on: Conv, Gemm and MatMul.
bool isFusionAnchor(const std::string& opType);

// What fusion needs to know of a constant tensor. The runtime knows more
// constants than a model's initializers: those constant folding made.
struct ConstantInfo {
  int32_t elemType = 0;
  std::vector<int64_t> dims;
  std::optional<float> scalar;  // the value of a one-element tensor
  int64_t numElements() const;
};
using ConstantLookup = std::function<std::optional<ConstantInfo>(const std::string& name)>;
// The initializers of `graph` (which must outlive the lookup).
ConstantLookup initializerConstants(const onnx::GraphProto& graph);

struct FuseOptions {
  bool batchNorm = true;    // BatchNormalization into the Conv before it
  bool activations = true;  // Relu/Clip into the Conv (after its BatchNormalization), Gemm or MatMul before it
};

struct FusedNodes {
  onnx::GraphProto graph;   // nodes only: those of the input left after fusion, in their order
  std::vector<int> source;  // per node of `graph`: the input node it stands for (a fused group's anchor)
};

// `nodes`: indices into graph.node() in execution order (all of them, or those
// constant folding left). A group is fused when the anchor's weight (input 1) is
// constant — a matrix for Gemm/MatMul —, every tensor between its nodes has that
// one consumer and is no graph output, BatchNormalization has one output and four
// float32 constant parameters of one value per output channel, a Gemm's C (if any)
// is a constant of N values, and Clip's bounds are one-value constants.
FusedNodes fuseIntoHeavyNodes(const onnx::GraphProto& graph, const std::vector<int>& nodes,
                              const ConstantLookup& constants, const FuseOptions& options = {});

// The model with its nodes fused (topological order; constants from its
// initializers): initializers, inputs, outputs and value_info are kept, and
// kFusedDomain is imported.
onnx::ModelProto fuseModel(const onnx::ModelProto& model, const FuseOptions& options = {});

}  // namespace zp::graph
