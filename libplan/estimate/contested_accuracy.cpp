#include "libplan/estimate/contested_accuracy.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <iterator>

#include "libplan/estimate/accuracy_estimator.h"

namespace zp::estimate {

std::vector<size_t> ContestedPlan::samples() const {
  std::vector<size_t> all;
  std::merge(contested.begin(), contested.end(), audit.begin(), audit.end(), std::back_inserter(all));
  return all;
}

ContestedPlan contestedPlan(const std::vector<const std::vector<uint8_t>*>& sources, double auditFraction,
                            uint64_t seed) {
  assert(!sources.empty());
  ContestedPlan plan;
  plan.total = sources[0]->size();
  std::vector<size_t> agreeing;
  for (size_t i = 0; i < plan.total; ++i) {
    const bool allRight = std::all_of(sources.begin(), sources.end(), [&](const auto* s) { return (*s)[i] != 0; });
    (allRight ? agreeing : plan.contested).push_back(i);
  }
  plan.agreeing = agreeing.size();
  const auto auditCount = static_cast<size_t>(std::ceil(auditFraction * static_cast<double>(agreeing.size())));
  for (size_t i : sampleIndices(agreeing.size(), std::min(auditCount, agreeing.size()), seed, {}))
    plan.audit.push_back(agreeing[i]);
  return plan;
}

double composedAccuracy(const ContestedPlan& plan, const std::vector<uint8_t>& correct) {
  assert(correct.size() == plan.contested.size() + plan.audit.size());
  if (plan.total == 0) return 0.0;
  const auto samples = plan.samples();
  size_t contestedRight = 0, auditRight = 0;
  for (size_t i = 0, a = 0; i < samples.size(); ++i) {
    const bool inAudit = a < plan.audit.size() && plan.audit[a] == samples[i];
    a += inAudit;
    (inAudit ? auditRight : contestedRight) += correct[i] != 0;
  }
  const double passRate = plan.audit.empty() ? 1.0 : static_cast<double>(auditRight) / static_cast<double>(plan.audit.size());
  const double unaudited = static_cast<double>(plan.agreeing - plan.audit.size());
  return (static_cast<double>(contestedRight + auditRight) + unaudited * passRate) / static_cast<double>(plan.total);
}

}  // namespace zp::estimate
