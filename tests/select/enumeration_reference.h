// The selection as plan-solve computed it before its searches: every
// combination listed (in number order, as stitch.json lists them) and
// scanned, for every order. The searches must give exactly what these give —
// choices, objective values and tie-breaks — on small instances.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "passes/select/plan_stitch.h"
#include "passes/select/select.h"

namespace zp::select::reference {

// A task's valid combinations: their numbers and candidates, in one order.
struct Listed {
  std::vector<uint64_t> numbers;
  std::vector<Candidate> candidates;
};
Listed listOf(const TaskSpace& ts);

// Per task, Θ^t as indices into the list of valid combinations (Algorithm 1 line 2).
std::vector<std::vector<int>> feasibleSets(const StitchSpace& space, const plan::SloConfiguration& slo,
                                           const std::vector<std::vector<std::string>>& orders,
                                           const SelectParams& params, bool originalsOnly = false);
// The combination number of list index k of task t.
uint64_t numberOf(const StitchSpace& space, size_t t, int k);

Algorithm1Result algorithm1(const StitchSpace& space, const plan::SloConfiguration& slo,
                            const std::vector<std::vector<std::string>>& orders, const SelectParams& params,
                            bool originalsOnly, const std::string& system);
Choice zooplanChoice(const StitchSpace& space, const plan::SloConfiguration& slo, const SelectParams& params,
                     Algorithm1Result* algorithm1Out, std::string* note);
std::vector<Choice> baselineChoices(const StitchSpace& space, const plan::SloConfiguration& slo,
                                    const SelectParams& params);
GlobalOrder multiConfigurationOrder(const StitchSpace& space, const std::vector<std::vector<std::string>>& orders,
                                    const std::vector<std::vector<std::vector<int>>>& theta);
Expected<StitchSolution> planStitch(const StitchSpace& space, const std::vector<plan::SloConfiguration>& slos,
                                    const std::vector<std::string>& budgets, const SelectParams& params);

}  // namespace zp::select::reference
