#include "passes/select/serving_objective.h"

#include <cmath>

#include "libplan/plan/unit.h"

namespace zp::select {

namespace {
// A subgraph never profiled on a processor never finishes in time.
constexpr double kUnprofiledMs = 1e9;
}  // namespace

Expected<runtime::serve::ArrivalTrace> workloadTrace(const StitchSpace& space, const ServingWorkload& workload) {
  runtime::serve::ArrivalParams ap;
  for (const auto& t : space.tasks) {
    auto rate = workload.rateQps.find(t.name);
    if (rate == workload.rateQps.end()) return makeError("workload: no arrival rate for task '{}'", t.name);
    ap.tasks.push_back({t.name, workload.process, rate->second, 1});
  }
  ap.seed = workload.seed;
  ap.durationMs = workload.durationMs;
  return runtime::serve::generateArrivals(ap);
}

Outcome evaluateServing(const StitchSpace& space, const plan::SloConfiguration& slo, const Choice& choice,
                        const ServingWorkload& workload, const runtime::serve::ArrivalTrace& trace) {
  const auto& cal = workload.calibration;
  std::vector<sim::ServeSimSlot> slots;
  std::vector<sim::ServeSimTask> tasks;
  std::vector<std::string> slotIds;  // per slot: its unit id
  Outcome o;
  for (size_t t = 0; t < space.tasks.size(); ++t) {
    const auto& ts = space.tasks[t];
    const auto variants = ts.variantsOf(static_cast<uint64_t>(choice.candidate[t]));
    const auto& placement = choice.placement[t];
    const auto& s = slo.tasks.at(ts.name);
    const double accuracy = ts.accuracy->judged(static_cast<uint64_t>(choice.candidate[t]));
    const bool accuracyMet = accuracy >= s.accuracy;  // NaN: missed
    o.accuracyMisses += !accuracyMet;
    sim::ServeSimTask task{ts.name, {}, s.latencyMs, accuracyMet};
    for (int j = 0; j < ts.positions; ++j) {
      const std::string& proc = placement[static_cast<size_t>(j)];
      const int p = processorIndex(space, proc);
      // Each position is its own run, as the executor runs it: it pays the
      // per-run overhead, and the hand-over from another processor's position.
      double ms = ts.latency.subgraph(j, variants[static_cast<size_t>(j)], proc).value_or(kUnprofiledMs);
      if (j > 0 && placement[static_cast<size_t>(j - 1)] != proc)
        ms += ts.latency.transition(placement[static_cast<size_t>(j - 1)], proc, ts.boundaryBytes[static_cast<size_t>(j - 1)]);
      if (!std::isfinite(ms)) ms = kUnprofiledMs;
      const std::string& variant = variants[static_cast<size_t>(j)];
      const int64_t bytes = ts.memoryBytes(j, variant, proc);
      sim::ServeSimSlot slot{p, ms, cal.loadMsPerMB * static_cast<double>(bytes) / 1e6, bytes, false, {}, {}};
      slotIds.push_back(plan::UnitId::subgraph(ts.name, j, variant).str());
      const auto q = static_cast<size_t>(p);
      if (q < cal.hotRatios.size())
        for (double r : cal.hotRatios[q]) slot.runSamplesMs.push_back(ms * r);
      if (q < cal.idleRatios.size())
        for (double r : cal.idleRatios[q]) slot.idleRunSamplesMs.push_back(ms * r);
      task.slots.push_back(static_cast<int>(slots.size()));
      slots.push_back(std::move(slot));
    }
    tasks.push_back(std::move(task));
  }
  // The preload set resident, in its order, as far as the budget allows (as plan-run marks it).
  int64_t used = 0;
  for (const auto& id : workload.preload)
    for (size_t s = 0; s < slots.size(); ++s)
      if (!slots[s].preload && slotIds[s] == id && used + slots[s].bytes <= workload.budgetBytes) {
        slots[s].preload = true;
        used += slots[s].bytes;
      }
  std::vector<sim::ServeSimArrival> arrivals;
  arrivals.reserve(trace.arrivals.size());
  for (const auto& a : trace.arrivals) arrivals.push_back({a.timeMs, a.task});
  sim::ServeSimParams sp;
  sp.processors = static_cast<int>(space.processors.size());
  sp.memoryBudgetBytes = workload.budgetBytes;
  sp.dispatchMs = cal.dispatchMs;
  sp.handoffMs = cal.handoffMs;
  sp.seed = workload.seed;
  const auto r = sim::simulateServing(slots, tasks, arrivals, sp);
  o.violationRate = r.summary.violationRate;
  o.throughputQps = r.summary.throughputQps;
  const size_t T = space.tasks.size();
  std::vector<double> latency(T, 0.0);
  std::vector<int> queries(T, 0), violations(T, 0);
  for (const auto& q : r.queries) {
    const auto t = static_cast<size_t>(q.task);
    const double ms = q.finishMs - q.arrivalMs;
    latency[t] += ms;
    ++queries[t];
    violations[t] += !sloMet({q.arrivalMs, q.finishMs, true, tasks[t].sloMs, tasks[t].accuracySloMet});
  }
  for (size_t t = 0; t < T; ++t) {
    o.taskLatencyMs.push_back(queries[t] ? latency[t] / queries[t] : 0.0);
    o.taskViolated.push_back(2 * violations[t] > queries[t]);
  }
  return o;
}

}  // namespace zp::select
