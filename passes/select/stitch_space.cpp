#include "passes/select/stitch_space.h"

#include <algorithm>
#include <limits>

namespace zp::select {

std::vector<std::string> TaskSpace::variantsOf(uint64_t k) const {
  std::vector<std::string> out;
  for (int d : combinations().digits(k)) out.push_back(variants[static_cast<size_t>(d)]);
  return out;
}

std::string TaskSpace::idOf(uint64_t k) const {
  std::string id;
  for (const auto& v : variantsOf(k)) {
    if (!id.empty()) id += "+";
    id += v;
  }
  return id;
}

Candidate TaskSpace::candidate(uint64_t k) const {
  return Candidate{idOf(k), variantsOf(k), accuracy->predicted(k), accuracy->measured(k), combinations().original(k)};
}

std::vector<uint64_t> TaskSpace::validCombinations() const {
  std::vector<uint64_t> out;
  for (uint64_t k = 0; k < combinations().size(); ++k)
    if (valid(k)) out.push_back(k);
  return out;
}

double TaskSpace::latencyMs(const Candidate& c, const std::vector<std::string>& placement) const {
  auto v = latency.estimate(c.variants, placement, boundaryBytes);
  return v ? *v : std::numeric_limits<double>::infinity();
}

void TaskSpace::buildDense(const std::vector<std::string>& processors) {
  variants_ = variants.size();
  processors_ = processors.size();
  overhead_.assign(processors_, 0.0);
  for (size_t p = 0; p < processors_; ++p) overhead_[p] = latency.overhead(processors[p]);
  work_.assign(static_cast<size_t>(positions) * variants_ * processors_, std::numeric_limits<double>::infinity());
  for (size_t vi = 0; vi < variants_; ++vi)
    for (int pos = 0; pos < positions; ++pos)
      for (size_t p = 0; p < processors_; ++p)
        if (auto ms = latency.subgraph(pos, variants[vi], processors[p]))
          work_[(static_cast<size_t>(pos) * variants_ + vi) * processors_ + p] = *ms - overhead_[p];
  transfer_.assign(static_cast<size_t>(std::max(positions - 1, 0)) * processors_ * processors_, 0.0);
  for (int pos = 0; pos + 1 < positions; ++pos)
    for (size_t a = 0; a < processors_; ++a)
      for (size_t b = 0; b < processors_; ++b)
        transfer_[(static_cast<size_t>(pos) * processors_ + a) * processors_ + b] =
            latency.transition(processors[a], processors[b], boundaryBytes[static_cast<size_t>(pos)]);
}

double TaskSpace::latencyMs(uint64_t k, const std::vector<int>& placement) const {
  const auto& c = combinations();
  double total = 0;
  for (int pos = 0; pos < positions; ++pos) {
    const int p = placement[static_cast<size_t>(pos)];
    total += works(pos, c.digit(k, pos))[p];
    if (pos == 0 || placement[static_cast<size_t>(pos - 1)] != p) {
      total += runOverhead(p);
      if (pos > 0) total += transfer(pos - 1, placement[static_cast<size_t>(pos - 1)], p);
    }
  }
  return total;
}

int64_t TaskSpace::memoryBytes(int position, const std::string& variant, const std::string& processor) const {
  if (auto it = memory.find({position, variant, processor}); it != memory.end()) return it->second;
  return stitch->subgraph(position, variant).cost.weightBytes;
}

Status restrictProcessors(StitchSpace& space, const std::vector<std::string>& names) {
  std::vector<Processor> kept;
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
  std::vector<Processor> ordered;
  for (const auto& p : space.processors)
    if (std::any_of(kept.begin(), kept.end(), [&](const auto& k) { return k.name == p.name; })) ordered.push_back(p);
  space.processors = std::move(ordered);
  std::vector<std::string> order;
  for (const auto& p : space.processors) order.push_back(p.name);
  for (auto& t : space.tasks) t.buildDense(order);
  // A group runs on the kept processors only; one that runs on none of them is no decision.
  for (auto& g : space.groups) {
    std::erase_if(g.runMs, [&](const auto& r) { return std::find(order.begin(), order.end(), r.first) == order.end(); });
    std::erase_if(g.bytes, [&](const auto& r) { return std::find(order.begin(), order.end(), r.first) == order.end(); });
  }
  std::erase_if(space.groups, [](const SharedGroup& g) { return g.runMs.empty(); });
  // A placement that places operators on a processor left out is no decision.
  std::erase_if(space.placed, [&](const PlacedModel& m) {
    return std::any_of(m.placement.processors.begin(), m.placement.processors.end(),
                       [&](const std::string& p) { return std::find(order.begin(), order.end(), p) == order.end(); });
  });
  return {};
}

}  // namespace zp::select
