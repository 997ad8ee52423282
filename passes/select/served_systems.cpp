#include "passes/select/served_systems.h"

#include <cassert>
#include <optional>

#include "passes/select/serving_objective.h"

namespace zp::select {
namespace {

const char* accuracySourceOf(const TaskSpace& ts, uint64_t k) {
  return ts.accuracy->measured(k) >= 0 ? "measured" : "estimated";
}

plan::SystemSelection selectionOf(const StitchSpace& space, const std::string& slo, const Choice& c) {
  plan::SystemSelection sel;
  sel.slo = slo;
  for (size_t t = 0; t < space.tasks.size(); ++t) {
    const auto& ts = space.tasks[t];
    const uint64_t k = static_cast<uint64_t>(c.candidate[t]);
    sel.tasks.push_back(plan::SystemTaskChoice{ts.name, ts.idOf(k), c.placement[t], static_cast<bool>(c.feasible[t]),
                                               ts.accuracy->judged(k), accuracySourceOf(ts, k),
                                               ts.latencyMs(ts.candidate(k), c.placement[t])});
  }
  return sel;
}

}  // namespace

const std::vector<std::pair<std::string, std::string>>& servedSystemCatalog() {
  static const std::vector<std::pair<std::string, std::string>> kCatalog = {
      {"zooplan", "the plan: best in the query simulator (violations, then accuracy SLOs met, then throughput) of "
                  "Algorithm 1 under every order, stitched variants whole on their fastest processor, and the "
                  "baselines' choices"},
      {"Algorithm-1", "SparseLoom Algorithm 1 alone: best global order, then the fastest feasible variant per task"},
      {"SV-AO-P", "SparseLoom baseline: the most accurate original variant, partitioned over the fixed "
                  "processor order"},
      {"SV-AO-NP", "SparseLoom baseline: the most accurate original variant, whole on its fastest processor"},
      {"SV-LO-P", "SparseLoom baseline: the fastest original variant, partitioned over the fixed processor order"},
      {"SV-LO-NP", "SparseLoom baseline: the fastest original variant, whole on its fastest processor"},
      {"AV-P", "SparseLoom baseline: the fastest original variant meeting both SLOs (else the closest), "
               "partitioned over the fixed processor order"},
      {"AV-NP", "SparseLoom baseline: the fastest original variant meeting both SLOs (else the closest), whole "
                "on its fastest processor"}};
  return kCatalog;
}

ServedSystems servedSystems(const StitchSpace& space, const std::vector<plan::SloConfiguration>& slos,
                            const SelectParams& params, std::vector<std::vector<TaskSearch>>& searches) {
  ServedSystems served;
  auto& out = served.systems;
  for (const auto& [name, description] : servedSystemCatalog()) out.push_back({name, description, {}});
  if (params.workload)
    out.front().description =
        "the plan: best served at the workload's arrival rates in the serving simulator (violations, then accuracy "
        "SLOs met, then throughput, then mean latency), calibrated per unit on this host, its units resident under "
        "the device budget by load cost, of Algorithm 1 under every order, stitched variants whole on their fastest "
        "processor, every task whole on each processor, the baselines' choices, and every mix of their decisions "
        "task by task";
  if (params.sparseLoomOnly)
    out.front().description = "the plan, SparseLoom alone (plan-solve --only sparseloom): Algorithm 1's choice";
  served.choices.resize(out.size());
  std::optional<runtime::serve::ArrivalTrace> trace;
  if (params.workload) {
    auto t = workloadTrace(space, *params.workload);
    assert(t.ok() && "the driver checks the workload names every task");
    trace = std::move(*t);
  }
  // `known`: the choice's outcome when already judged at the workload (zooplan's search).
  auto add = [&](size_t system, const plan::SloConfiguration& slo, const Choice& c, const Outcome* known) {
    out[system].selections.push_back(selectionOf(space, slo.id, c));
    if (trace) {
      const Outcome o = known ? *known : evaluateServing(space, slo, c, *params.workload, *trace);
      out[system].selections.back().predicted = plan::PredictedServing{o.violationRate, o.throughputQps, 0, false, 0};
    }
    served.choices[system].push_back(c);
  };
  for (size_t c = 0; c < slos.size(); ++c) {
    const auto& slo = slos[c];
    Algorithm1Result a1;
    ZooplanSearch search;
    Choice best = zooplanChoice(space, slo, params, searches[c], &a1, &search);
    add(0, slo, best, &search.predicted);
    if (trace) {
      auto& p = *out[0].selections.back().predicted;
      p.judged = search.judged;
      p.provenBest = search.provenBest;
      p.violationBound = search.violationBound;
    }
    add(1, slo, a1.choice, nullptr);
    const auto baselines = baselineChoices(space, slo, params);
    for (size_t b = 0; b < baselines.size(); ++b) add(2 + b, slo, baselines[b], nullptr);
  }
  return served;
}

}  // namespace zp::select
