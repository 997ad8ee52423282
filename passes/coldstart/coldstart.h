// The cold-start planning pass (NNV12 §3): for one model of a cold profile, per
// node the kernel of the cold inference, whether its post-transformed weights
// are read from the cache or transformed at load (I/O against transform, §3.2),
// the core of each transform and the pipelined schedule of read / transform /
// execute (Alg. 1), the warm kernel it switches to afterwards and when that
// kernel's weights are ready (§3.5). Solved exactly (exact.h) where the DP's
// fronts stay small, else with NNV12's heuristic (heuristic.h); the plan says
// which. Also the predicted latency of every knob combination (K: kernel
// selection, C: caching, P: pipelining), each solved the same way.
// All latencies are predictions of the cost model in cold_problem.h from
// measured costs; none is measured here.
#pragma once
#include <optional>
#include <string>

#include "libplan/plan/cold_plan.h"
#include "libplan/profile/cold_profile.h"
#include "libplan/util/error.h"
#include "passes/coldstart/calibration.h"
#include "passes/coldstart/exact.h"
#include "passes/coldstart/heuristic.h"

namespace zp::coldstart {

struct ColdStartParams {
  int cores = 0;  // cores the schedule may use; 0: the profile's host's
  // The knob combination whose plan is written (the ablation predicts every one;
  // a measured ablation runs each combination's plan).
  Knobs knobs{true, true, true};
  ExactParams exact;
  HeuristicParams heuristic;
  bool forceHeuristic = false;  // skip the DP (tests compare the two)
  // Costs calibrated against measured cold runs (calibration.h); runs == 0: as profiled.
  Calibration calibration;
};

// The cold start of `unit`, whose nodes the profile keys by unit.profileKey().
Expected<plan::ColdPlan> planColdStart(const profile::ColdProfile& profile, const plan::UnitId& unit,
                                       const ColdStartParams& params);

// The knob combinations of the ablation, in table order: none, K, C, P, K+C, K+P, C+P, K+C+P.
std::vector<Knobs> ablationKnobs();
std::string knobsName(const Knobs& k);
// The combination a name ("none", "K", "C+P", ...) stands for; nothing for another name.
std::optional<Knobs> parseKnobs(const std::string& name);

}  // namespace zp::coldstart
