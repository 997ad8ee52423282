// Fusion of BatchNormalization, bias additions and activations into the heavy node
// before them (Conv, Gemm, MatMul), of activations into a standalone
// BatchNormalization, of Relu or Clip into the Add before them, and of LayerNormalization written out in primitive ops into
// one node, as a rewrite of a graph's nodes.
//
// A fused group becomes one node: the anchor's op type, name and attributes, in
// the domain kFusedDomain, writing the group's last output. BatchNormalization
// folded into a Conv adds its scale, bias, mean and variance as inputs 3-6 (an
// absent Conv bias becomes "") and its epsilon as kFusedBnEpsilon. An Add of a
// constant vector of N values after a MatMul, or a Gemm without C, becomes input 2
// (the bias). An activation adds kFusedActivation and its parameters:
//   Relu, Clip (kFusedActivationMin/Max), Sigmoid, Tanh, HardSigmoid and HardSwish
//   (kFusedActivationAlpha/Beta), and the two-input forms exporters write:
//   Silu = x * Sigmoid(x), HardSwish = x * HardSigmoid(x), and
//   Gelu = x * (Erf(x / sqrt(2)) + 1) * 0.5.
// A Conv's output added to another value of the same shape, written before
// the Conv runs (a residual block's end: ResNet's, MobileNetV2's), becomes input 7 of
// the fused Conv (inputs 3-6 "" without BatchNormalization), with a Relu or Clip after
// the Add as its activation: the sum is added as the conv's outputs are finished.
// The decomposed LayerNormalization over the last axis (ReduceMean, Sub, Pow 2,
// ReduceMean, Add epsilon, Sqrt, Div, Mul scale, Add bias) becomes
// kFusedDomain.LayerNormalization(x, scale, bias) with axis -1 and its epsilon.
// A Pad of zeros on the spatial axes before an AveragePool without pads becomes a
// standard AveragePool with those pads, counting them (count_include_pad = 1).
// The weights themselves are not touched: the runtime folds the numbers when it
// transforms a node's weights, so that a weight cache can record what they were made from.
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
inline constexpr const char* kFusedActivation = "activation";         // string: see above
inline constexpr const char* kFusedActivationMin = "activation_min";  // float: Clip's lower bound
inline constexpr const char* kFusedActivationMax = "activation_max";  // float: Clip's upper bound
inline constexpr const char* kFusedActivationAlpha = "activation_alpha";  // float: HardSigmoid/HardSwish
inline constexpr const char* kFusedActivationBeta = "activation_beta";    // float: HardSigmoid/HardSwish
inline constexpr int kFusedResidualInput = 7;  // a fused Conv's residual input

// The heavy ops fusion builds on: Conv, Gemm and MatMul.
bool isFusionAnchor(const std::string& opType);
// Every op type a node of kFusedDomain may have: the anchors, BatchNormalization
// and Add (with an activation) and LayerNormalization.
bool isFusedOpType(const std::string& opType);

// What fusion needs to know of a constant tensor. The runtime knows more
// constants than a model's initializers: those constant folding made.
struct ConstantInfo {
  int32_t elemType = 0;
  std::vector<int64_t> dims;
  std::optional<float> scalar;  // the value of a one-element tensor
  std::vector<int64_t> ints;    // the values of an integer tensor of at most 16 elements
  int64_t numElements() const;
};
using ConstantLookup = std::function<std::optional<ConstantInfo>(const std::string& name)>;
// The shape of a value as far as shape inference knows it: a fixed dim as its size, a
// symbolic one as a negative number standing for its name (one name, one number);
// nothing when a dim is neither.
using ShapeLookup = std::function<std::optional<std::vector<int64_t>>(const std::string& name)>;
class GraphView;
// The shapes the model's inputs, outputs and value_info give (`view` must outlive it).
ShapeLookup viewShapes(const GraphView& view);
// The initializers of `graph` (which must outlive the lookup).
ConstantLookup initializerConstants(const onnx::GraphProto& graph);

struct FuseOptions {
  bool batchNorm = true;    // BatchNormalization into the Conv before it
  bool bias = true;         // Add of a constant vector into the MatMul (or Gemm without C) before it
  bool activations = true;  // activations into the Conv (after its BatchNormalization), Gemm, MatMul or
                            // BatchNormalization before them; Relu and Clip into an Add
  bool layerNorm = true;    // decomposed LayerNormalization into one node
  bool padIntoPool = true;  // Pad of zeros into the AveragePool after it
  bool residual = true;     // an Add of a value written earlier (and the Relu or Clip after it) into the
                            // Conv before it: needs the shapes fuseIntoHeavyNodes is given
};

struct FusedNodes {
  onnx::GraphProto graph;   // nodes only: those of the input left after fusion, in their order
  std::vector<int> source;  // per node of `graph`: the input node it stands for (a fused group's anchor)
};

// `nodes`: indices into graph.node() in execution order (all of them, or those
// constant folding left). A group is fused when the anchor's weight (input 1) is
// constant — a matrix for Gemm/MatMul —, every tensor between its nodes has only
// the consumers the pattern names and is no graph output, BatchNormalization has
// one output and four float32 constant parameters of one value per output
// channel, a Gemm's C (if any) is a constant of N values, a fused bias is a rank-1
// constant of N values, Clip's bounds and the constants of Gelu and LayerNormalization
// are one-value constants (Gelu's divisor sqrt(2), 1 and 0.5 within 1e-6), and
// LayerNormalization's ReduceMeans take axes [-1] and its scale and bias are
// rank-1 float32 constants of one size.
// A residual Add fuses only where `shapes` knows both its operands' shapes, equal
// (a batch of one symbolic size is the same on both sides: no broadcast).
FusedNodes fuseIntoHeavyNodes(const onnx::GraphProto& graph, const std::vector<int>& nodes,
                              const ConstantLookup& constants, const FuseOptions& options = {},
                              const ShapeLookup& shapes = {});

// The model with its nodes fused (topological order; constants from its
// initializers; shapes from its inputs, outputs and value_info, as loading a model
// infers them): initializers, inputs, outputs and value_info are kept, and
// kFusedDomain is imported.
onnx::ModelProto fuseModel(const onnx::ModelProto& model, const FuseOptions& options = {});

}  // namespace zp::graph
