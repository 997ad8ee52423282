#include "passes/select/serving_objective.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <map>

#include "libplan/plan/unit.h"
#include "libplan/util/stats.h"

namespace zp::select {

namespace {
// A subgraph never profiled on a processor never finishes in time.
constexpr double kUnprofiledMs = 1e9;
}  // namespace

double taskQueriesPerSecond(const ServingWorkload& workload, const StitchSpace& space, size_t t) {
  double qps = 0;
  if (auto r = workload.rateQps.find(space.tasks[t].name); r != workload.rateQps.end()) qps += r->second;
  for (const auto& f : workload.frames)
    for (int m : f.tasks) qps += static_cast<size_t>(m) == t ? 1000.0 / f.periodMs : 0.0;
  return qps;
}

Expected<runtime::serve::ArrivalTrace> workloadTrace(const StitchSpace& space, const ServingWorkload& workload) {
  runtime::serve::ArrivalParams ap;
  std::vector<int> traceTask;  // per entry of ap.tasks: its index in the trace's tasks
  for (size_t t = 0; t < space.tasks.size(); ++t) {
    const auto& name = space.tasks[t].name;
    auto rate = workload.rateQps.find(name);
    if (rate != workload.rateQps.end()) {
      ap.tasks.push_back({name, workload.process, rate->second, 1});
      traceTask.push_back(static_cast<int>(t));
    } else if (taskQueriesPerSecond(workload, space, t) == 0) {
      return makeError("workload: task '{}' has no arrival rate and runs in no frame", name);
    }
  }
  for (size_t c = 0; c < workload.frames.size(); ++c) {
    const auto& f = workload.frames[c];
    if (!(f.periodMs > 0)) return makeError("workload: frame chain '{}' has period {} ms", f.name, f.periodMs);
    ap.tasks.push_back({f.name, runtime::serve::ArrivalProcess::Periodic, 1000.0 / f.periodMs, 1});
    traceTask.push_back(static_cast<int>(space.tasks.size() + c));
  }
  ap.seed = workload.seed;
  ap.durationMs = workload.durationMs;
  ZP_ASSIGN_OR_RETURN(auto generated, runtime::serve::generateArrivals(ap));
  runtime::serve::ArrivalTrace trace;
  for (const auto& t : space.tasks) trace.tasks.push_back(t.name);
  for (const auto& f : workload.frames) trace.tasks.push_back(f.name);
  trace.arrivals = std::move(generated.arrivals);
  for (auto& a : trace.arrivals) a.task = traceTask[static_cast<size_t>(a.task)];
  return trace;
}

ColdLoadChoice chooseColdSectionLoads(ServingCalibration& cal, bool always) {
  ColdLoadChoice out;
  auto cost = [](const UnitCalibration& u) {
    return u.loadMs + u.freeMs + (u.firstRunMs.empty() ? 0.0 : median(u.firstRunMs));
  };
  std::map<std::string, std::vector<std::string>> keysOf;  // unit id -> its "ID@PROCESSOR" keys
  for (const auto& [key, cold] : cal.coldLoaded) keysOf[key.substr(0, key.rfind('@'))].push_back(key);
  for (const auto& [id, keys] : keysOf) {
    bool faster = true;
    ++out.units;
    for (const auto& k : keys) {
      auto plain = cal.units.find(k);
      const double coldMs = cost(cal.coldLoaded.at(k));
      out.coldMs += coldMs;
      if (plain != cal.units.end()) out.warmCacheMs += cost(plain->second);
      faster = faster && plain != cal.units.end() && coldMs < cost(plain->second);
    }
    if (!faster && !always) continue;
    ++out.chosen;
    for (const auto& k : keys) {
      const auto& cold = cal.coldLoaded.at(k);
      auto& unit = cal.units[k];
      if (unit.hotMs.empty()) unit.hotMs = cold.hotMs, unit.idleMs = cold.idleMs, unit.idleGapsMs = cold.idleGapsMs;
      unit.loadMs = cold.loadMs;
      unit.freeMs = cold.freeMs;
      unit.firstRunMs = cold.firstRunMs;
    }
    cal.coldSections.insert(id);
  }
  return out;
}

namespace {

// A task's decision as the simulator's slots: each position its own run, as the
// executor runs it, paying the hand-over from another processor's position;
// its unit's measured figures where the calibration has them.
struct DecisionSlots {
  std::vector<sim::ServeSimSlot> slots;
  std::vector<std::string> unitIds;
};

// Calibrated run samples for a slot of unit `id`: its own where measured, else
// its planned time scaled by its processor's ratios.
void calibrateSlot(const ServingCalibration& cal, const std::string& id, const std::string& proc,
                   sim::ServeSimSlot& slot) {
  if (auto u = cal.units.find(id + "@" + proc); u != cal.units.end()) {
    // As plan-run's calibrated prediction runs a slot: its measured times as they are.
    slot.runSamplesMs = u->second.hotMs;
    slot.idleRunSamplesMs = u->second.idleMs;
    slot.idleRunGapsMs = u->second.idleGapsMs;
    if (u->second.loadMs > 0) slot.loadMs = u->second.loadMs;
    slot.freeMs = u->second.freeMs;
    slot.firstRunSamplesMs = u->second.firstRunMs;
    return;
  }
  const auto q = static_cast<size_t>(slot.processor);
  if (q < cal.hotRatios.size())
    for (double r : cal.hotRatios[q]) slot.runSamplesMs.push_back(slot.runMs * r);
  if (q < cal.idleRatios.size())
    for (double r : cal.idleRatios[q]) slot.idleRunSamplesMs.push_back(slot.runMs * r);
}

DecisionSlots decisionSlots(const StitchSpace& space, size_t t, int64_t candidate,
                            const std::vector<std::string>& placement, const ServingCalibration& cal) {
  const auto& ts = space.tasks[t];
  DecisionSlots d;
  if (auto g = sharedGroupOf(candidate)) {  // the group's unit, run whole on its one processor
    const SharedGroup& group = space.groups.at(*g);
    const std::string& proc = placement.front();
    double ms = decisionLatencyMs(space, t, candidate, placement);
    if (!std::isfinite(ms)) ms = kUnprofiledMs;
    auto b = group.bytes.find(proc);
    const int64_t bytes = b == group.bytes.end() ? 0 : b->second;
    sim::ServeSimSlot slot{processorIndex(space, proc), ms, cal.loadMsPerMB * static_cast<double>(bytes) / 1e6, bytes,
                           false, {}, {}};
    d.unitIds.push_back(plan::UnitId::group(group.name).str());
    calibrateSlot(cal, d.unitIds.back(), proc, slot);
    d.slots.push_back(std::move(slot));
    return d;
  }
  if (auto m = placedModelOf(candidate)) {  // the variant under its operator placement: one run holding the others
    const PlacedModel& pm = space.placed.at(*m);
    const auto& procs = pm.placement.processors;
    sim::ServeSimSlot slot{processorIndex(space, procs.front()), pm.placement.latencyMs,
                           cal.loadMsPerMB * static_cast<double>(pm.bytes) / 1e6, pm.bytes, false, {}, {}, {}};
    for (size_t q = 1; q < procs.size(); ++q) slot.holds.push_back(processorIndex(space, procs[q]));
    d.unitIds.push_back(pm.placement.unit.str());
    calibrateSlot(cal, d.unitIds.back(), procs.front(), slot);
    d.slots.push_back(std::move(slot));
    return d;
  }
  const auto variants = ts.variantsOf(static_cast<uint64_t>(candidate));
  for (int j = 0; j < ts.positions; ++j) {
    const std::string& proc = placement[static_cast<size_t>(j)];
    const int p = processorIndex(space, proc);
    // The run alone: a slot is one unit on one processor, shared by every decision
    // that runs it, so what moving the input from another processor costs is not
    // in it; the simulator charges the calibrated hand-over between processors,
    // as plan-run's prediction does.
    double ms = ts.latency.subgraph(j, variants[static_cast<size_t>(j)], proc).value_or(kUnprofiledMs);
    if (!std::isfinite(ms)) ms = kUnprofiledMs;
    const std::string& variant = variants[static_cast<size_t>(j)];
    const int64_t bytes = ts.memoryBytes(j, variant, proc);
    sim::ServeSimSlot slot{p, ms, cal.loadMsPerMB * static_cast<double>(bytes) / 1e6, bytes, false, {}, {}};
    d.unitIds.push_back(plan::UnitId::subgraph(ts.name, j, variant).str());
    calibrateSlot(cal, d.unitIds.back(), proc, slot);
    d.slots.push_back(std::move(slot));
  }
  return d;
}

// Every time of a slot `factor` times as long (its run samples, load, free).
void slowDown(double factor, sim::ServeSimSlot& s) {
  s.runMs *= factor;
  s.loadMs *= factor;
  s.freeMs *= factor;
  for (auto* samples : {&s.runSamplesMs, &s.idleRunSamplesMs, &s.firstRunSamplesMs})
    for (double& x : *samples) x *= factor;
}

bool accuracyMet(const StitchSpace& space, const plan::SloConfiguration& slo, size_t t, int64_t candidate) {
  return decisionJudgedAccuracy(space, t, candidate) >= slo.tasks.at(space.tasks[t].name).accuracy;  // NaN: missed
}

// The least a query of this decision can take: dispatched, every position at its
// fastest measured run, hand-overs between processors, nothing queued or loaded.
double fastestMs(const DecisionSlots& d, const ServingCalibration& cal) {
  double ms = 0;
  for (size_t j = 0; j < d.slots.size(); ++j) {
    const auto& s = d.slots[j];
    double run = s.runSamplesMs.empty() && s.idleRunSamplesMs.empty() ? s.runMs : kUnprofiledMs;
    for (double x : s.runSamplesMs) run = std::min(run, x);
    for (double x : s.idleRunSamplesMs) run = std::min(run, x);
    ms += run + (j > 0 && s.processor != d.slots[j - 1].processor ? cal.handoffMs : 0.0);
  }
  return ms;
}

}  // namespace

namespace {

// Per trace task (the space's tasks, then the frame chains): whether every one
// of its decisions violates `slo` even on idle processors at the fastest runs,
// each `slowdown` times as long.
std::vector<bool> certainViolators(const StitchSpace& space, const plan::SloConfiguration& slo,
                                   const std::vector<std::vector<TaskDecision>>& decisions,
                                   const ServingWorkload& workload, double slowdown) {
  const auto& cal = workload.calibration;
  const size_t T = space.tasks.size();
  std::vector<bool> certain(T + workload.frames.size(), false), accuracyAlwaysMissed(T, true);
  std::vector<double> leastMs(T, 1e300);
  for (size_t t = 0; t < T; ++t) {
    bool alwaysViolates = true;
    for (const auto& [candidate, placement] : decisions[t]) {
      const bool met = accuracyMet(space, slo, t, candidate);
      auto slots = decisionSlots(space, t, candidate, placement, cal);
      for (auto& s : slots.slots) slowDown(slowdown, s);
      const double ms = cal.dispatchMs + fastestMs(slots, cal);
      accuracyAlwaysMissed[t] = accuracyAlwaysMissed[t] && !met;
      leastMs[t] = std::min(leastMs[t], ms - cal.dispatchMs);
      alwaysViolates = alwaysViolates && (!met || ms > slo.tasks.at(space.tasks[t].name).latencyMs);
    }
    certain[t] = alwaysViolates;
  }
  for (size_t c = 0; c < workload.frames.size(); ++c) {
    double ms = cal.dispatchMs;
    bool missed = false;
    for (int t : workload.frames[c].tasks) {
      ms += leastMs[static_cast<size_t>(t)];
      missed = missed || accuracyAlwaysMissed[static_cast<size_t>(t)];
    }
    certain[T + c] = missed || ms > workload.frames[c].latencyMs;
  }
  return certain;
}

}  // namespace

double servingViolationBound(const StitchSpace& space, const plan::SloConfiguration& slo,
                             const std::vector<std::vector<TaskDecision>>& decisions, const ServingWorkload& workload,
                             const runtime::serve::ArrivalTrace& trace) {
  return servingViolationBoundInTurn(space, {slo}, decisions, workload, trace);
}

double servingViolationBoundInTurn(const StitchSpace& space, const std::vector<plan::SloConfiguration>& slos,
                                   const std::vector<std::vector<TaskDecision>>& decisions,
                                   const ServingWorkload& workload, const runtime::serve::ArrivalTrace& trace) {
  if (trace.arrivals.empty()) return 0;
  // Of the judged violation rate: the mean of the bounds as calibrated and slowed down, where judged so.
  std::vector<double> slowdowns{1.0};
  if (workload.slowdownJudged != 1.0) slowdowns.push_back(workload.slowdownJudged);
  double bound = 0;
  for (double slowdown : slowdowns) {
    std::vector<std::vector<bool>> certain;
    for (const auto& slo : slos) certain.push_back(certainViolators(space, slo, decisions, workload, slowdown));
    const size_t K = slos.size();
    const double phaseMs = std::max(trace.arrivals.back().timeMs, 1e-9) * (1 + 1e-12) / static_cast<double>(K);
    int64_t n = 0;
    for (const auto& a : trace.arrivals)
      n += certain[std::min(K - 1, static_cast<size_t>(a.timeMs / phaseMs))][static_cast<size_t>(a.task)];
    const double rate = static_cast<double>(n) / static_cast<double>(trace.arrivals.size());
    bound += rate / static_cast<double>(slowdowns.size());
  }
  return bound;
}

namespace {

// The simulator's figures of a run as an Outcome (per task t < T: its queries under every configuration).
void fillOutcome(const sim::ServeSimResult& r, const std::vector<sim::ServeSimTask>& tasks, size_t T, size_t K,
                 Outcome& o) {
  o.violationRate = r.summary.violationRate;
  o.throughputQps = r.summary.throughputQps;
  std::vector<double> latency(T, 0.0);
  std::vector<int> queries(T, 0), violations(T, 0);
  for (const auto& q : r.queries) o.meanLatencyMs += (q.finishMs - q.arrivalMs) / static_cast<double>(r.queries.size());
  for (const auto& q : r.queries) {
    const auto t = static_cast<size_t>(q.task) / K;
    if (t >= T) continue;  // a frame chain's query: counted in the violation rate only
    const auto& task = tasks[static_cast<size_t>(q.task)];
    latency[t] += q.finishMs - q.arrivalMs;
    ++queries[t];
    violations[t] += !sloMet({q.arrivalMs, q.finishMs, true, task.sloMs, task.accuracySloMet});
  }
  for (size_t t = 0; t < T; ++t) {
    o.taskLatencyMs.push_back(queries[t] ? latency[t] / queries[t] : 0.0);
    o.taskViolated.push_back(2 * violations[t] > queries[t]);
  }
}

sim::ServeSimParams simParams(const StitchSpace& space, const ServingWorkload& workload) {
  sim::ServeSimParams sp;
  sp.processors = static_cast<int>(space.processors.size());
  sp.memoryBudgetBytes = workload.budgetBytes;
  sp.dispatchMs = workload.calibration.dispatchMs;
  sp.handoffMs = workload.calibration.handoffMs;
  sp.turnaroundMs = workload.calibration.turnaroundMs;
  sp.seed = workload.seed;
  sp.order = workload.order;
  sp.recordSpans = false;  // judged by its queries alone
  return sp;
}

// The preload set resident, in its order, as far as the budget allows (as plan-run marks it).
void markPreloadSet(const ServingWorkload& workload, const std::vector<std::string>& slotIds,
                    std::vector<sim::ServeSimSlot>& slots) {
  int64_t used = 0;
  for (const auto& id : workload.preload)
    for (size_t s = 0; s < slots.size(); ++s)
      if (!slots[s].preload && slotIds[s] == id && used + slots[s].bytes <= workload.budgetBytes) {
        slots[s].preload = true;
        used += slots[s].bytes;
      }
}

}  // namespace

Outcome evaluateServingInTurn(const StitchSpace& space, const std::vector<plan::SloConfiguration>& slos,
                              const std::vector<Choice>& choices, const ServingWorkload& workload,
                              const runtime::serve::ArrivalTrace& trace) {
  assert(choices.size() == slos.size() && !slos.empty());
  const auto& cal = workload.calibration;
  const size_t T = space.tasks.size(), K = slos.size(), F = workload.frames.size();
  std::vector<sim::ServeSimSlot> slots;
  std::vector<std::string> slotIds;
  std::map<std::string, int> slotOf;  // "UNIT@PROCESSOR": one slot however many configurations choose it
  std::vector<sim::ServeSimTask> tasks((T + F) * K);  // task t under configuration k: t * K + k; then the frame chains
  Outcome o;
  for (size_t t = 0; t < T; ++t)
    for (size_t k = 0; k < K; ++k) {
      const auto& ts = space.tasks[t];
      const Choice& c = choices[k];
      const bool met = accuracyMet(space, slos[k], t, c.candidate[t]);
      o.accuracyMisses += !met;
      sim::ServeSimTask task{ts.name + "@" + slos[k].id, {}, slos[k].tasks.at(ts.name).latencyMs, met};
      auto d = decisionSlots(space, t, c.candidate[t], c.placement[t], cal);
      for (size_t j = 0; j < d.slots.size(); ++j) {
        const std::string key = d.unitIds[j] + "@" + c.placement[t][j];
        auto [it, added] = slotOf.emplace(key, static_cast<int>(slots.size()));
        if (added) {
          slots.push_back(std::move(d.slots[j]));
          slotIds.push_back(std::move(d.unitIds[j]));
        }
        task.slots.push_back(it->second);
      }
      tasks[t * K + k] = std::move(task);
    }
  for (size_t f = 0; f < F; ++f)
    for (size_t k = 0; k < K; ++k) {
      const auto& frame = workload.frames[f];
      sim::ServeSimTask chain{frame.name + "@" + slos[k].id, {}, frame.latencyMs, true};
      for (int t : frame.tasks) {
        const auto& member = tasks[static_cast<size_t>(t) * K + k];
        chain.slots.insert(chain.slots.end(), member.slots.begin(), member.slots.end());
        chain.accuracySloMet = chain.accuracySloMet && member.accuracySloMet;
      }
      tasks[(T + f) * K + k] = std::move(chain);
    }
  if (workload.residentByLoadCost) {
    // Ranked with the per-MB load cost, as plan-run ranks them.
    std::vector<std::map<int, double>> phaseQps(K);
    for (size_t k = 0; k < K; ++k)
      for (size_t t = 0; t < T; ++t)
        for (int s : tasks[t * K + k].slots)
          phaseQps[k][s] += taskQueriesPerSecond(workload, space, t) / static_cast<double>(K);
    std::vector<double> loadMs;
    std::vector<int64_t> bytes;
    for (const auto& s : slots) {
      bytes.push_back(s.bytes);
      loadMs.push_back(cal.loadMsPerMB * static_cast<double>(s.bytes) / 1e6);
    }
    const auto everywhere = sim::residentInEveryPhase(phaseQps, loadMs, bytes, workload.budgetBytes);
    for (size_t s = 0; s < slots.size(); ++s) slots[s].preload = slots[s].preload || everywhere[s];
  }
  markPreloadSet(workload, slotIds, slots);
  std::vector<sim::ServeSimArrival> arrivals;
  arrivals.reserve(trace.arrivals.size());
  const double last = trace.arrivals.empty() ? 0.0 : trace.arrivals.back().timeMs;
  const double phaseMs = std::max(last, 1e-9) * (1 + 1e-12) / static_cast<double>(K);
  for (const auto& a : trace.arrivals) {
    const size_t k = std::min(K - 1, static_cast<size_t>(a.timeMs / phaseMs));
    arrivals.push_back({a.timeMs, static_cast<int>(static_cast<size_t>(a.task) * K + k)});
  }
  fillOutcome(sim::simulateServing(slots, tasks, arrivals, simParams(space, workload)), tasks, T, K, o);
  if (workload.slowdownJudged != 1.0) {
    for (auto& s : slots) slowDown(workload.slowdownJudged, s);
    o.slowedViolationRate =
        sim::simulateServing(slots, tasks, arrivals, simParams(space, workload)).summary.violationRate;
  }
  return o;
}

Outcome evaluateServing(const StitchSpace& space, const plan::SloConfiguration& slo, const Choice& choice,
                        const ServingWorkload& workload, const runtime::serve::ArrivalTrace& trace) {
  return evaluateServingInTurn(space, {slo}, {choice}, workload, trace);
}

}  // namespace zp::select
