#include "libplan/graph/analysis.h"

#include <algorithm>
#include <cassert>
#include <functional>
#include <queue>
#include <set>

#include "libplan/graph/tensor.h"

namespace zp::graph {

int64_t TensorInfo::numElements() const {
  if (!hasShape) return -1;
  int64_t n = 1;
  for (auto d : shape) {
    if (d < 0) return -1;
    n *= d;
  }
  return n;
}

std::string precisionName(Precision p) {
  switch (p) {
    case Precision::Fp32: return "fp32";
    case Precision::Fp16: return "fp16";
    case Precision::Int8: return "int8";
  }
  return "fp32";
}

namespace {

TensorInfo infoFromType(const onnx::TypeProto& type) {
  TensorInfo info;
  if (!type.has_tensor_type()) return info;
  info.elemType = type.tensor_type().elem_type();
  if (type.tensor_type().has_shape()) {
    info.hasShape = true;
    for (const auto& d : type.tensor_type().shape().dim()) {
      info.shape.push_back(d.has_dim_value() ? d.dim_value() : -1);
      info.dimParams.push_back(d.has_dim_value() ? std::string() : d.dim_param());
    }
  }
  return info;
}

int64_t product(const std::vector<int64_t>& v, size_t from = 0) {
  int64_t p = 1;
  for (size_t i = from; i < v.size(); ++i) p *= std::max<int64_t>(v[i], 0);
  return p;
}

}  // namespace

const onnx::AttributeProto* findAttr(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

GraphView::GraphView(const onnx::ModelProto& model) : model_(&model) {
  const auto& g = model.graph();
  for (const auto& t : g.initializer()) initializers_[t.name()] = &t;
  for (const auto& vi : g.input()) infos_[vi.name()] = infoFromType(vi.type());
  for (const auto& vi : g.value_info()) infos_[vi.name()] = infoFromType(vi.type());
  for (const auto& vi : g.output()) infos_[vi.name()] = infoFromType(vi.type());
  for (const auto& t : g.initializer()) {
    TensorInfo info;
    info.elemType = t.data_type();
    info.hasShape = true;
    info.shape.assign(t.dims().begin(), t.dims().end());
    infos_[t.name()] = info;
  }

  const int n = g.node_size();
  for (int i = 0; i < n; ++i) {
    for (const auto& out : g.node(i).output())
      if (!out.empty()) producer_[out] = i;
    for (const auto& in : g.node(i).input())
      if (!in.empty()) {
        auto& c = consumers_[in];
        if (c.empty() || c.back() != i) c.push_back(i);
      }
  }

  // Kahn's algorithm with the file position as priority: deterministic and
  // equal to the file order whenever the file is already sorted.
  std::vector<int> pending(static_cast<size_t>(n), 0);
  for (int i = 0; i < n; ++i) {
    std::set<int> preds;
    for (const auto& in : g.node(i).input()) {
      auto it = producer_.find(in);
      if (it != producer_.end() && it->second != i) preds.insert(it->second);
    }
    pending[static_cast<size_t>(i)] = static_cast<int>(preds.size());
  }
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int i = 0; i < n; ++i)
    if (pending[static_cast<size_t>(i)] == 0) ready.push(i);
  while (!ready.empty()) {
    int i = ready.top();
    ready.pop();
    topo_.push_back(i);
    std::set<int> succs;
    for (const auto& out : g.node(i).output()) {
      auto it = consumers_.find(out);
      if (it != consumers_.end()) succs.insert(it->second.begin(), it->second.end());
    }
    for (int s : succs)
      if (--pending[static_cast<size_t>(s)] == 0) ready.push(s);
  }
  // A cyclic graph fails check_model before it gets here; keep the rest in file order.
  if (static_cast<int>(topo_.size()) < n) {
    std::vector<bool> seen(static_cast<size_t>(n));
    for (int i : topo_) seen[static_cast<size_t>(i)] = true;
    for (int i = 0; i < n; ++i)
      if (!seen[static_cast<size_t>(i)]) topo_.push_back(i);
  }

  constant_.assign(static_cast<size_t>(n), false);
  for (int i : topo_) {
    const auto& node = g.node(i);
    bool allConst = true;
    for (const auto& in : node.input()) {
      if (in.empty()) continue;
      if (!isConstantTensor(in)) { allConst = false; break; }
    }
    // Random generators have no inputs but are not constants.
    if (node.op_type().rfind("Random", 0) == 0) allConst = false;
    constant_[static_cast<size_t>(i)] = allConst;
  }
}

int GraphView::producer(const std::string& tensor) const {
  auto it = producer_.find(tensor);
  return it == producer_.end() ? -1 : it->second;
}

const std::vector<int>& GraphView::consumers(const std::string& tensor) const {
  static const std::vector<int> kNone;
  auto it = consumers_.find(tensor);
  return it == consumers_.end() ? kNone : it->second;
}

const onnx::TensorProto* GraphView::initializer(const std::string& name) const {
  auto it = initializers_.find(name);
  return it == initializers_.end() ? nullptr : it->second;
}

bool GraphView::isGraphInput(const std::string& name) const {
  if (isInitializer(name)) return false;
  for (const auto& vi : graph().input())
    if (vi.name() == name) return true;
  return false;
}

bool GraphView::isGraphOutput(const std::string& name) const {
  for (const auto& vi : graph().output())
    if (vi.name() == name) return true;
  return false;
}

std::vector<std::string> GraphView::graphInputs() const {
  std::vector<std::string> out;
  for (const auto& vi : graph().input())
    if (!isInitializer(vi.name())) out.push_back(vi.name());
  return out;
}

std::vector<std::string> GraphView::graphOutputs() const {
  std::vector<std::string> out;
  for (const auto& vi : graph().output()) out.push_back(vi.name());
  return out;
}

std::optional<TensorInfo> GraphView::tensorInfo(const std::string& name) const {
  auto it = infos_.find(name);
  if (it == infos_.end()) return std::nullopt;
  return it->second;
}

bool GraphView::isConstantTensor(const std::string& name) const {
  if (isInitializer(name)) return true;
  int p = producer(name);
  return p >= 0 && !constant_.empty() && constant_[static_cast<size_t>(p)];
}

NodeStats GraphView::nodeStats(int index) const {
  const auto& n = node(index);
  NodeStats s;
  for (const auto& in : n.input()) {
    const auto* t = initializer(in);
    if (!t) continue;
    s.params += numElements(*t);
    s.weightBytes += byteSize(*t);
    if (t->dims_size() >= 2) {
      s.weightElems += numElements(*t);
      s.weightZeros += countZeros(*t);
    }
  }

  auto out = n.output_size() > 0 ? tensorInfo(n.output(0)) : std::nullopt;
  auto in0 = n.input_size() > 0 ? tensorInfo(n.input(0)) : std::nullopt;
  auto in1 = n.input_size() > 1 ? tensorInfo(n.input(1)) : std::nullopt;
  const int64_t outElems = out ? std::max<int64_t>(out->numElements(), 0) : 0;
  const std::string& op = n.op_type();

  static const std::set<std::string> kElementwise = {
      "Add", "Sub", "Mul", "Div", "Pow", "Sqrt", "Relu", "LeakyRelu", "PRelu", "Clip", "Sigmoid", "Tanh",
      "Erf", "Exp", "Log", "Neg", "Abs", "Max", "Min", "Where", "HardSigmoid", "HardSwish", "Elu", "Selu",
      "Gelu", "Reciprocal", "Floor", "Ceil", "Round", "Sign", "Equal", "Less", "Greater", "Not", "And",
      "Or", "Cast", "QuantizeLinear", "DequantizeLinear", "Softplus", "Mish", "Sum", "Mean"};

  if ((op == "Conv" || op == "ConvInteger") && out && in1 && in1->hasShape && in1->shape.size() >= 3) {
    // Each output element: (Cin/group) * kernel MACs, i.e. the weight's per-filter size.
    s.flops = 2.0 * static_cast<double>(outElems) * static_cast<double>(product(in1->shape, 1));
    if (n.input_size() > 2 && !n.input(2).empty()) s.flops += static_cast<double>(outElems);
  } else if (op == "ConvTranspose" && in0 && in1 && in1->hasShape && in1->shape.size() >= 3) {
    // Weight is [Cin, Cout/group, k...]: each input element feeds Cout/group * kernel MACs.
    double inElems = static_cast<double>(std::max<int64_t>(in0->numElements(), 0));
    s.flops = 2.0 * inElems * static_cast<double>(product(in1->shape, 1));
  } else if (op == "Gemm" && in0 && in0->hasShape && in0->shape.size() == 2 && out) {
    bool transA = false;
    if (const auto* a = findAttr(n, "transA")) transA = a->i() != 0;
    int64_t k = transA ? in0->shape[0] : in0->shape[1];
    s.flops = 2.0 * static_cast<double>(outElems) * static_cast<double>(std::max<int64_t>(k, 0));
    if (n.input_size() > 2 && !n.input(2).empty()) s.flops += static_cast<double>(outElems);
  } else if ((op == "MatMul" || op == "MatMulInteger") && in0 && in0->hasShape && !in0->shape.empty() && out) {
    int64_t k = in0->shape.back();
    s.flops = 2.0 * static_cast<double>(outElems) * static_cast<double>(std::max<int64_t>(k, 0));
  } else if ((op == "MaxPool" || op == "AveragePool" || op == "LpPool") && out) {
    int64_t kernel = 1;
    if (const auto* a = findAttr(n, "kernel_shape"))
      for (auto k : a->ints()) kernel *= k;
    s.flops = static_cast<double>(outElems) * static_cast<double>(kernel);
  } else if ((op == "GlobalAveragePool" || op == "GlobalMaxPool" || op.rfind("Reduce", 0) == 0) && in0) {
    s.flops = static_cast<double>(std::max<int64_t>(in0->numElements(), 0));
  } else if (op == "BatchNormalization") {
    s.flops = 2.0 * static_cast<double>(outElems);  // folded scale and shift
  } else if (op == "LayerNormalization" || op == "InstanceNormalization" || op == "GroupNormalization") {
    s.flops = 5.0 * static_cast<double>(outElems);  // mean, variance, normalise, scale, shift
  } else if (op == "Softmax" || op == "LogSoftmax") {
    s.flops = 3.0 * static_cast<double>(outElems);  // exp, sum, divide
  } else if (kElementwise.count(op)) {
    s.flops = static_cast<double>(outElems);
  }
  return s;
}

NodeStats GraphView::totals() const {
  NodeStats total;
  std::set<std::string> counted;
  for (int i : topo_) {
    NodeStats s = nodeStats(i);
    total.flops += s.flops;
    for (const auto& in : node(i).input()) {
      const auto* t = initializer(in);
      if (!t || !counted.insert(in).second) continue;
      total.params += numElements(*t);
      total.weightBytes += byteSize(*t);
      if (t->dims_size() >= 2) {
        total.weightElems += numElements(*t);
        total.weightZeros += countZeros(*t);
      }
    }
  }
  return total;
}

Precision GraphView::precision() const {
  bool fp16 = false;
  for (int i : topo_) {
    const auto& n = node(i);
    if (n.op_type() == "QuantizeLinear" || n.op_type() == "QLinearConv" || n.op_type() == "QLinearMatMul")
      return Precision::Int8;
    if (n.op_type() == "DequantizeLinear" && n.input_size() > 0) {
      auto info = tensorInfo(n.input(0));
      if (info && (info->elemType == onnx::TensorProto::INT8 || info->elemType == onnx::TensorProto::UINT8))
        return Precision::Int8;
    }
  }
  for (const auto& [name, info] : infos_) fp16 |= info.elemType == onnx::TensorProto::FLOAT16;
  return fp16 ? Precision::Fp16 : Precision::Fp32;
}

}  // namespace zp::graph
