// plan-run BUNDLE --serve: executes the plan for real (SparseLoom §3.3-3.4
// runtime phase). Queries arrive from a trace (a file, or generated periodic /
// Poisson from a seed), each carrying a sample of its task's dataset. The plan's
// choice, and with --compare the other systems it carries, are each served on
// the same trace by the executor (libplan/runtime/serve): every query runs the
// system's units in order on the processors it places them on, each processor a
// worker pinned to its cores; the resident units are loaded before serving, the
// others from the bundle's weight caches on demand, evicted under the memory
// budget. A stitch plan's and an MTS plan's systems become such setups
// (drivers/run/serve_system.h) and are then served, predicted and reported alike.
// Beside each measurement, the open-loop simulator's prediction
// (libplan/sim/queries/serve_sim.h): from run times and wake-up delays
// calibrated as serving sees them (libplan/runtime/serve/run_calibration.h) and
// the load times measured here; and, for comparison, from the plan's latencies alone.
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "libplan/runtime/serve/processor.h"
#include "libplan/util/error.h"
#include "libplan/util/json.h"
#include "libplan/runtime/serve/executor.h"
#include "libplan/util/query_summary.h"

namespace zp::drivers {

struct ServeBundleParams {
  std::filesystem::path bundle;
  std::filesystem::path arrivals;   // arrivals CSV; empty: generated
  std::string process = "poisson";  // generated: periodic | poisson
  double rateQps = 20;              // generated: per task
  std::map<std::string, double> taskRateQps;  // generated: these tasks' own rates instead
  // Neither a rate, a process nor an arrivals file given: a plan that records the
  // workload its choice was made for (stitch.workload) is served at it.
  bool planWorkload = false;
  double durationMs = 0;            // generated: arrivals in [0, duration) ...
  int count = 0;                    // ... or this many per task (neither: 60 per task)
  uint64_t seed = 0;
  std::vector<std::string> slos;    // configurations active in turn; empty: every one in the plan
  std::vector<std::string> compare; // systems served after the plan's own ("all": every one it carries)
  // Other bundles' plan choices served after those, each as the system named
  // (a stitch plan of the same processors, tasks and trace): compared in the same rounds.
  std::vector<std::pair<std::string, std::filesystem::path>> alongside;
  std::string budget;               // the plan's preload set (as written, "15%"); empty: the first
  int samples = 64;                 // dataset samples per task the queries cycle through
  int calibrationRounds = 15;       // timed runs per slot for the prediction (0: plan latencies only)
  // The trace cut into this many segments; each round every system serves one,
  // starting with a different system each round (the host's load drifts fall on all alike).
  int rounds = 1;
  int maxQueuedPerTask = runtime::serve::kDefaultMaxQueuedPerTask;  // admission control (executor.h)
  // Every system served in this order instead of the one its plan names (none: the plan's).
  std::optional<ServingOrder> servingOrder;
  // Per system named: its order, before servingOrder's (each name must be a system served).
  std::map<std::string, ServingOrder> servingOrderOf;
  std::filesystem::path json;       // --json OUT.json (empty: none)
  std::filesystem::path trace;      // --trace FILE: Perfetto of one system's run (empty: none)
  std::string traceSystem;          // --trace-system: one of the served systems (empty: the plan's own)
};

struct ServeBundleResult {
  Json report;        // what --json writes
  std::string table;  // measured beside predicted, per system
  std::vector<std::string> notes;
};

// Everything is checked (bundle, caches, cores, arrivals) before anything runs;
// outputs are written (atomically) only after every system was served. A stitch
// plan and an MTS plan are served alike (drivers/run/serve_system.h).
Expected<ServeBundleResult> serveBundle(const ServeBundleParams& params);

// The system whose timeline --trace writes, of the names served (in order, the
// plan's own first): the one --trace-system names (an error when it is not
// served), else the first.
Expected<std::string> tracedSystem(const ServeBundleParams& params, const std::vector<std::string>& served);

// The report's pieces both serving drivers write.
Json querySummaryJson(const QuerySummary& s);
Json processorsJson(const std::vector<Processor>& processors);

}  // namespace zp::drivers
