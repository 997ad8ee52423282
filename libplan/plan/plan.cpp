#include "libplan/plan/plan.h"

#include <algorithm>
#include <cassert>

namespace zp::plan {

const ServedSystem& chosenSystem(const StitchPlan& plan) {
  auto it = std::find_if(plan.systems.begin(), plan.systems.end(),
                         [&](const ServedSystem& s) { return s.name == plan.chosenSystem; });
  assert(it != plan.systems.end() && "the reader and the planner name a system the plan carries");
  return *it;
}

const ColdPlan* coldSectionOf(const Plan& plan, const Unit& unit) {
  const ColdPlan* first = nullptr;
  for (const auto& c : plan.cold) {
    const Unit* u = findUnit(plan.units, c.unit);
    if (u && u->file == unit.file && (!first || c.unit < first->unit)) first = &c;
  }
  return first;
}

}  // namespace zp::plan
