#include "passes/schedule/concurrent.h"

#include <chrono>
#include <cmath>

#include <fmt/format.h>

#include "passes/schedule/baselines.h"
#include "passes/schedule/z3_solver.h"

namespace zp::schedule {

using sim::Objective;

int totalTransitions(const sim::Schedule& s) {
  int t = 0;
  for (size_t n = 0; n < s.assign.size(); ++n) t += sim::countTransitions(s, static_cast<int>(n));
  return t;
}

namespace {

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

}  // namespace zp::schedule
