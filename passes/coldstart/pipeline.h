// The predicted timeline of one cold start under the cost model of
// cold_problem.h: given each step's option and transform core, when each read,
// transform and execute starts and ends.
#pragma once
#include <vector>

#include "passes/coldstart/cold_problem.h"

namespace zp::coldstart {

struct StepChoice {
  int option = 0;
  int core = -1;  // core of the transform; -1 when the option has none (cached, no weights, or 0 ms)
  bool operator==(const StepChoice&) const = default;
};
using Choice = std::vector<StepChoice>;  // one per step

struct StepTimes {
  double readStart = 0, readEnd = 0, transformStart = 0, transformEnd = 0, execStart = 0, execEnd = 0;
};

struct Timeline {
  double latencyMs = 0;  // end of the last execute
  std::vector<int> startups;          // libraries started (indices into Problem::libraries), in order
  std::vector<double> libraryReady;   // per library: when its start-up ends (setup when not started)
  std::vector<StepTimes> steps;
  std::vector<double> coreFree;  // when each core is done with the cold start's work
  double diskFree = 0;
};

// Whether the step's option occupies a core (a transform of more than 0 ms).
bool needsCore(const Option& o);
// The libraries some chosen option uses (their start-ups are paid), as a bit set.
unsigned librariesUsed(const Problem& p, const Choice& c);

// Pipelined: reads stream in order, transforms on their cores in step order,
// execution on core 0 (a transform on core 0 runs right before its step's execute).
Timeline simulate(const Problem& p, const Choice& c);
// Not pipelined: setup, start-up, then every read, transform and execute one after another.
Timeline simulateSerial(const Problem& p, const Choice& c);

}  // namespace zp::coldstart
