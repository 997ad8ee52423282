#include "libplan/util/query_summary.h"

#include <algorithm>
#include <limits>

#include "libplan/util/stats.h"

namespace zp {

bool sloMet(const QueryOutcome& q) {
  return q.completed && q.accuracySloMet && q.finishMs - q.arrivalMs <= q.sloMs;
}

QuerySummary summarizeQueries(const std::vector<QueryOutcome>& queries) {
  QuerySummary s;
  s.queries = static_cast<int>(queries.size());
  std::vector<double> latencies;
  double first = std::numeric_limits<double>::infinity(), last = -first;
  for (const auto& q : queries) {
    first = std::min(first, q.arrivalMs);
    if (!sloMet(q)) ++s.violations;
    if (!q.completed) continue;
    ++s.completed;
    latencies.push_back(q.finishMs - q.arrivalMs);
    last = std::max(last, q.finishMs);
  }
  if (s.queries > 0) s.violationRate = static_cast<double>(s.violations) / s.queries;
  if (!latencies.empty()) {
    s.p50Ms = percentile(latencies, 0.5);
    s.p99Ms = percentile(latencies, 0.99);
    s.spanMs = last - first;
    if (s.spanMs > 0) s.throughputQps = s.completed / (s.spanMs / 1000.0);
  }
  return s;
}

}  // namespace zp
