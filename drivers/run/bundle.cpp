#include "drivers/run/bundle.h"

#include <algorithm>

#include <fmt/format.h>

#include "drivers/emit/emit_bundle.h"
#include "libplan/artifacts/mts_json.h"
#include "libplan/artifacts/plan_json.h"
#include "libplan/artifacts/plan_pb.h"
#include "libplan/artifacts/stitch_json.h"
#include "libplan/artifacts/zoo_json.h"
#include "libplan/graph/model_io.h"
#include "libplan/runtime/serve/processor.h"
#include "libplan/util/file.h"
#include "libplan/util/hash.h"
#include "passes/coldstart/runtime_schedule.h"

namespace zp::drivers {
namespace fs = std::filesystem;
using artifacts::BundleManifest;

namespace {

// A plan file's bytes, refused unless they are what plan-emit wrote (the
// manifest's hash): plan.json and plan.pb edited alike would agree with each other.
Expected<std::string> manifestedPlanFile(const fs::path& b, const BundleManifest& manifest, const std::string& name) {
  ZP_ASSIGN_OR_RETURN(std::string bytes, readFile(b / name));
  auto it = std::find_if(manifest.artifacts.begin(), manifest.artifacts.end(), [&](const auto& a) { return a.path == name; });
  if (it == manifest.artifacts.end())
    return makeError("{}: not listed in manifest.json; re-run plan-emit", (b / name).string());
  if (sha256Hex(bytes) != it->sha256)
    return makeError("{}: content hash does not match manifest.json (edited after plan-emit?); re-run plan-emit",
                     (b / name).string());
  return bytes;
}

// zoo.json as the stitch.json or mts.json the bundle recorded names it (relative to that file's folder).
Expected<std::string> recordedZooPath(const artifacts::BundleInput& in, const fs::path& path) {
  if (in.role == "mts-manifest") {
    ZP_ASSIGN_OR_RETURN(auto mm, artifacts::loadMtsManifest(path));
    return mm.zooPath;
  }
  const fs::path dir = path.parent_path();
  ZP_ASSIGN_OR_RETURN(auto sm, artifacts::loadStitchManifest(dir.empty() ? fs::path(".") : dir));
  return sm.zooPath;
}

}  // namespace

Expected<Bundle> Bundle::open(const fs::path& dir) {
  Bundle b;
  b.dir_ = dir;
  ZP_ASSIGN_OR_RETURN(b.manifest_, artifacts::readBundleManifest(dir));
  ZP_ASSIGN_OR_RETURN(std::string pbBytes, manifestedPlanFile(dir, b.manifest_, "plan.pb"));
  ZP_ASSIGN_OR_RETURN(b.plan_, artifacts::parsePlanPb(pbBytes, (dir / "plan.pb").string()));
  ZP_ASSIGN_OR_RETURN(std::string jsonBytes, manifestedPlanFile(dir, b.manifest_, "plan.json"));
  ZP_ASSIGN_OR_RETURN(plan::Plan fromJson, artifacts::parsePlanJson(jsonBytes, (dir / "plan.json").string()));
  if (!(fromJson == b.plan_)) return makeError("{}: differs from plan.json beside it", (dir / "plan.pb").string());
  for (const auto& a : b.manifest_.artifacts) b.artifactSha_[a.path] = a.sha256;
  return b;
}

Expected<const plan::Unit*> Bundle::unit(const plan::UnitId& id) const {
  const plan::Unit* u = plan::findUnit(plan_.units, id);
  if (!u) return makeError("{}: the plan lists no unit {}", planFile(), id.str());
  return u;
}

Expected<fs::path> Bundle::model(const plan::Unit& unit) {
  // plan-emit copies a subgraph under its stitch-relative path, a whole model by its hash.
  const fs::path path =
      unit.id.kind == plan::UnitKind::Subgraph ? dir_ / unit.file : dir_ / artifacts::modelFileName(unit.sha256);
  if (verified_.count(path)) return path;
  if (!fs::is_regular_file(path))
    return makeError("{}: missing from the bundle (the model of unit {}); re-run plan-emit", path.string(), unit.id.str());
  ZP_ASSIGN_OR_RETURN(std::string bytes, readFile(path));
  if (sha256Hex(bytes) != unit.sha256)
    return makeError("{}: content hash does not match the plan's {} for unit {} (bundle modified?)", path.string(),
                     unit.sha256.substr(0, 16), unit.id.str());
  verified_.insert(path);
  return path;
}

fs::path Bundle::cachePath(const plan::Unit& unit, const std::string& policy) const {
  return dir_ / artifacts::cacheFileName(unit.sha256, policy);
}

std::optional<fs::path> Bundle::cache(const plan::Unit& unit, const std::string& policy) {
  const fs::path path = cachePath(unit, policy);
  if (!fs::is_regular_file(path)) return std::nullopt;
  if (verified_.insert(path).second) {
    auto it = artifactSha_.find(path.lexically_relative(dir_).generic_string());
    auto bytes = readFile(path);
    if (it == artifactSha_.end() || !bytes.ok() || sha256Hex(*bytes) != it->second)
      note(fmt::format("{}: differs from manifest.json; the runtime checks its payloads", path.string()));
  }
  return path;
}

Expected<std::vector<Processor>> Bundle::processors(const std::vector<Processor>& processors) const {
  std::vector<Processor> out;
  for (const auto& p : processors) {
    if (p.cores.empty())
      return makeError("{}: processor '{}' names no cores (zoo.json processors need 'cores' to run)", planFile(), p.name);
    if (auto st = runtime::serve::checkProcessor(p); !st.ok()) return makeError("{}: {}", planFile(), st.error().message);
    out.push_back(p);
  }
  return out;
}

Expected<std::vector<Processor>> Bundle::processors(const std::vector<std::string>& names) const {
  auto named = plan::processorsNamed(plan(), names);
  if (!named.ok()) return makeError("{}: {}", planFile(), named.error().message);
  return processors(*named);
}

const std::optional<zoo::Zoo>& Bundle::zoo() {
  if (zooRead_) return zoo_;
  zooRead_ = true;
  for (const auto& in : manifest_.inputs) {
    if (in.role != "stitch-manifest" && in.role != "mts-manifest") continue;
    const fs::path path = artifacts::inputPath(dir_, in);
    auto zooPath = recordedZooPath(in, path);
    if (!zooPath.ok()) {
      note(fmt::format("no datasets: {}; using seeded random inputs", zooPath.error().message));
      break;
    }
    auto z = artifacts::loadZoo((path.parent_path() / *zooPath).lexically_normal());
    if (!z.ok()) note(fmt::format("no datasets: {}; using seeded random inputs", z.error().message));
    else zoo_ = std::move(*z);
  }
  return zoo_;
}

Expected<Dataset> Bundle::samples(const std::string& task, const runtime::IoInfo& input, int limit, int randomCount,
                                  uint64_t seed) {
  Dataset d;
  std::string why = "the bundle records no zoo";
  if (zoo()) { ZP_ASSIGN_OR_RETURN(d, datasetSamples(*zoo(), task, input, limit, &why)); }
  if (!d.samples.empty()) return d;
  note(fmt::format("{}: {}; using seeded random inputs", task, why));
  for (int k = 0; k < randomCount; ++k)
    d.samples.push_back(runtime::randomInput({input.name, input.dtype, staticShape(input)}, seed + static_cast<uint64_t>(k)));
  d.source = "random";
  return d;
}

Expected<std::vector<runtime::IoInfo>> Bundle::inputs(const plan::Unit& unit) {
  ZP_ASSIGN_OR_RETURN(const fs::path model, this->model(unit));
  if (auto it = inputs_.find(model); it != inputs_.end()) return it->second;
  graph::LoadOptions lo;
  lo.check = false;
  ZP_ASSIGN_OR_RETURN(auto proto, graph::loadModel(model, lo));
  ZP_ASSIGN_OR_RETURN(auto inputs, runtime::modelInputs(proto, model.string()));
  if (inputs.empty()) return makeError("{}: the model has no inputs", model.string());
  return inputs_.emplace(model, std::move(inputs)).first->second;
}

Expected<std::optional<runtime::serve::SubgraphFiles>> coldUnitFiles(Bundle& bundle, const plan::Unit& unit) {
  const plan::ColdPlan* cold = plan::coldSectionOf(bundle.plan(), unit);
  if (!cold) return std::optional<runtime::serve::SubgraphFiles>();
  ZP_ASSIGN_OR_RETURN(const fs::path model, bundle.model(unit));
  const auto cache = bundle.cache(unit, kColdCachePolicy);
  if (!cache)
    return makeError("{}: missing from the bundle (the cold cache of {})",
                     bundle.cachePath(unit, kColdCachePolicy).string(), unit.id.str());
  ZP_ASSIGN_OR_RETURN(auto schedule,
                      coldstart::coldScheduleOf(*cold, bundle.planFile() + ": cold section " + cold->unit.str()));
  return std::optional<runtime::serve::SubgraphFiles>(runtime::serve::SubgraphFiles{
      model, *cache, std::make_shared<const runtime::ColdSchedule>(std::move(schedule))});
}

Expected<runtime::serve::OperatorPlacement> operatorPlacement(Bundle& bundle, const plan::Unit& unit,
                                                              const plan::OpPlacement& placement,
                                                              std::vector<std::string>& warnings) {
  runtime::serve::OperatorPlacement out;
  ZP_ASSIGN_OR_RETURN(out.processors, bundle.processors(placement.processors));
  for (const auto& p : out.processors) {
    const auto cache = bundle.cache(unit, p.policy);
    out.caches.push_back(cache.value_or(fs::path()));
    const std::string w = fmt::format("{}: no weight cache in the bundle; transforming the raw ONNX weights",
                                      bundle.cachePath(unit, p.policy).string());
    if (!cache && std::find(warnings.begin(), warnings.end(), w) == warnings.end()) warnings.push_back(w);
  }
  std::map<std::string, int> index;
  for (size_t p = 0; p < placement.processors.size(); ++p) index[placement.processors[p]] = static_cast<int>(p);
  for (const auto& n : placement.nodes) out.nodeProcessor[n.node] = index.at(n.processor);  // the reader checked the names
  out.source = bundle.planFile() + ": $.opplace.nodes";
  return out;
}

void Bundle::note(const std::string& text) {
  if (std::find(notes_.begin(), notes_.end(), text) == notes_.end()) notes_.push_back(text);
}

}  // namespace zp::drivers
