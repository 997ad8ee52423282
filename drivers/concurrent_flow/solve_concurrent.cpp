#include "drivers/concurrent_flow/solve_concurrent.h"

#include <set>
#include <fmt/format.h>

#include "drivers/concurrent_flow/workload.h"
#include "libplan/artifacts/plan_json.h"
#include "libplan/sim/concurrent/trace.h"
#include "libplan/util/file.h"
#include "libplan/util/hash.h"
#include "libplan/util/output_dir.h"
#include "libplan/util/version.h"

namespace zp::drivers {

using sim::Objective;

namespace {

// The schedule against the baselines, and what the solver proved.
std::string summaryOf(const schedule::Workload& w, const std::string& label, const schedule::ConcurrentOutcome& o) {
  const auto& s = o.section;
  std::string out = fmt::format("workload {}: {} DNNs, {} groups, accelerators {}; objective {}\n", label,
                                w.problem.numDnns(), w.problem.totalGroups(), fmt::join(w.problem.accelerators, ","),
                                s.objective);
  out += fmt::format("{:<22} {:>12} {:>14} {:>11} {:>12}\n", "schedule (simulated)", "latency ms", "throughput/s",
                     "transitions", "vs zooplan");
  auto line = [&](const std::string& name, double lat, double thr, int tr) {
    double ref = o.objective == Objective::Latency ? s.latencyMs : s.throughput;
    double v = o.objective == Objective::Latency ? lat : thr;
    double rel = o.objective == Objective::Latency ? (v / ref - 1) * 100 : (ref / v - 1) * 100;
    out += fmt::format("{:<22} {:>12.4f} {:>14.2f} {:>11} {:>+11.2f}%\n", name, lat, thr, tr, rel);
  };
  for (const auto& b : s.baselines) line(b.name, b.latencyMs, b.throughput, b.transitions);
  line("zooplan", s.latencyMs, s.throughput, schedule::totalTransitions(o.schedule));
  out += fmt::format("plan source: {}; solver {} {} (space: {}); objective {:.9g}, bound {:.9g}, gap {:.3g}%; "
                     "solve {:.1f} ms; seed {}\n",
                     s.source, s.solver.solver,
                     s.solver.status == "optimal" ? s.solver.status : s.solver.status + ", not proven optimal",
                     s.solver.searchSpace, s.solver.objective, s.solver.bound, s.solver.gap * 100, o.solveMs,
                     s.solver.seed);
  if (!s.solver.crossCheck.empty()) out += "cross-check: " + s.solver.crossCheck + "\n";
  out += "(vs zooplan: how much worse than zooplan's schedule each baseline is)\n";
  return out;
}

}  // namespace

// 1. workload.json and the files it names -> the problem (workload.h)
// 2. outputs checked: no directory, no input, no two the same
// 3. baselines, exact search or Z3, the simulator as judge (passes/schedule)
// 4. plan.json (header: the input files' hashes), trace and stats, each written atomically
Expected<SolveConcurrentResult> solveConcurrent(const SolveConcurrentOptions& o) {
  ZP_ASSIGN_OR_RETURN(schedule::Workload w, loadWorkload(o.workload));
  {
    std::vector<GuardedPath> inputs{{o.workload, "input"}};
    for (const auto& f : w.inputFiles) inputs.push_back({f, "input"});
    ZP_TRY(checkOutputFiles({o.output, o.trace, o.stats}, inputs));
  }
  schedule::ConcurrentParams prm = o.solve;
  if (o.onImprovement) {
    const auto obj = prm.objective.value_or(w.objective);
    prm.onImprove = [&o, obj](double ms, double v, const std::string& by) {
      o.onImprovement(fmt::format("[{:10.3f} ms] {} {:.6g} {} ({})", ms, sim::objectiveName(obj), v,
                                  obj == Objective::Latency ? "ms" : "inf/s", by));
    };
  }
  const std::string label = o.workload.string();
  ZP_ASSIGN_OR_RETURN(schedule::ConcurrentOutcome out, schedule::solveConcurrent(w, label, prm));
  plan::Plan pl;
  pl.header.tool = "plan-solve";
  pl.header.version = zooplanVersion();
  for (const auto& f : w.inputFiles) {
    ZP_ASSIGN_OR_RETURN(std::string bytes, readFile(f));
    pl.header.inputs[f.string()] = sha256Hex(bytes);
  }
  pl.concurrent = out.section;
  pl.processors = out.processors;
  // A model DNN is a unit: on one accelerator, or its layer groups on several (the timeline places them).
  for (size_t n = 0; n < w.sources.size(); ++n) {
    const auto& d = pl.concurrent->dnns[n];
    if (!d.unit) continue;
    plan::Unit u;
    u.id = *d.unit;
    u.file = w.sources[n].model;
    u.sha256 = pl.header.inputs.at(u.file);  // the workload's files are the header's inputs
    std::set<std::string> accelerators;
    for (const auto& g : d.groups) accelerators.insert(g.accelerator);
    if (accelerators.size() == 1) u.processor = *accelerators.begin();
    else u.operatorPlaced = true;
    pl.units.push_back(std::move(u));
  }
  // Everything is rendered before anything is written; each write is atomic.
  const std::string planText = artifacts::planToText(pl);
  std::string traceText, statsText;
  if (!o.trace.empty())
    traceText = canonicalJson(sim::chromeTrace(w.problem, out.result, "zooplan concurrent schedule: " + label));
  if (!o.stats.empty())
    statsText = canonicalJson(Json{{"solveMs", out.solveMs}, {"firstFeasibleMs", out.firstFeasibleMs},
                                   {"solver", out.section.solver.solver}, {"status", out.section.solver.status}});
  for (const auto& f : {o.output, o.trace, o.stats}) ZP_TRY(createParentDirectories(f));
  ZP_TRY(writeFileAtomic(o.output, planText));
  if (!o.trace.empty()) ZP_TRY(writeFileAtomic(o.trace, traceText));
  if (!o.stats.empty()) ZP_TRY(writeFileAtomic(o.stats, statsText));
  return SolveConcurrentResult{summaryOf(w, label, out)};
}

}  // namespace zp::drivers
