#include "drivers/stitch_flow/zoo_stitch.h"

#include <set>

#include "drivers/mts_flow/zoo_mts.h"
#include "libplan/artifacts/multitask_group_json.h"
#include "libplan/artifacts/stitch_json.h"
#include "libplan/artifacts/zoo_json.h"
#include "libplan/graph/model_io.h"
#include "libplan/util/file.h"
#include "libplan/util/hash.h"
#include "libplan/util/json.h"
#include "libplan/util/output_dir.h"
#include "libplan/util/progress.h"
#include "libplan/zoo/zoo.h"

namespace zp::drivers {
namespace fs = std::filesystem;

namespace {

// Every variant of every task: the model (checked, shapes inferred) and the hash of its file.
Expected<std::vector<std::vector<stitch::VariantModel>>> readVariants(const zoo::Zoo& zoo) {
  std::vector<std::vector<stitch::VariantModel>> variants;
  for (const auto& task : zoo.tasks) {
    auto& models = variants.emplace_back();
    for (const auto& v : task.variants) {
      const fs::path file = zoo.resolve(v.onnx);
      ZP_ASSIGN_OR_RETURN(auto model, graph::loadModel(file));
      ZP_ASSIGN_OR_RETURN(std::string bytes, readFile(file));
      models.push_back(stitch::VariantModel{std::move(model), sha256Hex(bytes)});
    }
  }
  return variants;
}

// OUT/subgraphs/*.onnx, and the stitched variants --materialize asks for under OUT/stitched/.
Status writeStitchDir(stitch::StitchResult& result, const fs::path& out) {
  std::error_code ec;
  fs::create_directories(out / "subgraphs", ec);
  if (ec) return makeError("{}: cannot create: {}", (out / "subgraphs").string(), ec.message());
  for (const auto& [file, bytes] : result.subgraphBytes) ZP_TRY(writeFileAtomic(out / file, bytes));
  ZP_ASSIGN_OR_RETURN(auto picked, stitch::materializedCombinations(result.manifest));
  Progress progress("materializing stitched variants", picked.size());
  for (const auto& [t, k] : picked) {
    const auto& task = result.manifest.tasks[t];
    const auto& c = task.combinations[k];
    ZP_ASSIGN_OR_RETURN(auto model, stitch::materializeCombination(task, c, result.subgraphModels));
    fs::create_directories((out / c.file).parent_path(), ec);
    ZP_TRY(graph::saveModel(model, out / c.file));
    progress.advance();
  }
  return {};
}

}  // namespace

Expected<zoo::StitchManifest> runZooStitch(const ZooStitchOptions& options) {
  ZP_ASSIGN_OR_RETURN(auto zoo, artifacts::loadZoo(options.zoo));
  std::vector<GuardedPath> inputs;
  for (const auto& f : zoo.files()) inputs.push_back({f, "input"});
  ZP_ASSIGN_OR_RETURN(auto staged, OutputDir::open(options.out, OutputDirOptions{"zoo-stitch", inputs, nullptr}));
  // stitch.json names zoo.json relative to the output directory, so the pair
  // can move together and the manifest does not depend on the working directory.
  fs::path zooAbs = fs::weakly_canonical(fs::absolute(options.zoo));
  fs::path outAbs = fs::weakly_canonical(fs::absolute(options.out));
  std::string zooRel = zooAbs.lexically_relative(outAbs).generic_string();
  ZP_ASSIGN_OR_RETURN(auto variants, readVariants(zoo));
  ZP_ASSIGN_OR_RETURN(auto result, stitch::stitchZoo(zoo, variants, options.params, zooRel));
  // The zoo's weight-shared groups, stitched as zoo-mts stitches them, so that
  // the planner may answer their members with one unit: OUT/groups/.
  ZP_ASSIGN_OR_RETURN(auto groups, artifacts::loadMultitaskGroups(zoo));
  ZP_ASSIGN_OR_RETURN(auto stitchedGroups,
                      mts::stitchZooGroups(zoo, groups, mts::StitchMode::Mts, std::nullopt, options.params.dims));
  ZP_TRY(writeStitchDir(result, staged.path()));
  if (!groups.empty()) {
    std::error_code ec;
    fs::create_directories(staged.path() / zoo::kStitchGroupsDir, ec);
    if (ec) return makeError("{}: cannot create: {}", (staged.path() / zoo::kStitchGroupsDir).string(), ec.message());
    if (auto written = mts::writeStitchedGroups(zoo, groups, stitchedGroups, mts::StitchMode::Mts,
                                                staged.path() / zoo::kStitchGroupsDir,
                                                options.out / zoo::kStitchGroupsDir, "zoo-stitch");
        !written.ok())
      return written.error();
  }
  ZP_TRY(writeFileAtomic(staged.path() / "stitch.json", canonicalJson(artifacts::toJson(result.manifest))));
  ZP_TRY(staged.commit());
  return std::move(result.manifest);
}

std::string stitchSummary(const zoo::StitchManifest& m) {
  std::string out = fmt::format("{:<14} {:>8} {:>10} {:>9} {:>18} {:>14} {:>12}\n", "task", "variants", "cut points",
                                "positions", "subgraphs (unique)", "valid / all", "materialized");
  for (const auto& t : m.tasks) {
    std::set<std::string> unique;
    size_t subgraphs = 0, valid = 0, materialized = 0;
    for (const auto& row : t.subgraphs)
      for (const auto& s : row) {
        ++subgraphs;
        unique.insert(s.hash);
      }
    for (const auto& c : t.combinations) {
      valid += c.valid;
      materialized += !c.file.empty();
    }
    out += fmt::format("{:<14} {:>8} {:>10} {:>9} {:>18} {:>14} {:>12}\n", t.name, t.variants.size(),
                       t.candidateCuts.size(), t.positions(), fmt::format("{} ({})", subgraphs, unique.size()),
                       fmt::format("{} / {}", valid, t.combinations.size()), materialized);
    std::string shares;
    for (size_t p = 0; p < t.partFlopsShare.size(); ++p)
      shares += fmt::format("{}{:.1f}%", p ? " | " : "", 100.0 * t.partFlopsShare[p]);
    std::string cuts;
    for (const auto& c : t.cuts) {
      if (!cuts.empty()) cuts += ", ";
      cuts += c.tensor.name;
    }
    out += fmt::format("  cuts at {}; {} FLOPs per position: {}\n", cuts.empty() ? "(none)" : cuts, t.reference, shares);
  }
  return out;
}

}  // namespace zp::drivers
