// The workload a plan is chosen for, and a choice judged the way plan-run
// --serve measures it: the task's queries arrive at the workload's rates (a
// seeded periodic or Poisson trace), each runs its chosen subgraphs position by
// position on their processors, every processor a queue taken first come first
// served or earliest deadline first (the workload's order), in the open-loop
// serving simulator (libplan/sim/queries/serve_sim.h) that plan-run's
// prediction uses too. A query violates its SLO when it finishes later than the
// task's latency bound or its variant misses the accuracy floor (SparseLoom
// §5.1). What serving on this host adds to the profile's run times comes from a
// calibration: the wake-up delays, and per unit (else per processor) how long
// runs take back to back and after idle, how long a load takes and freeing the
// units it evicts.
#pragma once
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "libplan/runtime/serve/arrivals.h"
#include "libplan/sim/queries/serve_sim.h"
#include "passes/select/select.h"

namespace zp::select {

// One unit on one processor as serving runs it: its run times back to back and
// after idle, and its load time, each measured on the processor's pinned worker.
struct UnitCalibration {
  std::vector<double> hotMs, idleMs;
  double loadMs = 0;
  double freeMs = 0;  // freeing it, what a load that evicts it adds
  std::vector<double> firstRunMs = {};  // its runs right after a load
  std::vector<double> idleGapsMs = {};  // beside idleMs: the idle before each (the simulator draws by it)
  bool operator==(const UnitCalibration&) const = default;
};

struct ServingCalibration {
  double dispatchMs = 0;  // an arrival's timer and its worker's wake-up
  double loadMsPerMB = 0;  // loading a subgraph that is not resident, per MB of its memory
  double handoffMs = 0;   // handing a query to another processor's worker
  // Per processor (the space's order): measured run time over profiled run time,
  // of runs back to back and of runs after idle (empty: as profiled).
  std::vector<std::vector<double>> hotRatios, idleRatios;
  // Per unit measured, keyed "UNIT_ID@PROCESSOR": its own figures replace the
  // ratios and the per-MB load cost (units differ: a sparse or int8 variant's
  // kernels and weight preparation are not the dense one's).
  std::map<std::string, UnitCalibration> units;
  // The same units loaded by their cold sections (NNV12), keyed as `units`.
  std::map<std::string, UnitCalibration> coldLoaded;
  // Units (ids) whose loads follow their cold sections: chooseColdSectionLoads
  // moved their cold figures into `units`.
  std::set<std::string> coldSections;
  double turnaroundMs = 0;  // a worker's own time between two queued jobs
  bool operator==(const ServingCalibration&) const = default;
};

// Per unit with cold-loaded figures: its loads follow its cold section where,
// on every processor it was calibrated on, loading so, its first run and freeing
// it took less than from its weight cache (medians), or always (NNV12 alone).
// Its load, first-run and free figures in `units` become the cold ones; its
// other runs stay (a cold-loaded unit switches to the warm kernels).
struct ColdLoadChoice {
  int units = 0, chosen = 0;        // units calibrated both ways; those whose loads follow their cold sections
  double coldMs = 0, warmCacheMs = 0;  // load + first run + free, summed over units and processors, each way
};
ColdLoadChoice chooseColdSectionLoads(ServingCalibration& cal, bool always);

// DNNs of a frame that run one after another (plan::frameChains), as the space's
// task indices: one query per period runs their subgraphs in that order.
struct FrameChain {
  std::string name;       // "FRAME.K": the frame's K-th chain
  double periodMs = 0, latencyMs = 0;
  std::vector<int> tasks;
  bool operator==(const FrameChain&) const = default;
};

struct ServingWorkload {
  runtime::serve::ArrivalProcess process = runtime::serve::ArrivalProcess::Poisson;
  std::map<std::string, double> rateQps;  // per task queried on request: queries per second
  std::vector<FrameChain> frames;         // every task has a rate or runs in a frame
  double durationMs = 10000;              // the simulated trace's length
  uint64_t seed = 0;                      // of the trace and of the simulator's draws
  ServingCalibration calibration;
  // Residency: the preload set (subgraph unit ids, in its order) is resident,
  // the rest loads on demand and is evicted least recently used under the budget.
  int64_t budgetBytes = INT64_MAX;
  std::vector<std::string> preload;
  // Instead of a preload set: the choice's own units made resident, those whose
  // loads would cost the most per byte first (queries per second using the
  // unit times its load time, over its bytes), as far as the budget holds them
  // with room left for the largest unit left out (sim::residentByLoadCost).
  bool residentByLoadCost = false;
  // How each processor takes its queued runs (a system's serving order).
  ServingOrder order = ServingOrder::FirstCome;
  // A choice is also judged with every run, load and free this many times as
  // long as calibrated, and compared by the mean of the two violation rates
  // (Outcome::judgedViolationRate): served beside the other processors' work,
  // loads and runs take 1.1-1.3x their calibration at the median (more in the
  // host's slow spells), and a choice whose queries
  // end just inside their bounds must not win on that. 1: the calibration alone.
  double slowdownJudged = 1.0;
};

// Queries per second that run task t: its rate plus one per period of every frame chain it is in.
double taskQueriesPerSecond(const ServingWorkload& workload, const StitchSpace& space, size_t t);

// The workload's trace: its tasks are the space's tasks (those with a rate get
// queries), then the frame chains (one query per period each, from time 0).
Expected<runtime::serve::ArrivalTrace> workloadTrace(const StitchSpace& space, const ServingWorkload& workload);

// A task's decision: a combination number and its placement (as in a Choice).
using TaskDecision = std::pair<int64_t, std::vector<std::string>>;

// A lower bound on the violation rate of every choice that takes, per task, one
// of `decisions[t]`, served on `trace` under `slo`: the queries that violate
// whatever the others do, a task's when each of its decisions misses the
// accuracy floor or, run on idle processors at its fastest measured times (no
// queueing, no load), still ends after its bound; a frame chain's likewise.
double servingViolationBound(const StitchSpace& space, const plan::SloConfiguration& slo,
                             const std::vector<std::vector<TaskDecision>>& decisions, const ServingWorkload& workload,
                             const runtime::serve::ArrivalTrace& trace);

// The same served in turn (evaluateServingInTurn's phases): a query of phase k
// violates whatever is chosen when every decision of its task violates slos[k].
double servingViolationBoundInTurn(const StitchSpace& space, const std::vector<plan::SloConfiguration>& slos,
                                   const std::vector<std::vector<TaskDecision>>& decisions,
                                   const ServingWorkload& workload, const runtime::serve::ArrivalTrace& trace);

// `choice` served on `trace` under `slo`: violation rate over all queries,
// throughput, per task the mean latency and whether most of its queries violate.
Outcome evaluateServing(const StitchSpace& space, const plan::SloConfiguration& slo, const Choice& choice,
                        const ServingWorkload& workload, const runtime::serve::ArrivalTrace& trace);

// The choices for several SLO configurations (choices[k] under slos[k]) served
// in turn, as plan-run --serve serves them: the trace split into equal phases,
// configuration k active in the k-th; a unit two configurations choose is one
// unit, loaded once; under the device budget (residentByLoadCost) resident are
// the units every configuration's own residency keeps, the rest load on demand.
// Accuracy misses are summed over the configurations.
Outcome evaluateServingInTurn(const StitchSpace& space, const std::vector<plan::SloConfiguration>& slos,
                              const std::vector<Choice>& choices, const ServingWorkload& workload,
                              const runtime::serve::ArrivalTrace& trace);

}  // namespace zp::select
