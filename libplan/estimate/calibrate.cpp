#include "libplan/estimate/calibrate.h"

#include <algorithm>

namespace zp::estimate {

LatencyModel latencyFromProfile(const profile::ProfileDb& db, const std::string& task, int positions,
                                const std::vector<Processor>& processors) {
  LatencyModel lm;
  for (const auto* r : db.select(profile::RowKind::Subgraph, task)) {
    auto p = std::find_if(processors.begin(), processors.end(), [&](const auto& x) { return x.name == r->processor; });
    if (p == processors.end()) continue;
    if (p->host() && r->policy != p->policy) continue;
    lm.setSubgraph(*r->position, r->variant, r->processor, r->medianMs);
  }
  double perByte = 0;
  for (const auto* r : db.select(profile::RowKind::Transition, task))
    if (r->position && *r->position >= 0 && *r->position + 1 < positions && r->bytes && *r->bytes > 0)
      perByte = std::max(perByte, r->medianMs / static_cast<double>(*r->bytes));
  for (const auto& a : processors)
    for (const auto& b : processors)
      if (a.name != b.name) lm.setTransition(a.name, b.name, {0.0, perByte});
  return lm;
}

double calibrateOverhead(const std::vector<std::pair<double, double>>& sumOfSubgraphsAndWholeMs, int positions,
                         double fallbackMs, double fastestSubgraphMs) {
  if (positions <= 1 || sumOfSubgraphsAndWholeMs.empty()) return std::min(fallbackMs, fastestSubgraphMs);
  std::vector<double> samples;
  for (const auto& [sum, whole] : sumOfSubgraphsAndWholeMs) samples.push_back((sum - whole) / (positions - 1));
  std::sort(samples.begin(), samples.end());
  return std::clamp(samples[samples.size() / 2], 0.0, std::max(0.0, fastestSubgraphMs));
}

}  // namespace zp::estimate
