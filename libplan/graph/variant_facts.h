// What a variant of a task is, read from its weights rather than written by
// hand (zoo-init): its kind (dense, unstructured or structured pruning,
// quantized), the fraction of its weights pruned, and its precision. The
// weights are the second inputs of Conv, ConvTranspose, Gemm and MatMul nodes,
// as initializers or constants, through a weight DequantizeLinear.
#pragma once
#include <cstdint>
#include <string>

#include <onnx/onnx_pb.h>

namespace zp::graph {

struct VariantFacts {
  std::string kind;        // dense | unstructured | structured | quantized
  double sparsity = 0;     // zeros among the weights, or for channels cut away: the share of the reference's weights gone
  std::string precision;   // fp32 | fp16 | int8
  int64_t weightElems = 0; // elements of the weights
  int64_t weightZeros = 0; // exact zeros among them
  int64_t sliceZeros = 0;  // zeros in whole all-zero output channels (or input channels, whichever is more)
  std::string evidence;    // one line: what the kind was read from
};

// Below this share of zero weights a float model is dense.
inline constexpr double kDenseBelowSparsity = 0.01;
// A pruned model is structured when this share of its zeros lie in whole channels.
inline constexpr double kStructuredZeroShare = 0.9;

// `reference`: the task's dense model (null for the dense model itself); a
// variant with fewer weight elements than it had channels cut away.
VariantFacts variantFacts(const onnx::ModelProto& model, const onnx::ModelProto* reference = nullptr);

}  // namespace zp::graph
