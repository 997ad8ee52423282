#include "libplan/artifacts/multitask_group_json.h"

#include <set>

#include "libplan/util/file.h"
#include "libplan/util/json_reader.h"

namespace zp::artifacts {

using zoo::GroupMember;
using zoo::MultitaskGroup;
using zoo::Zoo;

namespace {

Expected<GroupMember> resolveMember(const JsonAt& at, const Zoo& zoo) {
  ZP_ASSIGN_OR_RETURN(std::string ref, at.string());
  size_t slash = ref.find('/');
  std::string task = ref.substr(0, slash);
  std::string variant = slash == std::string::npos ? "" : ref.substr(slash + 1);
  for (const auto& t : zoo.tasks) {
    if (t.name != task) continue;
    for (const auto& v : t.variants)
      if (variant.empty() || v.id == variant) return GroupMember{t.name, v.id, v.onnx};
    return at.error(fmt::format("task '{}' has no variant '{}'", task, variant));
  }
  return at.error(fmt::format("no task '{}' in the zoo", task));
}

Expected<MultitaskGroup> parseGroup(const JsonAt& g, const Zoo& zoo) {
  ZP_TRY(g.onlyKeys({"name", "members", "shared", "memory_budget_bytes", "shared_input"}));
  MultitaskGroup group;
  ZP_ASSIGN_OR_RETURN(group.name, g.id("name"));
  ZP_ASSIGN_OR_RETURN(auto members, g.array("members"));
  if (members.size() < 2) return g.error("members: a group needs at least 2 members");
  std::set<std::string> seen;
  for (const auto& m : members) {
    ZP_ASSIGN_OR_RETURN(GroupMember member, resolveMember(m, zoo));
    if (!seen.insert(member.task).second) return m.error(fmt::format("task '{}' is listed twice", member.task));
    group.members.push_back(std::move(member));
  }
  if (g.has("shared")) { ZP_ASSIGN_OR_RETURN(group.shared, g.strings("shared")); }
  if (g.has("shared_input")) { ZP_ASSIGN_OR_RETURN(group.sharedInput, g.boolean("shared_input")); }
  if (g.has("memory_budget_bytes")) { ZP_ASSIGN_OR_RETURN(group.memoryBudgetBytes, g.integer("memory_budget_bytes", 1)); }
  return group;
}

}  // namespace

Expected<std::vector<MultitaskGroup>> parseMultitaskGroups(const std::string& text, const Zoo& zoo) {
  const std::string file = zoo.file.string();
  ZP_ASSIGN_OR_RETURN(Json doc, parseJson(text, file));
  JsonAt root(doc, file);
  std::vector<MultitaskGroup> groups;
  if (!root.has("multitask_groups")) return groups;
  ZP_ASSIGN_OR_RETURN(auto items, root.array("multitask_groups"));
  std::set<std::string> names;
  for (const auto& g : items) {
    ZP_ASSIGN_OR_RETURN(MultitaskGroup group, parseGroup(g, zoo));
    if (!names.insert(group.name).second) return g.error(fmt::format("duplicate group '{}'", group.name));
    groups.push_back(std::move(group));
  }
  return groups;
}

Expected<std::vector<MultitaskGroup>> loadMultitaskGroups(const Zoo& zoo) {
  ZP_ASSIGN_OR_RETURN(std::string text, readFile(zoo.file));
  return parseMultitaskGroups(text, zoo);
}

Json multitaskGroupsToJson(const std::vector<MultitaskGroup>& groups) {
  Json out = Json::array();
  for (const auto& g : groups) {
    Json j{{"name", g.name}, {"members", Json::array()}};
    for (const auto& m : g.members) j["members"].push_back(m.task + "/" + m.variant);
    if (!g.shared.empty()) j["shared"] = g.shared;
    if (g.memoryBudgetBytes) j["memory_budget_bytes"] = *g.memoryBudgetBytes;
    if (g.sharedInput) j["shared_input"] = true;
    out.push_back(j);
  }
  return out;
}

}  // namespace zp::artifacts
