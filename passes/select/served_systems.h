// The systems plan-run --serve executes beside each other on the same arrival
// trace (SparseLoom §5.1): per SLO configuration, what each runs for every task.
//   zooplan      the best, in the query simulator, of Algorithm 1, Algorithm 1
//                under each single order, stitched variants run whole, and the
//                baselines' own choices (zooplanChoice)
//   Algorithm-1  Algorithm 1 alone (§3.3): the order minimising the mean latency
//                of the best feasible variants, then the fastest per task
//   SV-AO-P, SV-AO-NP, SV-LO-P, SV-LO-NP, AV-P, AV-NP   the six baselines
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "libplan/plan/stitch_plan.h"
#include "passes/select/select.h"

namespace zp::select {

// Every system, in the order plans list them (zooplan, the plan's choice,
// first): its name and the one line that describes it in --help and reports.
const std::vector<std::pair<std::string, std::string>>& servedSystemCatalog();

struct ServedSystems {
  std::vector<plan::ServedSystem> systems;
  std::vector<std::vector<Choice>> choices;  // [system][configuration]: what the selections say, as combinations
  // The time limit (SelectParams::stopAt) cut zooplan's search: its choices as
  // judged so far; earliest deadline first judged only in part, or not at all.
  bool stopped = false, stoppedEarliestDeadline = false, earliestDeadlineSkipped = false;
};
// `searches` ([configuration][task], as planStitch makes them) are reused.
ServedSystems servedSystems(const StitchSpace& space, const std::vector<plan::SloConfiguration>& slos,
                            const SelectParams& params, std::vector<std::vector<TaskSearch>>& searches);

}  // namespace zp::select
