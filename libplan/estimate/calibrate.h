// The latency model of one task from its profile rows (SparseLoom §3.2, Eq. 5,
// with the per-run overhead and hand-over costs latency_model.h describes).
// zoo-profile builds it, calibrates the overheads on the original variants and
// writes it as latency_model.json; plan-solve reads that file and never
// rebuilds the model.
#pragma once
#include <string>
#include <vector>

#include "libplan/estimate/latency_model.h"
#include "libplan/profile/profile_db.h"
#include "libplan/zoo/processor.h"

namespace zp::estimate {

// Subgraph latencies (medians) of `task` on each processor (a host one's rows
// count only under the kernel policy it was measured with; imported rows
// count whatever policy they name), and a hand-over
// between every two processors costing the largest ms per byte among the
// task's measured transitions. Overheads are left at 0: calibrateOverhead
// gives them.
LatencyModel latencyFromProfile(const profile::ProfileDb& db, const std::string& task, int positions,
                                const std::vector<Processor>& processors);

// The fixed cost a subgraph pays when run on its own, once per run, from the
// original variants measured whole (`wholeMs`) and as the sum of their
// subgraphs (`sumOfSubgraphsMs`), one pair per original: the median over the
// originals of (sum - whole) / (positions - 1), at least 0. `fallbackMs` (the
// one-node probe) when there is no pair or a single position. Either way at
// most `fastestSubgraphMs`: every subgraph run pays the overhead once, so it
// cannot exceed the fastest one (on a busy machine the difference of noisy
// medians can, and would make some estimates negative).
double calibrateOverhead(const std::vector<std::pair<double, double>>& sumOfSubgraphsAndWholeMs, int positions,
                         double fallbackMs, double fastestSubgraphMs);

}  // namespace zp::estimate
