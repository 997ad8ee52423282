// bench/concurrent: the concurrent scheduler's targets on seeded random
// instances and on the HaX-CoNN Table 2 scenarios.
//  1. 2 DNNs x 40 groups x 2 accelerators: time to a proven optimum (median
//     over instances) and time to the first feasible schedule.
//  2. 3 DNNs x 40 groups x 2 accelerators, several seeds: proven optimal
//     within the time limit (default 5 s), or the gap; in the default space
//     (<= 2 transitions per DNN) and in HaX-CoNN's Table 6 shape (<= 1).
//  3. Scaling curve up to 3 DNNs x 150 groups.
//  4. The Table 2 GoogleNet scenarios, with Z3 on the same space.
//  5. --ablation: what each exact-search idea contributes on the 3x40 seeds.
//  6. Schedules of real models executed on this host's two processors beside
//     their simulated makespans (executed_scenarios.h): run it unpinned, the
//     executed part pins its own workers (--cores A,B).
// Every solve is repeated --runs times: times are medians, a row is
// `optimal` only when every run proved it, its gap is the largest of the
// runs'. Run it pinned to one core (taskset -c 1 ...); the JSON records the
// CPUs the process may use and the load average before and after.
#include <sched.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "libplan/util/file.h"
#include "libplan/util/json.h"
#include "passes/schedule/baselines.h"
#include "passes/schedule/concurrent.h"
#include "passes/schedule/random_instance.h"
#include "passes/schedule/z3_solver.h"
#include "libplan/util/stats.h"
#include "bench/concurrent/executed_scenarios.h"
#include "drivers/concurrent_flow/workload.h"

using namespace zp;
using namespace zp::schedule;
using sim::Objective;

namespace {

struct Options {
  int reps = 7, k = 2, runs = 3, seeds3 = 5;
  uint64_t seed = 1;
  double limit = 5, z3Limit = 10;
  bool full = false, ablation = false;
  std::vector<std::string> only;  // parts to run (empty: all)
  bool selected(const std::string& part) const {
    return only.empty() || std::find(only.begin(), only.end(), part) != only.end();
  }
};

struct Row {
  std::string instance, objective, status, bestBaselineName, source, z3Status;
  int dnns = 0, groups = 0, maxTransitions = 0;
  uint64_t seed = 0;
  std::vector<double> solveMs, cpuMs;  // wall and process CPU time per run
  double firstFeasibleMs = 0, gap = 0, value = 0, bound = 0, bestBaseline = 0, improvementPct = 0;
  double predictedMakespanMs = 0;  // the simulator's makespan of the plan's schedule
  double z3Ms = -1, z3Gap = -1;
};

// CPU time of this process: on a shared machine the wall-clock time limit
// buys less than a core, and this shows how much.
double cpuMsNow() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
}

double improvement(Objective o, double ours, double base) {
  return o == Objective::Latency ? (base - ours) / base * 100 : (ours - base) / base * 100;
}

void runZ3(Row& r, const Workload& w, Objective obj, int k, const Options& opt) {
  Z3Params zp;
  zp.objective = obj;
  zp.maxTransitionsPerDnn = k;
  zp.timeLimitS = opt.z3Limit;
  zp.seed = r.seed;
  auto zr = solveZ3(w.problem, zp);
  if (!zr.ok()) {
    r.z3Status = "error";
    return;
  }
  r.z3Ms = zr->elapsedMs;
  r.z3Status = zr->optimal ? "optimal" : (zr->best ? "feasible" : "none");
  // Z3's value is exact in its own model; compare with the exact search's.
  if (zr->best) r.z3Gap = std::fabs(zr->value - r.value) / std::fabs(r.value);
  if (zr->optimal && sim::better(obj, zr->value, r.value) && r.status == "optimal") {
    std::cerr << r.instance << ": Z3 optimum " << zr->value << " beats the exact search's " << r.value << " (bug)\n";
    std::exit(1);
  }
}

