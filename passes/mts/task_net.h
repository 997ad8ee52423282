// One member of a multitask group in the form MTS stitching works on: its nodes
// in order, BatchNormalization folded into the Conv before it (MTS §IV-B3), and
// the weights of every Conv / Gemm as a dense [out][in][kernel...] float array.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "libplan/util/error.h"

namespace zp::mts {

enum class OpKind { Weighted, Add, Relu, Pool, Flatten };

struct TaskOp {
  OpKind kind = OpKind::Relu;
  std::string name;                 // the original node name (BN folded: the Conv's)
  std::string opType;               // Conv, Gemm, Add, Relu, GlobalAveragePool, MaxPool, AveragePool, Flatten
  std::vector<std::string> inputs;  // activation tensors
  std::string output;
  onnx::NodeProto node;             // the original node, for its attributes
  // Weighted only. Gemm: kernel empty; Conv: kernel = spatial kernel dims.
  int64_t cin = 0, cout = 0;
  std::vector<int64_t> kernel;
  std::vector<float> weight;        // [cout][cin][prod(kernel)]
  std::vector<float> bias;          // [cout], empty when the node has none (and no BN)
  int64_t kernelSize() const;       // prod(kernel), 1 for Gemm
  const float* row(int64_t o, int64_t c) const { return weight.data() + (o * cin + c) * kernelSize(); }
};

struct TaskNet {
  std::string task;
  std::string input;                    // the one graph input
  std::vector<int64_t> inputShape;      // static, batch first
  std::vector<std::string> outputs;
  std::vector<TaskOp> ops;              // in topological order
  std::vector<std::vector<int64_t>> outputShapes;  // of ops[i].output
  int64_t weightBytes = 0;              // initializer bytes of the original model
  int64_t foldedWeightBytes = 0;        // weights + biases of the ops above
};

// Builds the normalized net from a shape-inferred model. Unsupported operators,
// dynamic shapes, grouped convolutions and Gemm with transA / alpha / beta give
// "<task>: ..." errors.
Expected<TaskNet> buildTaskNet(const onnx::ModelProto& model, const std::string& task);

}  // namespace zp::mts
