// The plan model: the header, the units (unit.h: every unit of work with its
// file, hash and per-unit decisions), and the sections that decide about them:
// the concurrent schedule and the operator placements here, the SparseLoom
// section in stitch_plan.h, the cold-start section in cold_plan.h, the MTS
// section in mts_plan.h. Sections name units by id, never files. Its files,
// plan.json (the canonical JSON rendering) and plan.pb, are read and written by
// libplan/artifacts.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "libplan/plan/cold_plan.h"
#include "libplan/plan/mts_plan.h"
#include "libplan/plan/stitch_plan.h"
#include "libplan/plan/unit.h"

namespace zp::plan {

// The key under which a stitch plan's header records the stitch.json it was
// solved from (plan-emit refuses a stitch directory that no longer matches).
inline constexpr const char* kPlanStitchInput = "stitch/stitch.json";

struct PlanHeader {
  std::string tool;     // e.g. "plan-solve"
  std::string version;  // zooplan version
  std::map<std::string, std::string> inputs;  // input file (as given) -> sha256
  bool operator==(const PlanHeader&) const = default;
};

// --- concurrent schedule (HaX-CoNN-style) ---

struct ConcurrentGroup {
  std::string name;
  std::string accelerator;
  double startMs = 0, endMs = 0;
  double standaloneMs = 0;  // profiled time on that accelerator; end-start >= it under contention
  std::vector<std::string> nodes;  // a model DNN's: the ONNX nodes of the group (what plan-run places)
  bool operator==(const ConcurrentGroup&) const = default;
};

struct ConcurrentTransition {
  int afterGroup = -1;  // index of the group after which execution moves; -1: from a dependency
  std::string from, to;
  double startMs = 0, endMs = 0;
  bool operator==(const ConcurrentTransition&) const = default;
};

struct ConcurrentDnn {
  std::string name;
  std::optional<UnitId> unit;  // a model DNN's unit (its file and hash are the unit's); none: group rows only
  std::vector<std::string> dependsOn;  // DNNs whose end it waits for (a pipeline); earlier in the list
  double releaseMs = 0, endMs = 0;
  std::vector<ConcurrentGroup> groups;
  std::vector<ConcurrentTransition> transitions;
  bool operator==(const ConcurrentDnn&) const = default;
};

struct ScheduleResult {  // one schedule's simulated figures (zooplan's or a baseline's)
  std::string name;
  double latencyMs = 0;
  double throughput = 0;  // Eq. 10, inferences/s summed over DNNs
  int transitions = 0;
  // A concurrent baseline's simulated schedule (group accelerators and times; no
  // nodes or models: those are the plan's DNNs'), so that plan-run can execute it.
  std::vector<ConcurrentDnn> dnns;
  bool operator==(const ScheduleResult&) const = default;
};

struct SolverReport {
  std::string solver;   // "exact-bnb", "z3-optimize", ...
  std::string status;   // "optimal" (proven within searchSpace) | "feasible" (time limit hit)
  std::string searchSpace;  // e.g. "at most 2 transitions per DNN" or "all assignments"
  int maxTransitionsPerDnn = -1;  // -1: unrestricted
  double objective = 0;  // value of the solver's best schedule (simulated)
  double bound = 0;      // proven bound on the optimum within searchSpace
  double gap = 0;        // |objective - bound| / |objective|
  double timeLimitS = 0;
  int64_t seed = 0;
  uint64_t nodes = 0;        // search effort (deterministic for a run without time-out)
  uint64_t simulations = 0;
  std::string crossCheck;    // result of the Z3 cross-check, if run
  bool operator==(const SolverReport&) const = default;
};

struct ConcurrentSchedule {
  std::string workload;        // workload file as given
  std::string objective;       // "latency" | "throughput"
  // The processors the groups run on, by name. plan-run executes the schedule
  // when the plan's processors define them all (cores, policy, GEMM, threads);
  // a workload that named none is simulated only.
  std::vector<std::string> accelerators;
  std::string source;          // "zooplan" or "baseline:<name>" if a baseline won in the simulator
  double objectiveValue = 0;   // simulated
  double latencyMs = 0;
  double throughput = 0;
  SolverReport solver;
  std::vector<ConcurrentDnn> dnns;
  std::vector<ScheduleResult> baselines;
  bool operator==(const ConcurrentSchedule&) const = default;
};

// --- per-operator placement of one unit (SparOA-style) ---

struct OpPlacementNode {
  std::string node;       // executed node, in dispatch order
  std::string processor;
  double startMs = 0, endMs = 0;  // under the list-schedule cost model
  bool operator==(const OpPlacementNode&) const = default;
};

struct OpPlacement {
  UnitId unit;             // the placed model (its file and hash: the plan's unit)
  std::string costSource;  // "predicted" | "measured"
  std::vector<std::string> processors;  // the processors it places on, by name (the plan's processors define them)
  double latencyMs = 0;    // one inference under the cost model
  SolverReport solver;     // "chain-dp" or "branch-and-bound"; searchSpace "all assignments"
  // A mix of processors is placed only when it beats the best single processor
  // by this fraction and by minMixGainMs; mixedLatencyMs is the mix given up for
  // one (0: none was).
  double minMixGain = 0;
  double minMixGainMs = 0;
  double mixedLatencyMs = 0;
  // Resident size counted against a memory budget, as the planner counted it
  // (a stitch plan's placed unit: its variant's subgraphs' profiled memory); 0:
  // the model file's size.
  int64_t memoryBytes = 0;
  std::vector<OpPlacementNode> nodes;
  std::vector<ScheduleResult> baselines;  // transitions = hand-offs between processors
  bool operator==(const OpPlacement&) const = default;
};

struct Plan {
  PlanHeader header;
  // Every processor a unit or section names, each once: what plan-run pins and
  // runs on (cores, kernel policy, GEMM library, threads). Sections and units
  // name them.
  std::vector<Processor> processors;
  std::vector<Unit> units;  // every unit a section names, in the order the plan-solve mode listed them
  std::optional<StitchPlan> stitch;
  std::optional<ConcurrentSchedule> concurrent;
  // Operator placements, one per operator-placed unit (plan-solve --mode
  // opplace's model, or the units a stitch plan's choices run placed).
  std::vector<OpPlacement> opplace;
  std::vector<ColdPlan> cold;  // cold-start plans, one per model (none: no section)
  std::optional<MtsPlan> mts;  // stitched multitask groups placed as units
  bool operator==(const Plan&) const = default;
};

// The plan's processor named `name`, or null.
const Processor* findProcessor(const Plan& plan, const std::string& name);
// The plan's processors with these names, in this order; an error names the
// first the plan does not define.
Expected<std::vector<Processor>> processorsNamed(const Plan& plan, const std::vector<std::string>& names);
// Names of processors, in order.
std::vector<std::string> processorNames(const std::vector<Processor>& processors);

// The cold section a unit is loaded by. Units of equal content (one file) share one
// cold cache, written from the cold section of the first of them in unit order that
// has one: plan-emit writes it so and plan-run follows it so. Null when none has one.
const ColdPlan* coldSectionOf(const Plan& plan, const Unit& unit);

// The operator placement of `unit`, or null.
const OpPlacement* placementOf(const Plan& plan, const UnitId& unit);

}  // namespace zp::plan
