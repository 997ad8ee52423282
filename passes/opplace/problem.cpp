#include "passes/opplace/problem.h"

#include <algorithm>
#include <cmath>

namespace zp::opplace {

Status validate(const Problem& p) {
  const size_t n = p.nodes.size(), k = p.processors.size();
  if (k == 0) return makeError("operator placement: no processors");
  if (p.ms.size() != n) return makeError("operator placement: {} cost rows for {} nodes", p.ms.size(), n);
  for (size_t v = 0; v < n; ++v) {
    if (p.ms[v].size() != k)
      return makeError("operator placement: node '{}' has {} costs for {} processors", p.nodes[v].name, p.ms[v].size(), k);
    for (double x : p.ms[v])
      if (!std::isfinite(x) || x < 0) return makeError("operator placement: node '{}' has cost {}", p.nodes[v].name, x);
  }
  for (const auto& e : p.edges)
    if (e.from < 0 || e.to >= static_cast<int>(n) || e.from >= e.to || !(e.bytes >= 0))
      return makeError("operator placement: edge {} -> {} is not a forward edge of the dispatch order", e.from, e.to);
  if (p.handoff.size() != k) return makeError("operator placement: hand-off matrix is not {} x {}", k, k);
  for (const auto& row : p.handoff) {
    if (row.size() != k) return makeError("operator placement: hand-off matrix is not {} x {}", k, k);
    for (const auto& h : row)
      if (!(h.fixedMs >= 0) || !(h.msPerByte >= 0)) return makeError("operator placement: negative hand-off cost");
  }
  for (const auto& a : p.alone)
    if (a.ms.size() != n) return makeError("operator placement: configuration '{}' has {} costs for {} nodes", a.name, a.ms.size(), n);
  if (!p.cores.empty()) {
    if (p.cores.size() != k) return makeError("operator placement: cores of {} processors for {} processors", p.cores.size(), k);
    for (size_t q = 0; q < k; ++q) {
      if (p.cores[q].empty()) return makeError("operator placement: processor '{}' occupies no cores", p.processors[q]);
      for (int c : p.cores[q])
        if (c < 0 || c > 4095) return makeError("operator placement: processor '{}': core {} out of range", p.processors[q], c);
    }
  }
  return {};
}

CoreMap coreMap(const Problem& p) {
  CoreMap m;
  if (p.cores.empty()) {
    for (size_t q = 0; q < p.processors.size(); ++q) m.of.push_back({static_cast<int>(q)});
    m.count = static_cast<int>(p.processors.size());
    return m;
  }
  m.of = p.cores;
  for (const auto& cs : m.of)
    for (int c : cs) m.count = std::max(m.count, c + 1);
  return m;
}

std::vector<std::vector<int>> inEdges(const Problem& p) {
  std::vector<std::vector<int>> in(p.nodes.size());
  for (size_t i = 0; i < p.edges.size(); ++i) in[static_cast<size_t>(p.edges[i].to)].push_back(static_cast<int>(i));
  return in;
}

Timeline listSchedule(const Problem& p, const Assignment& a) {
  assert(a.size() == p.nodes.size());
  const auto in = inEdges(p);
  const CoreMap cores = coreMap(p);
  Timeline t;
  t.startMs.assign(p.nodes.size(), 0);
  t.finishMs.assign(p.nodes.size(), 0);
  std::vector<double> freeAt(static_cast<size_t>(cores.count), 0);  // per core
  for (size_t v = 0; v < p.nodes.size(); ++v) {
    const int q = a[v];
    double ready = 0;
    for (int ei : in[v]) {
      const auto& e = p.edges[static_cast<size_t>(ei)];
      const int pu = a[static_cast<size_t>(e.from)];
      double r = t.finishMs[static_cast<size_t>(e.from)];
      if (pu != q) {
        r += p.handoff[static_cast<size_t>(pu)][static_cast<size_t>(q)].ms(e.bytes);
        ++t.handoffs;
      }
      ready = std::max(ready, r);
    }
    const auto& on = cores.of[static_cast<size_t>(q)];
    t.startMs[v] = ready;
    for (int c : on) t.startMs[v] = std::max(t.startMs[v], freeAt[static_cast<size_t>(c)]);
    t.finishMs[v] = t.startMs[v] + p.ms[v][static_cast<size_t>(q)];
    for (int c : on) freeAt[static_cast<size_t>(c)] = t.finishMs[v];
    t.latencyMs = std::max(t.latencyMs, t.finishMs[v]);
  }
  return t;
}

bool isChain(const Problem& p) {
  if (p.edges.size() + 1 != p.nodes.size() && !(p.nodes.empty() && p.edges.empty())) return false;
  std::vector<int> seen(p.nodes.size(), 0);
  for (const auto& e : p.edges) {
    if (e.to != e.from + 1 || seen[static_cast<size_t>(e.to)]++) return false;
  }
  return true;
}

}  // namespace zp::opplace