Row runOne(const std::string& name, const Workload& w, Objective obj, int k, double limitS, bool z3,
           uint64_t seed, const Options& opt) {
  Row r;
  r.instance = name;
  r.objective = sim::objectiveName(obj);
  r.dnns = w.problem.numDnns();
  r.groups = w.problem.numDnns() ? static_cast<int>(w.problem.dnns[0].groups.size()) : 0;
  r.maxTransitions = k;
  r.seed = seed;
  ConcurrentParams prm;
  prm.objective = obj;
  prm.maxTransitionsPerDnn = k;
  prm.timeLimitS = limitS;
  prm.seed = seed;
  std::vector<double> first;
  r.status = "optimal";
  for (int run = 0; run < std::max(1, opt.runs); ++run) {
    const double cpu0 = cpuMsNow();
    auto o = solveConcurrent(w, name, prm);
    r.cpuMs.push_back(cpuMsNow() - cpu0);
    if (!o.ok()) {
      std::cerr << o.error().message << "\n";
      std::exit(1);
    }
    const auto& s = o->section;
    r.solveMs.push_back(o->solveMs);
    first.push_back(o->firstFeasibleMs);
    if (s.solver.status != "optimal") r.status = s.solver.status;
    if (run == 0 || s.solver.gap > r.gap) {
      r.gap = s.solver.gap;
      r.value = s.objectiveValue;
      r.bound = s.solver.bound;
      r.source = s.source;
      r.predictedMakespanMs = s.latencyMs;
    }
    if (run == 0) {
      double best = sim::worstValue(obj);
      for (const auto& b : s.baselines) {
        double v = obj == Objective::Latency ? b.latencyMs : b.throughput;
        if (r.bestBaselineName.empty() || sim::better(obj, v, best)) {
          best = v;
          r.bestBaselineName = b.name;
        }
      }
      r.bestBaseline = best;
    }
  }
  r.firstFeasibleMs = median(first);
  r.improvementPct = improvement(obj, r.value, r.bestBaseline);
  if (z3 && w.problem.numAccelerators() == 2) runZ3(r, w, obj, k, opt);
  return r;
}

Json rowJson(const Row& r) {
  Json j{{"instance", r.instance}, {"objective", r.objective}, {"dnns", r.dnns}, {"groups", r.groups},
         {"max_transitions", r.maxTransitions}, {"seed", r.seed}, {"status", r.status},
         {"solve_ms_median", median(r.solveMs)}, {"solve_ms_runs", r.solveMs},
         {"solve_cpu_ms_median", median(r.cpuMs)}, {"solve_cpu_ms_runs", r.cpuMs},
         {"first_feasible_ms", r.firstFeasibleMs}, {"gap", r.gap}, {"value", r.value}, {"bound", r.bound},
         {"best_baseline", r.bestBaselineName}, {"best_baseline_value", r.bestBaseline},
         {"improvement_pct", r.improvementPct}, {"source", r.source}, {"z3_status", r.z3Status},
         {"z3_ms", r.z3Ms}, {"z3_value_gap", r.z3Gap}};
  if (r.objective == "latency") j["predicted_makespan_ms"] = r.predictedMakespanMs;
  return j;
}

void printHeader() {
  std::cout << fmt::format("{:<26} {:<10} {:>8} {:>2} {:<9} {:>10} {:>9} {:>9} {:>8} {:>9} {:<17} {:<9} {:>7}\n", "instance",
                           "objective", "DNNxG", "k", "status", "solve ms", "cpu ms", "first ms", "gap", "vs best",
                           "best baseline", "z3", "z3 ms");
}

void printRow(const Row& r) {
  std::cout << fmt::format("{:<26} {:<10} {:>3}x{:<4} {:>2} {:<9} {:>10.2f} {:>9.2f} {:>9.3f} {:>7.3f}% {:>+8.2f}% {:<17} {:<9} {:>7}\n",
                           r.instance, r.objective, r.dnns, r.groups, r.maxTransitions, r.status, median(r.solveMs), median(r.cpuMs),
                           r.firstFeasibleMs, r.gap * 100, r.improvementPct, r.bestBaselineName,
                           r.z3Status.empty() ? "-" : r.z3Status,
                           r.z3Ms < 0 ? std::string("-") : fmt::format("{:.0f}", r.z3Ms));
}

