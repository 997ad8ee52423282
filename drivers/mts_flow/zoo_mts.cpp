#include "drivers/mts_flow/zoo_mts.h"

#include "libplan/artifacts/zoo_json.h"
#include "libplan/artifacts/mts_json.h"
#include "libplan/artifacts/multitask_group_json.h"
#include "libplan/graph/model_io.h"
#include "libplan/util/file.h"
#include "libplan/util/hash.h"
#include "libplan/util/json.h"
#include "libplan/util/output_dir.h"

namespace zp::mts {
namespace fs = std::filesystem;

Expected<GroupModels> loadGroupModels(const zoo::Zoo& zoo, const zoo::MultitaskGroup& group,
                                      const graph::DimBinding& dims) {
  GroupModels out;
  for (const auto& m : group.members) {
    const fs::path file = zoo.resolve(m.onnx);
    ZP_ASSIGN_OR_RETURN(auto model, graph::loadModel(file));
    if (graph::hasSymbolicInputs(model)) { ZP_ASSIGN_OR_RETURN(model, graph::bindDims(model, dims, file.string())); }
    out.models.push_back(std::move(model));
    out.tasks.push_back(m.task);
  }
  return out;
}

Expected<StitchedGroup> stitchZooGroup(const zoo::Zoo& zoo, const zoo::MultitaskGroup& group, StitchMode mode,
                                       std::optional<int64_t> budget, const graph::DimBinding& dims) {
  ZP_ASSIGN_OR_RETURN(GroupModels members, loadGroupModels(zoo, group, dims));
  std::vector<const onnx::ModelProto*> ptrs;
  for (const auto& m : members.models) ptrs.push_back(&m);
  StitchParams params;
  params.mode = mode;
  params.graphName = group.name;
  params.declaredShared = group.shared;
  params.sharedInput = group.sharedInput;
  auto stitched = stitchGroup(ptrs, members.tasks, params);
  if (!stitched.ok())
    return makeError("{}: group '{}': {}", zoo.file.string(), group.name, stitched.error().message);
  const auto& s = stitched->stats;
  if (!budget) budget = group.memoryBudgetBytes;
  if (budget && s.weightBytes() + s.auxBytes > *budget)
    return makeError("{}: group '{}' needs {} bytes (weights {} + auxiliary {}), over the memory budget of {} bytes",
                     zoo.file.string(), group.name, s.weightBytes() + s.auxBytes, s.weightBytes(), s.auxBytes, *budget);
  ZP_TRY(graph::checkModel(stitched->model, fmt::format("{}: group '{}'", zoo.file.string(), group.name)));
  return stitched;
}

namespace {

zoo::MtsGroupEntry entryFor(const zoo::MultitaskGroup& group, const StitchedGroup& g, StitchMode mode,
                            const std::string& file, const std::string& bytes) {
  zoo::MtsGroupEntry e;
  e.name = group.name;
  e.mode = mode == StitchMode::Mts ? "mts" : "netfuse";
  e.sharedInput = group.sharedInput;
  e.file = file;
  e.sha256 = sha256Hex(bytes);
  e.sharedBytes = g.stats.sharedBytes;
  e.exclusiveBytes = g.stats.exclusiveBytes;
  e.auxBytes = g.stats.auxBytes;
  e.memberBytes = g.stats.memberBytes;
  e.memberFoldedBytes = g.stats.memberFoldedBytes;
  e.flops = g.stats.flops;
  e.memberFlops = g.stats.memberFlops;
  e.masks = g.stats.masks;
  e.realignments = g.stats.realignments;
  for (size_t t = 0; t < g.members.size(); ++t) {
    e.members.push_back(zoo::MtsMemberEntry{g.members[t], group.members[t].variant});
  }
  return e;
}

}  // namespace

Expected<zoo::MtsManifest> runZooMts(const ZooMtsOptions& options) {
  ZP_ASSIGN_OR_RETURN(auto zoo, artifacts::loadZoo(options.zoo));
  ZP_ASSIGN_OR_RETURN(auto groups, artifacts::loadMultitaskGroups(zoo));
  if (groups.empty()) return makeError("{}: declares no multitask_groups", options.zoo.string());
  std::vector<zoo::MultitaskGroup> selected;
  for (const auto& name : options.groups) {
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.name == name; });
    if (it == groups.end()) return makeError("--group: {} has no multitask group '{}'", options.zoo.string(), name);
    selected.push_back(*it);
  }
  if (options.groups.empty()) selected = groups;
  for (auto& g : selected) g.sharedInput = g.sharedInput || options.sharedInput;
  // Stitch everything before touching the output directory.
  ZP_ASSIGN_OR_RETURN(auto stitched,
                      stitchZooGroups(zoo, selected, options.mode, options.memoryBudgetBytes, options.dims));
  std::vector<GuardedPath> inputs;
  for (const auto& f : zoo.files()) inputs.push_back({f, "input"});
  ZP_ASSIGN_OR_RETURN(auto staged, OutputDir::open(options.out, OutputDirOptions{options.tool, inputs, nullptr}));
  ZP_ASSIGN_OR_RETURN(auto manifest,
                      writeStitchedGroups(zoo, selected, stitched, options.mode, staged.path(), options.out, options.tool));
  ZP_TRY(staged.commit());
  return manifest;
}

