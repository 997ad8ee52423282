#include "passes/select/served_systems.h"

namespace zp::select {
namespace {

plan::SystemSelection selectionOf(const StitchSpace& space, const std::string& slo, const Choice& c) {
  plan::SystemSelection sel;
  sel.slo = slo;
  for (size_t t = 0; t < space.tasks.size(); ++t) {
    const auto& ts = space.tasks[t];
    const uint64_t k = static_cast<uint64_t>(c.candidate[t]);
    sel.tasks.push_back(plan::SystemTaskChoice{ts.name, ts.idOf(k), c.placement[t], static_cast<bool>(c.feasible[t]),
                                               ts.accuracy->judged(k)});
  }
  return sel;
}

}  // namespace

ServedSystems servedSystems(const StitchSpace& space, const std::vector<plan::SloConfiguration>& slos,
                            const SelectParams& params, std::vector<std::vector<TaskSearch>>& searches) {
  ServedSystems served;
  auto& out = served.systems;
  out = {
      {"zooplan", "best in the query simulator of Algorithm 1, Algorithm 1 under each single order, "
                  "stitched variants whole on their fastest processor, and the baselines' choices", {}},
      {"Algorithm-1", "SparseLoom Algorithm 1 alone: best global order, then the fastest feasible variant per task", {}}};
  for (const char* b : {"SV-AO-P", "SV-AO-NP", "SV-LO-P", "SV-LO-NP", "AV-P", "AV-NP"})
    out.push_back({b, "SparseLoom §5.1 baseline (original variants only)", {}});
  served.choices.resize(out.size());
  auto add = [&](size_t system, const std::string& slo, const Choice& c) {
    out[system].selections.push_back(selectionOf(space, slo, c));
    served.choices[system].push_back(c);
  };
  for (size_t c = 0; c < slos.size(); ++c) {
    const auto& slo = slos[c];
    Algorithm1Result a1;
    Choice best = zooplanChoice(space, slo, params, searches[c], &a1, nullptr);
    add(0, slo.id, best);
    add(1, slo.id, a1.choice);
    const auto baselines = baselineChoices(space, slo, params);
    for (size_t b = 0; b < baselines.size(); ++b) add(2 + b, slo.id, baselines[b]);
  }
  return served;
}

}  // namespace zp::select
