#include "libplan/graph/rewrite/fuse.h"

#include <cmath>
#include <map>
#include <memory>
#include <set>

#include "libplan/graph/analysis.h"
#include "libplan/graph/tensor.h"

namespace zp::graph {
namespace {

bool isStandardDomain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

bool isOp(const onnx::NodeProto& n, const char* type) { return isStandardDomain(n.domain()) && n.op_type() == type; }

float floatAttr(const onnx::NodeProto& n, const std::string& name, float dflt) {
  const auto* a = findAttr(n, name);
  return a ? a->f() : dflt;
}

int64_t intAttr(const onnx::NodeProto& n, const std::string& name, int64_t dflt) {
  const auto* a = findAttr(n, name);
  return a ? a->i() : dflt;
}

void addFloatAttr(onnx::NodeProto& n, const std::string& name, float v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}

void addStringAttr(onnx::NodeProto& n, const std::string& name, const std::string& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

void addIntAttr(onnx::NodeProto& n, const std::string& name, int64_t v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

void addIntsAttr(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

// What one fused group is made of.
struct Group {
  std::string opType;          // the fused node's op type (the anchor's, or LayerNormalization)
  int batchNorm = -1;
  float epsilon = 1e-5f;
  std::string bias;            // a constant vector added to a MatMul/Gemm's product
  std::string activationKind;  // "" or the activation's name
  float lo = -INFINITY, hi = INFINITY, alpha = 0.2f, beta = 0.5f;
  std::optional<onnx::NodeProto> node;  // the whole fused node, when the pattern builds it itself
  std::string out;             // the group's last output
  std::string residual;        // a value added to a Conv's output
};

class Fuser {
 public:
  Fuser(const onnx::GraphProto& g, const std::vector<int>& nodes, const ConstantLookup& constants,
        const ShapeLookup& shapes)
      : g_(g), nodes_(nodes), constants_(constants), shapes_(shapes) {
    for (size_t k = 0; k < nodes_.size(); ++k) {
      position_[nodes_[k]] = static_cast<int>(k);
      for (const auto& o : g_.node(nodes_[k]).output()) writtenAt_[o] = static_cast<int>(k);
    }
    // Consumers among `nodes`; a graph output counts as one more.
    for (int i : nodes_)
      for (const auto& in : g_.node(i).input())
        if (!in.empty()) ++uses_[in];
    for (const auto& o : g_.output()) ++uses_[o.name()];
  }

  // The group anchored at node i, if anything fuses into it.
  std::optional<Group> groupAt(int i, const FuseOptions& options) {
    const auto& n = g_.node(i);
    if (options.layerNorm && isOp(n, "ReduceMean")) return layerNormAt(i);
    if (options.padIntoPool && isOp(n, "Pad")) return padPoolAt(i);
    if (options.activations && isOp(n, "Add") && n.output_size() == 1) return clampedAddAt(i);
    if (options.activations && isOp(n, "BatchNormalization") && n.output_size() == 1) {
      Group grp;
      grp.opType = n.op_type();
      grp.out = n.output(0);
      if (!matchActivation(&grp)) return std::nullopt;
      return grp;
    }
    if (!isStandardDomain(n.domain()) || !isFusionAnchor(n.op_type()) || n.input_size() < 2) return std::nullopt;
    auto w = constants_(n.input(1));
    if (!w || (n.op_type() != "Conv" && w->dims.size() != 2)) return std::nullopt;
    Group grp;
    grp.opType = n.op_type();
    grp.out = n.output(0);
    if (n.op_type() == "Conv" && options.batchNorm && !w->dims.empty()) {
      const int j = singleConsumer(grp.out);
      if (j >= 0 && asBatchNorm(g_.node(j), w->dims[0])) {
        grp.batchNorm = j;
        grp.epsilon = floatAttr(g_.node(j), "epsilon", 1e-5f);
        take(j, &grp);
      }
    }
    if (options.bias && n.op_type() != "Conv") matchBias(n, *w, &grp);
    if (n.op_type() == "Conv" && options.residual && matchResidual(i, &grp)) {
      const int j = options.activations ? singleConsumer(grp.out) : -1;
      if (j >= 0 && (isOp(g_.node(j), "Relu") || isOp(g_.node(j), "Clip")) && singleActivation(g_.node(j), &grp))
        take(j, &grp);
    } else if (options.activations && gemmBiasAllowsEpilogue(n, *w)) {
      matchActivation(&grp);
    }
    if (grp.batchNorm < 0 && grp.bias.empty() && grp.activationKind.empty() && grp.residual.empty())
      return std::nullopt;
    return grp;
  }

  bool removed(int i) const { return removed_.count(i) > 0; }

 private:
  // The nodes of `nodes` (not yet fused) that read t, one entry per read.
  std::vector<int> consumers(const std::string& t) const {
    std::vector<int> out;
    for (int j : nodes_)
      if (!removed_.count(j))
        for (const auto& in : g_.node(j).input())
          if (in == t) out.push_back(j);
    return out;
  }

  // The one node of `nodes` that reads t, when t has exactly one use.
  int singleConsumer(const std::string& t) {
    if (uses_[t] != 1) return -1;
    auto c = consumers(t);
    return c.size() == 1 ? c[0] : -1;
  }

  void take(int j, Group* grp) {
    removed_.insert(j);
    grp->out = g_.node(j).output(0);
  }

  std::optional<float> scalar(const std::string& name) const {
    auto c = constants_(name);
    if (!c || c->numElements() != 1 || !c->scalar) return std::nullopt;
    return c->scalar;
  }

  // The other input of a two-input node, when one of them is t.
  static std::optional<std::string> otherInput(const onnx::NodeProto& n, const std::string& t) {
    if (n.input_size() != 2) return std::nullopt;
    if (n.input(0) == t && n.input(1) != t) return n.input(1);
    if (n.input(1) == t && n.input(0) != t) return n.input(0);
    return std::nullopt;
  }

  // BatchNormalization (inference form) whose parameters are float32 constants of
  // `channels` values each.
  bool asBatchNorm(const onnx::NodeProto& n, int64_t channels) const {
    if (!isOp(n, "BatchNormalization") || n.output_size() != 1 || n.input_size() != 5) return false;
    for (int k = 1; k < 5; ++k) {
      auto c = constants_(n.input(k));
      if (!c || c->elemType != onnx::TensorProto::FLOAT || c->numElements() != channels) return false;
    }
    return true;
  }

  // A Gemm's C must be a constant of N values for an activation to follow the product.
  bool gemmBiasAllowsEpilogue(const onnx::NodeProto& n, const ConstantInfo& b) const {
    if (n.op_type() != "Gemm" || n.input_size() <= 2 || n.input(2).empty()) return true;
    const int64_t N = intAttr(n, "transB", 0) ? b.dims[0] : b.dims[1];
    auto c = constants_(n.input(2));
    return c && c->numElements() == N;
  }

  // Add(product, c) with c a rank-1 float32 constant of N values, after a MatMul or a
  // Gemm without C (whose beta is 1).
  void matchBias(const onnx::NodeProto& n, const ConstantInfo& w, Group* grp) {
    const bool gemm = n.op_type() == "Gemm";
    if (gemm && ((n.input_size() > 2 && !n.input(2).empty()) || floatAttr(n, "beta", 1.0f) != 1.0f)) return;
    const int64_t N = gemm && intAttr(n, "transB", 0) ? w.dims[0] : w.dims[1];
    const int j = singleConsumer(grp->out);
    if (j < 0 || !isOp(g_.node(j), "Add")) return;
    auto c = otherInput(g_.node(j), grp->out);
    if (!c) return;
    auto info = constants_(*c);
    if (!info || info->elemType != onnx::TensorProto::FLOAT || info->dims.size() != 1 || info->dims[0] != N) return;
    grp->bias = *c;
    take(j, grp);
  }

  // One node: Relu, Clip with constant bounds, Sigmoid, Tanh, HardSigmoid, HardSwish.
  bool singleActivation(const onnx::NodeProto& n, Group* grp) const {
    if (!isStandardDomain(n.domain())) return false;
    const std::string& t = n.op_type();
    if (t == "Relu" || t == "Sigmoid" || t == "Tanh") {
      grp->activationKind = t;
      return true;
    }
    if (t == "HardSigmoid" || t == "HardSwish") {
      grp->activationKind = t;
      grp->alpha = t == "HardSwish" ? 1.0f / 6 : floatAttr(n, "alpha", 0.2f);
      grp->beta = t == "HardSwish" ? 0.5f : floatAttr(n, "beta", 0.5f);
      return true;
    }
    if (t != "Clip") return false;
    float lo = floatAttr(n, "min", -INFINITY), hi = floatAttr(n, "max", INFINITY);
    for (int i = 1; i < n.input_size() && i < 3; ++i) {
      if (n.input(i).empty()) continue;
      auto v = scalar(n.input(i));
      if (!v) return false;
      (i == 1 ? lo : hi) = *v;
    }
    grp->activationKind = "Clip";
    grp->lo = lo;
    grp->hi = hi;
    return true;
  }

  // x * f(x): t read by f's node and by a Mul of t and f's output (its one use).
  std::optional<int> gatedBy(const std::string& t, int fNode, int mulNode) {
    const auto& f = g_.node(fNode);
    const auto& m = g_.node(mulNode);
    if (!isOp(m, "Mul") || f.output_size() != 1 || uses_[f.output(0)] != 1) return std::nullopt;
    auto other = otherInput(m, t);
    if (!other || *other != f.output(0)) return std::nullopt;
    return mulNode;
  }

  // Gelu as exporters write it: Mul(Mul(t, Add(Erf(Div(t, sqrt 2)), 1)), 0.5).
  bool matchGelu(const std::string& t, int div, int mul, Group* grp) {
    const auto& d = g_.node(div);
    if (!isOp(d, "Div") || d.input_size() != 2 || d.input(0) != t) return false;
    auto sqrt2 = scalar(d.input(1));
    if (!sqrt2 || std::fabs(*sqrt2 - 1.41421356f) > 1e-6f) return false;
    const int erf = singleConsumer(d.output(0));
    if (erf < 0 || !isOp(g_.node(erf), "Erf")) return false;
    const int add = singleConsumer(g_.node(erf).output(0));
    if (add < 0 || !isOp(g_.node(add), "Add")) return false;
    auto one = otherInput(g_.node(add), g_.node(erf).output(0));
    if (!one || !scalar(*one) || std::fabs(*scalar(*one) - 1.0f) > 1e-6f) return false;
    if (!gatedBy(t, add, mul)) return false;
    const int half = singleConsumer(g_.node(mul).output(0));
    if (half < 0 || !isOp(g_.node(half), "Mul")) return false;
    auto h = otherInput(g_.node(half), g_.node(mul).output(0));
    if (!h || !scalar(*h) || std::fabs(*scalar(*h) - 0.5f) > 1e-6f) return false;
    for (int j : {div, erf, add, mul}) removed_.insert(j);
    take(half, grp);
    grp->activationKind = "Gelu";
    return true;
  }

  // The activation reading grp->out: one node, or x * Sigmoid(x), x * HardSigmoid(x), Gelu.
  bool matchActivation(Group* grp) {
    const std::string t = grp->out;
    if (uses_[t] == 1) {
      const int j = singleConsumer(t);
      if (j < 0 || !singleActivation(g_.node(j), grp)) return false;
      take(j, grp);
      return true;
    }
    auto c = consumers(t);
    if (uses_[t] != 2 || c.size() != 2 || c[0] == c[1]) return false;
    for (int k = 0; k < 2; ++k) {
      const int f = c[static_cast<size_t>(k)], other = c[static_cast<size_t>(1 - k)];
      const auto& fn = g_.node(f);
      if (isOp(fn, "Sigmoid") || isOp(fn, "HardSigmoid")) {
        if (!gatedBy(t, f, other)) continue;
        grp->activationKind = isOp(fn, "Sigmoid") ? "Silu" : "HardSwish";
        grp->alpha = floatAttr(fn, "alpha", 0.2f);
        grp->beta = floatAttr(fn, "beta", 0.5f);
        removed_.insert(f);
        take(other, grp);
        return true;
      }
      if (isOp(fn, "Div") && matchGelu(t, f, other, grp)) return true;
    }
    return false;
  }

  // Add(grp->out, r) with r written before the anchor (node i) runs, or a graph input,
  // not a constant, and both of one shape as far as shapes_ knows them.
  bool matchResidual(int i, Group* grp) {
    if (!shapes_) return false;
    const int j = singleConsumer(grp->out);
    if (j < 0 || !isOp(g_.node(j), "Add") || g_.node(j).output_size() != 1) return false;
    auto r = otherInput(g_.node(j), grp->out);
    if (!r || r->empty() || constants_(*r)) return false;
    if (auto at = writtenAt_.find(*r); at != writtenAt_.end() && at->second >= position_.at(i)) return false;
    const auto a = shapes_(grp->out), b = shapes_(*r);
    if (!a || !b || *a != *b) return false;
    grp->residual = *r;
    take(j, grp);
    return true;
  }

  // Add followed by its only consumer Relu or Clip (a residual block's end): one pass
  // over the sum instead of two, on the cores that wrote it.
  std::optional<Group> clampedAddAt(int i) {
    Group grp;
    grp.opType = "Add";
    grp.out = g_.node(i).output(0);
    if (uses_[grp.out] != 1) return std::nullopt;
    const int j = singleConsumer(grp.out);
    if (j < 0 || !(isOp(g_.node(j), "Relu") || isOp(g_.node(j), "Clip")) || !singleActivation(g_.node(j), &grp))
      return std::nullopt;
    take(j, &grp);
    return grp;
  }

  // ReduceMean(x) over axis -1 as the start of a decomposed LayerNormalization.
  std::optional<Group> layerNormAt(int i);
  // Pad of zeros on the spatial axes, then AveragePool without pads.
  std::optional<Group> padPoolAt(int i);

  const onnx::GraphProto& g_;
  const std::vector<int>& nodes_;
  const ConstantLookup& constants_;
  const ShapeLookup& shapes_;
  std::map<int, int> position_;                 // node -> its place in nodes_
  std::map<std::string, int> writtenAt_;        // value -> the place in nodes_ of the node writing it
  std::map<std::string, int> uses_;
  std::set<int> removed_;
};

// m = ReduceMean(x), d = Sub(x, m), p = Pow(d, 2), v = ReduceMean(p), e = Add(v, eps),
// s = Sqrt(e), n = Div(d, s), o = Mul(n, scale), y = Add(o, bias); every ReduceMean
// over axes [-1] keeping dims, every intermediate used only by the next step (d twice).
std::optional<Group> Fuser::layerNormAt(int i) {
  auto lastAxisMean = [&](int j) {
    const auto& n = g_.node(j);
    const auto* axes = findAttr(n, "axes");
    return isOp(n, "ReduceMean") && n.input_size() == 1 && intAttr(n, "keepdims", 1) == 1 && axes &&
           axes->ints_size() == 1 && axes->ints(0) == -1;
  };
  auto next = [&](const std::string& t, const char* op) {
    const int j = singleConsumer(t);
    return j >= 0 && isOp(g_.node(j), op) ? j : -1;
  };
  if (!lastAxisMean(i)) return std::nullopt;
  const std::string x = g_.node(i).input(0), m = g_.node(i).output(0);
  const int sub = next(m, "Sub");
  if (sub < 0 || g_.node(sub).input(0) != x || g_.node(sub).input(1) != m) return std::nullopt;
  const std::string d = g_.node(sub).output(0);
  auto dUse = consumers(d);
  if (uses_[d] != 2 || dUse.size() != 2) return std::nullopt;
  const int pow = isOp(g_.node(dUse[0]), "Pow") ? dUse[0] : dUse[1], div = pow == dUse[0] ? dUse[1] : dUse[0];
  if (!isOp(g_.node(pow), "Pow") || g_.node(pow).input(0) != d || scalar(g_.node(pow).input(1)) != 2.0f ||
      !isOp(g_.node(div), "Div") || g_.node(div).input(0) != d)
    return std::nullopt;
  const int var = singleConsumer(g_.node(pow).output(0));
  if (var < 0 || !lastAxisMean(var)) return std::nullopt;
  const int add = next(g_.node(var).output(0), "Add");
  if (add < 0) return std::nullopt;
  auto epsName = otherInput(g_.node(add), g_.node(var).output(0));
  auto eps = epsName ? scalar(*epsName) : std::nullopt;
  const int sqrt = next(g_.node(add).output(0), "Sqrt");
  if (!eps || sqrt < 0 || g_.node(div).input(1) != g_.node(sqrt).output(0)) return std::nullopt;
  const int mul = next(g_.node(div).output(0), "Mul");
  const int badd = mul < 0 ? -1 : next(g_.node(mul).output(0), "Add");
  if (badd < 0) return std::nullopt;
  auto scale = otherInput(g_.node(mul), g_.node(div).output(0));
  auto bias = otherInput(g_.node(badd), g_.node(mul).output(0));
  auto sc = scale ? constants_(*scale) : std::nullopt;
  auto bc = bias ? constants_(*bias) : std::nullopt;
  if (!sc || !bc || sc->dims.size() != 1 || bc->dims != sc->dims || sc->elemType != onnx::TensorProto::FLOAT ||
      bc->elemType != onnx::TensorProto::FLOAT)
    return std::nullopt;
  Group grp;
  grp.opType = "LayerNormalization";
  onnx::NodeProto ln;
  ln.set_name(g_.node(i).name());
  ln.set_op_type("LayerNormalization");
  ln.set_domain(kFusedDomain);
  for (const auto& in : {x, *scale, *bias}) ln.add_input(in);
  ln.add_output(g_.node(badd).output(0));
  addIntAttr(ln, "axis", -1);
  addFloatAttr(ln, "epsilon", *eps);
  grp.node = ln;
  for (int j : {sub, pow, var, add, sqrt, div, mul}) removed_.insert(j);
  take(badd, &grp);
  return grp;
}

std::optional<Group> Fuser::padPoolAt(int i) {
  const auto& pad = g_.node(i);
  const auto* mode = findAttr(pad, "mode");
  if (mode && mode->s() != "constant") return std::nullopt;
  std::vector<int64_t> pads;
  float value = floatAttr(pad, "value", 0.0f);
  if (const auto* a = findAttr(pad, "pads")) {
    pads.assign(a->ints().begin(), a->ints().end());
  } else {
    auto c = pad.input_size() > 1 ? constants_(pad.input(1)) : std::nullopt;
    if (!c) return std::nullopt;
    pads = c->ints;
    if (pad.input_size() > 2 && !pad.input(2).empty()) {
      auto v = scalar(pad.input(2));
      if (!v) return std::nullopt;
      value = *v;
    }
  }
  if (pads.size() != 8 || value != 0.0f || pads[0] || pads[1] || pads[4] || pads[5]) return std::nullopt;
  for (int64_t p : pads)
    if (p < 0) return std::nullopt;
  const int j = singleConsumer(pad.output(0));
  if (j < 0 || !isOp(g_.node(j), "AveragePool")) return std::nullopt;
  onnx::NodeProto pool = g_.node(j);
  const auto* poolPads = findAttr(pool, "pads");
  const auto* autoPad = findAttr(pool, "auto_pad");
  if (intAttr(pool, "ceil_mode", 0) != 0 || (autoPad && autoPad->s() != "NOTSET") || findAttr(pool, "dilations"))
    return std::nullopt;
  if (poolPads)
    for (int64_t p : poolPads->ints())
      if (p != 0) return std::nullopt;
  onnx::NodeProto fused;
  fused.set_name(pool.name());
  fused.set_op_type("AveragePool");
  fused.set_domain(pool.domain());
  fused.add_input(pad.input(0));
  fused.add_output(pool.output(0));
  for (const auto& a : pool.attribute())
    if (a.name() != "pads" && a.name() != "count_include_pad") *fused.add_attribute() = a;
  addIntsAttr(fused, "pads", {pads[2], pads[3], pads[6], pads[7]});
  addIntAttr(fused, "count_include_pad", 1);
  Group grp;
  grp.opType = "AveragePool";
  grp.node = fused;
  take(j, &grp);
  return grp;
}

void addActivationAttrs(onnx::NodeProto& n, const Group& grp) {
  if (grp.activationKind.empty()) return;
  addStringAttr(n, kFusedActivation, grp.activationKind);
  if (grp.activationKind == "Clip") {
    addFloatAttr(n, kFusedActivationMin, grp.lo);
    addFloatAttr(n, kFusedActivationMax, grp.hi);
  }
  if (grp.activationKind == "HardSigmoid" || grp.activationKind == "HardSwish") {
    addFloatAttr(n, kFusedActivationAlpha, grp.alpha);
    addFloatAttr(n, kFusedActivationBeta, grp.beta);
  }
}

onnx::NodeProto fusedNode(const onnx::GraphProto& g, int anchor, const Group& grp) {
  if (grp.node) return *grp.node;
  onnx::NodeProto n = g.node(anchor);
  n.set_output(0, grp.out);
  n.set_domain(kFusedDomain);
  if (grp.batchNorm >= 0) {
    while (n.input_size() < 3) n.add_input("");
    const auto& bn = g.node(grp.batchNorm);
    for (int k = 1; k < 5; ++k) n.add_input(bn.input(k));
    addFloatAttr(n, kFusedBnEpsilon, grp.epsilon);
  }
  if (!grp.bias.empty()) {
    while (n.input_size() < 2) n.add_input("");
    if (n.input_size() == 2) n.add_input(grp.bias);
    else n.set_input(2, grp.bias);
  }
  if (!grp.residual.empty()) {
    while (n.input_size() < kFusedResidualInput) n.add_input("");
    n.add_input(grp.residual);
  }
  addActivationAttrs(n, grp);
  return n;
}

}  // namespace

bool isFusionAnchor(const std::string& opType) { return opType == "Conv" || opType == "Gemm" || opType == "MatMul"; }

bool isFusedOpType(const std::string& opType) {
  return isFusionAnchor(opType) || opType == "BatchNormalization" || opType == "LayerNormalization" ||
         opType == "Add";
}

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
      if ((c.elemType == onnx::TensorProto::INT64 || c.elemType == onnx::TensorProto::INT32) && numElements(t) <= 16)
        c.ints = toInt64s(t);
      return c;
    }
    return std::nullopt;
  };
}

ShapeLookup viewShapes(const GraphView& view) {
  auto names = std::make_shared<std::map<std::string, int64_t>>();
  return [&view, names](const std::string& name) -> std::optional<std::vector<int64_t>> {
    const auto info = view.tensorInfo(name);
    if (!info || !info->hasShape) return std::nullopt;
    std::vector<int64_t> dims = info->shape;
    for (size_t k = 0; k < dims.size(); ++k) {
      if (dims[k] > 0) continue;
      const std::string& param = k < info->dimParams.size() ? info->dimParams[k] : std::string();
      if (param.empty()) return std::nullopt;
      dims[k] = -1 - names->emplace(param, static_cast<int64_t>(names->size())).first->second;
    }
    return dims;
  };
}

FusedNodes fuseIntoHeavyNodes(const onnx::GraphProto& graph, const std::vector<int>& nodes,
                              const ConstantLookup& constants, const FuseOptions& options,
                              const ShapeLookup& shapes) {
  Fuser fuser(graph, nodes, constants, shapes);
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
  FusedNodes fused = fuseIntoHeavyNodes(model.graph(), view.topoOrder(), initializerConstants(model.graph()), options,
                                        viewShapes(view));
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
