// When queries arrive: an open-loop trace of (time, task, dataset sample), either
// read from a file (libplan/artifacts/arrivals_csv.h) or generated here, periodic or Poisson per
// task, from an explicit seed. The same parameters give the same trace.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "libplan/util/error.h"

namespace zp::runtime::serve {

struct Arrival {
  double timeMs = 0;  // from the start of serving
  int task = 0;       // index into ArrivalTrace::tasks
  int sample = 0;     // index into the task's dataset samples
  bool operator==(const Arrival&) const = default;
};

struct ArrivalTrace {
  std::vector<std::string> tasks;
  std::vector<Arrival> arrivals;  // by time; ties keep task order, then arrival order
  bool operator==(const ArrivalTrace&) const = default;
};

enum class ArrivalProcess { Periodic, Poisson };

struct TaskArrivals {
  std::string task;
  ArrivalProcess process = ArrivalProcess::Periodic;
  double rateQps = 10;  // queries per second (periodic: one every 1000/rate ms, from 0)
  int samples = 1;      // the task's dataset size; sample k is query k modulo it
};

struct ArrivalParams {
  std::vector<TaskArrivals> tasks;
  uint64_t seed = 0;        // Poisson gaps; task i draws from its own stream
  double durationMs = 0;    // arrivals in [0, duration) ...
  int count = 0;            // ... or exactly this many per task (one of the two, not both)
};

Expected<ArrivalTrace> generateArrivals(const ArrivalParams& params);

}  // namespace zp::runtime::serve
