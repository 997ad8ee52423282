// A random valid schedule of a concurrent scheduling problem: each group on
// one of its allowed accelerators, drawn from the caller's generator.
#pragma once
#include <cstdint>
#include <random>
#include <vector>

#include "libplan/sim/concurrent/problem.h"

namespace zp::testing {

inline sim::Schedule randomSchedule(const sim::Problem& p, std::mt19937_64& rng) {
  sim::Schedule s;
  for (const auto& d : p.dnns) {
    std::vector<int> a;
    for (const auto& g : d.groups) {
      int acc;
      do acc = static_cast<int>(rng() % static_cast<uint64_t>(p.numAccelerators()));
      while (!g.allowed(acc));
      a.push_back(acc);
    }
    s.assign.push_back(a);
  }
  return s;
}

}  // namespace zp::testing
