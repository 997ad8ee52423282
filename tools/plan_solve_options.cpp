#include "tools/plan_solve_options.h"

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <tuple>

#include "libplan/util/version.h"
#include "passes/select/plan_stitch.h"
#include "tools/cli.h"

namespace zp::cli {

namespace {

// What the command line gives before it is sorted into the chosen mode's options.
struct SolveArgs {
  std::string input, output, trace, stats, svgDir, evaluate, only, objective, solver = "exact", zooPath;
  std::string processorList, servedInTurnList, knobs = "K+C+P";
  std::vector<std::string> budgets;
  bool estimatedAccuracy = false;
};

void addStitchOptions(CLI::App& app, PlanSolveRequest& req, SolveArgs& g) {
  auto& sp = req.stitch;
  app.add_option("--slo", sp.slo, "stitch: SLO.json, or grid | accuracy-guaranteed | latency-guaranteed")->default_val("grid");
  app.add_option("--memory-budget", g.budgets, "stitch: preload budgets, BYTES or PCT% (default 15% 55% 100%)");
  app.add_option("--check", req.checkPlan,
                 "PLAN: instead of planning, compare a stitch plan with the inputs it records (its profile, stitch.json, "
                 "its SLO file, and down the chain zoo.json, every ONNX file and every dataset): list what changed and "
                 "exit 1 when stale, 0 when up to date; writes nothing");
  app.add_option("--svg-dir", g.svgDir, "stitch: write <task>.svg accuracy-latency plots here");
  app.add_option("--evaluate", g.evaluate, "stitch: evaluate against the six baselines, write JSON here");
  app.add_flag("--estimated-accuracy", g.estimatedAccuracy,
               "stitch: decide with the estimator's accuracy for stitched variants as SparseLoom does "
               "(default: zoo-profile's measurement wherever it measured one)");
  app.add_option("--processors", g.processorList, "stitch: plan on these processors only (comma-separated; default: every one)");
  app.add_option("--rate", sp.rateQps,
                 "stitch: choose zooplan's configuration for this many queries per second per task, served as plan-run "
                 "--serve serves them (default: judged in a burst of --queries per task)")
      ->check(CLI::PositiveNumber);
  app.add_option("--arrival-process", sp.arrivalProcess, "stitch: with --rate, poisson (default) | periodic")
      ->check(CLI::IsMember({"poisson", "periodic"}));
  app.add_option("--calibration-rounds", sp.calibrationRounds,
                 "stitch: with --rate, timed runs per subgraph calibrating serving on this host (0: as profiled)")
      ->default_val(5)->check(CLI::Range(0, 1000));
  app.add_option("--slowdown-judged", sp.slowdownJudged,
                 "stitch: with a workload, each choice is also served in the simulator with every calibrated run, "
                 "load and free this many times as long, and choices compare by the mean of the two violation rates "
                 "(a plan whose queries end just inside their bounds does not win on the calibration's noise; 1: "
                 "the calibration alone)")
      ->default_val(1.4)->check(CLI::Range(1.0, 10.0));
  app.add_option("--queries", sp.select.queriesPerTask, "stitch: simulated queries per task")->default_val(100)
      ->check(integerIn(1, 1000000));
  app.add_option("--serve-in-turn", g.servedInTurnList,
                 "stitch: with a workload, the SLO configurations plan-run --serve will serve in turn "
                 "(comma-separated ids, in order): zooplan's choices are judged jointly over these, and plan-run "
                 "--serve serves them when --slo is not given (default: every configuration)");
  app.add_option("--previous", sp.previousPlan,
                 "stitch: an earlier plan of these tasks: a task whose earlier pick is predicted as good as the new "
                 "one within the noise (0.5 points of violations; a mean latency within the profile's run-to-run "
                 "spread, its median (p90 - median) / median, kept in 1-25%) keeps it");
}

void addConcurrentOptions(CLI::App& app, PlanSolveRequest& req, SolveArgs& g) {
  auto& cc = req.concurrent;
  app.add_option("--objective", g.objective, "concurrent: latency | throughput (default: the workload's)")
      ->check(CLI::IsMember({"latency", "throughput"}));
  app.add_option("--solver", g.solver, "concurrent: exact | z3")->check(CLI::IsMember({"exact", "z3"}));
  app.add_option("--max-transitions", cc.solve.maxTransitionsPerDnn,
                 "concurrent, stitch (a workload's frames): transitions per DNN in the search space (-1: unrestricted)")
      ->check(integerIn(-1, 1000000));
  app.add_option("--time-limit", cc.solve.timeLimitS, "concurrent, stitch (a workload's frames, and the choice search at a workload): solver time limit, seconds, each (past it: the best found, not proven optimal, with its gap)")
      ->capture_default_str()
      ->check(numberIn(1e-3, 1e6));
  app.add_flag("--anytime", req.anytime, "concurrent: print each improving schedule with its timestamp");
  app.add_flag("--cross-check", cc.solve.crossCheckZ3, "concurrent: also solve with Z3 in the same space and compare");
}

void addOpplaceColdMtsOptions(CLI::App& app, PlanSolveRequest& req, SolveArgs& g) {
  auto [op, co, mo] = std::tie(req.opplace, req.cold, req.mts);  // references
  app.add_option("--profile", op.profileDir, "opplace: zoo-profile's output directory (node_profile.csv, latency_model.json)");
  app.add_option("--zoo", g.zooPath, "opplace: zoo.json whose host processors the operators go to; "
                                     "mts: the units' processors (default: the zoo mts.json was made from)");
  app.add_option("--place-time-limit", op.solve.timeLimitS, "opplace, stitch: branch-and-bound time limit, seconds (past it: not proven optimal, with its gap)")
      ->capture_default_str()
      ->check(numberIn(1e-3, 1e6));
  app.add_option("--min-mix-gain", op.solve.minMixGain,
                 "opplace, stitch: place on several processors only when that beats the best single one by this "
                 "fraction (0: the optimum under the cost model)")
      ->capture_default_str()
      ->check(numberIn(0, 0.99));
  // About two of the hand-overs plan-solve calibrates on the bench hosts (0.05-0.07 ms).
  op.solve.minMixGainMs = 0.1;
  app.add_option("--min-mix-gain-ms", op.solve.minMixGainMs,
                 "opplace, stitch: ... and by at least this many ms (0: no floor; a smaller gain is what waking the "
                 "other worker costs)")
      ->capture_default_str()
      ->check(numberIn(0, 1e6));
  app.add_option("--cold-profile", co.coldProfile, "cold: plan from this cold_profile.csv (default: measure now)");
  app.add_option("--profile-model", co.profileModel, "cold: the model's label in --cold-profile (default: file stem)");
  app.add_option("--write-cold-profile", co.writeProfile, "cold: write the measured cold_profile.csv here");
  app.add_option("--calibrate", co.calibrationRuns,
                 "cold: calibrate the cost model against these measured cold runs of the model "
                 "(plan-run MODEL --cold --json reports; repeatable)");
  app.add_option("--cores", co.solve.cores, "cold: cores the schedule may use (default: the profiled host's; "
                                           "at most this machine's, which runs the plan); stitch: the cold "
                                           "sections' (default: the fewest cores a processor has)")
      ->check(integerIn(1, std::max(1u, std::thread::hardware_concurrency())));
  app.add_option("--warm-repeat", co.measure.warmRepeat, "cold: warm runs per kernel when measuring")
      ->default_val(5)->check(integerIn(1, 100000));
  app.add_option("--knobs", g.knobs, "cold: the knob combination whose plan is written (K kernel selection, "
                                     "C caching, P pipelining; the ablation is predicted for all)")
      ->default_val("K+C+P")
      ->check(CLI::IsMember({"none", "K", "C", "P", "K+C", "K+P", "C+P", "K+C+P"}));
  app.add_option("--repeat", mo.repeat, "mts: timed runs of each model on each processor (the median is the cost)")
      ->default_val(50)->check(integerIn(1, 100000));
}

// What needs the whole command line: --check's exclusions, the input and -o
// when planning, --only's mode, the budgets' form. "" when fine.
std::string checkCommand(const CLI::App& app, PlanSolveRequest& req, const SolveArgs& g) {
  std::string& mode = req.mode;
  if (!req.checkPlan.empty()) {
    if (mode != "stitch") return fmt::format("--check compares a stitch plan with its inputs, not --mode {}", mode);
    if (!g.input.empty() || !g.output.empty()) return "--check PLAN takes no input and no -o: the plan records its inputs";
  } else if (g.input.empty()) {
    return "input is required";
  } else if (g.output.empty()) {
    return "--output is required";
  }
  if (!g.only.empty()) {
    static const std::map<std::string, std::string> kModeOf = {
        {"sparseloom", "stitch"}, {"haxconn", "concurrent"}, {"sparoa", "opplace"}, {"nnv12", "cold"}, {"mts", "mts"}};
    std::string implied = kModeOf.at(g.only);
    // MTS, SparOA, NNV12 or HaX-CoNN alone on zoo-profile's directory (or --mode
    // stitch): the composed search restricted to the models as given and their
    // groups, their operator placements, their cold sections or their frames'
    // layer-group mappings, at the same workload.
    const bool profileDir = std::filesystem::is_regular_file(std::filesystem::path(g.input) / "profile.csv");
    if ((g.only == "mts" || g.only == "sparoa" || g.only == "nnv12" || g.only == "haxconn") &&
        (app.count("--mode") ? mode == "stitch" : profileDir))
      implied = "stitch";
    if (app.count("--mode") && mode != implied)
      return fmt::format("--only {} plans in --mode {}, not --mode {}: drop --mode", g.only, implied, mode);
    mode = implied;
    if (g.only == "sparseloom") req.stitch.select.only = select::SingleTechnique::SparseLoom;
    if (g.only == "mts" && mode == "stitch") req.stitch.select.only = select::SingleTechnique::Mts;
    if (g.only == "sparoa" && mode == "stitch") req.stitch.select.only = select::SingleTechnique::SparOA;
    if (g.only == "nnv12" && mode == "stitch") req.stitch.select.only = select::SingleTechnique::Nnv12;
    if (g.only == "haxconn" && mode == "stitch") req.stitch.select.only = select::SingleTechnique::HaxConn;
  }
  for (const auto& b : g.budgets)  // the form now; the bytes a percentage means once the profile is read
    if (auto r = select::parseBudget(b, 0); !r.ok()) return r.error().message;
  if (mode == "opplace" && (req.opplace.profileDir.empty() || g.zooPath.empty()))
    return "--mode opplace needs --profile DIR and --zoo zoo.json";
  return "";
}

// The chosen mode's options from what was given.
void fillModeOptions(PlanSolveRequest& req, const SolveArgs& g) {
  auto [cc, sp, op, co, mo] = std::tie(req.concurrent, req.stitch, req.opplace, req.cold, req.mts);  // references
  if (req.mode == "mts") {
    mo.manifest = g.input;
    mo.zoo = g.zooPath;
    mo.output = g.output;
    mo.seed = static_cast<uint64_t>(cc.solve.seed);
    mo.version = zooplanVersion();
  } else if (req.mode == "opplace") {
    op.model = g.input;
    op.zoo = g.zooPath;
    op.output = g.output;
    op.seed = static_cast<uint64_t>(cc.solve.seed);
    op.version = zooplanVersion();
  } else if (req.mode == "cold") {
    co.solve.knobs = *coldstart::parseKnobs(g.knobs);
    co.model = g.input;
    co.output = g.output;
    co.version = zooplanVersion();
  } else if (req.mode == "stitch") {
    sp.profileDir = g.input;
    sp.output = g.output;
    sp.trace = g.trace;
    sp.svgDir = g.svgDir;
    sp.evaluation = g.evaluate;
    sp.stats = g.stats;
    sp.seed = cc.solve.seed;
    sp.select.measuredAccuracyForDecisions = !g.estimatedAccuracy;
    if (!g.budgets.empty()) sp.budgets = g.budgets;
    sp.budgetsGiven = !g.budgets.empty();
    sp.processors = splitList(g.processorList);
    sp.select.servedInTurn = splitList(g.servedInTurnList);
    sp.placed.solve.timeLimitS = op.solve.timeLimitS;
    sp.placed.solve.minMixGain = op.solve.minMixGain;
    sp.placed.solve.minMixGainMs = op.solve.minMixGainMs;
    sp.frames.solve = cc.solve;  // --time-limit, --max-transitions, --seed
    sp.cold.cores = co.solve.cores;  // of the cold sections (0: the fewest a processor has)
    sp.tool = "plan-solve";
    sp.version = zooplanVersion();
  } else {
    cc.workload = g.input;
    cc.output = g.output;
    cc.trace = g.trace;
    cc.stats = g.stats;
    if (!g.objective.empty())
      cc.solve.objective = g.objective == "latency" ? sim::Objective::Latency : sim::Objective::Throughput;
    cc.solve.solver = g.solver == "z3" ? schedule::SolverKind::Z3 : schedule::SolverKind::Exact;
  }
}

}  // namespace

std::variant<PlanSolveRequest, int> parsePlanSolveArgs(int argc, char** argv) {
  CLI::App app{"plan-solve: compute an execution plan"};
  PlanSolveRequest req;
  SolveArgs g;
  app.add_option("--mode", req.mode,
                 "stitch (PROFILE_DIR) | concurrent (WORKLOAD.json) | opplace (MODEL.onnx) | cold (MODEL.onnx) | mts (MTS_DIR)")
      ->check(CLI::IsMember({"stitch", "concurrent", "opplace", "cold", "mts"}));
  app.add_option("--only", g.only,
                 "restrict the plan to one technique, for ablation: sparseloom (stitch: Algorithm 1's choice, the "
                 "preload set resident, no cold sections), haxconn (on zoo-profile's directory: each task's model as given "
                 "whole on one processor or, a frame's DNN, its layer groups where the frame's concurrent schedule maps "
                 "them, served at the workload; else = --mode concurrent), sparoa (on zoo-profile's "
                 "directory: each task's model as given whole on one processor or its operators placed across "
                 "processors, served at the workload; else = --mode opplace), "
                 "nnv12 (on zoo-profile's directory: each task's model as given whole on one processor, served at "
                 "the workload, units loaded on demand by their cold sections; else = --mode cold), mts (on zoo-profile's directory: each task's model as given whole on one processor, "
                 "or its weight-shared group's unit, served at the workload; else = --mode mts)")
      ->check(CLI::IsMember({"sparseloom", "haxconn", "sparoa", "nnv12", "mts"}));
  app.add_option("input", g.input,
                 "stitch: zoo-profile's directory; concurrent: WORKLOAD.json; opplace, cold: MODEL.onnx; "
                 "mts: zoo-mts's directory or its mts.json (required unless --check)");
  app.add_option("-o,--output", g.output, "plan JSON to write (required unless --check)");
  addStitchOptions(app, req, g);
  addConcurrentOptions(app, req, g);
  addOpplaceColdMtsOptions(app, req, g);
  app.add_option("--trace", g.trace, "write a Chrome-trace / Perfetto JSON of the schedule");
  app.add_option("--stats", g.stats, "write solve times (non-deterministic) to this JSON file");
  app.add_option("--seed", req.concurrent.solve.seed, "random seed (recorded in the plan)")->check(integerIn(0, INT64_MAX));
  if (auto rc = parse(app, argc, argv, "plan-solve")) return *rc;
  if (const std::string problem = checkCommand(app, req, g); !problem.empty())
    return printError("plan-solve", problem), kOptionError;
  fillModeOptions(req, g);
  return req;
}

}  // namespace zp::cli
