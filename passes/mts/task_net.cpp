#include "passes/mts/task_net.h"

#include <cmath>
#include <map>

#include "libplan/graph/analysis.h"
#include "libplan/graph/tensor.h"

namespace zp::mts {

int64_t TaskOp::kernelSize() const {
  int64_t k = 1;
  for (int64_t d : kernel) k *= d;
  return k;
}

namespace {

int64_t intAttr(const onnx::NodeProto& n, const std::string& name, int64_t fallback) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return a.i();
  return fallback;
}

float floatAttr(const onnx::NodeProto& n, const std::string& name, float fallback) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return a.f();
  return fallback;
}

struct Builder {
  const graph::GraphView& view;
  const std::string& task;
  TaskNet net;

  Error error(const std::string& problem) const { return makeError("{}: {}", task, problem); }

  Expected<std::vector<int64_t>> shapeOf(const std::string& tensor) const {
    auto info = view.tensorInfo(tensor);
    if (!info || !info->hasShape) return error(fmt::format("tensor '{}' has no inferred shape", tensor));
    for (int64_t d : info->shape)
      if (d < 0) return error(fmt::format("tensor '{}' has a dynamic shape; MTS needs static shapes", tensor));
    return info->shape;
  }

  Expected<std::vector<float>> constant(const onnx::NodeProto& n, int index) const {
    const auto* t = view.initializer(n.input(index));
    if (!t) return error(fmt::format("node '{}': input '{}' must be an initializer", n.name(), n.input(index)));
    return graph::toFloats(*t);
  }

  Status weighted(const onnx::NodeProto& n, TaskOp& op) {
    op.kind = OpKind::Weighted;
    ZP_ASSIGN_OR_RETURN(op.weight, constant(n, 1));
    const auto* w = view.initializer(n.input(1));
    std::vector<int64_t> dims(w->dims().begin(), w->dims().end());
    if (n.op_type() == "Conv") {
      if (intAttr(n, "group", 1) != 1) return error(fmt::format("node '{}': grouped Conv is not supported", n.name()));
      if (dims.size() < 3) return error(fmt::format("node '{}': Conv weight of rank {}", n.name(), dims.size()));
      op.cout = dims[0];
      op.cin = dims[1];
      op.kernel.assign(dims.begin() + 2, dims.end());
    } else {
      if (intAttr(n, "transA", 0) != 0 || floatAttr(n, "alpha", 1.f) != 1.f || floatAttr(n, "beta", 1.f) != 1.f)
        return error(fmt::format("node '{}': Gemm with transA, alpha or beta is not supported", n.name()));
      if (dims.size() != 2) return error(fmt::format("node '{}': Gemm weight of rank {}", n.name(), dims.size()));
      const bool transB = intAttr(n, "transB", 0) != 0;
      op.cout = transB ? dims[0] : dims[1];
      op.cin = transB ? dims[1] : dims[0];
      if (!transB) {  // [in][out] -> [out][in]
        std::vector<float> t(op.weight.size());
        for (int64_t c = 0; c < op.cin; ++c)
          for (int64_t o = 0; o < op.cout; ++o) t[o * op.cin + c] = op.weight[c * op.cout + o];
        op.weight = std::move(t);
      }
    }
    if (n.input_size() > 2 && !n.input(2).empty()) {
      ZP_ASSIGN_OR_RETURN(op.bias, constant(n, 2));
      if (static_cast<int64_t>(op.bias.size()) != op.cout)
        return error(fmt::format("node '{}': bias of {} values for {} outputs", n.name(), op.bias.size(), op.cout));
    }
    return {};
  }

