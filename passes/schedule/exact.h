// Exact branch-and-bound search for the concurrent schedule in the common
// structure HaX-CoNN's optimal schedules have (few transitions per DNN; every
// schedule in the paper's Table 6 has one transition per DNN): all
// assignments with at most K transitions per DNN. The incumbent comes first:
// the best of the initial schedule, the optimum of the space with one
// transition fewer, and a best-response descent over each DNN's candidate
// assignments. Then, for latency with two accelerators, contention-aware
// work weightings (work_weights.h) with cutting planes on their Lagrangian
// relaxation, and one aimed at the incumbent. The proof is a branch and bound
// over the simulated timeline (timeline_search.h: each DNN's next group is
// decided when the simulation needs it, every node bounded by its exact time
// so far plus the chain and weighted relaxation of the rest) or, with
// timelineTree off, over combinations of whole candidate assignments (chain
// time, accelerator load, total work / #accelerators, the weightings); both
// measure every leaf with the simulator itself, so the search is exact for
// any number of accelerators and any contention model. K = -1 searches all
// assignments (small instances only). Proven optimal means the tree was
// exhausted; on a time-out the bound is the least bound of what was left
// unexplored (and of the relaxations).
//
// Not used, because they are not valid under the simulator: symmetry between
// identical DNNs (waiting segments that became ready at the same time start
// in DNN index order, so swapping two identical DNNs' assignments can change
// the makespan) and dominance between partial schedules that are "ahead" in
// time (the model is not monotone: making one group slower can shorten the
// makespan by moving the overlaps and the queue order, as in list-scheduling
// anomalies; random 2 x 4 instances show it).
#pragma once
#include <functional>
#include <optional>
#include <string>

#include "libplan/sim/concurrent/simulator.h"
#include "libplan/util/error.h"

namespace zp::schedule {

// Called on every improving schedule: elapsed wall ms since the solver
// started, its simulated objective value, who found it.
using ImproveCallback = std::function<void(double elapsedMs, double value, const std::string& by)>;

struct ExactParams {
  sim::Objective objective = sim::Objective::Latency;
  int maxTransitionsPerDnn = 2;  // -1: unrestricted
  double timeLimitS = 60;
  // Refuse to enumerate more candidate assignments than this for one DNN.
  uint64_t maxCandidatesPerDnn = 4'000'000;
  // Latency with two accelerators: contention-aware bounds from 2 (steps + 1)
  // weightings (work_weights.h); 0 turns them off. The timeline tree bounds
  // every node with every weighting, so few (the cutting planes below add the
  // ones that matter): on the bench's 3 x 40 seeds 2 steps reached the proofs
  // in less CPU time than 10 (a one-off comparison, bench/concurrent/README.md).
  int contentionBoundSteps = 2;
  // Rounds of cutting planes on the Lagrangian relaxation of the whole space
  // (each adds two weightings); 0 turns them off.
  int relaxationRounds = 6;
  // ... only when the space holds at least this many assignments (smaller
  // trees are searched faster than the rounds take).
  double relaxationMinAssignments = 1e7;
  // Add a weighting aimed at the incumbent before the tree search.
  bool targetIncumbent = true;
  // With k >= 2 transitions per DNN, first solve the space with k - 1 (a
  // quarter of the time limit) and start from its best schedule.
  bool deepenTransitions = true;
  // Prove by branch and bound over the simulated timeline (timeline_search.h)
  // rather than over combinations of whole assignments. The combination tree
  // is not used by plan-solve; it stays as the "before" row of
  // concurrent_bench --ablation and as a second exact method the tests check
  // the timeline tree against.
  bool timelineTree = true;
  std::optional<sim::Schedule> initial;  // starting incumbent (any schedule)
  std::string initialName = "initial";
  ImproveCallback onImprove;
};

struct ExactResult {
  sim::Schedule best;
  std::string bestBy;   // "exact-bnb" or params.initialName
  double value = 0;     // simulated objective of `best`
  double bound = 0;     // proven bound on the optimum over the space (and the initial schedule)
  bool optimal = false; // search completed within the time limit
  uint64_t nodes = 0, simulations = 0;
  double elapsedMs = 0;
};

Expected<ExactResult> exactSearch(const sim::Problem& problem, const ExactParams& params);

// Number of assignments of one DNN with at most k transitions (k = -1: all);
// saturates at UINT64_MAX.
uint64_t countAssignments(const sim::Dnn& dnn, int numAccelerators, int k);

}  // namespace zp::schedule
