#include "passes/schedule/concurrent.h"

#include <chrono>
#include <cmath>

#include <fmt/format.h>

#include "libplan/sim/concurrent/trace.h"
#include "libplan/util/output_dir.h"
#include "libplan/util/file.h"
#include "libplan/util/hash.h"
#include "libplan/util/version.h"
#include "passes/schedule/baselines.h"
#include "passes/schedule/z3_solver.h"

namespace zp::schedule {

using sim::Objective;

namespace {

int totalTransitions(const sim::Schedule& s) {
  int t = 0;
  for (size_t n = 0; n < s.assign.size(); ++n) t += sim::countTransitions(s, static_cast<int>(n));
  return t;
}

double relGap(double value, double bound) {
  if (value == 0) return 0;
  return std::fabs(value - bound) / std::fabs(value);
}

}  // namespace

std::vector<plan::ConcurrentDnn> describeSchedule(const sim::Problem& p, const sim::SimResult& r) {
  std::vector<plan::ConcurrentDnn> out;
  for (size_t n = 0; n < p.dnns.size(); ++n) {
    plan::ConcurrentDnn d;
    d.name = p.dnns[n].name;
    d.releaseMs = r.dnns[n].release;
    d.endMs = r.dnns[n].end;
    for (size_t i = 0; i < p.dnns[n].groups.size(); ++i) {
      const auto& g = r.dnns[n].groups[i];
      d.groups.push_back({p.dnns[n].groups[i].name, p.accelerators[static_cast<size_t>(g.accelerator)], g.start,
                          g.end, g.standaloneMs});
    }
    for (const auto& t : r.dnns[n].transitions)
      d.transitions.push_back({t.afterGroup, p.accelerators[static_cast<size_t>(t.from)],
                               p.accelerators[static_cast<size_t>(t.to)], t.start, t.end});
    out.push_back(std::move(d));
  }
  return out;
}

Expected<ConcurrentOutcome> solveConcurrent(const Workload& w, const std::string& label, const ConcurrentParams& prm) {
  const auto& p = w.problem;
  auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count(); };
  ConcurrentOutcome out;
  out.objective = prm.objective.value_or(w.objective);
  const Objective obj = out.objective;
  double firstFeasible = -1;
  double bestSeen = sim::worstValue(obj);
  auto report = [&](double v, const std::string& by) {
    double ms = elapsed();
    if (firstFeasible < 0) firstFeasible = ms;
    if (sim::better(obj, v, bestSeen) || bestSeen == sim::worstValue(obj)) {
      bestSeen = v;
      if (prm.onImprove) prm.onImprove(ms, v, by);
    }
  };

  // Baselines, judged by the simulator.
  sim::Simulator simr(p);
  auto baselines = makeBaselines(p, obj);
  int bestBase = -1;
  double bestBaseV = sim::worstValue(obj);
  auto& sec = out.section;
  for (size_t b = 0; b < baselines.size(); ++b) {
    const auto& r = simr.run(baselines[b].schedule, {.recordSpans = false});
    sec.baselines.push_back({baselines[b].name, r.latencyMs, r.throughput, totalTransitions(baselines[b].schedule)});
    double v = r.value(obj);
    report(v, "baseline:" + baselines[b].name);
    if (bestBase < 0 || sim::better(obj, v, bestBaseV)) {
      bestBase = static_cast<int>(b);
      bestBaseV = v;
    }
  }

