#include "drivers/stitch_flow/zoo_stitch.h"

#include <set>

#include "libplan/util/file.h"
#include "libplan/util/json.h"
#include "libplan/util/output_dir.h"
#include "libplan/zoo/zoo.h"
#include "libplan/artifacts/stitch_json.h"
#include "libplan/artifacts/zoo_json.h"

namespace zp::drivers {
namespace fs = std::filesystem;

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
  ZP_ASSIGN_OR_RETURN(auto manifest, stitch::stitchZoo(zoo, options.params, staged.path(), zooRel));
  ZP_TRY(writeFileAtomic(staged.path() / "stitch.json", canonicalJson(artifacts::toJson(manifest))));
  ZP_TRY(staged.commit());
  return manifest;
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
    for (const auto& c : t.cuts) cuts += (cuts.empty() ? "" : ", ") + c.tensor.name;
    out += fmt::format("  cuts at {}; {} FLOPs per position: {}\n", cuts.empty() ? "(none)" : cuts, t.reference, shares);
  }
  return out;
}

}  // namespace zp::drivers
