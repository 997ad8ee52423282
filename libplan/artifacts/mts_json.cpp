#include "libplan/artifacts/mts_json.h"

#include "libplan/artifacts/plan_json.h"
#include "libplan/util/file.h"
#include "libplan/util/json_reader.h"

namespace zp::artifacts {

using zoo::MtsGroupEntry;
using zoo::MtsManifest;
using zoo::MtsMemberEntry;

Json mtsManifestToJson(const MtsManifest& m) {
  Json j{{"schema_version", 1}, {"tool", m.tool}, {"zoo", {{"path", m.zooPath}, {"sha256", m.zooSha256}}}};
  j["groups"] = Json::array();
  for (const auto& g : m.groups) {
    Json gj{{"name", g.name}, {"mode", g.mode}, {"shared_input", g.sharedInput}, {"file", g.file}, {"sha256", g.sha256},
            {"shared_bytes", g.sharedBytes}, {"exclusive_bytes", g.exclusiveBytes},
            {"weight_bytes", g.sharedBytes + g.exclusiveBytes}, {"aux_bytes", g.auxBytes},
            {"member_bytes", g.memberBytes}, {"member_folded_bytes", g.memberFoldedBytes},
            {"flops", g.flops}, {"member_flops", g.memberFlops}, {"masks", g.masks},
            {"realignments", g.realignments}, {"members", Json::array()}};
    for (const auto& mm : g.members) {
      // A member's input and outputs are written as the plan writes a group member's.
      Json mj = toJson(static_cast<const plan::GroupMember&>(mm));
      mj["variant"] = mm.variant;
      gj["members"].push_back(std::move(mj));
    }
    j["groups"].push_back(gj);
  }
  return j;
}

namespace {

Expected<MtsMemberEntry> parseMember(const JsonAt& at) {
  ZP_TRY(at.onlyKeys({"task", "variant", "input", "stitched_input", "outputs", "stitched_outputs"}));
  // Its input and outputs are read (and checked) as the plan reads a group member's.
  ZP_ASSIGN_OR_RETURN(plan::GroupMember io, groupMemberFromJson(at));
  MtsMemberEntry m{std::move(io), ""};
  ZP_ASSIGN_OR_RETURN(m.variant, at.id("variant"));
  return m;
}

Expected<MtsGroupEntry> parseGroup(const JsonAt& at) {
  ZP_TRY(at.onlyKeys({"name", "mode", "shared_input", "file", "sha256", "shared_bytes", "exclusive_bytes", "weight_bytes",
                      "aux_bytes", "member_bytes", "member_folded_bytes", "flops", "member_flops", "masks",
                      "realignments", "members"}));
  MtsGroupEntry g;
  ZP_ASSIGN_OR_RETURN(g.name, at.id("name"));
  ZP_ASSIGN_OR_RETURN(g.mode, at.string("mode"));
  if (g.mode != "mts" && g.mode != "netfuse") return at.error(fmt::format("mode '{}' is not mts or netfuse", g.mode));
  ZP_ASSIGN_OR_RETURN(g.sharedInput, at.boolean("shared_input"));
  ZP_ASSIGN_OR_RETURN(g.file, at.string("file"));
  ZP_ASSIGN_OR_RETURN(g.sha256, at.string("sha256"));
  ZP_ASSIGN_OR_RETURN(g.sharedBytes, at.integer("shared_bytes", 0));
  ZP_ASSIGN_OR_RETURN(g.exclusiveBytes, at.integer("exclusive_bytes", 0));
  ZP_ASSIGN_OR_RETURN(int64_t weight, at.integer("weight_bytes", 0));
  if (weight != g.sharedBytes + g.exclusiveBytes) return at.error("weight_bytes is not shared_bytes + exclusive_bytes");
  ZP_ASSIGN_OR_RETURN(g.auxBytes, at.integer("aux_bytes", 0));
  ZP_ASSIGN_OR_RETURN(g.memberBytes, at.integer("member_bytes", 0));
  ZP_ASSIGN_OR_RETURN(g.memberFoldedBytes, at.integer("member_folded_bytes", 0));
  ZP_ASSIGN_OR_RETURN(g.flops, at.number("flops", 0));
  ZP_ASSIGN_OR_RETURN(g.memberFlops, at.number("member_flops", 0));
  ZP_ASSIGN_OR_RETURN(g.masks, at.integer("masks", 0));
  ZP_ASSIGN_OR_RETURN(g.realignments, at.integer("realignments", 0));
  ZP_ASSIGN_OR_RETURN(auto members, at.array("members"));
  for (const auto& m : members) {
    ZP_ASSIGN_OR_RETURN(MtsMemberEntry e, parseMember(m));
    g.members.push_back(std::move(e));
  }
  return g;
}

}  // namespace

Expected<MtsManifest> parseMtsManifest(const std::string& text, const std::string& label) {
  ZP_ASSIGN_OR_RETURN(Json doc, parseJson(text, label));
  JsonAt root(doc, label);
  ZP_TRY(root.onlyKeys({"schema_version", "tool", "zoo", "groups"}));
  ZP_ASSIGN_OR_RETURN(int64_t version, root.integer("schema_version"));
  if (version != 1) return root.error("unsupported schema_version (expected 1)");
  MtsManifest m;
  ZP_ASSIGN_OR_RETURN(m.tool, root.string("tool"));
  ZP_ASSIGN_OR_RETURN(JsonAt zoo, root.at("zoo"));
  ZP_TRY(zoo.onlyKeys({"path", "sha256"}));
  ZP_ASSIGN_OR_RETURN(m.zooPath, zoo.string("path"));
  ZP_ASSIGN_OR_RETURN(m.zooSha256, zoo.string("sha256"));
  ZP_ASSIGN_OR_RETURN(auto groups, root.array("groups"));
  for (const auto& g : groups) {
    ZP_ASSIGN_OR_RETURN(MtsGroupEntry e, parseGroup(g));
    m.groups.push_back(std::move(e));
  }
  return m;
}

Expected<MtsManifest> loadMtsManifest(const std::filesystem::path& path) {
  ZP_ASSIGN_OR_RETURN(std::string text, readFile(path));
  return parseMtsManifest(text, path.string());
}

}  // namespace zp::artifacts
