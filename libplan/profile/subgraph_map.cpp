#include "libplan/profile/subgraph_map.h"

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "libplan/graph/analysis.h"
#include "libplan/profile/import.h"

namespace zp::profile {

std::string SubgraphMapping::summary() const {
  double pct = totalMs > 0 ? 100.0 * mappedMs / totalMs : 0.0;
  std::string s = fmt::format("{} node rows, {} mapped onto subgraphs ({:.1f}% of time); {} untimed subgraph nodes",
                              nodes, mappedNodes, pct, untimedNodes);
  if (!unmappedNames.empty()) {
    s += "; unmapped: ";
    for (size_t i = 0; i < unmappedNames.size(); ++i) s += (i ? ", '" : "'") + unmappedNames[i] + "'";
    if (nodes - mappedNodes > static_cast<int>(unmappedNames.size())) s += ", ...";
  }
  if (!missing.empty()) s += fmt::format("; {} subgraphs without timed nodes", missing.size());
  return s;
}

namespace {

// Which position each node key of one variant belongs to, and the non-constant keys per position.
struct VariantNodes {
  std::map<std::string, int> positionOf;
  std::vector<std::vector<std::string>> timedKeys;  // per position: non-constant node keys
};

// The subgraph of `variant` at each position of `task`.
Expected<std::vector<const zoo::SubgraphInfo*>> variantSubgraphs(const zoo::TaskStitch& task,
                                                                 const std::string& variant) {
  std::vector<const zoo::SubgraphInfo*> out;
  for (int pos = 0; pos < task.positions(); ++pos) {
    const zoo::SubgraphInfo* info = nullptr;
    for (const auto& s : task.subgraphs[static_cast<size_t>(pos)])
      if (s.variant == variant) info = &s;
    if (!info) return makeError("stitch.json: task '{}' has no subgraph of variant '{}' at position {}", task.name,
                                variant, pos);
    out.push_back(info);
  }
  return out;
}

Expected<VariantNodes> variantNodes(const zoo::TaskStitch& task, const std::string& variant,
                                    const SubgraphModels& models) {
  VariantNodes vn;
  vn.timedKeys.resize(static_cast<size_t>(task.positions()));
  std::map<std::string, int> firstSeen;  // constant everywhere so far: first position
  ZP_ASSIGN_OR_RETURN(auto infos, variantSubgraphs(task, variant));
  for (int pos = 0; pos < task.positions(); ++pos) {
    const zoo::SubgraphInfo* info = infos[static_cast<size_t>(pos)];
    auto mit = models.find(info->file);
    if (mit == models.end())
      return makeError("stitch.json: subgraph '{}' of task '{}' was not loaded", info->file, task.name);
    graph::GraphView view(mit->second);
    for (int i = 0; i < view.numNodes(); ++i) {
      std::string key = nodeKey(view.node(i));
      if (key.empty()) continue;
      if (view.isConstantNode(i)) {
        firstSeen.emplace(key, pos);
        continue;
      }
      if (vn.positionOf.emplace(key, pos).second) vn.timedKeys[static_cast<size_t>(pos)].push_back(key);
    }
  }
  for (const auto& [key, pos] : firstSeen) vn.positionOf.emplace(key, pos);  // constant everywhere
  return vn;
}

}  // namespace

Expected<std::vector<std::string>> subgraphFilesFor(const std::vector<ProfileRow>& nodeRows,
                                                    const zoo::StitchManifest& manifest) {
  std::set<std::pair<std::string, std::string>> named;
  for (const ProfileRow& r : nodeRows)
    if (r.kind == RowKind::Node) named.emplace(r.task, r.variant);
  std::set<std::string> files;
  for (const auto& [taskName, variant] : named) {
    const zoo::TaskStitch* task = manifest.task(taskName);
    if (!task) return makeError("stitch.json: no task '{}' (node rows name it)", taskName);
    ZP_ASSIGN_OR_RETURN(auto infos, variantSubgraphs(*task, variant));
    for (const zoo::SubgraphInfo* info : infos) files.insert(info->file);
  }
  return std::vector<std::string>(files.begin(), files.end());
}

Expected<SubgraphMapping> mapToSubgraphs(const std::vector<ProfileRow>& nodeRows, const zoo::StitchManifest& manifest,
                                         const SubgraphModels& models, const SubgraphMapParams& params) {
  SubgraphMapping out;
  using GroupKey = std::tuple<std::string, std::string, std::string, std::string, std::string>;
  std::map<GroupKey, std::vector<const ProfileRow*>> groups;
  for (const ProfileRow& r : nodeRows) {
    if (r.kind != RowKind::Node) continue;
    groups[GroupKey{r.task, r.variant, r.processor, r.policy, r.source}].push_back(&r);
  }
  std::map<std::pair<std::string, std::string>, VariantNodes> cache;
  for (const auto& [key, rows] : groups) {
    const auto& [taskName, variant, processor, policy, source] = key;
    const zoo::TaskStitch* task = manifest.task(taskName);
    if (!task) return makeError("stitch.json: no task '{}' (node rows name it)", taskName);
    auto cit = cache.find({taskName, variant});
    if (cit == cache.end()) {
      ZP_ASSIGN_OR_RETURN(VariantNodes vn, variantNodes(*task, variant, models));
      cit = cache.emplace(std::make_pair(taskName, variant), std::move(vn)).first;
    }
    const VariantNodes& vn = cit->second;
    struct Acc {
      double median = 0, p90 = 0;
      bool p90Known = true;
      int64_t runs = std::numeric_limits<int64_t>::max();
      bool any = false;
    };
    std::vector<Acc> acc(static_cast<size_t>(task->positions()));
    std::map<std::string, bool> timed;
    for (const ProfileRow* r : rows) {
      ++out.nodes;
      out.totalMs += r->medianMs;
      auto it = vn.positionOf.find(r->node);
      if (it == vn.positionOf.end()) {
        if (static_cast<int>(out.unmappedNames.size()) < params.reportNames) out.unmappedNames.push_back(r->node);
        continue;
      }
      ++out.mappedNodes;
      out.mappedMs += r->medianMs;
      timed[r->node] = true;
      Acc& a = acc[static_cast<size_t>(it->second)];
      a.any = true;
      a.median += r->medianMs;
      if (r->p90Ms)
        a.p90 += *r->p90Ms;
      else
        a.p90Known = false;
      if (r->runs) a.runs = std::min(a.runs, *r->runs);
    }
    for (int pos = 0; pos < task->positions(); ++pos) {
      for (const std::string& k : vn.timedKeys[static_cast<size_t>(pos)])
        if (!timed.count(k)) ++out.untimedNodes;
      const Acc& a = acc[static_cast<size_t>(pos)];
      if (!a.any) {
        out.missing.push_back(fmt::format("{}/{}/{}/{}", taskName, pos, variant, processor));
        continue;
      }
      ProfileRow row;
      row.kind = RowKind::Subgraph;
      row.task = taskName;
      row.position = pos;
      row.variant = variant;
      row.processor = processor;
      row.policy = policy;
      row.medianMs = a.median;
      if (a.p90Known) row.p90Ms = std::max(a.p90, a.median);
      if (a.runs != std::numeric_limits<int64_t>::max()) row.runs = a.runs;
      row.source = source;
      // Sums of node times can leave the range a row may hold.
      if (auto p = row.problem())
        return makeError("subgraph {}/{}/{} on '{}' (sum of its node rows): {}", taskName, pos, variant, processor, *p);
      out.rows.push_back(std::move(row));
    }
  }
  std::sort(out.rows.begin(), out.rows.end(), [](const ProfileRow& a, const ProfileRow& b) { return a.key() < b.key(); });
  return out;
}

}  // namespace zp::profile
