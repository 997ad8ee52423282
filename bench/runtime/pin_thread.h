// Pins the calling thread to one CPU (the runtime benches' threads, each on its own core).
#pragma once
#include <pthread.h>
#include <sched.h>

namespace zp::bench {

inline bool pinTo(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

}  // namespace zp::bench
