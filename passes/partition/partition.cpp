#include "passes/partition/partition.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace zp::partition {

Expected<Alignment> alignVariants(const std::vector<VariantGraph>& variants, const std::string& task) {
  Alignment a;
  if (variants.empty()) return makeError("task '{}': no variants", task);
  for (const auto& v : variants) a.sequences.push_back(mainSequence(*v.view));
  const auto& ref = variants[0];
  const auto& refSeq = a.sequences[0].nodes;
  auto describe = [](const VariantGraph& v, const MainSequence& s, size_t k) {
    const auto& n = v.view->node(s.nodes[k]);
    return fmt::format("'{}' ({})", n.name(), n.op_type());
  };
  for (size_t i = 1; i < variants.size(); ++i) {
    const auto& seq = a.sequences[i].nodes;
    size_t common = std::min(seq.size(), refSeq.size());
    for (size_t k = 0; k < common; ++k) {
      const auto& rn = ref.view->node(refSeq[k]);
      const auto& vn = variants[i].view->node(seq[k]);
      if (rn.name() == vn.name() && rn.op_type() == vn.op_type()) continue;
      if (rn.op_type() == vn.op_type()) continue;  // names differ: align by structure
      return makeError("task '{}': variants '{}' and '{}' cannot be aligned: they diverge at main node {}: '{}' has {}, '{}' has {}",
                       task, ref.id, variants[i].id, k, ref.id, describe(ref, a.sequences[0], k), variants[i].id,
                       describe(variants[i], a.sequences[i], k));
    }
    if (seq.size() != refSeq.size()) {
      bool refLonger = refSeq.size() > seq.size();
      const auto& longer = refLonger ? ref : variants[i];
      const auto& longerSeq = refLonger ? a.sequences[0] : a.sequences[i];
      const auto& shorter = refLonger ? variants[i] : ref;
      return makeError("task '{}': variants '{}' and '{}' cannot be aligned: '{}' ends after {} main nodes where '{}' continues with {}",
                       task, ref.id, variants[i].id, shorter.id, common, longer.id, describe(longer, longerSeq, common));
    }
  }
  std::vector<std::map<int, CutPoint>> perVariant;
  for (size_t i = 0; i < variants.size(); ++i) {
    std::map<int, CutPoint> m;
    for (auto& c : findCutPoints(*variants[i].view, a.sequences[i])) m.emplace(c.after, c);
    perVariant.push_back(std::move(m));
  }
  for (const auto& [after, cut] : perVariant[0]) {
    CommonCut cc{after, {}};
    for (const auto& m : perVariant) {
      auto it = m.find(after);
      if (it == m.end()) break;
      cc.perVariant.push_back(it->second);
    }
    if (cc.perVariant.size() == variants.size()) a.cuts.push_back(std::move(cc));
  }
  return a;
}

std::vector<double> flopsPerPosition(const graph::GraphView& view, const MainSequence& seq) {
  std::vector<double> flops(seq.nodes.size(), 0.0);
  for (int i = 0; i < view.numNodes(); ++i) {
    int p = seq.position[static_cast<size_t>(i)];
    if (p >= 0 && !view.isConstantNode(i)) flops[static_cast<size_t>(p)] += view.nodeStats(i).flops;
  }
  return flops;
}

