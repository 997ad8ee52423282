#include "libplan/plan/plan.h"

#include <algorithm>
#include <cassert>

namespace zp::plan {

bool answeredByGroup(const SystemTaskChoice& choice) { return choice.combination.rfind("group:", 0) == 0; }
bool answeredByPlacedModel(const SystemTaskChoice& choice) { return choice.combination.rfind("model:", 0) == 0; }

const PlannedGroup* groupOf(const StitchPlan& plan, const SystemTaskChoice& choice) {
  if (!answeredByGroup(choice)) return nullptr;
  const std::string name = choice.combination.substr(std::string("group:").size());
  for (const auto& g : plan.groups)
    if (g.name == name) return &g;
  return nullptr;
}

const GroupMember* memberOf(const PlannedGroup& group, const std::string& task) {
  for (const auto& m : group.members)
    if (m.task == task) return &m;
  return nullptr;
}

const ServedSystem& chosenSystem(const StitchPlan& plan) {
  auto it = std::find_if(plan.systems.begin(), plan.systems.end(),
                         [&](const ServedSystem& s) { return s.name == plan.chosenSystem; });
  assert(it != plan.systems.end() && "the reader and the planner name a system the plan carries");
  return *it;
}

const Processor* findProcessor(const Plan& plan, const std::string& name) {
  auto it = std::find_if(plan.processors.begin(), plan.processors.end(),
                         [&](const Processor& p) { return p.name == name; });
  return it == plan.processors.end() ? nullptr : &*it;
}

Expected<std::vector<Processor>> processorsNamed(const Plan& plan, const std::vector<std::string>& names) {
  std::vector<Processor> out;
  for (const auto& n : names) {
    const Processor* p = findProcessor(plan, n);
    if (!p) return makeError("processor '{}' is not one of the plan's processors", n);
    out.push_back(*p);
  }
  return out;
}

std::vector<std::string> processorNames(const std::vector<Processor>& processors) {
  std::vector<std::string> out;
  for (const auto& p : processors) out.push_back(p.name);
  return out;
}

const ColdPlan* coldSectionOf(const Plan& plan, const Unit& unit) {
  const ColdPlan* first = nullptr;
  for (const auto& c : plan.cold) {
    const Unit* u = findUnit(plan.units, c.unit);
    if (u && u->file == unit.file && (!first || c.unit < first->unit)) first = &c;
  }
  return first;
}

const OpPlacement* placementOf(const Plan& plan, const UnitId& unit) {
  for (const auto& o : plan.opplace)
    if (o.unit == unit) return &o;
  return nullptr;
}

}  // namespace zp::plan
