// Name mapping and the parts every importer shares.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <set>

#include <fmt/format.h>

#include "libplan/profile/import.h"

namespace zp::profile {

std::string_view matchRuleName(MatchRule r) {
  switch (r) {
    case MatchRule::None: return "unmatched";
    case MatchRule::NodeName: return "node-name";
    case MatchRule::OutputTensor: return "output-tensor";
    case MatchRule::NodeOf: return "node-of";
    case MatchRule::Metadata: return "metadata";
    case MatchRule::Fused: return "fused";
    case MatchRule::Merged: return "merged";
    case MatchRule::Reformat: return "reformat";
    case MatchRule::ForeignNode: return "foreign-node";
    case MatchRule::Prefix: return "prefix";
    case MatchRule::NodeIndex: return "node-index";
  }
  assert(false);
  return "";
}

std::string nodeKey(const onnx::NodeProto& node) {
  if (!node.name().empty()) return node.name();
  for (const auto& o : node.output())
    if (!o.empty()) return "node_of_" + o;
  return "";
}

NameMapper::NameMapper(const graph::GraphView& view) : view_(view) {
  topoPos_.assign(static_cast<size_t>(view.numNodes()), -1);
  const auto& topo = view.topoOrder();
  for (size_t p = 0; p < topo.size(); ++p) topoPos_[static_cast<size_t>(topo[p])] = static_cast<int>(p);
  for (int i = 0; i < view.numNodes(); ++i) {
    const std::string& n = view.node(i).name();
    if (!n.empty()) byName_.emplace(n, i);  // first wins on duplicate names
  }
}

std::string NameMapper::nodeKey(int index) const { return profile::nodeKey(view_.node(index)); }

Resolution NameMapper::single(int index, MatchRule rule) const {
  Resolution r;
  r.rule = rule;
  r.nodes = {index};
  return r;
}

namespace {

bool startsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool endsWith(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

std::vector<std::string> splitOn(const std::string& s, std::string_view sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    size_t p = s.find(sep, start);
    if (p == std::string::npos) {
      out.push_back(s.substr(start));
      return out;
    }
    out.push_back(s.substr(start, p - start));
    start = p + sep.size();
  }
}

bool allDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

Resolution NameMapper::resolveName(const std::string& name) const { return resolveInner(name, 0); }

Resolution NameMapper::resolveInner(const std::string& name, int depth) const {
  Resolution none;
  if (name.empty() || depth > 4) return none;
  if (auto it = byName_.find(name); it != byName_.end()) return single(it->second, MatchRule::NodeName);
  if (int p = view_.producer(name); p >= 0) return single(p, MatchRule::OutputTensor);
  if (startsWith(name, "node_of_")) {
    std::string t = name.substr(8);
    if (int p = view_.producer(t); p >= 0) return single(p, MatchRule::NodeOf);
  }
  auto sortUnique = [this](std::vector<int>& v) {
    std::sort(v.begin(), v.end(), [this](int a, int b) { return topoPos_[size_t(a)] < topoPos_[size_t(b)]; });
    v.erase(std::unique(v.begin(), v.end()), v.end());
  };
  // {ForeignNode[first...last]}: every node between first and last in topological order.
  if (startsWith(name, "{ForeignNode[") && endsWith(name, "]}")) {
    std::string inner = name.substr(13, name.size() - 15);
    size_t dots = inner.find("...");
    std::string first = dots == std::string::npos ? inner : inner.substr(0, dots);
    std::string last = dots == std::string::npos ? inner : inner.substr(dots + 3);
    Resolution a = resolveInner(first, depth + 1), b = resolveInner(last, depth + 1);
    if (a.nodes.empty() || b.nodes.empty()) return none;
    int lo = topoPos_[size_t(a.nodes.front())], hi = topoPos_[size_t(b.nodes.back())];
    if (lo > hi) std::swap(lo, hi);
    Resolution r;
    r.rule = MatchRule::ForeignNode;
    std::vector<int> constants;
    for (int p = lo; p <= hi; ++p) {
      int idx = view_.topoOrder()[size_t(p)];
      (view_.isConstantNode(idx) ? constants : r.nodes).push_back(idx);
    }
    if (r.nodes.empty()) r.nodes = constants;  // a region of constants only: keep them
    return r;
  }
  // Reformat / copy nodes TensorRT inserts before (or after) a layer: counted to that layer.
  for (std::string_view pre : {"Reformatting CopyNode for Input Tensor ", "Reformatting CopyNode for Output Tensor "}) {
    if (!startsWith(name, pre)) continue;
    size_t to = name.find(" to ", pre.size());
    if (to == std::string::npos || !allDigits(std::string_view(name).substr(pre.size(), to - pre.size()))) continue;
    Resolution r = resolveInner(name.substr(to + 4), depth + 1);
    if (!r.nodes.empty()) r.rule = MatchRule::Reformat;
    return r;
  }
  for (std::string_view mid : {" input reformatter ", " output reformatter "}) {
    size_t p = name.rfind(mid);
    if (p == std::string::npos || !allDigits(std::string_view(name).substr(p + mid.size()))) continue;
    Resolution r = resolveInner(name.substr(0, p), depth + 1);
    if (!r.nodes.empty()) r.rule = MatchRule::Reformat;
    return r;
  }
  // TensorRT 8 pointwise fusions "PWN(A, B)", possibly nested "PWN(PWN(A), B)": the parts.
  if (startsWith(name, "PWN(") && endsWith(name, ")")) {
    std::string inner = name.substr(4, name.size() - 5);
    std::vector<std::string> parts;
    int nest = 0;
    size_t start = 0;
    for (size_t i = 0; i < inner.size(); ++i) {
      if (inner[i] == '(') ++nest;
      else if (inner[i] == ')') --nest;
      else if (nest == 0 && inner.compare(i, 2, ", ") == 0) {
        parts.push_back(inner.substr(start, i - start));
        start = i + 2;
        ++i;
      }
    }
    parts.push_back(inner.substr(start));
    Resolution r;
    for (const std::string& part : parts) {
      Resolution pr = resolveInner(part, depth + 1);
      r.nodes.insert(r.nodes.end(), pr.nodes.begin(), pr.nodes.end());
    }
    if (r.nodes.empty()) return none;
    r.rule = MatchRule::Fused;
    sortUnique(r.nodes);
    return r;
  }
  // Fusions "A + B" and horizontal merges "A || B": the union of the parts that resolve.
  for (auto [sep, rule] : {std::pair<std::string_view, MatchRule>{" + ", MatchRule::Fused},
                           std::pair<std::string_view, MatchRule>{" || ", MatchRule::Merged}}) {
    if (name.find(sep) == std::string::npos) continue;
    Resolution r;
    for (const std::string& part : splitOn(name, sep)) {
      Resolution pr = resolveInner(part, depth + 1);
      r.nodes.insert(r.nodes.end(), pr.nodes.begin(), pr.nodes.end());
    }
    if (r.nodes.empty()) return none;
    r.rule = rule;
    sortUnique(r.nodes);
    return r;
  }
  // "<node or tensor>_<suffix>": the longest such prefix.
  for (size_t p = name.rfind('_'); p != std::string::npos && p > 0; p = name.rfind('_', p - 1)) {
    std::string prefix = name.substr(0, p);
    if (auto it = byName_.find(prefix); it != byName_.end()) return single(it->second, MatchRule::Prefix);
    if (int q = view_.producer(prefix); q >= 0) return single(q, MatchRule::Prefix);
  }
  return none;
}

Resolution NameMapper::resolve(const LayerTime& layer) const {
  if (!layer.onnxNames.empty()) {
    Resolution r;
    for (const std::string& n : layer.onnxNames) {
      Resolution pr = resolveName(n);
      r.nodes.insert(r.nodes.end(), pr.nodes.begin(), pr.nodes.end());
    }
    if (!r.nodes.empty()) {
      r.rule = MatchRule::Metadata;
      std::sort(r.nodes.begin(), r.nodes.end(),
                [this](int a, int b) { return topoPos_[size_t(a)] < topoPos_[size_t(b)]; });
      r.nodes.erase(std::unique(r.nodes.begin(), r.nodes.end()), r.nodes.end());
      return r;
    }
  }
  if (layer.name.empty()) {
    if (layer.nodeIndex && *layer.nodeIndex >= 0 && *layer.nodeIndex < view_.numNodes()) {
      const auto& n = view_.node(*layer.nodeIndex);
      if (n.name().empty() && (layer.opType.empty() || layer.opType == n.op_type()))
        return single(*layer.nodeIndex, MatchRule::NodeIndex);
    }
    return {};
  }
  return resolveName(layer.name);
}

Status checkImportParams(const ImportParams& p, const std::string& label) {
  if (p.task.empty() || p.variant.empty() || p.processor.empty() || p.policy.empty())
    return makeError("{}: import needs a task, a variant, a processor and a policy", label);
  if (p.skipRuns < 0) return makeError("{}: skipRuns must not be negative", label);
  if (p.reportNames < 0) return makeError("{}: reportNames must not be negative", label);
  return {};
}

std::string ImportReport::summary() const {
  auto pct = [this](double ms) { return totalMs > 0 ? 100.0 * ms / totalMs : 0.0; };
  std::string s = fmt::format("{}: {} layers, {} matched ({:.1f}% of time", file, layers, matched, pct(matchedMs));
  if (approximate) s += fmt::format(", {} split approximately", approximate);
  s += fmt::format("), {} unmatched ({:.1f}%)", unmatched, pct(unmatchedMs));
  if (!unmatchedNames.empty()) {
    s += ": ";
    for (size_t i = 0; i < unmatchedNames.size(); ++i) s += (i ? ", '" : "'") + unmatchedNames[i] + "'";
    if (unmatched > static_cast<int>(unmatchedNames.size())) s += ", ...";
  }
  return s;
}

Expected<NodeImport> mapLayersToNodes(const std::vector<LayerTime>& layers, const NameMapper& mapper,
                                      const ImportParams& params, const std::string& source, const std::string& file,
                                      std::vector<std::string> notes) {
  NodeImport out;
  ImportReport& rep = out.report;
  rep.file = file;
  rep.notes = std::move(notes);
  struct Acc {
    double median = 0, p90 = 0;
    bool p90Known = true;
    int64_t runs = std::numeric_limits<int64_t>::max();
  };
  std::map<int, Acc> acc;  // node index -> accumulated time
  const graph::GraphView& view = mapper.view();
  for (const LayerTime& layer : layers) {
    ++rep.layers;
    rep.totalMs += layer.medianMs;
    Resolution res = mapper.resolve(layer);
    rep.rules[std::string(matchRuleName(res.rule))]++;
    if (res.nodes.empty()) {
      ++rep.unmatched;
      rep.unmatchedMs += layer.medianMs;
      if (static_cast<int>(rep.unmatchedNames.size()) < params.reportNames)
        rep.unmatchedNames.push_back(layer.name.empty() ? "(unnamed)" : layer.name);
      continue;
    }
    ++rep.matched;
    rep.matchedMs += layer.medianMs;
    if (res.approximate()) {
      ++rep.approximate;
      rep.approximateMs += layer.medianMs;
    }
    std::vector<double> weights(res.nodes.size(), 1.0);
    if (params.split == SplitRule::ByFlops && res.nodes.size() > 1) {
      for (size_t i = 0; i < res.nodes.size(); ++i) weights[i] = view.nodeStats(res.nodes[i]).flops;
      if (std::accumulate(weights.begin(), weights.end(), 0.0) <= 0) std::fill(weights.begin(), weights.end(), 1.0);
    }
    double wsum = std::accumulate(weights.begin(), weights.end(), 0.0);
    for (size_t i = 0; i < res.nodes.size(); ++i) {
      double share = weights[i] / wsum;
      Acc& a = acc[res.nodes[i]];
      a.median += share * layer.medianMs;
      if (layer.p90Ms)
        a.p90 += share * *layer.p90Ms;
      else
        a.p90Known = false;
      a.runs = std::min(a.runs, layer.runs);
    }
  }
  for (const auto& [idx, a] : acc) {
    ProfileRow r;
    r.kind = RowKind::Node;
    r.task = params.task;
    r.variant = params.variant;
    r.node = mapper.nodeKey(idx);
    r.processor = params.processor;
    r.policy = params.policy;
    r.medianMs = a.median;
    if (a.p90Known) r.p90Ms = std::max(a.p90, a.median);
    if (a.runs != std::numeric_limits<int64_t>::max()) r.runs = a.runs;
    r.source = source;
    // The profiler's numbers (and their sums per node) must fit a profile row.
    if (auto p = r.problem()) return makeError("{}: node '{}': {}", file, r.node, *p);
    out.rows.push_back(std::move(r));
  }
  std::sort(out.rows.begin(), out.rows.end(),
            [](const ProfileRow& a, const ProfileRow& b) { return a.node < b.node; });
  return out;
}

}  // namespace zp::profile
