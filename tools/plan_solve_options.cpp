#include "tools/plan_solve_options.h"

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <string>
#include <thread>
#include <tuple>

#include "libplan/util/version.h"
#include "passes/select/plan_stitch.h"
#include "tools/cli.h"

namespace zp::cli {

std::variant<PlanSolveRequest, int> parsePlanSolveArgs(int argc, char** argv) {
  CLI::App app{"plan-solve: compute an execution plan"};
  PlanSolveRequest req;
  std::string& mode = req.mode;
  auto [cc, sp, op, co, mo] = std::tie(req.concurrent, req.stitch, req.opplace, req.cold, req.mts);  // references
  std::string objective, solver = "exact";
  bool& anytime = req.anytime;
  std::string input, output, trace, stats, svgDir, evaluate;
  std::vector<std::string> budgets;
  app.add_option("--mode", mode,
                 "stitch (PROFILE_DIR) | concurrent (WORKLOAD.json) | opplace (MODEL.onnx) | cold (MODEL.onnx) | mts (MTS_DIR)")
      ->check(CLI::IsMember({"stitch", "concurrent", "opplace", "cold", "mts"}));
  std::string only;
  app.add_option("--only", only,
                 "restrict the plan to one technique, for ablation: sparseloom (stitch: Algorithm 1's choice, the "
                 "preload set resident, no cold sections), haxconn (= --mode concurrent), sparoa (= --mode opplace), "
                 "nnv12 (= --mode cold), mts (= --mode mts)")
      ->check(CLI::IsMember({"sparseloom", "haxconn", "sparoa", "nnv12", "mts"}));
  app.add_option("input", input,
                 "stitch: zoo-profile's directory; concurrent: WORKLOAD.json; opplace, cold: MODEL.onnx; "
                 "mts: zoo-mts's directory or its mts.json (required unless --check)");
  app.add_option("-o,--output", output, "plan JSON to write (required unless --check)");
  // stitch mode
  app.add_option("--slo", sp.slo, "stitch: SLO.json, or grid | accuracy-guaranteed | latency-guaranteed")->default_val("grid");
  app.add_option("--memory-budget", budgets, "stitch: preload budgets, BYTES or PCT% (default 15% 55% 100%)");
  app.add_option("--check", req.checkPlan,
                 "PLAN: instead of planning, compare a stitch plan with the inputs it records (its profile, stitch.json, "
                 "its SLO file, and down the chain zoo.json, every ONNX file and every dataset): list what changed and "
                 "exit 1 when stale, 0 when up to date; writes nothing");
  app.add_option("--svg-dir", svgDir, "stitch: write <task>.svg accuracy-latency plots here");
  app.add_option("--evaluate", evaluate, "stitch: evaluate against the six baselines, write JSON here");
  bool estimatedAccuracy = false;
  app.add_flag("--estimated-accuracy", estimatedAccuracy,
               "stitch: decide with the estimator's accuracy for stitched variants as SparseLoom does "
               "(default: zoo-profile's measurement wherever it measured one)");
  std::string processorList;
  app.add_option("--processors", processorList, "stitch: plan on these processors only (comma-separated; default: every one)");
  app.add_option("--rate", sp.rateQps,
                 "stitch: choose zooplan's configuration for this many queries per second per task, served as plan-run "
                 "--serve serves them (default: judged in a burst of --queries per task)")
      ->check(CLI::PositiveNumber);
  app.add_option("--arrival-process", sp.arrivalProcess, "stitch: with --rate, poisson (default) | periodic")
      ->check(CLI::IsMember({"poisson", "periodic"}));
  app.add_option("--calibration-rounds", sp.calibrationRounds,
                 "stitch: with --rate, timed runs per subgraph calibrating serving on this host (0: as profiled)")
      ->default_val(5)->check(CLI::Range(0, 1000));
  app.add_option("--queries", sp.select.queriesPerTask, "stitch: simulated queries per task")->default_val(100)
      ->check(integerIn(1, 1000000));
  // concurrent mode
  app.add_option("--objective", objective, "concurrent: latency | throughput (default: the workload's)")
      ->check(CLI::IsMember({"latency", "throughput"}));
  app.add_option("--solver", solver, "concurrent: exact | z3")->check(CLI::IsMember({"exact", "z3"}));
  app.add_option("--max-transitions", cc.solve.maxTransitionsPerDnn,
                 "concurrent: transitions per DNN in the search space (-1: unrestricted)")
      ->check(integerIn(-1, 1000000));
  app.add_option("--time-limit", cc.solve.timeLimitS, "concurrent: solver time limit, seconds (past it: the best schedule found, not proven optimal, with its gap)")
      ->capture_default_str()
      ->check(numberIn(1e-3, 1e6));
  app.add_flag("--anytime", anytime, "concurrent: print each improving schedule with its timestamp");
  app.add_flag("--cross-check", cc.solve.crossCheckZ3, "concurrent: also solve with Z3 in the same space and compare");
  // opplace mode
  app.add_option("--profile", op.profileDir, "opplace: zoo-profile's output directory (node_profile.csv, latency_model.json)");
  std::string zooPath;
  app.add_option("--zoo", zooPath, "opplace: zoo.json whose host processors the operators go to; "
                                   "mts: the units' processors (default: the zoo mts.json was made from)");
  app.add_option("--place-time-limit", op.solve.timeLimitS, "opplace: branch-and-bound time limit, seconds (past it: not proven optimal, with its gap)")
      ->capture_default_str()
      ->check(numberIn(1e-3, 1e6));
  app.add_option("--min-mix-gain", op.solve.minMixGain,
                 "opplace: place on several processors only when that beats the best single one by this fraction "
                 "(0: the optimum under the cost model)")
      ->capture_default_str()
      ->check(numberIn(0, 0.99));
  // cold mode
  app.add_option("--cold-profile", co.coldProfile, "cold: plan from this cold_profile.csv (default: measure now)");
  app.add_option("--profile-model", co.profileModel, "cold: the model's label in --cold-profile (default: file stem)");
  app.add_option("--write-cold-profile", co.writeProfile, "cold: write the measured cold_profile.csv here");
  app.add_option("--calibrate", co.calibrationRuns,
                 "cold: calibrate the cost model against these measured cold runs of the model "
                 "(plan-run MODEL --cold --json reports; repeatable)");
  app.add_option("--cores", co.solve.cores, "cold: cores the schedule may use (default: the profiled host's; "
                                           "at most this machine's, which runs the plan)")
      ->check(integerIn(1, std::max(1u, std::thread::hardware_concurrency())));
  app.add_option("--warm-repeat", co.measure.warmRepeat, "cold: warm runs per kernel when measuring")
      ->default_val(5)->check(integerIn(1, 100000));
  std::string knobs = "K+C+P";
  app.add_option("--knobs", knobs, "cold: the knob combination whose plan is written (K kernel selection, "
                                   "C caching, P pipelining; the ablation is predicted for all)")
      ->default_val("K+C+P")
      ->check(CLI::IsMember({"none", "K", "C", "P", "K+C", "K+P", "C+P", "K+C+P"}));
  // mts mode
  app.add_option("--repeat", mo.repeat, "mts: timed runs of each model on each processor (the median is the cost)")
      ->default_val(50)->check(integerIn(1, 100000));
  // all
  app.add_option("--trace", trace, "write a Chrome-trace / Perfetto JSON of the schedule");
  app.add_option("--stats", stats, "write solve times (non-deterministic) to this JSON file");
  app.add_option("--seed", cc.solve.seed, "random seed (recorded in the plan)")->check(integerIn(0, INT64_MAX));
  if (auto rc = parse(app, argc, argv, "plan-solve")) return *rc;
  if (!req.checkPlan.empty()) {
    if (mode != "stitch")
      return printError("plan-solve", fmt::format("--check compares a stitch plan with its inputs, not --mode {}", mode)),
             kOptionError;
    if (!input.empty() || !output.empty())
      return printError("plan-solve", "--check PLAN takes no input and no -o: the plan records its inputs"), kOptionError;
  } else if (input.empty()) {
    return printError("plan-solve", "input is required"), kOptionError;
  } else if (output.empty()) {
    return printError("plan-solve", "--output is required"), kOptionError;
  }
  if (!only.empty()) {
    static const std::map<std::string, std::string> kModeOf = {
        {"sparseloom", "stitch"}, {"haxconn", "concurrent"}, {"sparoa", "opplace"}, {"nnv12", "cold"}, {"mts", "mts"}};
    const std::string& implied = kModeOf.at(only);
    if (app.count("--mode") && mode != implied)
      return printError("plan-solve", fmt::format("--only {} plans in --mode {}, not --mode {}: drop --mode", only,
                                                  implied, mode)),
             kOptionError;
    mode = implied;
    sp.select.sparseLoomOnly = only == "sparseloom";
  }
  for (const auto& b : budgets)  // the form now; the bytes a percentage means once the profile is read
    if (auto r = select::parseBudget(b, 0); !r.ok())
      return printError("plan-solve", r.error().message), kOptionError;


  if (mode == "mts") {
    mo.manifest = input;
    mo.zoo = zooPath;
    mo.output = output;
    mo.seed = static_cast<uint64_t>(cc.solve.seed);
    mo.version = zooplanVersion();
  } else if (mode == "opplace") {
    if (op.profileDir.empty() || zooPath.empty())
      return printError("plan-solve", "--mode opplace needs --profile DIR and --zoo zoo.json"), kOptionError;
    op.model = input;
    op.zoo = zooPath;
    op.output = output;
    op.seed = static_cast<uint64_t>(cc.solve.seed);
    op.version = zooplanVersion();
  } else if (mode == "cold") {
    co.solve.knobs = *coldstart::parseKnobs(knobs);
    co.model = input;
    co.output = output;
    co.version = zooplanVersion();
  } else if (mode == "stitch") {
    sp.profileDir = input;
    sp.output = output;
    sp.trace = trace;
    sp.svgDir = svgDir;
    sp.evaluation = evaluate;
    sp.stats = stats;
    sp.seed = cc.solve.seed;
    sp.select.measuredAccuracyForDecisions = !estimatedAccuracy;
    if (!budgets.empty()) sp.budgets = budgets;
    sp.processors = splitList(processorList);
    sp.tool = "plan-solve";
    sp.version = zooplanVersion();
  } else {
    cc.workload = input;
    cc.output = output;
    cc.trace = trace;
    cc.stats = stats;
    if (!objective.empty())
      cc.solve.objective = objective == "latency" ? sim::Objective::Latency : sim::Objective::Throughput;
    cc.solve.solver = solver == "z3" ? schedule::SolverKind::Z3 : schedule::SolverKind::Exact;
  }
  return req;
}

}  // namespace zp::cli
