// plan.json's MTS section (libplan/plan/mts_plan.h).
#include <algorithm>
#include <limits>
#include <set>

#include "libplan/artifacts/plan_json.h"
#include "libplan/util/json_reader.h"
#include "libplan/util/validate.h"

namespace zp::artifacts {
using namespace plan;

namespace {

Json memberJson(const MtsPlanMember& m) {
  Json j = toJson(static_cast<const GroupMember&>(m));
  j["ms"] = m.ms;
  return j;
}

Json unitJson(const MtsUnit& u) {
  Json members = Json::array();
  for (const auto& m : u.members) members.push_back(memberJson(m));
  return Json{{"group", u.group},           {"shared_input", u.sharedInput},
              {"members", members},         {"weight_bytes", u.weightBytes},
              {"member_bytes", u.memberBytes}, {"stitched_ms", u.stitchedMs}};
}

Expected<std::vector<double>> perProcessor(const JsonAt& j, std::string_view key, size_t processors);

Expected<MtsPlanMember> memberFrom(const JsonAt& j, size_t processors) {
  MtsPlanMember m;
  ZP_ASSIGN_OR_RETURN(static_cast<GroupMember&>(m), groupMemberFromJson(j));
  ZP_ASSIGN_OR_RETURN(m.ms, perProcessor(j, "ms", processors));
  return m;
}

// Per-processor times: one finite, non-negative number per processor.
Expected<std::vector<double>> perProcessor(const JsonAt& j, std::string_view key, size_t processors) {
  ZP_ASSIGN_OR_RETURN(auto a, j.array(key));
  if (a.size() != processors) return j.error(fmt::format("{}: {} values for {} processors", key, a.size(), processors));
  std::vector<double> out;
  for (const auto& v : a) {
    ZP_ASSIGN_OR_RETURN(double ms, v.number(0, kMaxLatencyMs));
    out.push_back(ms);
  }
  return out;
}

Expected<MtsUnit> unitFrom(const JsonAt& j, size_t processors) {
  MtsUnit u;
  ZP_ASSIGN_OR_RETURN(u.group, j.id("group"));
  ZP_ASSIGN_OR_RETURN(u.sharedInput, j.boolean("shared_input"));
  ZP_ASSIGN_OR_RETURN(auto members, j.array("members"));
  if (members.empty()) return j.error("members: empty");
  std::set<std::string> tasks;
  for (const auto& mj : members) {
    ZP_ASSIGN_OR_RETURN(auto m, memberFrom(mj, processors));
    if (!tasks.insert(m.task).second) return mj.error(fmt::format("task '{}' is a member twice", m.task));
    u.members.push_back(std::move(m));
  }
  ZP_ASSIGN_OR_RETURN(u.weightBytes, j.integer("weight_bytes", 0, kMaxBytes));
  ZP_ASSIGN_OR_RETURN(u.memberBytes, j.integer("member_bytes", 0, kMaxBytes));
  ZP_ASSIGN_OR_RETURN(u.stitchedMs, perProcessor(j, "stitched_ms", processors));
  return u;
}

Expected<MtsSystem> systemFrom(const JsonAt& j, const MtsPlan& p) {
  MtsSystem s;
  ZP_ASSIGN_OR_RETURN(s.name, j.id("name"));
  ZP_ASSIGN_OR_RETURN(s.description, j.string("description"));
  ZP_ASSIGN_OR_RETURN(s.placement, j.strings("placement"));
  ZP_ASSIGN_OR_RETURN(auto stitched, j.array("stitched"));
  for (const auto& b : stitched) {
    ZP_ASSIGN_OR_RETURN(bool v, b.boolean());
    s.stitched.push_back(v);
  }
  ZP_ASSIGN_OR_RETURN(s.makespanMs, j.number("makespan_ms", 0, kMaxLatencyMs));
  if (s.placement.size() != p.units.size() || s.stitched.size() != p.units.size())
    return j.error(fmt::format("placement, stitched: {} and {} values for {} units", s.placement.size(),
                               s.stitched.size(), p.units.size()));
  for (const auto& name : s.placement)
    if (std::find(p.processors.begin(), p.processors.end(), name) == p.processors.end())
      return j.error(fmt::format("placement: unknown processor '{}'", name));
  return s;
}

Status readProcessors(const JsonAt& j, MtsPlan& p) {
  ZP_ASSIGN_OR_RETURN(p.processors, processorNamesFromJson(j));
  return {};
}

Status readSolver(const JsonAt& j, MtsPlan& p) {
  ZP_ASSIGN_OR_RETURN(p.solver, j.string("solver"));
  if (p.solver != "enumeration" && p.solver != "lpt")
    return j.error(fmt::format("solver: '{}' is not enumeration or lpt", p.solver));
  ZP_ASSIGN_OR_RETURN(p.status, j.string("status"));
  if (p.status != "optimal" && p.status != "heuristic")
    return j.error(fmt::format("status: '{}' is not optimal or heuristic", p.status));
  ZP_ASSIGN_OR_RETURN(p.lowerBoundMs, j.number("lower_bound_ms", 0, kMaxLatencyMs));
  ZP_ASSIGN_OR_RETURN(int64_t n, j.integer("assignments", 0, std::numeric_limits<int64_t>::max()));
  p.assignments = static_cast<uint64_t>(n);
  ZP_ASSIGN_OR_RETURN(int64_t seed, j.integer("seed", 0, std::numeric_limits<int64_t>::max()));
  p.seed = static_cast<uint64_t>(seed);
  return {};
}

}  // namespace

Json toJson(const MtsPlan& p) {
  Json units = Json::array();
  for (const auto& u : p.units) units.push_back(unitJson(u));
  Json systems = Json::array();
  for (const auto& s : p.systems)
    systems.push_back(Json{{"name", s.name}, {"description", s.description}, {"placement", s.placement},
                           {"stitched", s.stitched}, {"makespan_ms", s.makespanMs}});
  return Json{{"manifest", p.manifest}, {"processors", p.processors}, {"cost_source", p.costSource},
              {"units", units},         {"solver", p.solver},       {"status", p.status},
              {"lower_bound_ms", p.lowerBoundMs}, {"assignments", p.assignments}, {"seed", p.seed},
              {"systems", systems}};
}

Expected<MtsPlan> mtsPlanFromJson(const JsonAt& j) {
  MtsPlan p;
  ZP_ASSIGN_OR_RETURN(p.manifest, j.string("manifest"));
  ZP_TRY(readProcessors(j, p));
  ZP_ASSIGN_OR_RETURN(p.costSource, j.string("cost_source"));
  if (p.costSource != "measured" && p.costSource != "predicted")
    return j.error(fmt::format("cost_source: '{}' is not measured or predicted", p.costSource));
  ZP_ASSIGN_OR_RETURN(auto units, j.array("units"));
  if (units.empty()) return j.error("units: empty (leave the section out)");
  for (const auto& uj : units) {
    ZP_ASSIGN_OR_RETURN(auto u, unitFrom(uj, p.processors.size()));
    for (const auto& v : p.units)
      if (v.group == u.group) return uj.error(fmt::format("group '{}' is a unit twice", u.group));
    p.units.push_back(std::move(u));
  }
  ZP_TRY(readSolver(j, p));
  ZP_ASSIGN_OR_RETURN(auto systems, j.array("systems"));
  for (const auto& sj : systems) {
    ZP_ASSIGN_OR_RETURN(auto s, systemFrom(sj, p));
    for (const auto& t : p.systems)
      if (t.name == s.name) return sj.error(fmt::format("system '{}' is listed twice", s.name));
    p.systems.push_back(std::move(s));
  }
  if (p.systems.empty() || p.systems.front().name != "zooplan")
    return j.error("systems: the first must be 'zooplan' (the plan's own placement)");
  return p;
}

}  // namespace zp::artifacts
