// Baselines of HaX-CoNN §5 (the HaX-CoNN paper),
// each producing an assignment that the simulator then judges:
//  - "<ACC>-only": every group on the accelerator with the least total
//    standalone time (the paper's GPU-only), DNNs serialised on it;
//  - "naive-concurrent": each DNN whole on one accelerator, best pairing
//    (all |A|^N pairings simulated up to kMaxNaivePairings, past that a
//    coordinate descent over the same pairings; the paper's "GPU & DSA");
//  - "mensa-like": greedy per-group placement one DNN at a time, minimising
//    the group's time plus the transition from the previous group
//    (transition-aware, blind to the other DNNs and to contention);
//  - "herald-like": earliest-finish-time list scheduling of all DNNs'
//    groups ignoring transition costs and contention;
//  - "h2h-like": the same list scheduling with transition costs
//    (transition-aware, contention-blind).
#pragma once
#include <string>
#include <vector>

#include "libplan/sim/concurrent/problem.h"

namespace zp::schedule {

inline constexpr double kMaxNaivePairings = 4096;

struct Baseline {
  std::string name;
  sim::Schedule schedule;
};

std::vector<Baseline> makeBaselines(const sim::Problem& problem, sim::Objective objective);

}  // namespace zp::schedule