Json target2x40(const Options& opt, std::vector<Row>& rows) {
  Json t = Json::object();
  for (Objective obj : {Objective::Latency, Objective::Throughput}) {
    std::vector<double> solve, first;
    int optimal = 0;
    for (int i = 0; i < opt.reps; ++i) {
      Workload w;
      uint64_t s = opt.seed + static_cast<uint64_t>(i);
      w.problem = randomInstance({.dnns = 2, .groups = 40, .accelerators = 2, .seed = s});
      Row r = runOne(fmt::format("random-2x40-s{}", s), w, obj, opt.k, 60, opt.full && i == 0, s, opt);
      printRow(r);
      solve.push_back(median(r.solveMs));
      first.push_back(r.firstFeasibleMs);
      optimal += r.status == "optimal";
      rows.push_back(r);
    }
    double maxFirst = *std::max_element(first.begin(), first.end());
    t[sim::objectiveName(obj)] = {{"instances", opt.reps}, {"proven", optimal}, {"median_solve_ms", median(solve)},
                                  {"max_first_feasible_ms", maxFirst}};
    std::cout << fmt::format("  2x40x2 {}: proven optimal {}/{}; median solve {:.2f} ms (target < 1000); "
                             "max first feasible {:.3f} ms (target < 50)\n",
                             sim::objectiveName(obj), optimal, opt.reps, median(solve), maxFirst);
  }
  return t;
}

uint64_t seed3x40(const Options& opt, int i) { return opt.seed + 3140 + static_cast<uint64_t>(i); }

Json target3x40(const Options& opt, std::vector<Row>& rows) {
  Json t = Json::object();
  std::vector<int> spaces = {opt.k};
  if (opt.k != 1) spaces.push_back(1);
  for (int k : spaces) {
    std::vector<double> solve, gaps;
    int optimal = 0;
    for (int i = 0; i < opt.seeds3; ++i) {
      Workload w;
      uint64_t s = seed3x40(opt, i);
      w.problem = randomInstance({.dnns = 3, .groups = 40, .accelerators = 2, .seed = s});
      Row r = runOne(fmt::format("random-3x40-s{}", s), w, Objective::Latency, k, opt.limit, false, s, opt);
      printRow(r);
      solve.push_back(median(r.solveMs));
      gaps.push_back(r.gap);
      optimal += r.status == "optimal";
      rows.push_back(r);
    }
    t[fmt::format("k{}", k)] = {{"instances", opt.seeds3}, {"proven", optimal}, {"median_solve_ms", median(solve)},
                                {"median_gap", median(gaps)}, {"max_gap", *std::max_element(gaps.begin(), gaps.end())},
                                {"time_limit_s", opt.limit}};
    std::cout << fmt::format("  3x40x2 latency, <= {} transitions per DNN: proven optimal {}/{} within {} s "
                             "(target: all, < 5 s); median solve {:.0f} ms; median gap {:.3f}%, max {:.3f}%\n",
                             k, optimal, opt.seeds3, opt.limit, median(solve), median(gaps) * 100,
                             *std::max_element(gaps.begin(), gaps.end()) * 100);
  }
  return t;
}

void scalingCurve(const Options& opt, std::vector<Row>& rows) {
  std::vector<std::pair<int, int>> points = {{2, 4}, {2, 10}, {2, 20}, {2, 80}, {3, 10}, {3, 20}, {3, 80}, {3, 150}};
  if (opt.full) points = {{2, 4}, {2, 10}, {2, 20}, {2, 80}, {2, 150}, {3, 10}, {3, 20}, {3, 80}, {3, 100}, {3, 150}};
  for (auto [d, g] : points) {
    Workload w;
    uint64_t s = opt.seed + 100 + static_cast<uint64_t>(d * 1000 + g);
    w.problem = randomInstance({.dnns = d, .groups = g, .accelerators = 2, .seed = s});
    bool z3 = opt.full || d * g <= 20;
    Row r = runOne(fmt::format("random-{}x{}-s{}", d, g, s), w, Objective::Latency, opt.k, opt.limit, z3, s, opt);
    printRow(r);
    rows.push_back(r);
  }
}

