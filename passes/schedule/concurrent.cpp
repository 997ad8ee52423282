#include "passes/schedule/concurrent.h"

#include <cmath>

#include <fmt/format.h>

#include "libplan/util/stats.h"
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
    for (int e : p.dnns[n].deps) d.dependsOn.push_back(p.dnns[static_cast<size_t>(e)].name);
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

namespace {

// The anytime record: when the first feasible schedule was known, and each
// improvement passed on to ConcurrentParams::onImprove.
class Improvements {
 public:
  Improvements(Objective obj, const ConcurrentParams& prm)
      : obj_(obj), prm_(prm), t0_(SteadyClock::now()), best_(sim::worstValue(obj)) {}
  double elapsedMs() const { return msSince(t0_); }
  void report(double v, const std::string& by) {
    const double ms = elapsedMs();
    if (firstFeasibleMs_ < 0) firstFeasibleMs_ = ms;
    if (sim::better(obj_, v, best_) || best_ == sim::worstValue(obj_)) {
      best_ = v;
      if (prm_.onImprove) prm_.onImprove(ms, v, by);
    }
  }
  double firstFeasibleMs() const { return firstFeasibleMs_; }

 private:
  Objective obj_;
  const ConcurrentParams& prm_;
  SteadyClock::time_point t0_;
  double firstFeasibleMs_ = -1;
  double best_;
};

// The schedule a solver settled on and who found it.
struct Choice {
  sim::Schedule schedule;
  std::string by;
};

struct JudgedBaselines {
  std::vector<Baseline> all;
  size_t best = 0;
  double bestValue = 0;
  std::string bestName() const { return "baseline:" + all[best].name; }
};

// Every baseline judged by the simulator, recorded in the plan section.
// An executable plan (host processors given) also records each baseline's
// schedule, which plan-run executes beside the plan's.
JudgedBaselines judgeBaselines(const sim::Problem& p, Objective obj, sim::Simulator& simr, Improvements& log,
                               bool executable, plan::ConcurrentSchedule& sec) {
  JudgedBaselines jb;
  jb.all = makeBaselines(p, obj);
  jb.bestValue = sim::worstValue(obj);
  bool any = false;
  for (size_t b = 0; b < jb.all.size(); ++b) {
    const auto& r = simr.run(jb.all[b].schedule, {.recordSpans = false});
    sec.baselines.push_back({jb.all[b].name, r.latencyMs, r.throughput, totalTransitions(jb.all[b].schedule),
                             executable ? describeSchedule(p, r) : std::vector<plan::ConcurrentDnn>{}});
    double v = r.value(obj);
    log.report(v, "baseline:" + jb.all[b].name);
    if (!any || sim::better(obj, v, jb.bestValue)) {
      jb.best = b;
      jb.bestValue = v;
      any = true;
    }
  }
  return jb;
}

Z3Params z3Params(Objective obj, const ConcurrentParams& prm) {
  Z3Params zp;
  zp.objective = obj;
  zp.maxTransitionsPerDnn = prm.maxTransitionsPerDnn;
  zp.timeLimitS = prm.timeLimitS;
  zp.seed = prm.seed;
  return zp;
}

// The exact branch and bound, started from the best baseline.
Expected<Choice> solveExact(const sim::Problem& p, Objective obj, const ConcurrentParams& prm,
                            const JudgedBaselines& jb, Improvements& log, plan::SolverReport& rep) {
  ExactParams ep;
  ep.objective = obj;
  ep.maxTransitionsPerDnn = prm.maxTransitionsPerDnn;
  ep.timeLimitS = prm.timeLimitS;
  ep.initial = jb.all[jb.best].schedule;
  ep.initialName = jb.bestName();
  ep.onImprove = [&](double, double v, const std::string& by) { log.report(v, by); };
  ZP_ASSIGN_OR_RETURN(ExactResult er, exactSearch(p, ep));
  rep.solver = "exact-bnb";
  rep.status = er.optimal ? "optimal" : "feasible";
  rep.objective = er.value;
  rep.bound = er.bound;
  rep.nodes = er.nodes;
  rep.simulations = er.simulations;
  return Choice{er.best, er.bestBy};
}

// Z3, its schedule checked against the simulator; never worse than the best baseline.
Expected<Choice> solveWithZ3(const sim::Problem& p, Objective obj, const ConcurrentParams& prm,
                             const JudgedBaselines& jb, sim::Simulator& simr, Improvements& log,
                             plan::SolverReport& rep, const std::string& label) {
  Z3Params zp = z3Params(obj, prm);
  zp.onImprove = [&](double, double v, const std::string& by) { log.report(v, by); };
  ZP_ASSIGN_OR_RETURN(Z3Result zr, solveZ3(p, zp));
  rep.solver = obj == Objective::Latency ? "z3-optimize" : "z3-pareto";
  rep.status = zr.optimal ? "optimal" : "feasible";
  rep.nodes = zr.checks;
  rep.bound = zr.bound;
  rep.searchSpace = prm.maxTransitionsPerDnn < 0
                        ? std::string("all assignments")
                        : fmt::format("assignments with at most {} transitions per DNN", prm.maxTransitionsPerDnn);
  Choice choice;
  if (zr.best) {
    double v = simr.run(*zr.best, {.recordSpans = false}).value(obj);
    ++rep.simulations;
    if (std::fabs(v - zr.value) > 1e-6 * std::max(1.0, std::fabs(v)))
      return makeError("{}: internal error: Z3 predicted {} but the simulator measured {} for its schedule", label,
                       zr.value, v);
    choice = Choice{*zr.best, rep.solver};
    rep.objective = v;
  }
  // If a baseline wins (or Z3 found nothing), use it.
  if (!zr.best || sim::better(obj, jb.bestValue, rep.objective)) {
    choice = Choice{jb.all[jb.best].schedule, jb.bestName()};
    if (!zr.best) rep.status = "feasible";
    rep.objective = jb.bestValue;
  }
  return choice;
}

// Z3 on the same space: its optimum must equal the exact search's.
Status crossCheckWithZ3(const sim::Problem& p, Objective obj, const ConcurrentParams& prm, sim::Simulator& simr,
                        plan::SolverReport& rep, const std::string& label) {
  ZP_ASSIGN_OR_RETURN(Z3Result zr, solveZ3(p, z3Params(obj, prm)));
  if (!zr.best || !zr.optimal) {
    rep.crossCheck = fmt::format("z3 did not prove an optimum within {} s (best {}, bound {})", prm.timeLimitS,
                                 zr.best ? zr.value : 0.0, zr.bound);
    return {};
  }
  double zv = simr.run(*zr.best, {.recordSpans = false}).value(obj);
  // Within the space, Z3's optimum must equal the exact search's (the exact
  // search may hold a better baseline from outside the space).
  bool agree = std::fabs(zv - zr.value) <= 1e-6 * std::max(1.0, std::fabs(zv)) && !sim::better(obj, zv, rep.objective);
  if (!agree)
    return makeError("{}: internal error: Z3 cross-check disagrees (z3 {} simulated {}, {} {})", label, zr.value, zv,
                     rep.solver, rep.objective);
  rep.crossCheck = fmt::format("z3 optimum {:.9g} (simulated {:.9g})", zr.value, zv);
  return {};
}

}  // namespace