std::vector<int> balancedSplit(const std::vector<double>& weights, const std::vector<int>& allowedAfter, int parts) {
  const int c = static_cast<int>(allowedAfter.size());
  if (parts < 1 || parts - 1 > c) return {};
  if (parts == 1) return {};
  std::vector<double> prefix(weights.size() + 1, 0.0);
  for (size_t i = 0; i < weights.size(); ++i) prefix[i + 1] = prefix[i] + weights[i];
  // Boundaries: b_0 = -1 (before everything), cut candidates, b_end = n-1.
  std::vector<int> bounds{-1};
  bounds.insert(bounds.end(), allowedAfter.begin(), allowedAfter.end());
  bounds.push_back(static_cast<int>(weights.size()) - 1);
  const int nb = static_cast<int>(bounds.size());
  auto seg = [&](int from, int to) {  // items (bounds[from], bounds[to]]
    return prefix[static_cast<size_t>(bounds[to] + 1)] - prefix[static_cast<size_t>(bounds[from] + 1)];
  };
  const double inf = std::numeric_limits<double>::infinity();

  // Pass 1: minimal possible maximum part.
  std::vector<std::vector<double>> best(static_cast<size_t>(parts + 1), std::vector<double>(static_cast<size_t>(nb), inf));
  best[0][0] = 0.0;
  for (int k = 1; k <= parts; ++k)
    for (int j = 1; j < nb; ++j)
      for (int i = 0; i < j; ++i)
        if (best[k - 1][i] < inf)
          best[k][j] = std::min(best[k][j], std::max(best[k - 1][i], seg(i, j)));
  const double limit = best[parts][nb - 1];
  // Pass 2: minimal sum of squares with every part <= limit (relative slack for rounding).
  const double cap = limit * (1 + 1e-12) + 1e-9;
  std::vector<std::vector<double>> sq(static_cast<size_t>(parts + 1), std::vector<double>(static_cast<size_t>(nb), inf));
  std::vector<std::vector<int>> from(static_cast<size_t>(parts + 1), std::vector<int>(static_cast<size_t>(nb), -1));
  sq[0][0] = 0.0;
  for (int k = 1; k <= parts; ++k)
    for (int j = 1; j < nb; ++j)
      for (int i = 0; i < j; ++i) {
        if (sq[k - 1][i] == inf) continue;
        double s = seg(i, j);
        if (s > cap) continue;
        double v = sq[k - 1][i] + s * s;
        if (v < sq[k][j]) {  // strict: the earliest predecessor wins ties
          sq[k][j] = v;
          from[k][j] = i;
        }
      }
  std::vector<int> cuts;
  for (int k = parts, j = nb - 1; k > 1; --k) {
    j = from[k][j];
    cuts.push_back(bounds[j]);
  }
  std::reverse(cuts.begin(), cuts.end());
  return cuts;
}

Expected<Partition> choosePartition(const Alignment& alignment, const std::vector<VariantGraph>& variants,
                                    size_t reference, const PartitionParams& params, const std::string& task) {
  Partition part;
  const auto& refSeq = alignment.sequences[reference];
  std::vector<double> flops = flopsPerPosition(*variants[reference].view, refSeq);
  if (!params.cutTensors.empty()) {
    int previous = -1;
    for (const auto& name : params.cutTensors) {
      auto it = std::find_if(alignment.cuts.begin(), alignment.cuts.end(),
                             [&](const CommonCut& c) { return c.perVariant[reference].tensor == name; });
      if (it == alignment.cuts.end()) {
        std::string candidates;
        for (const auto& c : alignment.cuts)
          candidates += (candidates.empty() ? "" : ", ") + c.perVariant[reference].tensor;
        return makeError("--cuts: '{}' is not a cut point common to all variants of task '{}' (candidates: {})",
                         name, task, candidates.empty() ? "none" : candidates);
      }
      int index = static_cast<int>(it - alignment.cuts.begin());
      if (index <= previous) return makeError("--cuts: '{}' is listed out of graph order for task '{}'", name, task);
      previous = index;
      part.cuts.push_back(index);
    }
  } else {
    const int s = params.subgraphs;
    const int available = static_cast<int>(alignment.cuts.size());
    if (s < 1) return makeError("--subgraphs {}: must be at least 1", s);
    if (s - 1 > available)
      return makeError("--subgraphs {}: task '{}' has only {} cut points common to all its variants (at most {} subgraphs)",
                       s, task, available, available + 1);
    std::vector<int> allowed;
    for (const auto& c : alignment.cuts) allowed.push_back(c.after);
    std::vector<int> afters = balancedSplit(flops, allowed, s);
    for (int after : afters) {
      auto it = std::find_if(alignment.cuts.begin(), alignment.cuts.end(), [&](const CommonCut& c) { return c.after == after; });
      assert(it != alignment.cuts.end());
      part.cuts.push_back(static_cast<int>(it - alignment.cuts.begin()));
    }
  }
  int begin = 0;
  for (size_t k = 0; k <= part.cuts.size(); ++k) {
    int end = k < part.cuts.size() ? alignment.cuts[static_cast<size_t>(part.cuts[k])].after + 1
                                   : static_cast<int>(flops.size());
    double sum = 0;
    for (int p = begin; p < end; ++p) sum += flops[static_cast<size_t>(p)];
    part.partFlops.push_back(sum);
    begin = end;
  }
  return part;
}

}  // namespace zp::partition