void scenarios(const Options& opt, std::vector<Row>& rows) {
  struct S { const char* file; const char* name; };
  for (S sc : {S{"googlenet-table2-scenario1.json", "googlenet-table2-scen1"},
               S{"googlenet-table2-pipeline.json", "googlenet-table2-pipeline"}}) {
    auto w = drivers::loadWorkload(std::string(ZP_SOURCE_DIR) + "/testdata/concurrent/" + sc.file);
    if (!w.ok()) {
      std::cerr << w.error().message << "\n";
      std::exit(1);
    }
    for (Objective obj : {Objective::Throughput, Objective::Latency})
      for (int k : {1, opt.k}) {
        Row r = runOne(fmt::format("{}-k{}", sc.name, k), *w, obj, k, opt.limit, true, opt.seed, opt);
        printRow(r);
        rows.push_back(r);
      }
  }
}

// The exact search with some of its ideas turned off, on the 3x40 seeds.
Json ablation(const Options& opt) {
  struct Config { const char* name; bool timeline; int steps, rounds; bool target, deepen; };
  const Config configs[] = {{"assignment tree, every idea (before)", false, 10, 6, true, true},
                            {"timeline tree, chain bounds only", true, 0, 0, false, false},
                            {"+ contention weightings (2 steps)", true, 2, 0, false, false},
                            {"+ Lagrangian cutting planes", true, 2, 6, false, false},
                            {"+ weighting aimed at the incumbent", true, 2, 6, true, false},
                            {"+ k-1 space first (all, default)", true, 2, 6, true, true}};
  // Each seed's instance and best baseline (the starting incumbent), once for every configuration.
  struct Seeded {
    uint64_t seed;
    sim::Problem problem;
    sim::Schedule initial;
  };
  std::vector<Seeded> seeded;
  for (int i = 0; i < opt.seeds3; ++i) {
    uint64_t s = seed3x40(opt, i);
    auto p = randomInstance({.dnns = 3, .groups = 40, .accelerators = 2, .seed = s});
    auto bl = makeBaselines(p, Objective::Latency);
    sim::Simulator simr(p);
    size_t bi = 0;
    double best = simr.run(bl[0].schedule, {.recordSpans = false}).latencyMs;
    for (size_t b = 1; b < bl.size(); ++b) {
      const double v = simr.run(bl[b].schedule, {.recordSpans = false}).latencyMs;
      if (v < best) bi = b, best = v;
    }
    seeded.push_back({s, std::move(p), bl[bi].schedule});
  }
  Json out = Json::array();
  std::cout << fmt::format("\nablation: 3x40x2 latency, <= {} transitions, {} s; value / bound / gap per seed\n", opt.k,
                           opt.limit);
  for (const auto& c : configs) {
    std::string line = fmt::format("  {:<40}", c.name);
    std::vector<double> gaps;
    for (const auto& [s, p, initial] : seeded) {
      ExactParams ep;
      ep.maxTransitionsPerDnn = opt.k;
      ep.timeLimitS = opt.limit;
      ep.timelineTree = c.timeline;
      ep.contentionBoundSteps = c.steps;
      ep.relaxationRounds = c.rounds;
      ep.targetIncumbent = c.target;
      ep.deepenTransitions = c.deepen;
      ep.initial = initial;
      auto r = exactSearch(p, ep);
      if (!r.ok()) {
        std::cerr << r.error().message << "\n";
        std::exit(1);
      }
      double gap = (r->value - r->bound) / r->value;
      gaps.push_back(gap);
      line += fmt::format(" {:.3f}/{:.3f}/{:.2f}%{}", r->value, r->bound, gap * 100, r->optimal ? "*" : "");
      out.push_back({{"config", c.name}, {"seed", s}, {"value", r->value}, {"bound", r->bound}, {"gap", gap},
                     {"optimal", r->optimal}, {"ms", r->elapsedMs}});
    }
    std::cout << line << fmt::format("  median gap {:.2f}%\n", median(gaps) * 100);
  }
  std::cout << "  (* proven optimal)\n";
  return out;
}