Expected<ConcurrentOutcome> solveConcurrent(const Workload& w, const std::string& label, const ConcurrentParams& prm) {
  const auto& p = w.problem;
  ConcurrentOutcome out;
  out.objective = prm.objective.value_or(w.objective);
  const Objective obj = out.objective;
  Improvements log(obj, prm);
  sim::Simulator simr(p);
  auto& sec = out.section;
  const JudgedBaselines jb = judgeBaselines(p, obj, simr, log, !w.processors.empty(), sec);

  auto& rep = sec.solver;
  rep.maxTransitionsPerDnn = prm.maxTransitionsPerDnn;
  rep.searchSpace = prm.maxTransitionsPerDnn < 0
                        ? std::string("all assignments")
                        : fmt::format("assignments with at most {} transitions per DNN, plus the best baseline",
                                      prm.maxTransitionsPerDnn);
  rep.timeLimitS = prm.timeLimitS;
  rep.seed = static_cast<int64_t>(prm.seed);
  Choice chosen;
  if (prm.solver == SolverKind::Exact) {
    ZP_ASSIGN_OR_RETURN(chosen, solveExact(p, obj, prm, jb, log, rep));
  } else {
    ZP_ASSIGN_OR_RETURN(chosen, solveWithZ3(p, obj, prm, jb, simr, log, rep, label));
  }
  out.solveMs = log.elapsedMs();  // baselines included
  out.firstFeasibleMs = log.firstFeasibleMs();
  rep.gap = relGap(rep.objective, rep.bound);
  if (prm.crossCheckZ3) ZP_TRY(crossCheckWithZ3(p, obj, prm, simr, rep, label));

  out.schedule = chosen.schedule;
  out.result = simr.run(chosen.schedule, {.recordSpans = true});
  sec.workload = label;
  sec.objective = sim::objectiveName(obj);
  sec.accelerators = p.accelerators;
  sec.source = chosen.by.rfind("baseline:", 0) == 0 ? chosen.by : std::string("zooplan");
  sec.objectiveValue = out.result.value(obj);
  sec.latencyMs = out.result.latencyMs;
  sec.throughput = out.result.throughput;
  sec.dnns = describeSchedule(p, out.result);
  out.processors = w.processors;
  for (size_t n = 0; n < w.sources.size(); ++n) {
    if (!w.sources[n].model.empty()) sec.dnns[n].unit = plan::UnitId::model(sec.dnns[n].name);
    for (size_t i = 0; i < w.sources[n].groupNodes.size(); ++i) sec.dnns[n].groups[i].nodes = w.sources[n].groupNodes[i];
  }
  return out;
}

}  // namespace zp::schedule
