#include "drivers/stitch_flow/plan_freshness.h"

#include <fmt/format.h>

#include <set>

#include "drivers/stitch_flow/stitch_space_read.h"
#include "libplan/artifacts/plan_json.h"
#include "libplan/util/file.h"
#include "libplan/util/hash.h"
#include "libplan/util/json_reader.h"

namespace zp::drivers {

namespace fs = std::filesystem;

namespace {

// What a changed input asks to re-run, by the input's key in the plan's header.
std::string rerunFor(const std::string& key) {
  if (key == "slo") return "re-run plan-solve";
  if (key.rfind("profile/", 0) == 0) return "re-run plan-solve (the profile changed)";
  return "re-run zoo-profile and plan-solve";
}

// A file against the hash recorded for it; a line in `out` when it differs or is gone.
void compareFile(const fs::path& path, const std::string& recorded, const std::string& rerun, PlanFreshness& out) {
  const fs::path file = path.lexically_normal();
  ++out.checked;
  auto bytes = readFile(file);
  if (!bytes.ok()) {
    out.changed.push_back(fmt::format("{}: cannot be read ({}): {}", file.string(), bytes.error().message, rerun));
    return;
  }
  if (sha256Hex(*bytes) != recorded) out.changed.push_back(fmt::format("{}: changed: {}", file.string(), rerun));
}

}  // namespace

Expected<PlanFreshness> checkStitchPlanFreshness(const fs::path& planFile, const SolveStitchOptions& defaults) {
  ZP_ASSIGN_OR_RETURN(const plan::Plan plan, artifacts::readPlan(planFile));
  if (!plan.stitch)
    return makeError("{}: not a stitch plan: --check compares a stitch plan with its inputs", planFile.string());
  if (plan.stitch->profileDir.empty() || plan.stitch->sloSource.empty())
    return makeError("{}: records no profile directory or SLO source (an older plan-solve wrote it): re-run plan-solve",
                     planFile.string());
  // The plan's inputs where it records them, relative to its folder.
  SolveStitchOptions o = defaults;
  const fs::path dir = planFile.parent_path();
  o.output = planFile;
  o.profileDir = dir / plan.stitch->profileDir;
  const fs::path sloFile = dir / plan.stitch->sloSource;
  o.slo = plan.header.inputs.count("slo") && plan.header.inputs.at("slo").rfind("generated:", 0) == 0
              ? plan.stitch->sloSource
              : sloFile.string();
  ZP_ASSIGN_OR_RETURN(auto space, readStitchSpace(o.profileDir));
  ZP_ASSIGN_OR_RETURN(const plan::PlanHeader now, planHeader(o, space));
  PlanFreshness out;
  // The plan's own inputs, by their keys in its header (sorted: std::map).
  std::set<std::string> keys;
  for (const auto& [k, v] : plan.header.inputs) keys.insert(k);
  for (const auto& [k, v] : now.inputs) keys.insert(k);
  for (const auto& key : keys) {
    if (key == "previous") continue;  // provenance: an earlier plan ties kept picks of, usually replaced by this one
    auto was = plan.header.inputs.find(key);
    auto is = now.inputs.find(key);
    if (was != plan.header.inputs.end() && is == now.inputs.end() && key.rfind("profile/", 0) == 0) {
      // A profile file only some plans read (cold_profile.csv): compared as a file.
      compareFile(o.profileDir / key.substr(8), was->second, rerunFor(key), out);
      continue;
    }
    ++out.checked;
    if (was == plan.header.inputs.end())
      out.changed.push_back(fmt::format("{}: read now but not when the plan was made: {}", key, rerunFor(key)));
    else if (is == now.inputs.end())
      out.changed.push_back(fmt::format("{}: read when the plan was made, not now: {}", key, rerunFor(key)));
    else if (was->second != is->second)
      out.changed.push_back(fmt::format("{}: changed: {}", key == "slo" ? o.slo : key, rerunFor(key)));
  }
  // Down the chain: what zoo-stitch read, as stitch.json recorded it.
  const auto& m = space.manifest;
  const fs::path zooFile = space.stitchDir / m.zooPath;
  const std::string fromZoo = "re-run zoo-stitch, zoo-profile and plan-solve";
  compareFile(zooFile, m.zooSha256, fromZoo, out);
  for (const auto& t : m.tasks)
    for (const auto& v : t.variants) compareFile(zooFile.parent_path() / v.onnx, v.sha256, fromZoo, out);
  // And the datasets zoo-profile measured accuracy on, as its report recorded them.
  const fs::path reportFile = o.profileDir / "report.json";
  ZP_ASSIGN_OR_RETURN(const Json report, readJsonFile(reportFile));
  const std::string label = reportFile.string();
  ZP_ASSIGN_OR_RETURN(JsonAt inputs, JsonAt(report, label).at("inputs"));
  if (inputs.has("datasets")) {
    ZP_ASSIGN_OR_RETURN(auto datasets, inputs.array("datasets"));
    for (const auto& d : datasets) {
      ZP_ASSIGN_OR_RETURN(std::string file, d.string("file"));
      ZP_ASSIGN_OR_RETURN(std::string sha, d.string("sha256"));
      compareFile(zooFile.parent_path() / file, sha, "re-run zoo-profile and plan-solve", out);
    }
  }
  return out;
}

}  // namespace zp::drivers
