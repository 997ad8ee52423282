// The Z3 formulation of the concurrent schedule (HaX-CoNN §3.4, Eq. 1-11),
// encoding exactly the simulator's semantics (libplan/sim/concurrent/simulator.h) so that
// the times Z3 predicts are the times the simulator measures:
//   Eq. 1   x[n][i]  group -> accelerator (Bool; 2 accelerators)
//   Eq. 3   TR[n][i] = x[n][i-1] != x[n][i]
//   Eq. 2,4 chain: s[n][i] = e[n][i-1] within a segment; a segment head starts
//           at its ready time e[n][i-1] + tau_OUT + tau_IN, or when the
//           accelerator frees (FIFO among heads by ready time)
//   Eq. 5,7,8 e = s + t + sum_j overlap(i,j) * (1 - 1/slowdown(i|j)):
//           the contention intervals of a group with each group of another DNN
//   Eq. 9   no two groups of different DNNs on one accelerator at once
//           (epsilon = 0: the simulator's FIFO resolves would-be overlaps)
//   Eq. 11  minimise max_n end_n   (z3::optimize, lower bound on time-out)
//   Eq. 10  maximise sum_n 1000/T_n (nonlinear: iterative strengthening with
//           r_n * T_n = 1000, each model strictly better than the last)
// The contention term is exact for two accelerators (at most one concurrent
// group at any time); the solver refuses more.
//
// Role: the cross-check of the exact search, not the production solver.
// Encoding the simulator exactly (overlap-dependent slowdowns per contention
// interval, FIFO among waiting segment heads, no inserted idle time) makes
// every check a search over the order of all cross-DNN group pairs: on the
// GoogleNet Table 2 scenario (2 x 10 groups) Z3 neither proves an optimum in
// 60 s nor even times one fixed assignment within 60 s, while the exact search
// proves it in milliseconds (bench/concurrent/README.md has the numbers).
// HaX-CoNN's own script is fast because it solves a looser model: one
// slowdown factor per layer whatever runs beside it, start times that may
// leave idle gaps, and pairwise no-overlap only. Tests therefore compare Z3
// with brute force and with the simulator's times on small instances only.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "libplan/sim/concurrent/problem.h"
#include "libplan/util/error.h"
#include "passes/schedule/exact.h"

namespace zp::schedule {

struct Z3Params {
  sim::Objective objective = sim::Objective::Latency;
  int maxTransitionsPerDnn = -1;  // -1: unrestricted
  double timeLimitS = 60;
  uint64_t seed = 0;              // Z3 random seeds (smt.random_seed, sat.random_seed)
  // Pin the assignment: Z3 then only computes the times (one check; value =
  // latency). A check that the formulation's semantics equal the simulator's.
  std::optional<sim::Schedule> fixed;
  // Latency: z3::optimize (true) or the anytime strengthening loop (false).
  bool useOptimize = false;
  ImproveCallback onImprove;      // each improving model
};

struct Z3Result {
  std::optional<sim::Schedule> best;
  double value = 0;  // objective value in Z3's model (exact rational, printed as double)
  double bound = 0;  // proven bound on the optimum
  bool optimal = false;
  // Z3's predicted start / end of every group (for the predicted == simulated check).
  std::vector<std::vector<std::pair<double, double>>> times;
  double elapsedMs = 0;
  unsigned checks = 0;
};

Expected<Z3Result> solveZ3(const sim::Problem& problem, const Z3Params& params);

}  // namespace zp::schedule
