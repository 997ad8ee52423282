// plan-solve: thin CLI. Parses options and calls the driver of the flow --mode
// names: "stitch" (drivers/stitch_flow: SparseLoom selection, placement,
// preloading; the default), "concurrent" (drivers/concurrent_flow:
// contention-aware schedules), "opplace" (drivers/opplace_flow: per-operator
// placement of one model), "cold" (drivers/cold_flow: one model's
// cold-start plan, NNV12) or "mts" (drivers/mts_flow: zoo-mts's stitched groups
// measured and placed as units).
#include <algorithm>
#include <iostream>
#include <string>
#include <thread>

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include "drivers/cold_flow/solve_cold.h"
#include "drivers/concurrent_flow/solve_concurrent.h"
#include "drivers/mts_flow/solve_mts.h"
#include "drivers/opplace_flow/solve_opplace.h"
#include "drivers/stitch_flow/solve_stitch.h"
#include "passes/select/plan_stitch.h"
#include "libplan/util/version.h"
#include "tools/cli.h"

int main(int argc, char** argv) {
  CLI::App app{"plan-solve: compute an execution plan"};
  std::string mode = "stitch";
  zp::drivers::SolveConcurrentOptions cc;
  zp::drivers::SolveStitchOptions sp;
  zp::drivers::SolveOpplaceOptions op;
  zp::drivers::SolveColdOptions co;
  zp::drivers::SolveMtsOptions mo;
  std::string objective, solver = "exact";
  bool anytime = false;
  std::string input, output, trace, stats, svgDir, evaluate;
  std::vector<std::string> budgets;
  app.add_option("--mode", mode,
                 "stitch (PROFILE_DIR) | concurrent (WORKLOAD.json) | opplace (MODEL.onnx) | cold (MODEL.onnx) | mts (MTS_DIR)")
      ->check(CLI::IsMember({"stitch", "concurrent", "opplace", "cold", "mts"}));
  app.add_option("input", input,
                 "stitch: zoo-profile's directory; concurrent: WORKLOAD.json; opplace, cold: MODEL.onnx; "
                 "mts: zoo-mts's directory or its mts.json")
      ->required();
  app.add_option("-o,--output", output, "plan JSON to write")->required();
  // stitch mode
  app.add_option("--slo", sp.slo, "stitch: SLO.json, or grid | accuracy-guaranteed | latency-guaranteed")->default_val("grid");
  app.add_option("--memory-budget", budgets, "stitch: preload budgets, BYTES or PCT% (default 15% 55% 100%)");
  app.add_option("--svg-dir", svgDir, "stitch: write <task>.svg accuracy-latency plots here");
  app.add_option("--evaluate", evaluate, "stitch: evaluate against the six baselines, write JSON here");
  bool estimatedAccuracy = false;
  app.add_flag("--estimated-accuracy", estimatedAccuracy,
               "stitch: decide with the estimator's accuracy for stitched variants as SparseLoom does "
               "(default: zoo-profile's measurement wherever it measured one)");
  std::string processorList;
  app.add_option("--processors", processorList, "stitch: plan on these processors only (comma-separated; default: every one)");
  app.add_option("--queries", sp.select.queriesPerTask, "stitch: simulated queries per task")->default_val(100)
      ->check(zp::cli::integerIn(1, 1000000));
  // concurrent mode
  app.add_option("--objective", objective, "concurrent: latency | throughput (default: the workload's)")
      ->check(CLI::IsMember({"latency", "throughput"}));
  app.add_option("--solver", solver, "concurrent: exact | z3")->check(CLI::IsMember({"exact", "z3"}));
  app.add_option("--max-transitions", cc.solve.maxTransitionsPerDnn,
                 "concurrent: transitions per DNN in the search space (-1: unrestricted)")
      ->check(zp::cli::integerIn(-1, 1000000));
  app.add_option("--time-limit", cc.solve.timeLimitS, "concurrent: solver time limit, seconds (past it: the best schedule found, not proven optimal, with its gap)")
      ->capture_default_str()
      ->check(zp::cli::numberIn(1e-3, 1e6));
  app.add_flag("--anytime", anytime, "concurrent: print each improving schedule with its timestamp");
  app.add_flag("--cross-check", cc.solve.crossCheckZ3, "concurrent: also solve with Z3 in the same space and compare");
  // opplace mode
  app.add_option("--profile", op.profileDir, "opplace: zoo-profile's output directory (node_profile.csv, latency_model.json)");
  std::string zooPath;
  app.add_option("--zoo", zooPath, "opplace: zoo.json whose host processors the operators go to; "
                                   "mts: the units' processors (default: the zoo mts.json was made from)");
  app.add_option("--place-time-limit", op.solve.timeLimitS, "opplace: branch-and-bound time limit, seconds (past it: not proven optimal, with its gap)")
      ->capture_default_str()
      ->check(zp::cli::numberIn(1e-3, 1e6));
  app.add_option("--min-mix-gain", op.solve.minMixGain,
                 "opplace: place on several processors only when that beats the best single one by this fraction "
                 "(0: the optimum under the cost model)")
      ->capture_default_str()
      ->check(zp::cli::numberIn(0, 0.99));
  // cold mode
  app.add_option("--cold-profile", co.coldProfile, "cold: plan from this cold_profile.csv (default: measure now)");
  app.add_option("--profile-model", co.profileModel, "cold: the model's label in --cold-profile (default: file stem)");
  app.add_option("--write-cold-profile", co.writeProfile, "cold: write the measured cold_profile.csv here");
  app.add_option("--calibrate", co.calibrationRuns,
                 "cold: calibrate the cost model against these measured cold runs of the model "
                 "(plan-run MODEL --cold --json reports; repeatable)");
  app.add_option("--cores", co.solve.cores, "cold: cores the schedule may use (default: the profiled host's; "
                                           "at most this machine's, which runs the plan)")
      ->check(zp::cli::integerIn(1, std::max(1u, std::thread::hardware_concurrency())));
  app.add_option("--warm-repeat", co.measure.warmRepeat, "cold: warm runs per kernel when measuring")
      ->default_val(5)->check(zp::cli::integerIn(1, 100000));
  std::string knobs = "K+C+P";
  app.add_option("--knobs", knobs, "cold: the knob combination whose plan is written (K kernel selection, "
                                   "C caching, P pipelining; the ablation is predicted for all)")
      ->default_val("K+C+P")
      ->check(CLI::IsMember({"none", "K", "C", "P", "K+C", "K+P", "C+P", "K+C+P"}));
  // mts mode
  app.add_option("--repeat", mo.repeat, "mts: timed runs of each model on each processor (the median is the cost)")
      ->default_val(50)->check(zp::cli::integerIn(1, 100000));
  // all
  app.add_option("--trace", trace, "write a Chrome-trace / Perfetto JSON of the schedule");
  app.add_option("--stats", stats, "write solve times (non-deterministic) to this JSON file");
  app.add_option("--seed", cc.solve.seed, "random seed (recorded in the plan)")->check(zp::cli::integerIn(0, INT64_MAX));
  if (auto rc = zp::cli::parse(app, argc, argv, "plan-solve")) return *rc;
  for (const auto& b : budgets)  // the form now; the bytes a percentage means once the profile is read
    if (auto r = zp::select::parseBudget(b, 0); !r.ok())
      return zp::cli::printError("plan-solve", r.error().message), zp::cli::kOptionError;

  if (mode == "mts") {
    mo.manifest = input;
    mo.zoo = zooPath;
    mo.output = output;
    mo.seed = static_cast<uint64_t>(cc.solve.seed);
    mo.version = zp::zooplanVersion();
    auto r = zp::drivers::solveMts(mo);
    if (!r.ok()) return zp::cli::inputError("plan-solve", r.error());
    std::cout << r->summary;
    return 0;
  }
  if (mode == "opplace") {
    if (op.profileDir.empty() || zooPath.empty())
      return zp::cli::printError("plan-solve", "--mode opplace needs --profile DIR and --zoo zoo.json"),
             zp::cli::kOptionError;
    op.model = input;
    op.zoo = zooPath;
    op.output = output;
    op.seed = static_cast<uint64_t>(cc.solve.seed);
    op.version = zp::zooplanVersion();
    auto r = zp::drivers::solveOpplace(op);
    if (!r.ok()) return zp::cli::inputError("plan-solve", r.error());
    std::cout << r->summary;
    return 0;
  }
  if (mode == "cold") {
    co.solve.knobs = *zp::coldstart::parseKnobs(knobs);
    co.model = input;
    co.output = output;
    co.version = zp::zooplanVersion();
    auto r = zp::drivers::solveCold(co);
    if (!r.ok()) return zp::cli::inputError("plan-solve", r.error());
    fmt::print("{}wrote {}\n", r->summary, output);
    return 0;
  }
  if (mode == "stitch") {
    sp.profileDir = input;
    sp.output = output;
    sp.trace = trace;
    sp.svgDir = svgDir;
    sp.evaluation = evaluate;
    sp.stats = stats;
    sp.seed = cc.solve.seed;
    sp.select.measuredAccuracyForDecisions = !estimatedAccuracy;
    if (!budgets.empty()) sp.budgets = budgets;
    sp.processors = zp::cli::splitList(processorList);
    sp.tool = "plan-solve";
    sp.version = zp::zooplanVersion();
    auto r = zp::drivers::solveStitch(sp);
    if (!r.ok()) return zp::cli::inputError("plan-solve", r.error());
    fmt::print("{}wrote {} ({:.0f} ms)\n", r->summary, output, r->solveMs);
    return 0;
  }
  cc.workload = input;
  cc.output = output;
  cc.trace = trace;
  cc.stats = stats;
  if (!objective.empty())
    cc.solve.objective = objective == "latency" ? zp::sim::Objective::Latency : zp::sim::Objective::Throughput;
  cc.solve.solver = solver == "z3" ? zp::schedule::SolverKind::Z3 : zp::schedule::SolverKind::Exact;
  if (anytime) cc.onImprovement = [](const std::string& line) { std::cout << line << std::endl; };
  auto r = zp::drivers::solveConcurrent(cc);
  if (!r.ok()) return zp::cli::inputError("plan-solve", r.error());
  std::cout << r->summary;
  return 0;
}
