#include "libplan/graph/rewrite/fuse.h"

#include <cmath>
#include <map>
#include <set>

#include "libplan/graph/analysis.h"
#include "libplan/graph/tensor.h"

namespace zp::graph {
namespace {

bool isStandardDomain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

const onnx::AttributeProto* findAttr(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

float floatAttr(const onnx::NodeProto& n, const std::string& name, float dflt) {
  const auto* a = findAttr(n, name);
  return a ? a->f() : dflt;
}

void addFloatAttr(onnx::NodeProto& n, const std::string& name, float v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}

// What one fused group is made of.
struct Group {
  int batchNorm = -1, activation = -1;
  float epsilon = 1e-5f;
  std::string activationKind;  // "", "Relu" or "Clip"
  float lo = -INFINITY, hi = INFINITY;
  std::string out;             // the group's last output
};

// Relu, or Clip with constant one-value bounds (attributes before opset 11).
bool asActivation(const onnx::NodeProto& n, const ConstantLookup& constants, Group* g) {
  if (!isStandardDomain(n.domain())) return false;
  if (n.op_type() == "Relu") {
    g->activationKind = "Relu";
    return true;
  }
  if (n.op_type() != "Clip") return false;
  float lo = floatAttr(n, "min", -INFINITY), hi = floatAttr(n, "max", INFINITY);
  for (int i = 1; i < n.input_size() && i < 3; ++i) {
    if (n.input(i).empty()) continue;
    auto c = constants(n.input(i));
    if (!c || c->numElements() != 1 || !c->scalar) return false;
    (i == 1 ? lo : hi) = *c->scalar;
  }
  g->activationKind = "Clip";
  g->lo = lo;
  g->hi = hi;
  return true;
}

// BatchNormalization (inference form) whose parameters are float32 constants of
// `channels` values each.
bool asBatchNorm(const onnx::NodeProto& n, int64_t channels, const ConstantLookup& constants) {
  if (!isStandardDomain(n.domain()) || n.op_type() != "BatchNormalization" || n.output_size() != 1 ||
      n.input_size() != 5)
    return false;
  for (int k = 1; k < 5; ++k) {
    auto c = constants(n.input(k));
    if (!c || c->elemType != onnx::TensorProto::FLOAT || c->numElements() != channels) return false;
  }
  return true;
}

// A Gemm's C must be a constant of N values for an activation to follow the product.
bool gemmBiasAllowsEpilogue(const onnx::NodeProto& n, const ConstantInfo& b, const ConstantLookup& constants) {
  if (n.op_type() != "Gemm" || n.input_size() <= 2 || n.input(2).empty()) return true;
  const auto* t = findAttr(n, "transB");
  const int64_t N = (t && t->i()) ? b.dims[0] : b.dims[1];
  auto c = constants(n.input(2));
  return c && c->numElements() == N;
}

class Fuser {
 public:
  Fuser(const onnx::GraphProto& g, const std::vector<int>& nodes, const ConstantLookup& constants)
      : g_(g), nodes_(nodes), constants_(constants) {
    // Consumers among `nodes`; a graph output counts as one more.
    for (int i : nodes_)
      for (const auto& in : g_.node(i).input())
        if (!in.empty()) ++uses_[in];
    for (const auto& o : g_.output()) ++uses_[o.name()];
  }

  // The group anchored at node i, if anything fuses into it.
  std::optional<Group> groupAt(int i, const FuseOptions& options) {
    const auto& n = g_.node(i);
    if (!isStandardDomain(n.domain()) || !isFusionAnchor(n.op_type()) || n.input_size() < 2) return std::nullopt;
    auto w = constants_(n.input(1));
    if (!w || (n.op_type() != "Conv" && w->dims.size() != 2)) return std::nullopt;
    Group grp;
    grp.out = n.output(0);
    if (n.op_type() == "Conv" && options.batchNorm && !w->dims.empty()) {
      const int j = singleConsumer(grp.out);
      if (j >= 0 && asBatchNorm(g_.node(j), w->dims[0], constants_)) {
        grp.batchNorm = j;
        grp.epsilon = floatAttr(g_.node(j), "epsilon", 1e-5f);
        grp.out = g_.node(j).output(0);
        removed_.insert(j);
      }
    }
    if (options.activations && gemmBiasAllowsEpilogue(n, *w, constants_)) {
      const int j = singleConsumer(grp.out);
      if (j >= 0 && asActivation(g_.node(j), constants_, &grp)) {
        grp.activation = j;
        grp.out = g_.node(j).output(0);
        removed_.insert(j);
      }
    }
    if (grp.batchNorm < 0 && grp.activation < 0) return std::nullopt;
    return grp;
  }

  bool removed(int i) const { return removed_.count(i) > 0; }

 private:
  // The one node of `nodes` that reads t, when t has exactly one use.
  int singleConsumer(const std::string& t) {
    if (uses_[t] != 1) return -1;
    for (int j : nodes_)
      if (!removed_.count(j))
        for (const auto& in : g_.node(j).input())
          if (in == t) return j;
    return -1;
  }

  const onnx::GraphProto& g_;
  const std::vector<int>& nodes_;
  const ConstantLookup& constants_;
  std::map<std::string, int> uses_;
  std::set<int> removed_;
};

onnx::NodeProto fusedNode(const onnx::GraphProto& g, int anchor, const Group& grp) {
  onnx::NodeProto n = g.node(anchor);
  n.set_domain(kFusedDomain);
  n.set_output(0, grp.out);
  if (grp.batchNorm >= 0) {
    while (n.input_size() < 3) n.add_input("");
    const auto& bn = g.node(grp.batchNorm);
    for (int k = 1; k < 5; ++k) n.add_input(bn.input(k));
    addFloatAttr(n, kFusedBnEpsilon, grp.epsilon);
  }
  if (grp.activation >= 0) {
    auto* a = n.add_attribute();
    a->set_name(kFusedActivation);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(grp.activationKind);
    if (grp.activationKind == "Clip") {
      addFloatAttr(n, kFusedActivationMin, grp.lo);
      addFloatAttr(n, kFusedActivationMax, grp.hi);
    }
  }
  return n;
}

}  // namespace

bool isFusionAnchor(const std::string& opType) { return opType == "Conv" || opType == "Gemm" || opType == "MatMul"; }

int64_t ConstantInfo::numElements() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

ConstantLookup initializerConstants(const onnx::GraphProto& graph) {
  return [&graph](const std::string& name) -> std::optional<ConstantInfo> {
    for (const auto& t : graph.initializer()) {
      if (t.name() != name) continue;
      ConstantInfo c;
      c.elemType = t.data_type();
      c.dims.assign(t.dims().begin(), t.dims().end());
      if (numElements(t) == 1) c.scalar = toFloats(t).at(0);
      return c;
    }
    return std::nullopt;
  };
}

FusedNodes fuseIntoHeavyNodes(const onnx::GraphProto& graph, const std::vector<int>& nodes,
                              const ConstantLookup& constants, const FuseOptions& options) {
  Fuser fuser(graph, nodes, constants);
  // Groups first (an anchor may take a node that comes later), then the nodes left.
  std::map<int, Group> groups;
  for (int i : nodes)
    if (!fuser.removed(i))
      if (auto grp = fuser.groupAt(i, options)) groups[i] = *grp;
  FusedNodes out;
  for (int i : nodes) {
    if (fuser.removed(i)) continue;
    auto it = groups.find(i);
    *out.graph.add_node() = it == groups.end() ? graph.node(i) : fusedNode(graph, i, it->second);
    out.source.push_back(i);
  }
  return out;
}

onnx::ModelProto fuseModel(const onnx::ModelProto& model, const FuseOptions& options) {
  GraphView view(model);
  FusedNodes fused = fuseIntoHeavyNodes(model.graph(), view.topoOrder(), initializerConstants(model.graph()), options);
  onnx::ModelProto out = model;
  out.mutable_graph()->mutable_node()->Swap(fused.graph.mutable_node());
  bool imported = false;
  for (const auto& o : out.opset_import()) imported |= o.domain() == kFusedDomain;
  if (!imported) {
    auto* o = out.add_opset_import();
    o->set_domain(kFusedDomain);
    o->set_version(1);
  }
  return out;
}

}  // namespace zp::graph