Json machineState() {
  cpu_set_t set;
  CPU_ZERO(&set);
  int cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : -1;
  std::ifstream f("/proc/loadavg");
  double l1 = -1, l5 = -1, l15 = -1;
  f >> l1 >> l5 >> l15;
  return {{"affinity_cpus", cpus}, {"loadavg", {l1, l5, l15}}};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"concurrent scheduling benchmark"};
  Options opt;
  std::string out = "concurrent_bench.json";
  app.add_flag("--full", opt.full, "full scaling curve: 60 s per point, up to 3 DNNs x 150 groups, Z3 on every point");
  app.add_flag("--ablation", opt.ablation, "also run the exact search with its ideas turned off one by one (3x40 seeds)");
  app.add_option("--reps", opt.reps, "instances for the 2x40 target");
  app.add_option("--seeds3", opt.seeds3, "instances for the 3x40 target");
  app.add_option("--runs", opt.runs, "solves per instance (times are medians)");
  app.add_option("--max-transitions", opt.k, "transitions per DNN in the search space");
  app.add_option("--seed", opt.seed, "first instance seed");
  app.add_option("--time-limit", opt.limit, "time limit of the 3x40 target, the scaling curve and the scenarios (s)");
  app.add_option("--z3-time-limit", opt.z3Limit, "Z3 time limit (s)");
  app.add_option("--out", out, "JSON output");
  app.add_option("--only", opt.only, "run only these parts: 2x40, 3x40, scaling, scenarios, executed")
      ->check(CLI::IsMember({"2x40", "3x40", "scaling", "scenarios", "executed"}));
  bench::ExecutedOptions exec;
  std::vector<int> cores{exec.coreA, exec.coreB};
  app.add_option("--cores", cores, "executed: the cores of the cpu and npu processors")->expected(2);
  app.add_option("--rounds", exec.rounds, "executed: interleaved rounds per schedule");
  app.add_option("--workload-dir", exec.workloadDir,
                 "executed: write the scenarios as workload.json files (models by path from ../realistic/models)");
  app.add_option("--trace-dir", exec.traceDir, "executed: write trace_<scenario>.json of zooplan's measured schedule here");
  CLI11_PARSE(app, argc, argv);
  if (opt.full) {
    opt.limit = 60;
    opt.z3Limit = 60;
  }
  Json before = machineState();
  printHeader();
  std::vector<Row> rows;
  Json t2 = opt.selected("2x40") ? target2x40(opt, rows) : Json::object();
  Json t3 = opt.selected("3x40") ? target3x40(opt, rows) : Json::object();
  if (opt.selected("scaling")) scalingCurve(opt, rows);
  if (opt.selected("scenarios")) scenarios(opt, rows);
  bench::ExecutedResult executed;
  if (opt.selected("executed")) {
    exec.coreA = cores[0];
    exec.coreB = cores[1];
    exec.maxTransitions = opt.k;
    exec.timeLimitS = opt.limit;
    exec.seed = opt.seed;
    executed = bench::executedScenarios(exec);
  }
  std::cout << "(solve ms: median wall time of baselines + solver over the runs; cpu ms: the same in process CPU time; first ms: first feasible schedule; "
               "gap: remaining optimality gap, the largest over the runs; vs best: simulated improvement over the "
               "best baseline; z3: the Z3 formulation on the same instance and space)\n";
  Json j = {{"params", {{"full", opt.full}, {"reps", opt.reps}, {"seeds3", opt.seeds3}, {"runs", opt.runs},
                        {"maxTransitionsPerDnn", opt.k}, {"seed", opt.seed}, {"timeLimitS", opt.limit},
                        {"z3TimeLimitS", opt.z3Limit}, {"only", opt.only}}},
            {"machine_before", before}, {"targets2x40", t2}, {"target3x40", t3}, {"instances", Json::array()}};
  for (const auto& r : rows) j["instances"].push_back(rowJson(r));
  for (const auto& r : executed.instances) j["instances"].push_back(r);
  if (opt.selected("executed")) j["executed"] = executed.summary;
  if (opt.ablation) j["ablation"] = ablation(opt);
  j["machine_after"] = machineState();
  auto st = writeFileAtomic(out, canonicalJson(j));
  if (!st.ok()) {
    std::cerr << st.error().message << "\n";
    return 1;
  }
  std::cout << "wrote " << out << "\n";
  return 0;
}
