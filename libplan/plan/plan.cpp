#include "libplan/plan/plan.h"

namespace zp::plan {

const ColdPlan* coldSectionOf(const Plan& plan, const Unit& unit) {
  const ColdPlan* first = nullptr;
  for (const auto& c : plan.cold) {
    const Unit* u = findUnit(plan.units, c.unit);
    if (u && u->file == unit.file && (!first || c.unit < first->unit)) first = &c;
  }
  return first;
}

}  // namespace zp::plan
