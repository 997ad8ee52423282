// plan-solve --mode stitch (the stitch flow's third tool): PROFILE_DIR + SLOs
// -> plan.json (global placement order, selections per SLO configuration,
// preload sets), plus optional evaluation against the baselines, a Perfetto
// trace of the simulated schedule and accuracy-latency SVGs.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "libplan/plan/plan.h"
#include "libplan/util/json.h"
#include "passes/coldstart/coldstart.h"
#include "drivers/stitch_flow/frame_schedules.h"
#include "drivers/stitch_flow/placed_models.h"
#include "passes/select/select.h"

namespace zp::drivers {

struct SolveStitchOptions {
  std::filesystem::path profileDir;
  std::string slo = "grid";                 // SLO.json, or "grid" (§5.1) / "accuracy-guaranteed" / "latency-guaranteed"
  std::filesystem::path output;             // plan.json
  std::filesystem::path trace;              // Chrome trace of zooplan's simulated schedule (first configuration)
  std::filesystem::path svgDir;             // <task>.svg: accuracy-latency space with the Pareto front
  std::filesystem::path evaluation;         // evaluation JSON (runs the evaluation when set)
  std::filesystem::path stats;              // {"solve_ms": ...} (not deterministic)
  std::vector<std::string> budgets = {"15%", "55%", "100%"};
  // --memory-budget was given: its first is the device's even where it holds no plan
  // (an error); the default's first is raised to the least a plan needs, with a note.
  bool budgetsGiven = false;
  std::vector<std::string> processors;      // plan on these processors only (empty: every one profiled)
  select::SelectParams select;
  // The workload zooplan's choice is served at: queries per second per task
  // (0: judged in the query simulator's burst instead), their arrival process,
  // and the rounds of the serving calibration measured on this host (0: run
  // times as profiled, no wake-up delays).
  double rateQps = 0;
  std::string arrivalProcess = "poisson";
  int calibrationRounds = 5;
  // Choices are also judged with every calibrated time this many times as long
  // (select::ServingWorkload::slowdownJudged); 1: at the calibration alone.
  double slowdownJudged = 1.4;
  coldstart::ColdStartParams cold;          // the cold-start section of each chosen subgraph
  PlacedModelsParams placed;                // the variants' operator placements (candidates beside the subgraphs)
  FrameSchedulesParams frames;              // the frames' concurrent schedules (their DNNs' layer-group candidates)
  uint64_t seed = 0;                        // recorded; the optimizer itself draws nothing
  std::filesystem::path previousPlan;       // an earlier plan whose picks ties keep (empty: none)
  std::string tool = "plan-solve";
  std::string version;
};

struct SolveStitchResult {
  plan::Plan plan;
  std::string summary;
  std::vector<std::string> warnings;  // SLOs no plan can meet on this host
  Json evaluation;  // empty unless asked
  double solveMs = 0;  // wall time of the whole run
};

// The plan's header: the tool, and the hash of every input it reads (the
// profile's files, stitch.json, the SLO file).
Expected<plan::PlanHeader> planHeader(const SolveStitchOptions& options, const select::StitchSpace& space);

// Every output is checked before anything is written (checkOutputFile: not a
// directory, not an input, no two the same) and written atomically.
Expected<SolveStitchResult> solveStitch(const SolveStitchOptions& options);

}  // namespace zp::drivers
