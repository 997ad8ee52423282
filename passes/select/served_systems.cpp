#include "passes/select/served_systems.h"

namespace zp::select {
namespace {

plan::SystemSelection selectionOf(const StitchSpace& space, const std::string& slo, const Choice& c) {
  plan::SystemSelection sel;
  sel.slo = slo;
  for (size_t t = 0; t < space.tasks.size(); ++t) {
    const auto& cand = space.tasks[t].candidates[static_cast<size_t>(c.candidate[t])];
    sel.tasks.push_back(plan::SystemTaskChoice{space.tasks[t].name, cand.id, c.placement[t],
                                               static_cast<bool>(c.feasible[t]), cand.accuracy(true)});
  }
  return sel;
}

}  // namespace

std::vector<plan::ServedSystem> servedSystems(const StitchSpace& space, const std::vector<plan::SloConfiguration>& slos,
                                              const SelectParams& params) {
  std::vector<plan::ServedSystem> out = {
      {"zooplan", "best in the query simulator of Algorithm 1, Algorithm 1 under each single order, "
                  "stitched variants whole on their fastest processor, and the baselines' choices", {}},
      {"Algorithm-1", "SparseLoom Algorithm 1 alone: best global order, then the fastest feasible variant per task", {}}};
  for (const char* b : {"SV-AO-P", "SV-AO-NP", "SV-LO-P", "SV-LO-NP", "AV-P", "AV-NP"})
    out.push_back({b, "SparseLoom §5.1 baseline (original variants only)", {}});
  for (const auto& slo : slos) {
    Algorithm1Result a1;
    Choice best = zooplanChoice(space, slo, params, &a1, nullptr);
    out[0].selections.push_back(selectionOf(space, slo.id, best));
    out[1].selections.push_back(selectionOf(space, slo.id, a1.choice));
    const auto baselines = baselineChoices(space, slo, params);
    for (size_t b = 0; b < baselines.size(); ++b) out[2 + b].selections.push_back(selectionOf(space, slo.id, baselines[b]));
  }
  return out;
}

}  // namespace zp::select
