#include "passes/partition/cut_points.h"

#include <algorithm>
#include <map>
#include <set>

namespace zp::partition {

namespace {

bool isQdqOp(const std::string& op) { return op == "QuantizeLinear" || op == "DequantizeLinear"; }

// A Cast or Clip between a QuantizeLinear and the DequantizeLinear it feeds:
// torch's fake-quant exports clamp the integers (Q -> Clip -> DQ), its
// convert() exports change their type (Q -> Cast -> DQ).
bool isQuantGlue(const graph::GraphView& view, int i, int depth = 0) {
  const auto& n = view.node(i);
  if ((n.op_type() != "Cast" && n.op_type() != "Clip") || n.input_size() == 0 || depth > 4) return false;
  const int prod = view.producer(n.input(0));
  if (prod < 0) return false;
  const auto& p = view.node(prod).op_type();
  if (p != "QuantizeLinear" && !isQuantGlue(view, prod, depth + 1)) return false;
  bool any = false;
  for (const auto& out : n.output())
    for (int c : view.consumers(out)) {
      const auto& op = view.node(c).op_type();
      if (op != "DequantizeLinear" && op != "Cast" && op != "Clip") return false;
      any = true;
    }
  return any;
}

}  // namespace

bool isQdq(const graph::GraphView& view, int node) {
  return isQdqOp(view.node(node).op_type()) || isQuantGlue(view, node);
}

bool isFusiblePair(const std::string& producer, const std::string& consumer) {
  static const std::set<std::string> kActivations = {"Relu", "Clip", "LeakyRelu", "Sigmoid", "HardSigmoid",
                                                     "HardSwish", "Tanh", "Elu", "Selu", "PRelu", "Gelu"};
  static const std::map<std::string, std::set<std::string>> kExtra = {
      {"Conv", {"BatchNormalization", "Add"}},  // Add: bias or residual fused into the conv epilogue
      {"ConvTranspose", {"BatchNormalization"}},
      {"MatMul", {"Add"}},
  };
  static const std::set<std::string> kWithActivation = {"Conv", "ConvTranspose", "BatchNormalization",
                                                        "Gemm", "MatMul", "Add", "InstanceNormalization",
                                                        "LayerNormalization"};
  if (kWithActivation.count(producer) && kActivations.count(consumer)) return true;
  auto it = kExtra.find(producer);
  return it != kExtra.end() && it->second.count(consumer);
}

MainSequence mainSequence(const graph::GraphView& view) {
  MainSequence seq;
  seq.position.assign(static_cast<size_t>(view.numNodes()), -1);
  for (int i : view.topoOrder()) {
    if (view.isConstantNode(i) || isQdq(view, i)) continue;
    seq.position[static_cast<size_t>(i)] = static_cast<int>(seq.nodes.size());
    seq.nodes.push_back(i);
  }
  // Activation Q/DQ nodes belong to the earliest main node they feed (through
  // further Q/DQ nodes); walking the topological order backwards sees every
  // consumer before its producer.
  const auto& topo = view.topoOrder();
  for (auto it = topo.rbegin(); it != topo.rend(); ++it) {
    int i = *it;
    if (view.isConstantNode(i) || !isQdq(view, i)) continue;
    int owner = -1;
    for (const auto& out : view.node(i).output())
      for (int c : view.consumers(out)) {
        int p = seq.position[static_cast<size_t>(c)];
        if (p >= 0 && (owner < 0 || p < owner)) owner = p;
      }
    if (owner < 0) {
      // Feeds only a graph output (torch's DeQuantStub at a model's end): it
      // stays with the main node that produced its input, through the Q/DQ
      // nodes before it (not yet placed: the walk goes backwards).
      for (const auto& in : view.node(i).input()) {
        int prod = view.producer(in);
        for (int hops = 0; prod >= 0 && isQdq(view, prod) && hops < 8; ++hops)
          prod = view.node(prod).input_size() > 0 ? view.producer(view.node(prod).input(0)) : -1;
        if (prod >= 0 && !view.isConstantNode(prod)) owner = std::max(owner, seq.position[static_cast<size_t>(prod)]);
      }
      owner = std::max(owner, 0);
    }
    seq.position[static_cast<size_t>(i)] = owner;
  }
  return seq;
}

std::vector<CutPoint> findCutPoints(const graph::GraphView& view, const MainSequence& main) {
  const int m = static_cast<int>(main.nodes.size());
  if (m < 2) return {};
  auto pos = [&](int node) { return main.position[static_cast<size_t>(node)]; };

  // For each non-constant tensor: produced at position pp (-1 for graph
  // inputs), last read at position lr (m for graph outputs). It crosses every
  // cut `after` with pp <= after < lr. Difference arrays count crossings.
  std::vector<int> delta(static_cast<size_t>(m + 1), 0);
  std::map<std::string, std::pair<int, int>> span;  // tensor -> (pp, lr)
  auto note = [&](const std::string& t, int pp, int lr) {
    auto [it, fresh] = span.try_emplace(t, pp, lr);
    if (!fresh) it->second.second = std::max(it->second.second, lr);
  };
  for (int i : view.topoOrder()) {
    if (view.isConstantNode(i)) continue;
    int p = pos(i);
    for (const auto& in : view.node(i).input()) {
      if (in.empty() || view.isConstantTensor(in)) continue;
      int prod = view.producer(in);
      note(in, prod >= 0 ? pos(prod) : -1, p);
    }
  }
  for (const auto& out : view.graphOutputs()) {
    int prod = view.producer(out);
    if (prod >= 0 && !view.isConstantNode(prod)) note(out, pos(prod), m);
  }
  for (const auto& [t, s] : span) {
    int from = std::max(s.first, 0), to = s.second;  // crosses cuts [from, to)
    if (from < to) {
      delta[static_cast<size_t>(from)] += 1;
      delta[static_cast<size_t>(to)] -= 1;
    }
  }
  // Which single tensor crosses: recomputed only for cuts with count 1.
  std::vector<CutPoint> cuts;
  int running = 0;
  for (int after = 0; after < m - 1; ++after) {
    running += delta[static_cast<size_t>(after)];
    if (running != 1) continue;
    std::string tensor;
    for (const auto& [t, s] : span)
      if (std::max(s.first, 0) <= after && after < s.second) tensor = t;
    int prod = view.producer(tensor);
    if (prod < 0) continue;  // a graph input read later: the parts cannot be chained
    const auto& producerOp = view.node(prod).op_type();
    if (isQdq(view, prod)) continue;
    bool fusible = false;
    for (int c : view.consumers(tensor)) {
      // Look through Q/DQ nodes to the op they feed.
      std::vector<int> frontier{c};
      while (!frontier.empty()) {
        int n = frontier.back();
        frontier.pop_back();
        if (isQdq(view, n)) {
          for (const auto& out : view.node(n).output())
            for (int cc : view.consumers(out)) frontier.push_back(cc);
          continue;
        }
        fusible |= isFusiblePair(producerOp, view.node(n).op_type());
      }
    }
    if (fusible) continue;
    cuts.push_back(CutPoint{after, tensor, view.node(prod).name()});
  }
  return cuts;
}

}  // namespace zp::partition