  auto& rep = sec.solver;
  rep.maxTransitionsPerDnn = prm.maxTransitionsPerDnn;
  rep.searchSpace = prm.maxTransitionsPerDnn < 0
                        ? std::string("all assignments")
                        : fmt::format("assignments with at most {} transitions per DNN, plus the best baseline",
                                      prm.maxTransitionsPerDnn);
  rep.timeLimitS = prm.timeLimitS;
  rep.seed = static_cast<int64_t>(prm.seed);
  sim::Schedule chosen;
  std::string chosenBy;
  if (prm.solver == SolverKind::Exact) {
    ExactParams ep;
    ep.objective = obj;
    ep.maxTransitionsPerDnn = prm.maxTransitionsPerDnn;
    ep.timeLimitS = prm.timeLimitS;
    ep.initial = baselines[static_cast<size_t>(bestBase)].schedule;
    ep.initialName = "baseline:" + baselines[static_cast<size_t>(bestBase)].name;
    ep.onImprove = [&](double, double v, const std::string& by) { report(v, by); };
    ZP_ASSIGN_OR_RETURN(ExactResult er, exactSearch(p, ep));
    rep.solver = "exact-bnb";
    rep.status = er.optimal ? "optimal" : "feasible";
    rep.objective = er.value;
    rep.bound = er.bound;
    rep.nodes = er.nodes;
    rep.simulations = er.simulations;
    chosen = er.best;
    chosenBy = er.bestBy;
  } else {
    Z3Params zp;
    zp.objective = obj;
    zp.maxTransitionsPerDnn = prm.maxTransitionsPerDnn;
    zp.timeLimitS = prm.timeLimitS;
    zp.seed = prm.seed;
    zp.onImprove = [&](double, double v, const std::string& by) { report(v, by); };
    ZP_ASSIGN_OR_RETURN(Z3Result zr, solveZ3(p, zp));
    rep.solver = obj == Objective::Latency ? "z3-optimize" : "z3-pareto";
    rep.status = zr.optimal ? "optimal" : "feasible";
    rep.nodes = zr.checks;
    rep.bound = zr.bound;
    rep.searchSpace = prm.maxTransitionsPerDnn < 0
                          ? std::string("all assignments")
                          : fmt::format("assignments with at most {} transitions per DNN", prm.maxTransitionsPerDnn);
    if (zr.best) {
      double v = simr.run(*zr.best, {.recordSpans = false}).value(obj);
      ++rep.simulations;
      if (std::fabs(v - zr.value) > 1e-6 * std::max(1.0, std::fabs(v)))
        return makeError("{}: internal error: Z3 predicted {} but the simulator measured {} for its schedule", label,
                         zr.value, v);
      chosen = *zr.best;
      chosenBy = rep.solver;
      rep.objective = v;
    }
    // Never worse than the best baseline: if one wins (or Z3 found nothing), use it.
    if (!zr.best || sim::better(obj, bestBaseV, rep.objective)) {
      chosen = baselines[static_cast<size_t>(bestBase)].schedule;
      chosenBy = "baseline:" + baselines[static_cast<size_t>(bestBase)].name;
      if (!zr.best) rep.status = "feasible";
      rep.objective = bestBaseV;
    }
  }
  out.solveMs = elapsed();  // baselines included
  out.firstFeasibleMs = firstFeasible;
  rep.gap = relGap(rep.objective, rep.bound);

  if (prm.crossCheckZ3) {
    Z3Params zp;
    zp.objective = obj;
    zp.maxTransitionsPerDnn = prm.maxTransitionsPerDnn;
    zp.timeLimitS = prm.timeLimitS;
    zp.seed = prm.seed;
    ZP_ASSIGN_OR_RETURN(Z3Result zr, solveZ3(p, zp));
    if (!zr.best || !zr.optimal) {
      rep.crossCheck = fmt::format("z3 did not prove an optimum within {} s (best {}, bound {})", prm.timeLimitS,
                                   zr.best ? zr.value : 0.0, zr.bound);
    } else {
      double zv = simr.run(*zr.best, {.recordSpans = false}).value(obj);
      // Within the space, Z3's optimum must equal the exact search's (the
      // exact search may hold a better baseline from outside the space).
      bool agree = std::fabs(zv - zr.value) <= 1e-6 * std::max(1.0, std::fabs(zv)) &&
                   !sim::better(obj, zv, rep.objective);
      if (!agree)
        return makeError("{}: internal error: Z3 cross-check disagrees (z3 {} simulated {}, {} {})", label, zr.value,
                         zv, rep.solver, rep.objective);
      rep.crossCheck = fmt::format("z3 optimum {:.9g} (simulated {:.9g})", zr.value, zv);
    }
  }

  out.schedule = chosen;
  out.result = simr.run(chosen, {.recordSpans = true});
  sec.workload = label;
  sec.objective = sim::objectiveName(obj);
  sec.accelerators = p.accelerators;
  sec.source = chosenBy.rfind("baseline:", 0) == 0 ? chosenBy : std::string("zooplan");
  sec.objectiveValue = out.result.value(obj);
  sec.latencyMs = out.result.latencyMs;
  sec.throughput = out.result.throughput;
  sec.dnns = describeSchedule(p, out.result);
  return out;
}