  // BatchNormalization after a Conv: scale = gamma / sqrt(var + eps) folds into
  // the weights and (b - mean) * scale + beta into the bias.
  Status foldBatchNorm(const onnx::NodeProto& bn, TaskOp& conv) {
    std::vector<std::vector<float>> p(4);
    for (int i = 0; i < 4; ++i) { ZP_ASSIGN_OR_RETURN(p[i], constant(bn, i + 1)); }
    const double eps = floatAttr(bn, "epsilon", 1e-5f);
    const int64_t k = conv.cin * conv.kernelSize();
    if (conv.bias.empty()) conv.bias.assign(static_cast<size_t>(conv.cout), 0.f);
    for (int64_t o = 0; o < conv.cout; ++o) {
      const double scale = p[0][o] / std::sqrt(static_cast<double>(p[3][o]) + eps);
      for (int64_t i = 0; i < k; ++i) conv.weight[o * k + i] = static_cast<float>(conv.weight[o * k + i] * scale);
      conv.bias[o] = static_cast<float>((conv.bias[o] - p[2][o]) * scale + p[1][o]);
    }
    conv.output = bn.output(0);
    return {};
  }

  Status add(const onnx::NodeProto& n) {
    static const std::map<std::string, OpKind> kinds{
        {"Conv", OpKind::Weighted}, {"Gemm", OpKind::Weighted}, {"Add", OpKind::Add},
        {"Relu", OpKind::Relu}, {"GlobalAveragePool", OpKind::Pool}, {"MaxPool", OpKind::Pool},
        {"AveragePool", OpKind::Pool}, {"Flatten", OpKind::Flatten}};
    if (n.op_type() == "Identity") {  // an alias: later nodes read its input
      for (auto& op : net.ops)
        if (op.output == n.input(0)) op.output = n.output(0);
      if (n.input(0) == net.input) return error(fmt::format("node '{}': Identity of the graph input", n.name()));
      return {};
    }
    if (n.op_type() == "BatchNormalization") {
      if (net.ops.empty() || net.ops.back().opType != "Conv" || net.ops.back().output != n.input(0) ||
          view.consumers(n.input(0)).size() != 1)
        return error(fmt::format("node '{}': BatchNormalization must directly follow a Conv it alone reads", n.name()));
      return foldBatchNorm(n, net.ops.back());
    }
    auto kind = kinds.find(n.op_type());
    if (kind == kinds.end())
      return error(fmt::format("node '{}': operator {} is not supported by MTS stitching", n.name(), n.op_type()));
    TaskOp op;
    op.kind = kind->second;
    op.name = n.name();
    op.opType = n.op_type();
    op.node = n;
    op.output = n.output(0);
    int activations = op.kind == OpKind::Weighted ? 1 : n.input_size();
    for (int i = 0; i < activations; ++i) {
      if (view.isInitializer(n.input(i)))
        return error(fmt::format("node '{}': a constant operand ('{}') is not supported", n.name(), n.input(i)));
      op.inputs.push_back(n.input(i));
    }
    if (op.kind == OpKind::Weighted) ZP_TRY(weighted(n, op));
    net.ops.push_back(std::move(op));
    return {};
  }
};

}  // namespace

Expected<TaskNet> buildTaskNet(const onnx::ModelProto& model, const std::string& task) {
  graph::GraphView view(model);
  Builder b{view, task, {}};
  b.net.task = task;
  auto inputs = view.graphInputs();
  if (inputs.size() != 1) return b.error(fmt::format("MTS needs exactly one graph input, found {}", inputs.size()));
  b.net.input = inputs[0];
  ZP_ASSIGN_OR_RETURN(b.net.inputShape, b.shapeOf(b.net.input));
  if (b.net.inputShape.size() != 2 && b.net.inputShape.size() != 4)
    return b.error(fmt::format("input '{}' has rank {}; MTS stitches [N,C] and [N,C,H,W] inputs", b.net.input,
                               b.net.inputShape.size()));
  b.net.outputs = view.graphOutputs();
  for (const auto& init : model.graph().initializer()) b.net.weightBytes += graph::byteSize(init);
  for (int index : view.topoOrder()) ZP_TRY(b.add(view.node(index)));
  for (const auto& op : b.net.ops) {
    ZP_ASSIGN_OR_RETURN(auto shape, b.shapeOf(op.output));
    b.net.outputShapes.push_back(std::move(shape));
    if (op.kind == OpKind::Weighted)
      b.net.foldedWeightBytes += 4 * static_cast<int64_t>(op.weight.size() + op.bias.size());
  }
  return std::move(b.net);
}

}  // namespace zp::mts
