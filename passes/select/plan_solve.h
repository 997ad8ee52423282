// plan-solve's SparseLoom mode as one entry point: PROFILE_DIR + SLOs ->
// plan.json (global placement order, selections per SLO configuration,
// preload sets), plus optional evaluation against the baselines, a Perfetto
// trace of the simulated schedule and accuracy-latency SVGs.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "libplan/plan/plan.h"
#include "libplan/util/json.h"
#include "passes/select/select.h"

namespace zp::select {

struct PlanSolveParams {
  std::filesystem::path profileDir;
  std::string slo = "grid";                 // SLO.json, or "grid" (§5.1) / "accuracy-guaranteed" / "latency-guaranteed"
  std::filesystem::path output;             // plan.json
  std::filesystem::path trace;              // Chrome trace of zooplan's simulated schedule (first configuration)
  std::filesystem::path svgDir;             // <task>.svg: accuracy-latency space with the Pareto front
  std::filesystem::path evaluation;         // evaluation JSON (runs the evaluation when set)
  std::filesystem::path stats;              // {"solve_ms": ...} (not deterministic)
  std::vector<std::string> budgets = {"15%", "55%", "100%"};
  SelectParams select;
  uint64_t seed = 0;                        // recorded; the optimizer itself draws nothing
  std::string tool = "plan-solve";
  std::string version;
};

struct PlanSolveResult {
  plan::Plan plan;
  std::string summary;
  Json evaluation;  // empty unless asked
  double solveMs = 0;  // wall time of the whole run
};

// Every output is checked before anything is written (checkOutputFile: not a
// directory, not an input, no two the same) and written atomically.
Expected<PlanSolveResult> runPlanSolve(const PlanSolveParams& params);

// Parses "15%" (of all subgraphs' memory) or a byte count.
Expected<int64_t> parseBudget(const std::string& text, int64_t total);

}  // namespace zp::select
