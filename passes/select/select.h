// SparseLoom's optimizer (§3.3, Algorithm 1), the SLO configurations of §5.1
// and Appendix D, the six baselines of §5.1, and their evaluation in the
// query simulator (libplan/sim/queries/query_sim.h). Algorithm 1's sets are
// never listed: each task's questions go to searches over its combinations
// (task_search.h), which give what a scan of every combination gives.
#pragma once
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "libplan/plan/stitch_plan.h"
#include "libplan/sim/queries/query_sim.h"
#include "passes/select/stitch_space.h"
#include "passes/select/task_search.h"

namespace zp::select {

enum class SloSet { Grid, AccuracyGuaranteed, LatencyGuaranteed };
// From the original variants' accuracy and latency ranges (every placement):
// Grid: 5 x 5 over ranges extended by 20% latency / 2% accuracy (§5.1);
// AccuracyGuaranteed: accuracy = the best original's, 5 latencies over the range;
// LatencyGuaranteed: latency = the fastest original's, 5 accuracies (Appendix D).
std::vector<plan::SloConfiguration> generateSlos(const StitchSpace& space, SloSet set);

// What the names of a generated SLO set mean, for the lines that print them.
std::string sloSetLegend(SloSet set);

// Per task, the fastest one query of any valid combination runs in under any
// placement, as profiled (no queueing, no dispatch); infinite when its space is
// too large to scan (more than kMaxFastestScan combinations).
inline constexpr uint64_t kMaxFastestScan = 20000;
std::vector<double> fastestQueryMs(const StitchSpace& space);
// A line per task whose latency SLO lies, in some configuration, below its
// fastest query plus `overheadMs` (the measured dispatch; 0 when not measured):
// every query of it misses that SLO whatever the plan.
std::vector<std::string> unreachableSloWarnings(const StitchSpace& space, const std::vector<plan::SloConfiguration>& slos,
                                                double overheadMs);

struct ServingWorkload;  // serving_objective.h

// The choices of a plan made before (plan-solve --previous), per SLO
// configuration and task: a task whose earlier pick is as good as the new one
// within the measurement's noise keeps it, so that re-profiling alone does not
// move unchanged tasks.
struct PreviousChoices {
  struct Decision {
    std::string combination;             // variant ids joined by '+'
    std::vector<std::string> placement;  // position -> processor
  };
  std::map<std::string, std::map<std::string, Decision>> bySlo;  // configuration id -> task -> decision
  double violationNoise = 0.005;  // predicted violation rates this close are a tie
  double latencyNoise = 0.05;     // and mean latencies within this share
};

enum class SingleTechnique { None, SparseLoom, Mts, SparOA, Nnv12, HaxConn };

struct SelectParams {
  bool measuredAccuracyForDecisions = true;  // false: SparseLoom's estimates for stitched variants (originals are measured anyway)
  int queriesPerTask = 100;
  std::vector<std::string> fixedOrder;        // baselines' placement order; empty: processors reversed (N-G-C)
  // The workload zooplan's choice is made for: judged served at its arrival
  // rates (serving_objective.h) instead of in the query simulator's burst.
  std::shared_ptr<const ServingWorkload> workload;
  // At a workload, every mix of the candidates' per-task decisions is judged
  // when there are at most this many (the choice is then proven best among
  // them); beyond, a task-by-task descent from the best candidate.
  int64_t maxMixesJudged = 4096;
  // Several configurations served in turn: at most this many joint choices are
  // judged when moving a task's decision in one configuration to another's
  // (sharing units across the switches).
  int64_t maxJointJudged = 2000;
  // When the choice search at a workload stops (plan-solve --time-limit, from
  // the search's start): past it, the best choice judged so far stands, proven
  // best only if it meets the bound. Unset: only the counts above bound the
  // search, and a rerun makes the same choice.
  std::optional<std::chrono::steady_clock::time_point> stopAt;
  // The configurations served in turn (ids, in serving order): the joint choice
  // and every system's in-turn figure are over these (empty: every configuration).
  std::vector<std::string> servedInTurn;
  // One technique alone (plan-solve --only), for ablation: SparseLoom's makes
  // zooplan's choice Algorithm 1's; MTS's takes each task's model as given (its
  // reference variant, whole on one processor) or its weight-shared group's unit;
  // SparOA's, its model as given whole on one processor or under its operator
  // placement; NNV12's, its model as given whole on one processor (what NNV12
  // adds, cold sections for the units loaded on demand, the driver plans);
  // HaX-CoNN's, its model as given whole on one processor or, in a frame, with
  // its layer groups where the frame's concurrent schedule maps them.
  SingleTechnique only = SingleTechnique::None;
  std::shared_ptr<const PreviousChoices> previous;  // none: no earlier plan to stay close to
};

// One system's decision for one configuration: a combination and a placement per task.
// A task's decision is a combination number of its own (>= 0), groupDecision(g):
// the shared group g's unit answers it, run whole on the one processor its
// placement names, or placedDecision(m): the placed model m answers it, its
// placement the model's processors (the first dispatches, the others are held).
struct Choice {
  std::string system;
  std::vector<int64_t> candidate;                    // combination number (TaskSpace::combinations), or groupDecision
  std::vector<std::vector<std::string>> placement;   // per task, position -> processor
  std::vector<bool> feasible;                        // the system believed the task meets its SLO
  std::vector<std::string> order;                    // the global order, when the system has one
};

// Task decisions that are a shared group's unit (-1 down to -2^32), or a placed
// model's (-2^32 and below): Choice::candidate < 0.
inline constexpr int64_t kPlacedDecisions = int64_t{1} << 32;
constexpr int64_t groupDecision(size_t group) { return -1 - static_cast<int64_t>(group); }
constexpr int64_t placedDecision(size_t model) { return -kPlacedDecisions - static_cast<int64_t>(model); }
inline std::optional<size_t> sharedGroupOf(int64_t candidate) {
  return candidate < 0 && candidate > -kPlacedDecisions ? std::optional<size_t>(static_cast<size_t>(-1 - candidate))
                                                        : std::nullopt;
}
inline std::optional<size_t> placedModelOf(int64_t candidate) {
  return candidate <= -kPlacedDecisions ? std::optional<size_t>(static_cast<size_t>(-kPlacedDecisions - candidate))
                                        : std::nullopt;
}
// Task t's decision `candidate`: its id in a plan (the combination's, or the
// group's unit id "group:NAME"), the accuracy decisions judge it by, and one
// query's latency under `placement` as profiled (the group's: its run).
std::string decisionId(const StitchSpace& space, size_t t, int64_t candidate);
double decisionJudgedAccuracy(const StitchSpace& space, size_t t, int64_t candidate);
double decisionLatencyMs(const StitchSpace& space, size_t t, int64_t candidate, const std::vector<std::string>& placement);
// Whether task t's decision meets its SLOs under `slo` as planned (accuracy as judged, latency as profiled).
bool decisionMeetsSlo(const StitchSpace& space, const plan::SloConfiguration& slo, size_t t, int64_t candidate,
                      const std::vector<std::string>& placement);
// The member index of task t in the shared group, or -1.
int memberIndex(const SharedGroup& group, size_t t);

// The accuracy a decision uses: measured for originals (zoo-profile measured
// them), the estimate for stitched variants unless measured ones are asked for.
double decisionAccuracy(const Candidate& c, const SelectParams& params);

// Orders as processor indices into space.processors.
std::vector<std::vector<int>> orderIndices(const StitchSpace& space, const std::vector<std::vector<std::string>>& orders);
// Per task, Algorithm 1's questions under `slo` with Θ^t over `orders` (indices).
std::vector<TaskSearch> taskSearches(const StitchSpace& space, const plan::SloConfiguration& slo,
                                     const std::vector<std::vector<int>>& orders, const SelectParams& params,
                                     bool originalsOnly);

// Algorithm 1 over `orders`, optionally restricted to original variants.
struct Algorithm1Result {
  Choice choice;
  double meanLatencyMs = 0;
  int ordersEvaluated = 0;
};
Algorithm1Result algorithm1(const StitchSpace& space, const plan::SloConfiguration& slo,
                            const std::vector<std::vector<std::string>>& orders, const SelectParams& params,
                            bool originalsOnly, const std::string& system);

// Every placement order of the most positions any task has (estimate::searchOrders).
std::vector<std::vector<std::string>> globalOrders(const StitchSpace& space);
// The most orders plan-solve searches: every search runs per order, task and
// SLO configuration, while the combinations are never listed.
inline constexpr uint64_t kMaxPlacementOrders = 10'000;

struct Outcome {
  double violationRate = 0;     // over tasks and arrival orders
  double throughputQps = 0;     // mean over arrival orders
  std::vector<double> taskLatencyMs;  // mean over arrival orders
  std::vector<bool> taskViolated;     // in the first arrival order
  int accuracyMisses = 0;             // tasks whose (judged) accuracy is below their SLO's
  double meanLatencyMs = 0;           // over every query
  // Served with every time ServingWorkload::slowdownJudged times as long (< 0: not judged so).
  double slowedViolationRate = -1;
  double judgedViolationRate() const { return plan::judgedViolationRate(violationRate, slowedViolationRate); }
};
// The order zooplan's choice is made in: the judged violation rate, then fewer tasks
// below their accuracy SLO (when every query violates anyway, throughput alone
// would pick the least accurate choice), then throughput where it differs by
// more than 0.1% (served open loop, every choice that keeps up completes the
// same queries), then the mean latency (the slack left). Ties keep the earlier
// candidate.
bool betterOutcome(const Outcome& a, const Outcome& b);
// An outcome as a plan records it (a search's figures where given).
plan::PredictedServing predictedOf(const Outcome& o, int64_t judged = 0, bool provenBest = false, double bound = 0);
// Judged with measured accuracy where zoo-profile measured it, latency simulated.
Outcome evaluate(const StitchSpace& space, const plan::SloConfiguration& slo, const Choice& choice,
                 const SelectParams& params);

// The baselines' choices: SV-AO-P, SV-AO-NP, SV-LO-P, SV-LO-NP, AV-P, AV-NP.
std::vector<Choice> baselineChoices(const StitchSpace& space, const plan::SloConfiguration& slo,
                                    const SelectParams& params);

// How zooplan's choice was found.
struct ZooplanSearch {
  std::string winner;      // the candidate, or the mix of their decisions, it came from
  Outcome predicted;       // the choice judged (at the workload, or in the query simulator's burst)
  int64_t judged = 0;      // distinct choices judged
  bool provenBest = false;  // at a workload: every mix of the candidates' per-task decisions was judged, or the choice meets the bound
  // At a workload: no mix of the candidates' decisions predicts fewer violations
  // (ServingBound, serving_objective.h); predicted - bound is the gap.
  double violationBound = 0;
  int keptPrevious = 0;    // tasks that kept the previous plan's pick (a tie within the noise)
  bool stopped = false;    // the search reached SelectParams::stopAt before judging every mix it meant to
};

// Whether the search is past SelectParams::stopAt.
bool pastStop(const SelectParams& params);

// zooplan: Algorithm 1's choice, then every order's Algorithm-1 choice and the
// baselines' choices judged in the simulator; the best by betterOutcome wins,
// so zooplan is never worse than a baseline. At a workload, also every task
// whole on each processor, and the candidates' decisions mixed task by task.
Choice zooplanChoice(const StitchSpace& space, const plan::SloConfiguration& slo, const SelectParams& params,
                     Algorithm1Result* algorithm1Out, ZooplanSearch* search);
// The same with the tasks' searches under `slo` (taskSearches over every
// global order, not originals only) made by the caller: what they found is reused.
Choice zooplanChoice(const StitchSpace& space, const plan::SloConfiguration& slo, const SelectParams& params,
                     std::vector<TaskSearch>& tasks, Algorithm1Result* algorithm1Out, ZooplanSearch* search);

// The simulated schedule of a choice (first arrival order) as sim inputs.
std::vector<sim::TaskQueries> queriesOf(const StitchSpace& space, const Choice& choice, int queries);
int processorIndex(const StitchSpace& space, const std::string& name);

}  // namespace zp::select
