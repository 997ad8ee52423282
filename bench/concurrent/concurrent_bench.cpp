// bench/concurrent: the issue-6 targets on seeded random instances.
//  1. 2 DNNs x 40 groups x 2 accelerators: time to a proven optimum (median
//     over instances; exact search, <= K transitions per DNN) and time to the
//     first feasible schedule in anytime mode.
//  2. Scaling curve up to 3 DNNs x 150 groups: time to optimal or the gap at
//     the time limit (default 5 s per point; --full: 60 s and more points).
//  3. Z3 on the same instances (small ones by default) for comparison.
//  4. Simulated improvement over the best baseline on every instance.
// Prints a table and writes JSON (canonical) to --out.
#include <algorithm>
#include <chrono>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "libplan/util/file.h"
#include "libplan/util/json.h"
#include "passes/schedule/concurrent.h"
#include "passes/schedule/random_instance.h"
#include "passes/schedule/z3_solver.h"

using namespace zp;
using namespace zp::schedule;
using sim::Objective;

namespace {

struct Row {
  std::string instance;
  std::string objective;
  int dnns = 0, groups = 0;
  uint64_t seed = 0;
  std::string status;
  double solveMs = 0, firstFeasibleMs = 0, gap = 0, value = 0, bestBaseline = 0, improvementPct = 0;
  std::string bestBaselineName, source;
  std::string z3Status;
  double z3Ms = -1, z3Gap = -1;
};

double improvement(Objective o, double ours, double base) {
  return o == Objective::Latency ? (base - ours) / base * 100 : (ours - base) / base * 100;
}

Row runOne(const std::string& name, const Workload& w, Objective obj, int k, double limitS, bool z3, double z3LimitS,
           uint64_t seed) {
  Row r;
  r.instance = name;
  r.objective = sim::objectiveName(obj);
  r.dnns = w.problem.numDnns();
  r.groups = w.problem.numDnns() ? static_cast<int>(w.problem.dnns[0].groups.size()) : 0;
  r.seed = seed;
  ConcurrentParams prm;
  prm.objective = obj;
  prm.maxTransitionsPerDnn = k;
  prm.timeLimitS = limitS;
  prm.seed = seed;
  prm.onImprove = [](double, double, const std::string&) {};
  auto o = solveConcurrent(w, name, prm);
  if (!o.ok()) {
    std::cerr << o.error().message << "\n";
    std::exit(1);
  }
  const auto& s = o->section;
  r.status = s.solver.status;
  r.solveMs = o->solveMs;
  r.firstFeasibleMs = o->firstFeasibleMs;
  r.gap = s.solver.gap;
  r.value = s.objectiveValue;
  r.source = s.source;
  double best = sim::worstValue(obj);
  for (const auto& b : s.baselines) {
    double v = obj == Objective::Latency ? b.latencyMs : b.throughput;
    if (r.bestBaselineName.empty() || sim::better(obj, v, best)) {
      best = v;
      r.bestBaselineName = b.name;
    }
  }
  r.bestBaseline = best;
  r.improvementPct = improvement(obj, r.value, best);
  if (z3 && w.problem.numAccelerators() == 2) {
    Z3Params zp;
    zp.objective = obj;
    zp.maxTransitionsPerDnn = k;
    zp.timeLimitS = z3LimitS;
    zp.seed = seed;
    auto zr = solveZ3(w.problem, zp);
    if (zr.ok()) {
      r.z3Ms = zr->elapsedMs;
      r.z3Status = zr->optimal ? "optimal" : (zr->best ? "feasible" : "none");
      // Z3's value is exact in its own model; compare with the exact search's.
      if (zr->best) r.z3Gap = std::fabs(zr->value - r.value) / std::fabs(r.value);
      if (zr->optimal && sim::better(obj, zr->value, r.value) && r.status == "optimal") {
        std::cerr << name << ": Z3 optimum " << zr->value << " beats the exact search's " << r.value << " (bug)\n";
        std::exit(1);
      }
    } else {
      r.z3Status = "error";
    }
  }
  return r;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : (v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2);
}

Json rowJson(const Row& r) {
  return Json{{"instance", r.instance}, {"objective", r.objective}, {"dnns", r.dnns}, {"groups", r.groups},
              {"seed", r.seed}, {"status", r.status}, {"solveMs", r.solveMs}, {"firstFeasibleMs", r.firstFeasibleMs},
              {"gap", r.gap}, {"value", r.value}, {"bestBaseline", r.bestBaselineName},
              {"bestBaselineValue", r.bestBaseline}, {"improvementPct", r.improvementPct}, {"source", r.source},
              {"z3Status", r.z3Status}, {"z3Ms", r.z3Ms}, {"z3ValueGap", r.z3Gap}};
}

void printRow(const Row& r) {
  std::cout << fmt::format("{:<26} {:<10} {:>3}x{:<4} {:<9} {:>10.2f} {:>9.3f} {:>7.3f}% {:>+8.2f}% {:<17} {:<9} {:>10}\n",
                           r.instance, r.objective, r.dnns, r.groups, r.status, r.solveMs, r.firstFeasibleMs,
                           r.gap * 100, r.improvementPct, r.bestBaselineName, r.z3Status.empty() ? "-" : r.z3Status,
                           r.z3Ms < 0 ? std::string("-") : fmt::format("{:.0f}", r.z3Ms));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"concurrent scheduling benchmark"};
  bool full = false;
  int reps = 7, k = 2;
  uint64_t seed = 1;
  double limit = 5, z3Limit = 10;
  std::string out = "concurrent_bench.json";
  app.add_flag("--full", full, "full scaling curve: 60 s per point, up to 3 DNNs x 150 groups, Z3 on every point");
  app.add_option("--reps", reps, "instances for the 2x40 target");
  app.add_option("--max-transitions", k, "transitions per DNN in the search space");
  app.add_option("--seed", seed, "first instance seed");
  app.add_option("--time-limit", limit, "per-point time limit of the scaling curve (s)");
  app.add_option("--z3-time-limit", z3Limit, "Z3 time limit (s)");
  app.add_option("--out", out, "JSON output");
  CLI11_PARSE(app, argc, argv);
  if (full) {
    limit = 60;
    z3Limit = 60;
  }
  std::cout << fmt::format("{:<26} {:<10} {:>8} {:<9} {:>10} {:>9} {:>8} {:>9} {:<17} {:<9} {:>10}\n", "instance",
                           "objective", "DNNxG", "status", "solve ms", "first ms", "gap", "vs best", "best baseline",
                           "z3", "z3 ms");
  std::vector<Row> rows;
  Json targets = Json::object();
  // 1. The 2 x 40 x 2 target.
  for (Objective obj : {Objective::Latency, Objective::Throughput}) {
    std::vector<double> solve, first;
    int optimal = 0;
    for (int i = 0; i < reps; ++i) {
      Workload w;
      uint64_t s = seed + static_cast<uint64_t>(i);
      w.problem = randomInstance({.dnns = 2, .groups = 40, .accelerators = 2, .seed = s});
      Row r = runOne(fmt::format("random-2x40-s{}", s), w, obj, k, 60, full && i == 0, z3Limit, s);
      printRow(r);
      solve.push_back(r.solveMs);
      first.push_back(r.firstFeasibleMs);
      optimal += r.status == "optimal";
      rows.push_back(r);
    }
    targets[sim::objectiveName(obj)] = {{"instances", reps}, {"proven", optimal},
                                        {"medianSolveMs", median(solve)}, {"maxFirstFeasibleMs", *std::max_element(first.begin(), first.end())}};
    std::cout << fmt::format("  2x40x2 {}: proven optimal {}/{}; median solve {:.2f} ms (target < 1000); "
                             "max first feasible {:.3f} ms (target < 50)\n",
                             sim::objectiveName(obj), optimal, reps, median(solve),
                             *std::max_element(first.begin(), first.end()));
  }
  // 2. Scaling curve.
  std::vector<std::pair<int, int>> points = {{2, 4}, {2, 10}, {2, 20}, {2, 80}, {3, 10}, {3, 20}, {3, 40}, {3, 80}, {3, 150}};
  if (full) points = {{2, 4}, {2, 10}, {2, 20}, {2, 80}, {2, 150}, {3, 10}, {3, 20}, {3, 40}, {3, 80}, {3, 100}, {3, 150}};
  for (auto [d, g] : points) {
    Workload w;
    uint64_t s = seed + 100 + static_cast<uint64_t>(d * 1000 + g);
    w.problem = randomInstance({.dnns = d, .groups = g, .accelerators = 2, .seed = s});
    bool z3 = full || d * g <= 20;
    Row r = runOne(fmt::format("random-{}x{}-s{}", d, g, s), w, Objective::Latency, k, limit, z3, z3Limit, s);
    printRow(r);
    rows.push_back(r);
  }
  // 3. The paper's Table 2 GoogleNet scenario 1.
  auto gw = loadWorkload(std::string(ZP_SOURCE_DIR) + "/testdata/concurrent/googlenet-table2-scenario1.json");
  if (!gw.ok()) {
    std::cerr << gw.error().message << "\n";
    return 1;
  }
  for (Objective obj : {Objective::Throughput, Objective::Latency}) {
    Row r = runOne("googlenet-table2-scen1", *gw, obj, k, limit, true, z3Limit, seed);
    printRow(r);
    rows.push_back(r);
  }
  std::cout << "(solve ms: wall time of baselines + solver; first ms: first feasible schedule in anytime "
               "mode; gap: remaining optimality gap; vs best: simulated improvement over the best baseline; "
               "z3: the Z3 formulation on the same instance and space)\n";
  Json j = {{"params", {{"full", full}, {"reps", reps}, {"maxTransitionsPerDnn", k}, {"seed", seed},
                        {"timeLimitS", limit}, {"z3TimeLimitS", z3Limit}}},
            {"targets2x40", targets}, {"rows", Json::array()}};
  for (const auto& r : rows) j["rows"].push_back(rowJson(r));
  auto st = writeFileAtomic(out, canonicalJson(j));
  if (!st.ok()) {
    std::cerr << st.error().message << "\n";
    return 1;
  }
  std::cout << "wrote " << out << "\n";
  return 0;
}
