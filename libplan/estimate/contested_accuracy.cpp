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

ContestedRun tallyContestedRun(const ContestedPlan& plan, const std::vector<uint8_t>& correct) {
  assert(correct.size() == plan.contested.size() + plan.audit.size());
  const auto samples = plan.samples();
  ContestedRun run;
  for (size_t i = 0, a = 0; i < samples.size(); ++i) {
    const bool inAudit = a < plan.audit.size() && plan.audit[a] == samples[i];
    a += inAudit;
    if (inAudit) {
      ++run.audited;
      run.broken += correct[i] == 0;
    } else {
      run.contestedRight += correct[i] != 0;
    }
  }
  return run;
}

std::vector<double> pooledBreakage(const std::vector<ContestedRun>& runs) {
  double audited = 0, broken = 0, inverseSizes = 0, withAudit = 0;
  for (const auto& r : runs) {
    audited += static_cast<double>(r.audited);
    broken += static_cast<double>(r.broken);
    if (r.audited) inverseSizes += 1.0 / static_cast<double>(r.audited), ++withAudit;
  }
  const double pooled = audited > 0 ? broken / audited : 0.0;
  // Spread of the variants' rates beyond what binomial sampling explains.
  double spread = 0;
  for (const auto& r : runs)
    if (r.audited) spread += std::pow(static_cast<double>(r.broken) / static_cast<double>(r.audited) - pooled, 2);
  const double between = withAudit > 0 ? spread / withAudit - pooled * (1 - pooled) * inverseSizes / withAudit : 0.0;
  // Prior strength in samples; infinite (every variant at the pooled rate) when the spread is sampling noise.
  const double strength = between > 0 ? std::max(0.0, pooled * (1 - pooled) / between - 1) : HUGE_VAL;
  std::vector<double> rates;
  for (const auto& r : runs) {
    if (std::isinf(strength) || (r.audited == 0 && strength == 0)) rates.push_back(pooled);
    else rates.push_back((static_cast<double>(r.broken) + strength * pooled) / (static_cast<double>(r.audited) + strength));
  }
  return rates;
}

double composedAccuracy(const ContestedPlan& plan, const ContestedRun& run, double breakage) {
  if (plan.total == 0) return 0.0;
  const double unaudited = static_cast<double>(plan.agreeing - run.audited);
  const double right = static_cast<double>(run.contestedRight + run.audited - run.broken) + unaudited * (1 - breakage);
  return right / static_cast<double>(plan.total);
}

}  // namespace zp::estimate
