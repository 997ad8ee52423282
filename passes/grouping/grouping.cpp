#include "passes/grouping/grouping.h"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "passes/partition/cut_points.h"

namespace zp::grouping {

namespace {

int64_t elemBytes(int32_t t) {
  switch (t) {
    case 10: case 16: case 5: case 4: return 2;   // fp16, bf16, int16, uint16
    case 2: case 3: case 9: return 1;             // uint8, int8, bool
    case 7: case 11: case 13: return 8;           // int64, double, uint64
    default: return 4;
  }
}

int64_t tensorBytes(const graph::GraphView& v, const std::string& name) {
  auto info = v.tensorInfo(name);
  if (!info || info->numElements() < 0) return 0;
  return info->numElements() * elemBytes(info->elemType);
}

struct Unit {  // a minimal group or a merged one
  std::vector<int> nodes;                 // main positions' graph node indices (Q/DQ included)
  std::vector<double> time, bytes;        // per accelerator (time < 0: unsupported)
  int64_t outBytes = 0;                   // bytes of the tensor crossing its end cut
  std::string outTensor;
};

std::string nodeName(const graph::GraphView& v, int n) {
  const auto& node = v.node(n);
  return node.name().empty() ? fmt::format("{}_{}", node.op_type(), n) : node.name();
}

bool shareAnAccelerator(const Unit& a, const Unit& b) {
  for (size_t k = 0; k < a.time.size(); ++k)
    if (a.time[k] >= 0 && b.time[k] >= 0) return true;
  return false;
}

double bestTime(const Unit& u) {
  double b = std::numeric_limits<double>::infinity();
  for (double t : u.time)
    if (t >= 0) b = std::min(b, t);
  return b;
}

void mergeInto(Unit& a, const Unit& b) {
  for (size_t k = 0; k < a.time.size(); ++k) {
    a.time[k] = a.time[k] < 0 || b.time[k] < 0 ? -1 : a.time[k] + b.time[k];
    a.bytes[k] += b.bytes[k];
  }
  a.nodes.insert(a.nodes.end(), b.nodes.begin(), b.nodes.end());
  a.outBytes = b.outBytes;
  a.outTensor = b.outTensor;
}

// Adds node `n` (its profiled time per accelerator, the bytes it moves) to `u`.
Status addNode(const graph::GraphView& v, int n, const profile::ProfileDb& db, const GroupingParams& prm,
               const std::string& label, Unit& u) {
  const auto& node = v.node(n);
  const std::string name = nodeName(v, n);
  const bool isQdq = node.op_type() == "QuantizeLinear" || node.op_type() == "DequantizeLinear";
  int64_t bytes = v.nodeStats(n).weightBytes;
  for (const auto& in : node.input())
    if (!in.empty() && !v.isInitializer(in)) bytes += tensorBytes(v, in);
  for (const auto& out : node.output())
    if (!out.empty()) bytes += tensorBytes(v, out);
  bool any = false;
  for (size_t a = 0; a < prm.accelerators.size(); ++a) {
    const auto* row = db.findNode(prm.task, prm.variant, prm.accelerators[a], name);
    if (!row) {
      if (!isQdq && !prm.absentNodesFused) u.time[a] = -1;  // else: fused into a neighbour there, no time of its own
      continue;
    }
    any = true;
    if (u.time[a] >= 0) {
      u.time[a] += row->medianMs;
      u.bytes[a] += static_cast<double>(bytes);
    }
  }
  if (!any && !isQdq && !prm.absentNodesFused)
    return makeError("{}: node '{}' ({}) has no profile row for task '{}' variant '{}' on any accelerator", label,
                     name, node.op_type(), prm.task, prm.variant);
  u.nodes.push_back(n);
  return {};
}

// The minimal groups: the nodes between two cut points (Q/DQ travel with the
// op they feed; constants are free).
Expected<std::vector<Unit>> minimalUnits(const graph::GraphView& v, const profile::ProfileDb& db,
                                         const GroupingParams& prm, const std::string& label) {
  const size_t A = prm.accelerators.size();
  auto main = partition::mainSequence(v);
  auto cuts = partition::findCutPoints(v, main);
  std::vector<std::vector<int>> byPos(main.nodes.size());  // owner position of each node
  for (int n = 0; n < v.numNodes(); ++n)
    if (main.position[static_cast<size_t>(n)] >= 0) byPos[static_cast<size_t>(main.position[static_cast<size_t>(n)])].push_back(n);
  std::vector<Unit> units;
  size_t pos = 0;
  for (size_t c = 0; c <= cuts.size(); ++c) {
    size_t last = c < cuts.size() ? static_cast<size_t>(cuts[c].after) : main.nodes.size() - 1;
    Unit u;
    u.time.assign(A, 0);
    u.bytes.assign(A, 0);
    for (; pos <= last; ++pos)
      for (int n : byPos[pos]) ZP_TRY(addNode(v, n, db, prm, label, u));
    if (c < cuts.size()) {
      u.outTensor = cuts[c].tensor;
      u.outBytes = tensorBytes(v, cuts[c].tensor);
    }
    bool runs = false;
    for (double t : u.time) runs = runs || t >= 0;
    if (!runs) return makeError("{}: the nodes up to cut {} run on no single accelerator", label, c);
    units.push_back(std::move(u));
  }
  return units;
}

double transitionCost(const GroupingParams& prm, int64_t bytes) {
  return prm.transitionOverheadMs + static_cast<double>(bytes) / (prm.transitionBandwidthGBs * 1e6);
}

// Left to right, a group is closed at a cut only when it is worth a transition
// there; a last group too small for its incoming transition joins its
// predecessor; then the cheapest neighbours merge down to maxGroups.
std::vector<Unit> mergeUnits(std::vector<Unit> units, const GroupingParams& prm) {
  std::vector<Unit> merged;
  for (auto& u : units) {
    if (!merged.empty()) {
      Unit& cur = merged.back();
      bool worth = bestTime(cur) >= prm.minTimeToTransition * 2 * transitionCost(prm, cur.outBytes);
      if (!worth && shareAnAccelerator(cur, u)) {  // merging must leave the group runnable somewhere
        mergeInto(cur, u);
        continue;
      }
    }
    merged.push_back(std::move(u));
  }
  if (merged.size() > 1 &&
      bestTime(merged.back()) < prm.minTimeToTransition * 2 * transitionCost(prm, merged[merged.size() - 2].outBytes)) {
    Unit tail = std::move(merged.back());
    merged.pop_back();
    if (shareAnAccelerator(merged.back(), tail)) mergeInto(merged.back(), tail);
    else merged.push_back(std::move(tail));
  }
  while (prm.maxGroups > 0 && static_cast<int>(merged.size()) > prm.maxGroups) {
    size_t pick = merged.size();
    double pickCost = std::numeric_limits<double>::infinity();
    for (size_t i = 0; i + 1 < merged.size(); ++i) {
      double c = bestTime(merged[i]) + bestTime(merged[i + 1]);
      if (shareAnAccelerator(merged[i], merged[i + 1]) && c < pickCost) pickCost = c, pick = i;
    }
    if (pick == merged.size()) break;  // no two neighbours share an accelerator
    Unit next = std::move(merged[pick + 1]);
    merged.erase(merged.begin() + static_cast<long>(pick) + 1);
    mergeInto(merged[pick], next);
  }
  return merged;
}

}  // namespace

Expected<Grouping> groupLayers(const graph::GraphView& v, const profile::ProfileDb& db, const GroupingParams& prm,
                               const std::string& label) {
  const size_t A = prm.accelerators.size();
  if (A == 0) return makeError("{}: grouping needs at least one accelerator", label);
  ZP_ASSIGN_OR_RETURN(auto units, minimalUnits(v, db, prm, label));
  const std::vector<Unit> merged = mergeUnits(std::move(units), prm);
  Grouping g;
  for (size_t i = 0; i < merged.size(); ++i) {
    const Unit& u = merged[i];
    sim::GroupCost c;
    c.name = u.nodes.empty() ? fmt::format("g{}", i) : nodeName(v, u.nodes.front()) + ".." + nodeName(v, u.nodes.back());
    c.timeMs = u.time;
    c.transitionOutMs.assign(A, i + 1 < merged.size() ? transitionCost(prm, u.outBytes) : 0.0);
    c.transitionInMs.assign(A, i > 0 ? transitionCost(prm, merged[i - 1].outBytes) : 0.0);
    c.demand.assign(A, 0);
    for (size_t k = 0; k < A; ++k)
      if (u.time[k] > 0) c.demand[k] = 100.0 * (u.bytes[k] / (u.time[k] * 1e6)) / prm.peakBandwidthGBs;
    g.groups.push_back(std::move(c));
    std::vector<std::string> names;
    for (int n : u.nodes) names.push_back(nodeName(v, n));
    g.nodes.push_back(std::move(names));
    if (i + 1 < merged.size()) g.boundaryTensors.push_back(u.outTensor);
  }
  return g;
}

}  // namespace zp::grouping
