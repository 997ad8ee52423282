// The serving core plan-run --serve runs every plan through. What a plan's
// section decides (a stitch plan's choices per SLO configuration, an MTS plan's
// groups and their placement) becomes one SystemSetup per system: the plan's
// units placed on processors (slots), the tasks whose queries run them in order,
// and the trace those tasks see. Each setup is then served the same way: load
// times measured, run times calibrated on the pinned processors, the open-loop
// simulator's prediction, the executor's measurement (libplan/runtime/serve) —
// and reported in one table and one JSON shape.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "drivers/run/bundle.h"
#include "drivers/run/serve_bundle.h"
#include "libplan/artifacts/arrivals_csv.h"
#include "libplan/runtime/serve/executor.h"
#include "libplan/runtime/serve/model_file_loader.h"

namespace zp::drivers {

// The latency bound of a task whose plan sets none (MTS groups, a placed model):
// its figures are latency and throughput, never violations.
inline constexpr double kNoLatencySloMs = 1e9;

// A unit of the plan on the processor that runs it.
struct ServedSlot {
  plan::UnitId unit;
  int processor = 0;
  int64_t bytes = 0;       // counted against the memory budget
  double plannedMs = 0;    // the plan's run time of the unit on that processor
  bool preload = false;    // resident before serving, never evicted
  runtime::serve::SubgraphFiles files;
};

struct SystemSetup {
  std::string name, description;
  std::vector<ServedSlot> slots;
  std::vector<runtime::serve::ServeTask> tasks;  // their slots index into `slots`
  runtime::serve::ArrivalTrace trace;            // over `tasks`
  // Per arrival of `trace`: the user's query it is part of (one query of a
  // weight-shared group runs a task per member) and when that query arrived.
  // A query ends with its last part. Empty: every arrival is a query.
  std::vector<int> queryOf;
  std::vector<double> queryArrivalMs;
  int64_t budgetBytes = INT64_MAX;
  ServingOrder order = ServingOrder::FirstCome;  // how each processor takes its queued runs
  Json plan = Json::object();  // what the plan says of this system, copied into its report
};

// What every system of one plan is served with.
struct ServedPlan {
  std::vector<Processor> processors;
  std::vector<SystemSetup> systems;  // the plan's choice first
  size_t queries = 0;                // the user's queries
  bool latencySlos = true;           // false: no task has a latency SLO (violations are not reported)
  Json report = Json::object();      // the plan kind's own top-level report fields
  std::string queryLegend;           // what one query is, for the table's legend
};

// The slot of `unit` on `processor`: its model and the weight cache for the
// processor's kernel policy, both required ("missing from the bundle ..."); a
// unit with a cold section loads following it, from its cold cache.
Expected<ServedSlot> servedSlot(Bundle& bundle, const plan::Unit& unit, int processor, const Processor& proc);

// The user's queries: the arrivals CSV --arrivals names, else generated per task
// (periodic or Poisson, --rate, --duration or --count, --seed).
Expected<runtime::serve::ArrivalTrace> userArrivals(const ServeBundleParams& params,
                                                    const std::vector<artifacts::KnownTask>& tasks);

// What a plan kind's section decides, as setups (drivers/run/serve_stitch.cpp,
// serve_mts.cpp, serve_opplace.cpp).
Expected<ServedPlan> stitchServedPlan(Bundle& bundle, const ServeBundleParams& params);
Expected<ServedPlan> mtsServedPlan(Bundle& bundle, const ServeBundleParams& params);
Expected<ServedPlan> opplaceServedPlan(Bundle& bundle, const ServeBundleParams& params);

}  // namespace zp::drivers
