#include "passes/select/stitch_space.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <map>


namespace zp::select {
namespace fs = std::filesystem;

double TaskSpace::latencyMs(const Candidate& c, const std::vector<std::string>& placement) const {
  auto v = latency.estimate(c.variants, placement, boundaryBytes);
  return v ? *v : std::numeric_limits<double>::infinity();
}

void TaskSpace::buildDense(const std::vector<std::string>& processors) {
  std::map<std::string, int> vIndex;
  for (const auto& c : candidates)
    for (const auto& v : c.variants) vIndex.emplace(v, 0);
  int k = 0;
  for (auto& [v, i] : vIndex) i = k++;
  variants_ = vIndex.size();
  processors_ = processors.size();
  candidateVariants_.clear();
  for (const auto& c : candidates) {
    std::vector<int> idx;
    for (const auto& v : c.variants) idx.push_back(vIndex[v]);
    candidateVariants_.push_back(std::move(idx));
  }
  overhead_.assign(processors_, 0.0);
  for (size_t p = 0; p < processors_; ++p) overhead_[p] = latency.overhead(processors[p]);
  work_.assign(static_cast<size_t>(positions) * variants_ * processors_, std::numeric_limits<double>::infinity());
  for (const auto& [v, vi] : vIndex)
    for (int pos = 0; pos < positions; ++pos)
      for (size_t p = 0; p < processors_; ++p)
        if (auto ms = latency.subgraph(pos, v, processors[p]))
          work_[(static_cast<size_t>(pos) * variants_ + static_cast<size_t>(vi)) * processors_ + p] = *ms - overhead_[p];
  transfer_.assign(static_cast<size_t>(std::max(positions - 1, 0)) * processors_ * processors_, 0.0);
  for (int pos = 0; pos + 1 < positions; ++pos)
    for (size_t a = 0; a < processors_; ++a)
      for (size_t b = 0; b < processors_; ++b)
        transfer_[(static_cast<size_t>(pos) * processors_ + a) * processors_ + b] =
            latency.transition(processors[a], processors[b], boundaryBytes[static_cast<size_t>(pos)]);
}

double TaskSpace::latencyMs(size_t candidate, const std::vector<int>& placement) const {
  const auto& vs = candidateVariants_[candidate];
  double total = 0;
  for (int pos = 0; pos < positions; ++pos) {
    const size_t p = static_cast<size_t>(placement[static_cast<size_t>(pos)]);
    total += work_[(static_cast<size_t>(pos) * variants_ + static_cast<size_t>(vs[static_cast<size_t>(pos)])) * processors_ + p];
    if (pos == 0 || placement[static_cast<size_t>(pos - 1)] != placement[static_cast<size_t>(pos)]) {
      total += overhead_[p];
      if (pos > 0)
        total += transfer_[(static_cast<size_t>(pos - 1) * processors_ + static_cast<size_t>(placement[static_cast<size_t>(pos - 1)])) * processors_ + p];
    }
  }
  return total;
}


int64_t TaskSpace::memoryBytes(int position, const std::string& variant, const std::string& processor) const {
  if (auto it = memory.find({position, variant, processor}); it != memory.end()) return it->second;
  return stitch->subgraph(position, variant).cost.weightBytes;
}

Status restrictProcessors(StitchSpace& space, const std::vector<std::string>& names) {
  std::vector<plan::PlanProcessor> kept;
  for (const auto& name : names) {
    auto it = std::find_if(space.processors.begin(), space.processors.end(), [&](const auto& p) { return p.name == name; });
    if (it == space.processors.end()) {
      std::string known;
      for (const auto& p : space.processors) {
        if (!known.empty()) known += ", ";
        known += p.name;
      }
      return makeError("--processors: '{}' is not a processor of the profile ({})", name, known);
    }
    if (std::any_of(kept.begin(), kept.end(), [&](const auto& p) { return p.name == name; }))
      return makeError("--processors: '{}' is named twice", name);
    kept.push_back(*it);
  }
  if (kept.empty()) return makeError("--processors: no processor named");
  // The profile's order, so that a restriction to every processor changes nothing.
  std::vector<plan::PlanProcessor> ordered;
  for (const auto& p : space.processors)
    if (std::any_of(kept.begin(), kept.end(), [&](const auto& k) { return k.name == p.name; })) ordered.push_back(p);
  space.processors = std::move(ordered);
  std::vector<std::string> order;
  for (const auto& p : space.processors) order.push_back(p.name);
  for (auto& t : space.tasks) t.buildDense(order);
  return {};
}

}  // namespace zp::select
