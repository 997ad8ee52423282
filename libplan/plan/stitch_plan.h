// The SparseLoom section of the plan (SparseLoom
// §3.3-3.4): one global placement order of positions onto processors, the
// stitched variant chosen per task and SLO configuration, the subgraphs those
// choices use, and the preload sets under memory budgets.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "libplan/plan/unit.h"
#include "libplan/plan/workload.h"
#include "libplan/util/serving_order.h"
#include "libplan/zoo/processor.h"

namespace zp::plan {

struct TaskSlo {
  double accuracy = 0;    // minimum top-1 accuracy
  double latencyMs = 0;   // maximum latency of one query
  bool operator==(const TaskSlo&) const = default;
};

// The workload a plan's choice was made for, served: per task its queries per
// second and their arrival process, the simulated trace, and what serving on
// the planning host was calibrated to (zeros: run times as profiled).
struct ServingWorkloadRecord {
  std::string process = "poisson";         // poisson | periodic
  std::map<std::string, double> rateQps;   // per task
  double durationMs = 0;
  uint64_t seed = 0;
  int calibrationRounds = 0;
  double dispatchMs = 0, handoffMs = 0, loadMsPerMB = 0;
  std::vector<FrameSpec> frames;  // frames of DNNs run at a period
  // The device's memory budget the choice's own units were made resident under
  // (by load cost per byte); 0: the first preload set's budget and set.
  int64_t memoryBudgetBytes = 0;
  // The configurations plan-run --serve serves in turn, which zooplan's choices
  // were judged jointly for (ids, in serving order); empty: every configuration.
  std::vector<std::string> servedInTurn;
  // Choices were also judged with every calibrated time this many times as long (1: not so).
  double slowdownJudged = 1.0;
  bool operator==(const ServingWorkloadRecord&) const = default;
};

struct SloConfiguration {
  std::string id;                       // "C01".."C25", "ACC-..", "LAT-..", or the user's
  std::map<std::string, TaskSlo> tasks; // task -> its SLO
  bool operator==(const SloConfiguration&) const = default;
};

struct SloMiss {  // for an infeasible SLO: the closest variant and by how much it misses
  std::string combination;
  double accuracyShort = 0;   // SLO accuracy - its accuracy (0 when met)
  double latencyOverMs = 0;   // its latency - SLO latency (0 when met)
  bool operator==(const SloMiss&) const = default;
};

// A subgraph on one processor (its file and hash: the plan's unit
// subgraph:TASK/POSITION/VARIANT).
struct PlannedSubgraph {
  int position = 0;
  std::string variant;
  std::string processor;    // placement_order[position]
  int64_t memoryBytes = 0;  // resident size on its processor (profile memory_bytes)
  double latencyMs = 0;     // one run on its processor (the latency model's figure)
  bool operator==(const PlannedSubgraph&) const = default;
};

struct TaskPlan {
  std::string name;
  int positions = 0;
  // Every subgraph some system's choice (or Algorithm 1's under the global
  // order) uses on the processor it runs on, by (position, variant, processor).
  std::vector<PlannedSubgraph> subgraphs;
  bool operator==(const TaskPlan&) const = default;
};

// A weight-shared group some system's choice answers its members with: its unit
// group:NAME (file and hash the plan's units give), how each member reads and
// answers in it, and one run of it on each processor it may run on.
struct PlannedGroupRun {
  std::string processor;
  int64_t memoryBytes = 0;  // resident size on that processor (profiled)
  double latencyMs = 0;     // one run of the whole stitched graph (profiled)
  bool operator==(const PlannedGroupRun&) const = default;
};

struct PlannedGroup {
  std::string name;
  bool sharedInput = false;  // members of one input shape read one stitched input
  std::vector<GroupMember> members;
  std::vector<PlannedGroupRun> runs;  // in the plan's processor order
  bool operator==(const PlannedGroup&) const = default;
};

struct PreloadSet {
  std::string budget;          // as asked: "15%" or bytes
  int64_t budgetBytes = 0;
  std::vector<std::string> greedy;  // "task/position/variant", Algorithm 2
  int64_t greedyBytes = 0;
  double greedyHotness = 0;    // sum of hotness of the greedy set
  std::vector<std::string> exact;   // the same choice solved exactly (max total hotness)
  int64_t exactBytes = 0;
  double exactHotness = 0;
  bool exactOptimal = false;   // proven (false: time limit; exactHotness is the best found)
  double gap = 0;              // (exact - greedy) / exact hotness
  bool operator==(const PreloadSet&) const = default;
};

// What one system (zooplan, Algorithm 1, a SparseLoom §5.1 baseline) runs for
// one task under one SLO configuration: the stitched variant and the processor
// of each position.
struct SystemTaskChoice {
  std::string task;
  std::string combination;
  std::vector<std::string> placement;  // position -> processor
  bool feasible = false;               // the system believed it meets the SLO
  double accuracy = 0;                 // measured where zoo-profile measured it, else estimated
  std::string accuracySource;          // "measured" | "estimated"
  double latencyMs = 0;                // predicted for one query under `placement`
  std::optional<SloMiss> miss;         // the plan's own choice, infeasible: by how much it misses
  bool operator==(const SystemTaskChoice&) const = default;
};

// A system's choice for one configuration served at the plan's workload, as
// the calibrated serving simulator predicts it; for zooplan's, how its search went.
// What choices are compared by: the mean of the violation rate as calibrated and
// slowed down where judged so (slowed >= 0), else the calibrated rate.
inline double judgedViolationRate(double calibrated, double slowed) {
  return slowed < 0 ? calibrated : 0.5 * (calibrated + slowed);
}

struct PredictedServing {
  double violationRate = 0;
  double throughputQps = 0;
  int64_t judged = 0;          // zooplan: distinct choices judged (0: another system's)
  bool provenBest = false;     // zooplan: every mix of its candidates' per-task decisions was judged
  double violationBound = 0;   // zooplan: no such mix is judged better (judgedViolationRate)
  // Served with every calibrated time ServingWorkload::slowdownJudged times as long (< 0: not judged so).
  double slowedViolationRate = -1;
  double judgedViolationRate() const { return plan::judgedViolationRate(violationRate, slowedViolationRate); }
  bool operator==(const PredictedServing&) const = default;
};

struct SystemSelection {
  std::string slo;                       // configuration id
  std::vector<SystemTaskChoice> tasks;   // in plan task order
  std::optional<PredictedServing> predicted;  // when the plan has a workload
  bool operator==(const SystemSelection&) const = default;
};

// A system plan-run --serve executes beside the plan: its choices per configuration.
struct ServedSystem {
  std::string name;                       // "zooplan", "Algorithm-1", "SV-AO-P", ...
  std::string description;
  std::vector<SystemSelection> selections;  // one per SLO configuration, in configuration order
  // Its choices for every configuration served in turn at the plan's workload
  // (plan-run --serve's phases), predicted; with more than one configuration.
  // zooplan's `judged`: the joint choices it judged.
  std::optional<PredictedServing> predictedInTurn;
  // The order each processor takes its queued runs in, as plan-run --serve serves the system.
  ServingOrder servingOrder = ServingOrder::FirstCome;
  // zooplan served earliest deadline first: its best choices served first come
  // first served instead (in turn with several configurations), what the order gains.
  std::optional<PredictedServing> predictedFirstCome;
  bool operator==(const ServedSystem&) const = default;
};

struct StitchPlan {
  std::string stitchDir;       // relative to the plan file's directory
  // What it was planned from, for plan-solve --check: zoo-profile's directory
  // (relative to the plan file's directory) and --slo as given (a file:
  // relative to the plan file's directory). Empty in plans made before.
  std::string profileDir, sloSource;
  std::string accuracySource;  // what decisions used: "measured where available" | "estimated (originals measured)"
  std::vector<std::string> processors;  // the processors it plans on, by name (the plan's processors define them)
  std::vector<std::string> placementOrder;  // position -> processor
  int ordersEvaluated = 0;
  double meanLatencyMs = 0;    // Algorithm 1's L(p*) over the configurations
  std::vector<SloConfiguration> slos;
  std::vector<TaskPlan> tasks;
  std::vector<PlannedGroup> groups;  // the weight-shared groups some system's choice runs
  std::vector<PreloadSet> preload;
  // The plan's answer: this system's choices (the others run with plan-run --compare).
  std::string chosenSystem;
  std::vector<ServedSystem> systems;  // zooplan, Algorithm-1 and the six baselines
  // The batch the profile's latencies were measured at (symbolic batch dims
  // bound to it) and the other symbolic dims zoo-stitch bound, by name.
  // Plans written before these existed read as 1 and none.
  int64_t batch = 1;
  std::map<std::string, int64_t> dims;
  // What zooplan's choice was made for (plan-solve --rate); none: judged in a burst.
  std::optional<ServingWorkloadRecord> workload;
  bool operator==(const StitchPlan&) const = default;
};

// The system whose choices are the plan's answer (the reader checks it is there).
const ServedSystem& chosenSystem(const StitchPlan& plan);

// Whether a choice is a weight-shared group's unit answering the task (its
// combination is the unit's id, "group:NAME") rather than the task's own subgraphs.
bool answeredByGroup(const SystemTaskChoice& choice);
// Whether a choice is a placed model answering the task (its combination is the
// unit's id, "model:NAME"; plan.opplace has its placement, whose processors are
// the choice's placement: the first dispatches a run, the others are held).
bool answeredByPlacedModel(const SystemTaskChoice& choice);
// The planned group a choice answered by a group names, or null.
const PlannedGroup* groupOf(const StitchPlan& plan, const SystemTaskChoice& choice);
// A member's entry in its group, or null.
const GroupMember* memberOf(const PlannedGroup& group, const std::string& task);

}  // namespace zp::plan
