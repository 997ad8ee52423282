// Seeded random scheduling instances for tests and benchmarks (explicit seed,
// own uniform mapping so the same seed gives the same instance everywhere).
#pragma once
#include <cstdint>

#include "libplan/sim/concurrent/problem.h"

namespace zp::schedule {

struct RandomInstanceParams {
  int dnns = 2;
  int groups = 6;          // per DNN
  int accelerators = 2;    // accelerator 0 is the fast "GPU"
  uint64_t seed = 1;
  bool pipeline = false;   // DNN k depends on DNN k-1 (scenario 3)
};

// Times: GPU 0.05-0.5 ms, other accelerators 1.2-2.2x slower (the D/G ratio
// range of HaX-CoNN Table 2 is 1.40-2.02); transitions 0-0.15 ms; demand on
// GPU 30-90 (% of peak), elsewhere scaled by the time ratio (same traffic
// spread over a longer time). Contention: syntheticContention().
sim::Problem randomInstance(const RandomInstanceParams& params);

// Illustrative PCCS-shaped surface (not measured): slowdown(own, ext) =
// 1 + k_a * (own/100) * min(ext, 120)/100 with k = 0.6 for accelerator 0 and
// 0.35 for the others, on the grid own {0,25,50,75,100} x ext {0,30,60,90,120,200}.
sim::ContentionModel syntheticContention(int accelerators);

}  // namespace zp::schedule
