// plan-solve's stitch mode as a pass: from the stitch space and the SLO
// configurations to the stitch section of a plan — Algorithm 1 with one
// global placement order over every configuration (SparseLoom §3.3), the
// selection per task and configuration, and the preload sets per memory
// budget (Eq. 7, hotness from counts of Θ^t, not from a list of it). No file
// is read or written here.
#pragma once
#include <string>
#include <vector>

#include "libplan/plan/stitch_plan.h"
#include "libplan/plan/unit.h"
#include "passes/select/select.h"
#include "passes/select/stitch_space.h"

namespace zp::select {

// The global order minimising the mean over configurations and tasks of the
// best feasible variant's latency (the first order that improves on the best
// so far by more than 1e-12; `searches`: [configuration][task], Θ^t over `orders`).
struct GlobalOrder {
  std::vector<std::string> order;
  double meanLatencyMs = 0;  // infinite when no task is feasible anywhere
};
GlobalOrder multiConfigurationOrder(const StitchSpace& space, const std::vector<std::vector<std::string>>& orders,
                                    std::vector<std::vector<TaskSearch>>& searches);

struct StitchSolution {
  plan::StitchPlan plan;              // processors, order, systems' choices, subgraphs, preload sets (no stitch_dir)
  std::vector<plan::Unit> units;      // the subgraphs the plan names (in task, position, variant order), then its groups and placed models
  std::vector<plan::OpPlacement> placements;  // of the placed models some system's choice runs, in unit order
  std::vector<Processor> processors;  // the plan's: the ones the section names
  std::vector<int64_t> firstChosen;   // per task: the candidate chosen for the first feasible configuration (-1: none)
  Choice chosenFirst;                 // the plan's choice (zooplan's) for the first configuration
  std::string preloadSummary;         // one line per budget
  size_t ordersEvaluated = 0;
  std::string searchNote;  // where the time limit (SelectParams::stopAt) cut the choice search; empty: it did not
};

// `budgets` as given ("15%" or bytes), parsed against the total memory of
// every subgraph on the processor the order puts it on.
Expected<StitchSolution> planStitch(const StitchSpace& space, const std::vector<plan::SloConfiguration>& slos,
                                    const std::vector<std::string>& budgets, const SelectParams& params);

// A unit per subgraph the plan names (a choice's or a preload set's): its file
// (relative to the stitch directory) and hash, resident when in the served
// preload set; in task order, then by position and variant.
std::vector<plan::Unit> subgraphUnits(const StitchSpace& space, const plan::StitchPlan& plan);

// The plan's answer is its first system's (zooplan's) choices: chosenSystem
// names it, and each infeasible choice records by how much it misses.
// Algorithm 1's own choices stay in the system "Algorithm-1".
void adoptChosenSystem(const StitchSpace& space, plan::StitchPlan& plan);

// Parses "15%" (of all subgraphs' memory) or a byte count.
Expected<int64_t> parseBudget(const std::string& text, int64_t total);
// What a percentage budget is a share of, wherever one is given (the preload
// sets' --memory-budget, a workload's memory_budget): every subgraph once, at
// its largest size over the processors.
int64_t allSubgraphBytes(const StitchSpace& space);

// "placement order ..., feasible SLO configurations per task ..., preloading ...,
// infeasible ..." for the terminal.
std::string stitchSummary(const StitchSolution& s);

}  // namespace zp::select
