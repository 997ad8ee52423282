// plan-solve: thin CLI. Parses options and calls the driver of the flow --mode
// names: "stitch" (drivers/stitch_flow: SparseLoom selection, placement,
// preloading; the default), "concurrent" (drivers/concurrent_flow:
// contention-aware schedules), "opplace" (drivers/opplace_flow: per-operator
// placement of one model), "cold" (drivers/cold_flow: one model's
// cold-start plan, NNV12) or "mts" (drivers/mts_flow: zoo-mts's stitched groups
// measured and placed as units).
#include <fmt/core.h>

#include <iostream>
#include <string>
#include <variant>

#include "drivers/stitch_flow/plan_freshness.h"
#include "tools/cli.h"
#include "tools/plan_solve_options.h"

namespace {

// The mode's driver, then its summary; a failure is one line and exit code 1.
template <typename Solve, typename Options, typename Print>
int solveAndPrint(Solve solve, const Options& options, Print print) {
  auto r = solve(options);
  if (!r.ok()) return zp::cli::inputError("plan-solve", r.error());
  print(*r);
  return 0;
}

// --check: 0 when the plan is up to date; 1 when it is stale (what changed is
// listed) or an input is bad (one line).
int checkAndPrint(const std::string& plan, const zp::drivers::SolveStitchOptions& defaults) {
  auto r = zp::drivers::checkStitchPlanFreshness(plan, defaults);
  if (!r.ok()) return zp::cli::inputError("plan-solve", r.error());
  if (!r->stale()) {
    fmt::print("{}: up to date ({} inputs checked)\n", plan, r->checked);
    return 0;
  }
  fmt::print("{}: stale ({} of {} inputs changed):\n", plan, r->changed.size(), r->checked);
  for (const auto& line : r->changed) fmt::print("  {}\n", line);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  auto parsed = zp::cli::parsePlanSolveArgs(argc, argv);
  if (const int* rc = std::get_if<int>(&parsed)) return *rc;
  auto& req = std::get<zp::cli::PlanSolveRequest>(parsed);
  auto summary = [](const auto& r) { std::cout << r.summary; };
  if (req.mode == "mts") return solveAndPrint(zp::drivers::solveMts, req.mts, summary);
  if (req.mode == "opplace") return solveAndPrint(zp::drivers::solveOpplace, req.opplace, summary);
  if (req.mode == "cold")
    return solveAndPrint(zp::drivers::solveCold, req.cold,
                         [&](const auto& r) { fmt::print("{}wrote {}\n", r.summary, req.cold.output.string()); });
  if (!req.checkPlan.empty()) return checkAndPrint(req.checkPlan, req.stitch);
  if (req.mode == "stitch")
    return solveAndPrint(zp::drivers::solveStitch, req.stitch, [&](const auto& r) {
      fmt::print("{}wrote {} ({:.0f} ms)\n", r.summary, req.stitch.output.string(), r.solveMs);
      for (const auto& w : r.warnings) std::cerr << "warning: " << w << "\n";
    });
  if (req.anytime) req.concurrent.onImprovement = [](const std::string& line) { std::cout << line << std::endl; };
  return solveAndPrint(zp::drivers::solveConcurrent, req.concurrent, summary);
}
