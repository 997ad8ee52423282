// A read-only analysis view of an ONNX graph: deterministic topological order,
// producers and consumers, tensor shapes and types, and per-node cost figures.
// The view keeps a reference to the model: the model must outlive it.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

namespace zp::graph {

struct TensorInfo {
  int32_t elemType = 0;
  std::vector<int64_t> shape;  // -1 for a dimension that is not a fixed number
  std::vector<std::string> dimParams;  // per dimension: its symbolic name ("" when fixed or unnamed)
  bool hasShape = false;
  int64_t numElements() const;  // -1 when not fully known
};

enum class Precision { Fp32, Fp16, Int8 };
std::string precisionName(Precision p);  // "fp32", "fp16", "int8"

// FLOPs count a multiply-accumulate as 2; data-movement ops count 0.
struct NodeStats {
  double flops = 0;
  int64_t params = 0;         // elements of initializers the node reads
  int64_t weightBytes = 0;    // bytes of those initializers
  int64_t weightElems = 0;    // elements of its weight tensors (rank >= 2)
  int64_t weightZeros = 0;    // exact zeros among them
};

class GraphView {
 public:
  explicit GraphView(const onnx::ModelProto& model);

  const onnx::ModelProto& model() const { return *model_; }
  const onnx::GraphProto& graph() const { return model_->graph(); }

  // Node indices (into graph().node()) in topological order; among nodes that
  // are ready at the same time, the one earlier in the file comes first.
  const std::vector<int>& topoOrder() const { return topo_; }
  const onnx::NodeProto& node(int index) const { return graph().node(index); }
  int numNodes() const { return graph().node_size(); }

  // -1 when the tensor is a graph input, an initializer or unknown.
  int producer(const std::string& tensor) const;
  const std::vector<int>& consumers(const std::string& tensor) const;

  const onnx::TensorProto* initializer(const std::string& name) const;
  bool isInitializer(const std::string& name) const { return initializer(name) != nullptr; }
  bool isGraphInput(const std::string& name) const;   // excluding initializers
  bool isGraphOutput(const std::string& name) const;
  std::vector<std::string> graphInputs() const;        // excluding initializers
  std::vector<std::string> graphOutputs() const;

  std::optional<TensorInfo> tensorInfo(const std::string& name) const;

  // True for nodes computable from initializers alone (Constant, weight
  // DequantizeLinear, shape arithmetic on constants).
  bool isConstantNode(int index) const { return constant_[static_cast<size_t>(index)]; }
  bool isConstantTensor(const std::string& name) const;

  NodeStats nodeStats(int index) const;
  // Whole-graph totals; an initializer read by several nodes counts once.
  NodeStats totals() const;
  Precision precision() const;

 private:
  const onnx::ModelProto* model_;
  std::vector<int> topo_;
  std::vector<bool> constant_;
  std::map<std::string, int> producer_;
  std::map<std::string, std::vector<int>> consumers_;
  std::map<std::string, const onnx::TensorProto*> initializers_;
  std::map<std::string, TensorInfo> infos_;
};

// The node's attribute of that name, or nullptr.
const onnx::AttributeProto* findAttr(const onnx::NodeProto& n, const std::string& name);

}  // namespace zp::graph
