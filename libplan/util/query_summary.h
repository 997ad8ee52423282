// The per-run figures of a stream of queries (SparseLoom §5.1 metrics): SLO
// violation rate, latency percentiles and throughput. The executor's
// measurements and the simulator's predictions are both summarised here, so the
// two are defined identically.
#pragma once
#include <vector>

namespace zp {

struct QueryOutcome {
  double arrivalMs = 0;          // when the query arrived (open loop: from the trace)
  double finishMs = 0;           // when its last position finished
  bool completed = false;
  double sloMs = 0;              // the task's latency SLO
  bool accuracySloMet = true;    // the variant that served it meets the task's accuracy SLO
};

// Met when completed, within the latency SLO and served by a variant that meets
// the accuracy SLO (a violation is missing either, SparseLoom §5.1).
bool sloMet(const QueryOutcome& q);

struct QuerySummary {
  int queries = 0, completed = 0, violations = 0;
  double violationRate = 0;  // violations / queries (0 without queries)
  double p50Ms = 0, p99Ms = 0;  // latency of completed queries (0 without any)
  double spanMs = 0;         // first arrival to last finish
  double throughputQps = 0;  // completed queries / span
};

QuerySummary summarizeQueries(const std::vector<QueryOutcome>& queries);

}  // namespace zp
