// plan-solve --mode concurrent: WORKLOAD.json -> plan.json with a
// contention-aware schedule of several DNNs on shared-memory accelerators
// (HaX-CoNN), the baselines it beat, and optionally a Perfetto trace.
#pragma once
#include <filesystem>
#include <functional>
#include <string>

#include "libplan/util/error.h"
#include "passes/schedule/concurrent.h"

namespace zp::drivers {

struct SolveConcurrentOptions {
  std::filesystem::path workload;
  std::filesystem::path output;  // plan.json
  std::filesystem::path trace;   // empty: none
  std::filesystem::path stats;   // empty: none (solve times, non-deterministic)
  schedule::ConcurrentParams solve;
  // Anytime mode: called with a line for each improving schedule, while solving.
  std::function<void(const std::string& line)> onImprovement;
};

struct SolveConcurrentResult {
  std::string summary;  // the table against the baselines and the solver's report
};

// Loads, solves, writes plan.json (and the trace / stats) atomically. Errors
// are one line naming the file; outputs are checked before solving.
Expected<SolveConcurrentResult> solveConcurrent(const SolveConcurrentOptions& options);

}  // namespace zp::drivers