Status runConcurrentCli(const ConcurrentCliParams& cp, std::ostream& os) {
  ZP_ASSIGN_OR_RETURN(Workload w, loadWorkload(cp.workload));
  // Checked before solving: no output is a directory, a file the workload
  // names, or another of the outputs.
  {
    std::vector<GuardedPath> inputs{{cp.workload, "input"}};
    for (const auto& f : w.inputFiles) inputs.push_back({f, "input"});
    ZP_TRY(checkOutputFiles({cp.output, cp.trace, cp.stats}, inputs));
  }
  ConcurrentParams prm = cp.solve;
  if (cp.anytime) {
    auto obj = prm.objective.value_or(w.objective);
    prm.onImprove = [&os, obj](double ms, double v, const std::string& by) {
      os << fmt::format("[{:10.3f} ms] {} {:.6g} {} ({})", ms, sim::objectiveName(obj), v,
                        obj == Objective::Latency ? "ms" : "inf/s", by)
         << std::endl;
    };
  }
  std::string label = cp.workload.string();
  ZP_ASSIGN_OR_RETURN(ConcurrentOutcome o, solveConcurrent(w, label, prm));
  plan::Plan pl;
  pl.header.tool = "plan-solve";
  pl.header.version = zooplanVersion();
  for (const auto& f : w.inputFiles) {
    ZP_ASSIGN_OR_RETURN(std::string bytes, readFile(f));
    pl.header.inputs[f.string()] = sha256Hex(bytes);
  }
  pl.concurrent = o.section;
  // Everything is rendered before anything is written; each write is atomic.
  std::string planText = plan::planToText(pl);
  std::string traceText, statsText;
  if (!cp.trace.empty())
    traceText = canonicalJson(sim::chromeTrace(w.problem, o.result, "zooplan concurrent schedule: " + label));
  if (!cp.stats.empty())
    statsText = canonicalJson(Json{{"solveMs", o.solveMs}, {"firstFeasibleMs", o.firstFeasibleMs},
                                   {"solver", o.section.solver.solver}, {"status", o.section.solver.status}});
  ZP_TRY(writeFileAtomic(cp.output, planText));
  if (!cp.trace.empty()) ZP_TRY(writeFileAtomic(cp.trace, traceText));
  if (!cp.stats.empty()) ZP_TRY(writeFileAtomic(cp.stats, statsText));

  const auto& s = o.section;
  os << fmt::format("workload {}: {} DNNs, {} groups, accelerators {}; objective {}\n", label, w.problem.numDnns(),
                    w.problem.totalGroups(), fmt::join(w.problem.accelerators, ","), s.objective);
  os << fmt::format("{:<22} {:>12} {:>14} {:>11} {:>12}\n", "schedule (simulated)", "latency ms", "throughput/s",
                    "transitions", "vs zooplan");
  auto line = [&](const std::string& name, double lat, double thr, int tr) {
    double ref = o.objective == Objective::Latency ? s.latencyMs : s.throughput;
    double v = o.objective == Objective::Latency ? lat : thr;
    double rel = o.objective == Objective::Latency ? (v / ref - 1) * 100 : (ref / v - 1) * 100;
    os << fmt::format("{:<22} {:>12.4f} {:>14.2f} {:>11} {:>+11.2f}%\n", name, lat, thr, tr, rel);
  };
  for (const auto& b : s.baselines) line(b.name, b.latencyMs, b.throughput, b.transitions);
  line("zooplan", s.latencyMs, s.throughput, totalTransitions(o.schedule));
  os << fmt::format("plan source: {}; solver {} {} (space: {}); objective {:.9g}, bound {:.9g}, gap {:.3g}%; "
                    "solve {:.1f} ms; seed {}\n",
                    s.source, s.solver.solver,
                    s.solver.status == "optimal" ? s.solver.status : s.solver.status + ", not proven optimal",
                    s.solver.searchSpace, s.solver.objective,
                    s.solver.bound, s.solver.gap * 100, o.solveMs, s.solver.seed);
  if (!s.solver.crossCheck.empty()) os << "cross-check: " << s.solver.crossCheck << "\n";
  os << "(vs zooplan: how much worse than zooplan's schedule each baseline is)\n";
  return {};
}

}  // namespace zp::schedule