Expected<std::vector<StitchedGroup>> stitchZooGroups(const zoo::Zoo& zoo, const std::vector<zoo::MultitaskGroup>& groups,
                                                     StitchMode mode, std::optional<int64_t> budget,
                                                     const graph::DimBinding& dims) {
  std::vector<StitchedGroup> stitched;
  for (const auto& g : groups) {
    ZP_ASSIGN_OR_RETURN(auto s, stitchZooGroup(zoo, g, mode, budget, dims));
    stitched.push_back(std::move(s));
  }
  return stitched;
}

Expected<zoo::MtsManifest> writeStitchedGroups(const zoo::Zoo& zoo, const std::vector<zoo::MultitaskGroup>& groups,
                                               const std::vector<StitchedGroup>& stitched, StitchMode mode,
                                               const fs::path& staged, const fs::path& dir, const std::string& tool) {
  zoo::MtsManifest manifest;
  manifest.tool = tool;
  fs::path zooAbs = fs::weakly_canonical(fs::absolute(zoo.file));
  fs::path outAbs = fs::weakly_canonical(fs::absolute(dir));
  manifest.zooPath = zooAbs.lexically_relative(outAbs).generic_string();
  manifest.zooSha256 = zoo.sha256;
  for (size_t k = 0; k < groups.size(); ++k) {
    const std::string file = groups[k].name + ".onnx";
    const std::string bytes = graph::serializeModel(stitched[k].model);
    ZP_TRY(writeFileAtomic(staged / file, bytes));
    manifest.groups.push_back(entryFor(groups[k], stitched[k], mode, file, bytes));
  }
  ZP_TRY(writeFileAtomic(staged / "mts.json", canonicalJson(artifacts::mtsManifestToJson(manifest))));
  return manifest;
}

std::string mtsSummary(const zoo::MtsManifest& m) {
  std::string out = fmt::format("{:<10} {:>7} {:>8} {:>12} {:>12} {:>15} {:>10} {:>14} {:>13}\n", "group", "mode",
                                "members", "shared B", "exclusive B", "weights B", "aux B", "members' B",
                                "MFLOPs s/m");
  for (const auto& g : m.groups)
    out += fmt::format("{:<10} {:>7} {:>8} {:>12} {:>12} {:>15} {:>10} {:>14} {:>13}\n", g.name, g.mode,
                       g.members.size(), g.sharedBytes, g.exclusiveBytes, g.sharedBytes + g.exclusiveBytes, g.auxBytes,
                       g.memberFoldedBytes, fmt::format("{:.2f}/{:.2f}", g.flops / 1e6, g.memberFlops / 1e6));
  return out;
}

}  // namespace zp::mts
