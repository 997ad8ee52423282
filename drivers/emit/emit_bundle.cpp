#include "drivers/emit/emit_bundle.h"

#include <algorithm>
#include <cassert>
#include <map>
#include <optional>
#include <set>

#include "drivers/concurrent_flow/workload.h"
#include "drivers/stitch_flow/plan_freshness.h"
#include "libplan/runtime/session.h"
#include "libplan/util/file.h"
#include "libplan/util/hash.h"
#include "libplan/util/output_dir.h"
#include "libplan/util/json_reader.h"
#include "libplan/util/validate.h"
#include "libplan/zoo/stitch_manifest.h"
#include "libplan/artifacts/plan_pb.h"
#include "libplan/artifacts/plan_json.h"
#include "libplan/artifacts/workload_json.h"
#include "libplan/artifacts/stitch_json.h"
#include "passes/coldstart/runtime_schedule.h"

namespace zp::drivers {
namespace fs = std::filesystem;

namespace {

std::string short16(const std::string& hex) { return hex.substr(0, 16); }

// `path` relative to the directory `dir` ('/'-separated), both taken at their
// real locations.
std::string relativeTo(const fs::path& path, const fs::path& dir) {
  std::error_code ec;
  const fs::path a = fs::weakly_canonical(fs::absolute(path), ec);
  const fs::path b = fs::weakly_canonical(fs::absolute(dir), ec);
  const fs::path rel = a.lexically_relative(b);
  return rel.empty() ? a.generic_string() : rel.generic_string();
}

// One input of the bundle as it is now. `key` identifies it across runs
// (independent of where the plan was given from).
struct CurrentInput {
  BundleInput input;
  bool found = false;
  std::string problem;  // why it could not be read
  std::string bytes;    // file content (kept for emit)
};

struct SubgraphUse {
  std::string file;       // relative to the stitch directory
  std::string hash;       // expected content hash
  std::string processor;  // first processor it is placed on (for messages)
  std::set<std::pair<std::string, int>> policies;  // (kernel policy, threads) it needs a cache for
  const plan::ColdPlan* cold = nullptr;  // its cold-start section (the first unit's): the one cache it gets
  std::string bundlePath;  // where the bundle holds it: a subgraph at `file`, a group's unit by its hash
  const std::string& inBundle() const { return bundlePath.empty() ? file : bundlePath; }
};

// Everything the bundle is made from, read from disk now.
struct Sources {
  std::filesystem::path planPath;
  std::string planBytes;
  plan::Plan plan;
  fs::path stitchDir;                         // as resolved (relative to cwd or absolute)
  std::vector<CurrentInput> inputs;           // plan, stitch.json, subgraph files, workload, models
  std::map<std::string, SubgraphUse> subgraphs;  // by file
  std::vector<std::string> notes;
};

std::string keyOf(const BundleInput& in) { return in.role + "\x1f" + in.key; }

// Reads a file into a CurrentInput; in strict mode a missing file is an error.
Status addInput(Sources& s, const std::string& role, const std::string& key, const fs::path& path, bool strict,
                std::string* bytesOut = nullptr) {
  CurrentInput c;
  c.input.role = role;
  c.input.key = key;
  c.input.path = path.generic_string();
  auto bytes = readFile(path);
  if (!bytes.ok()) {
    if (strict) return bytes.error();
    c.problem = bytes.error().message;
  } else {
    c.found = true;
    c.input.sha256 = sha256Hex(*bytes);
    if (bytesOut) *bytesOut = *bytes;
    c.bytes = std::move(*bytes);
  }
  s.inputs.push_back(std::move(c));
  return {};
}

// In strict mode (emit), a plan subgraph must be the one stitch.json lists.
Status checkAgainstManifest(const plan::PlannedSubgraph& g, const plan::Unit& unit, const zoo::TaskStitch& ts,
                            const std::string& where) {
  if (g.position < 0 || g.position >= ts.positions()) return makeError("{}: stitch.json has {} positions", where, ts.positions());
  bool known = std::any_of(ts.variants.begin(), ts.variants.end(), [&](const zoo::VariantInfo& v) { return v.id == g.variant; });
  if (!known) return makeError("{}: variant not in stitch.json", where);
  const auto& info = ts.subgraph(g.position, g.variant);
  if (info.hash != unit.sha256)
    return makeError("{}: hash {} differs from stitch.json's {} (plan made from another stitch run?)", where,
                     short16(unit.sha256), short16(info.hash));
  if (info.file != unit.file)
    return makeError("{}: file '{}' differs from stitch.json's '{}'", where, unit.file, info.file);
  return {};
}

// stitch.json of the plan's stitch directory, checked against the hash the
// plan recorded; nullopt when it cannot be read (check mode notes it).
Expected<std::optional<zoo::StitchManifest>> readPlannedManifest(Sources& s, bool strict) {
  std::string manifestBytes;
  ZP_TRY(addInput(s, "stitch-manifest", "stitch.json", s.stitchDir / "stitch.json", strict, &manifestBytes));
  // plan-solve records the stitch.json it planned on: a rewritten stitch
  // directory may name the same files with other contents or meanings.
  if (auto rec = s.plan.header.inputs.find(plan::kPlanStitchInput); strict && !manifestBytes.empty() &&
                                                               rec != s.plan.header.inputs.end() &&
                                                               rec->second != sha256Hex(manifestBytes))
    return makeError("{}: does not match the hash {} recorded (stitch directory rewritten since planning?)",
                     (s.stitchDir / "stitch.json").string(), s.planPath.string());
  std::optional<zoo::StitchManifest> manifest;
  if (manifestBytes.empty()) return manifest;
  Json mj = Json::parse(manifestBytes, nullptr, false);
  const std::string label = (s.stitchDir / "stitch.json").string();
  if (mj.is_discarded()) {
    if (strict) return makeError("{}: not valid JSON", label);
  } else {
    auto m = artifacts::stitchManifestFromJson(mj, label);
    if (!m.ok() && strict) return m.error();
    if (m.ok()) manifest = std::move(*m);
  }
  return manifest;
}

// The stitch section: stitch.json and every subgraph file the plan uses.
Status collectStitchSources(Sources& s, bool strict) {
  const fs::path& planPath = s.planPath;
  const fs::path planDir = planPath.parent_path();
  const auto& st = *s.plan.stitch;
  s.stitchDir = (planDir / st.stitchDir).lexically_normal();
  if (st.stitchDir.empty()) s.stitchDir = planDir.empty() ? fs::path(".") : planDir;
  ZP_ASSIGN_OR_RETURN(const auto processors, plan::processorsNamed(s.plan, st.processors));
  ZP_ASSIGN_OR_RETURN(auto manifest, readPlannedManifest(s, strict));
  for (const auto& t : st.tasks) {
    const zoo::TaskStitch* ts = manifest ? manifest->task(t.name) : nullptr;
    if (manifest && !ts && strict)
      return makeError("{}: task '{}' is not in {}", planPath.string(), t.name, (s.stitchDir / "stitch.json").string());
    for (const auto& g : t.subgraphs) {
      const std::string where = fmt::format("{}: task '{}' position {} variant '{}'", planPath.string(), t.name,
                                            g.position, g.variant);
      const plan::UnitId id = plan::UnitId::subgraph(t.name, g.position, g.variant);
      const plan::Unit* unit = plan::findUnit(s.plan.units, id);
      if (!unit) return makeError("{}: the plan has no unit '{}'", where, id.str());
      if (!isSafeRelativePath(unit->file))
        return makeError("{}: file '{}' is not a relative path inside the stitch directory", where, unit->file);
      const Processor* proc = plan::findProcessor(s.plan, g.processor);
      if (!proc || std::find(st.processors.begin(), st.processors.end(), g.processor) == st.processors.end())
        return makeError("{}: unknown processor '{}'", where, g.processor);
      if (ts && strict) ZP_TRY(checkAgainstManifest(g, *unit, *ts, where));
      auto& use = s.subgraphs[unit->file];
      if (use.file.empty()) {
        use.file = unit->file;
        use.hash = unit->sha256;
        use.processor = g.processor;
      } else if (use.hash != unit->sha256) {
        return makeError("{}: file '{}' is named with two hashes ({} and {})", where, unit->file, short16(use.hash),
                         short16(unit->sha256));
      }
      use.policies.insert({proc->policy, std::max(1, proc->threads)});
      // One cold cache per file, from the cold section its units load by.
      use.cold = plan::coldSectionOf(s.plan, *unit);
    }
  }
  // Units only a preload set names (hot over the configurations' candidates, run by
  // no system): served, the residency manager may load them, so the bundle holds
  // them too, with a cache for every processor's kernel policy.
  for (const auto& u : s.plan.units) {
    if (u.id.kind != plan::UnitKind::Subgraph || s.subgraphs.count(u.file)) continue;
    if (!isSafeRelativePath(u.file))
      return makeError("{}: unit '{}': file '{}' is not a relative path inside the stitch directory", planPath.string(),
                       u.id.str(), u.file);
    auto& use = s.subgraphs[u.file];
    use.file = u.file;
    use.hash = u.sha256;
    use.processor = st.processors.front();
    for (const auto& p : processors) use.policies.insert({p.policy, std::max(1, p.threads)});
  }
  // The weight-shared groups some choice answers its members with: each
  // group's unit (in the stitch directory's groups/), held by its hash as a
  // whole model is, with a cache for every processor it may run on.
  for (const auto& g : st.groups) {
    const plan::Unit* unit = plan::findUnit(s.plan.units, plan::UnitId::group(g.name));
    assert(unit && "the plan reader checks that a planned group is a unit of the plan");
    if (!isSafeRelativePath(unit->file))
      return makeError("{}: unit '{}': file '{}' is not a relative path inside the stitch directory", planPath.string(),
                       unit->id.str(), unit->file);
    auto& use = s.subgraphs[unit->file];
    use.file = unit->file;
    use.hash = unit->sha256;
    use.bundlePath = artifacts::modelFileName(unit->sha256);
    use.processor = g.runs.front().processor;
    for (const auto& r : g.runs) {
      const Processor* proc = plan::findProcessor(s.plan, r.processor);
      assert(proc && "the plan reader checks that a group runs on the section's processors");
      use.policies.insert({proc->policy, std::max(1, proc->threads)});
    }
  }
  // The placed models some choice answers a task with: each a variant's whole
  // model (its file relative to the stitch directory, in the zoo), held by its
  // hash, with a cache for every processor it places operators on.
  for (const auto& o : s.plan.opplace) {
    const plan::Unit* unit = plan::findUnit(s.plan.units, o.unit);
    assert(unit && "the plan reader checks that a placement names a unit of the plan");
    auto& use = s.subgraphs[unit->file];
    use.file = unit->file;
    use.hash = unit->sha256;
    use.bundlePath = artifacts::modelFileName(unit->sha256);
    use.processor = o.processors.front();
    for (const auto& name : o.processors) {
      const Processor* proc = plan::findProcessor(s.plan, name);
      assert(proc && "the plan reader checks that a placement's processors are the plan's");
      use.policies.insert({proc->policy, std::max(1, proc->threads)});
    }
  }
  for (const auto& [file, use] : s.subgraphs) {
    const fs::path src = s.stitchDir / file;
    std::string bytes;
    ZP_TRY(addInput(s, "subgraph", file, src, strict, &bytes));
    if (strict && sha256Hex(bytes) != use.hash)
      return makeError("{}: content hash {} does not match {} recorded in the plan and stitch.json (stitch directory changed since planning?)",
                       src.string(), short16(sha256Hex(bytes)), short16(use.hash));
  }
  return {};
}

// The concurrent section: workload.json and the models its DNNs name.
Status collectConcurrentSources(Sources& s, bool strict) {
  const fs::path planDir = s.planPath.parent_path();
  // The workload path is recorded as given to plan-solve: try it as is, then
  // relative to the plan's folder.
  const std::string& w = s.plan.concurrent->workload;
  fs::path wp = w;
  if (!w.empty() && !fs::exists(wp) && !planDir.empty() && fs::path(w).is_relative()) wp = planDir / w;
  if (w.empty() || !fs::exists(wp)) {
    s.notes.push_back(fmt::format("workload '{}' not found; the bundle holds no models", w));
  } else {
    std::string wbytes;
    ZP_TRY(addInput(s, "workload", "workload", wp, strict, &wbytes));
    auto spec = artifacts::parseWorkloadJson(wbytes, wp.string(), wp.parent_path());
    if (!spec.ok()) {
      if (strict) return spec.error();
      s.notes.push_back(spec.error().message);
      return {};
    }
    // Each model once, keyed by its path from the workload's folder (also when
    // that climbs out of it: the key must not depend on the working directory),
    // or by its absolute path when there is no such relative path.
    std::set<fs::path> models;
    for (const auto& d : spec->dnns) {
      if (d.source != artifacts::WorkloadDnn::Source::Model && d.source != artifacts::WorkloadDnn::Source::ZooVariant)
        continue;
      auto file = dnnModelFile(d, wp.string());
      if (!file.ok()) {
        if (strict) return file.error();
        s.notes.push_back(file.error().message);
        continue;
      }
      models.insert(file->lexically_normal());
    }
    const fs::path base = wp.parent_path().lexically_normal();
    for (const auto& mp : models) {
      const fs::path rel = mp.lexically_relative(base);
      ZP_TRY(addInput(s, "model", (rel.empty() ? mp : rel).generic_string(), mp, strict));
    }
  }
  return {};
}

// A path the plan records as given to plan-solve: as is, then relative to the plan's folder.
fs::path asRecorded(const Sources& s, const std::string& recorded) {
  const fs::path planDir = s.planPath.parent_path();
  fs::path p = recorded;
  if (!recorded.empty() && !fs::exists(p) && !planDir.empty() && p.is_relative()) p = planDir / p;
  return p;
}

// A model the plan records with its hash: read, and in strict mode checked against it.
Status addHashedModel(Sources& s, const std::string& recorded, const std::string& sha256, bool strict) {
  for (const auto& in : s.inputs)
    if (in.input.role == "model" && in.input.key == recorded) return {};
  const fs::path p = asRecorded(s, recorded);
  std::string bytes;
  ZP_TRY(addInput(s, "model", recorded, p, strict, &bytes));
  if (strict && sha256Hex(bytes) != sha256)
    return makeError("{}: does not match the hash {} records for it (model changed since planning?)", p.string(),
                     s.planPath.string());
  return {};
}

// The operator placements: each model placed, checked against the hash
// plan-solve recorded for its unit (a stitch plan's placed units are files
// relative to the stitch directory, collected with its other units).
Status collectOpplaceSources(Sources& s, bool strict) {
  if (s.plan.stitch) return {};
  for (const auto& o : s.plan.opplace) {
    const plan::Unit* unit = plan::findUnit(s.plan.units, o.unit);
    assert(unit && "the plan reader checks that every section names a unit of the plan");
    ZP_TRY(addHashedModel(s, unit->file, unit->sha256, strict));
  }
  return {};
}

// The MTS section: mts.json (for the datasets' zoo), every stitched graph and every member's own model.
Status collectMtsSources(Sources& s, bool strict) {
  const auto& m = *s.plan.mts;
  ZP_TRY(addInput(s, "mts-manifest", "mts.json", asRecorded(s, m.manifest), strict));
  // Its units: every group's stitched graph and every member's own model.
  for (const auto& u : s.plan.units)
    if (u.id.kind == plan::UnitKind::Group || u.group) ZP_TRY(addHashedModel(s, u.file, u.sha256, strict));
  return {};
}

// Reads the plan and everything it points at. strict: any missing or
// inconsistent input is an error (emit); otherwise problems become notes on
// the inputs (check).
Expected<Sources> collectSources(const fs::path& planPath, bool strict) {
  Sources s;
  s.planPath = planPath;
  ZP_ASSIGN_OR_RETURN(s.planBytes, readFile(planPath));
  {
    Json j = Json::parse(s.planBytes, nullptr, false);
    if (j.is_discarded()) return makeError("{}: not valid JSON", planPath.string());
    ZP_ASSIGN_OR_RETURN(s.plan, artifacts::planFromJson(j, planPath.string()));
  }
  if (!s.plan.stitch && !s.plan.concurrent && s.plan.opplace.empty() && !s.plan.mts)
    return makeError("{}: the plan has no 'stitch', 'concurrent', 'opplace' or 'mts' section; nothing to emit",
                     planPath.string());
  {
    CurrentInput c;
    c.input = BundleInput{"plan", "plan", planPath.generic_string(), sha256Hex(s.planBytes)};
    c.found = true;
    s.inputs.push_back(std::move(c));
  }
  for (size_t i = 0; i < s.plan.processors.size(); ++i)
    if (const auto& p = s.plan.processors[i]; !runtime::isKnownPolicy(p.policy))
      return makeError("{}: $.processors[{}] '{}': unknown kernel policy '{}'", planPath.string(), i, p.name, p.policy);
  if (s.plan.stitch) ZP_TRY(collectStitchSources(s, strict));
  if (s.plan.concurrent) ZP_TRY(collectConcurrentSources(s, strict));
  ZP_TRY(collectOpplaceSources(s, strict));
  if (s.plan.mts) ZP_TRY(collectMtsSources(s, strict));
  std::sort(s.inputs.begin(), s.inputs.end(), [](const CurrentInput& a, const CurrentInput& b) {
    return std::tie(a.input.role, a.input.key) < std::tie(b.input.role, b.input.key);
  });
  return s;
}

Expected<std::vector<BundleArtifact>> listArtifacts(const fs::path& dir) {
  std::vector<BundleArtifact> out;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->is_regular_file()) continue;
    std::string rel = fs::relative(it->path(), dir).generic_string();
    if (rel == "manifest.json") continue;
    ZP_ASSIGN_OR_RETURN(std::string bytes, readFile(it->path()));
    out.push_back(BundleArtifact{rel, static_cast<int64_t>(bytes.size()), sha256Hex(bytes)});
  }
  if (ec) return makeError("{}: cannot list: {}", dir.string(), ec.message());
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.path < b.path; });
  return out;
}

Status writeUnder(const fs::path& root, const std::string& rel, std::string_view bytes) {
  const fs::path p = root / rel;
  std::error_code ec;
  fs::create_directories(p.parent_path(), ec);
  if (ec) return makeError("{}: cannot create directory: {}", p.parent_path().string(), ec.message());
  return writeFileAtomic(p, bytes);
}

// caches/<hash16>.<policy>.zwc of the model at ROOT/modelRel, unless written
// already (the same policy at another thread count or on another processor
// has the same weights). `shownAs` names the model in errors.
Status writeWeightCache(const fs::path& root, const std::string& modelRel, const std::string& hash,
                        const std::string& policy, int threads, const std::string& shownAs, EmitResult& res) {
  const std::string cacheRel = artifacts::cacheFileName(hash, policy);
  if (fs::exists(root / cacheRel)) return {};
  runtime::SessionOptions so;
  so.threads = threads;
  so.kernels.policy = policy;
  std::error_code ec;
  fs::create_directories((root / cacheRel).parent_path(), ec);
  if (Status st = runtime::Session::writeModelCache(root / modelRel, so, root / cacheRel); !st.ok())
    return makeError("{}: cannot write its weight cache ({}): {}", shownAs, policy, st.error().message);
  ++res.caches;
  return {};
}

// caches/<hash16>.cold.zwc: the cache the subgraph's cold section runs from.
Status writeColdCacheFor(const Sources& src, const SubgraphUse& use, const fs::path& root) {
  const std::string where = fmt::format("{}: cold section '{}'", src.planPath.string(), use.cold->unit.str());
  ZP_ASSIGN_OR_RETURN(runtime::ColdSchedule schedule, coldstart::coldScheduleOf(*use.cold, where));
  const std::string rel = artifacts::cacheFileName(use.hash, kColdCachePolicy);
  std::error_code ec;
  fs::create_directories((root / rel).parent_path(), ec);
  Status st = runtime::Session::writeColdCache(root / use.file, schedule, runtime::SessionOptions{}, root / rel,
                                               /*identifyModelFile=*/false);
  if (!st.ok())
    return makeError("{}: cannot write its cold-start cache ({}): {}", (src.stitchDir / use.file).string(), where,
                     st.error().message);
  return {};
}

}  // namespace

Expected<EmitResult> emitBundle(const EmitParams& params) {
  ZP_ASSIGN_OR_RETURN(Sources src, collectSources(params.plan, /*strict=*/true));
  std::vector<GuardedPath> inputs{{src.planPath, "input"}};
  if (src.plan.stitch) inputs.push_back({src.stitchDir, "input"});
  for (const auto& in : src.inputs) inputs.push_back({in.input.path, "input"});
  ZP_ASSIGN_OR_RETURN(OutputDir staged, OutputDir::open(params.out, OutputDirOptions{"plan-emit", inputs, nullptr}));
  const fs::path root = staged.path();
  EmitResult res;
  res.notes = src.notes;

  ZP_TRY(writeUnder(root, "plan.json", artifacts::planToText(src.plan)));
  ZP_TRY(writeUnder(root, "plan.pb", artifacts::serializePlanPb(src.plan)));

  for (const auto& in : src.inputs) {
    if (in.input.role == "subgraph") {
      const auto& use = src.subgraphs.at(in.input.key);
      ZP_TRY(writeUnder(root, use.inBundle(), in.bytes));
      ++res.subgraphs;
      if (!params.writeCaches) continue;
      if (use.cold) {
        // The cold section decides what is cached: its nodes' payloads only (NNV12 §3.2).
        ZP_TRY(writeColdCacheFor(src, use, root));
        ++res.caches;
        ++res.coldCaches;
        continue;
      }
      for (const auto& [policy, threads] : use.policies)
        ZP_TRY(writeWeightCache(root, use.inBundle(), use.hash, policy, threads, (src.stitchDir / use.file).string(), res));
    } else if (in.input.role == "model") {
      const std::string rel = artifacts::modelFileName(in.input.sha256);
      if (fs::exists(root / rel)) continue;  // named twice (a workload's model placed too): one copy
      ZP_TRY(writeUnder(root, rel, in.bytes));
      ++res.models;
      for (const auto& o : src.plan.opplace)
        if (in.input.key == plan::findUnit(src.plan.units, o.unit)->file && params.writeCaches)
          for (const auto& name : o.processors)
            if (const Processor* p = plan::findProcessor(src.plan, name))
              ZP_TRY(writeWeightCache(root, rel, in.input.sha256, p->policy, std::max(1, p->threads), rel, res));
      if (src.plan.mts && params.writeCaches)  // any system may run a unit's models on any of its processors
        for (const auto& name : src.plan.mts->processors)
          if (const Processor* p = plan::findProcessor(src.plan, name))
            ZP_TRY(writeWeightCache(root, rel, in.input.sha256, p->policy, std::max(1, p->threads), rel, res));
    }
  }

  BundleManifest& m = res.manifest;
  m.tool = "plan-emit " + params.toolVersion;
  for (const auto& in : src.inputs) {
    BundleInput recorded = in.input;
    recorded.path = relativeTo(in.input.path, params.out);
    m.inputs.push_back(std::move(recorded));
  }
  // The marker is an artifact like any other: written before the listing, it
  // names manifest.json, which comes last.
  ZP_TRY(staged.writeMarker({"manifest.json"}));
  ZP_ASSIGN_OR_RETURN(m.artifacts, listArtifacts(root));
  ZP_TRY(writeUnder(root, "manifest.json", canonicalJson(artifacts::toJson(m))));
  ZP_TRY(staged.commit());
  return res;
}

std::string emitSummary(const EmitParams& params, const EmitResult& r) {
  int64_t bytes = 0;
  for (const auto& a : r.manifest.artifacts) bytes += a.size;
  std::string s = fmt::format("wrote {}: {} artifacts ({} bytes): plan.json, plan.pb, {} subgraphs, {} weight caches",
                              params.out.string(), r.manifest.artifacts.size(), bytes, r.subgraphs, r.caches);
  if (r.coldCaches)
    s += fmt::format(" ({} of them for cold sections: payloads only of the nodes each caches)", r.coldCaches);
  if (r.models) s += fmt::format(", {} models", r.models);
  s += "\n";
  for (const auto& n : r.notes) s += "note: " + n + "\n";
  return s;
}

std::string CheckResult::text() const {
  std::string s = changes.empty() ? fmt::format("bundle is up to date ({} inputs checked)\n", inputsChecked)
                                  : fmt::format("bundle is stale: {} change{}\n", changes.size(),
                                                changes.size() == 1 ? "" : "s");
  for (const auto& c : changes) s += "  " + c + "\n";
  for (const auto& n : notes) s += "note: " + n + "\n";
  return s;
}

namespace {

// A stitch plan's own inputs, down the chain (profile, SLO file, stitch.json,
// zoo.json, the variants' ONNX files, the datasets): what plan-solve --check compares.
void checkPlanChain(const fs::path& planPath, const std::string& toolVersion, CheckResult& r) {
  auto plan = artifacts::readPlan(planPath);
  if (!plan.ok() || !plan->stitch) return;  // an unreadable plan is a change above; other kinds record no chain
  if (plan->stitch->profileDir.empty()) {
    r.notes.push_back(fmt::format("{} records no profile directory (an older plan-solve wrote it): the inputs "
                                  "before the plan are not checked; re-run plan-solve to record them",
                                  planPath.string()));
    return;
  }
  SolveStitchOptions defaults;
  defaults.version = toolVersion;
  auto chain = checkStitchPlanFreshness(planPath, defaults);
  if (!chain.ok()) {
    r.changes.push_back(fmt::format("the plan's inputs cannot be checked: {}", chain.error().message));
    return;
  }
  for (const auto& c : chain->changed) r.changes.push_back("plan input " + c);
  r.inputsChecked += chain->checked;
}

}  // namespace

Expected<CheckResult> checkBundle(const CheckParams& params) {
  ZP_ASSIGN_OR_RETURN(BundleManifest m, artifacts::readBundleManifest(params.bundle));
  CheckResult r;
  const std::string tool = "plan-emit " + params.toolVersion;
  if (m.tool != tool) r.changes.push_back(fmt::format("tool changed: bundle made by '{}', this is '{}'", m.tool, tool));

  // Inputs as they are now against what the manifest recorded.
  fs::path planPath = params.plan;
  if (planPath.empty()) {
    for (const auto& in : m.inputs)
      if (in.role == "plan") planPath = artifacts::inputPath(params.bundle, in);
    if (planPath.empty()) return makeError("{}: no plan input recorded", (params.bundle / "manifest.json").string());
  }
  std::map<std::string, const BundleInput*> recorded;
  for (const auto& in : m.inputs) recorded[keyOf(in)] = &in;
  auto src = collectSources(planPath, /*strict=*/false);
  if (!src.ok()) {
    r.changes.push_back(fmt::format("plan unreadable: {}", src.error().message));
  } else {
    std::set<std::string> seen;
    for (const auto& c : src->inputs) {
      const std::string k = keyOf(c.input);
      seen.insert(k);
      auto it = recorded.find(k);
      const std::string what = c.input.role == "stitch-manifest" ? "stitch.json" : c.input.role;
      if (!c.found) {
        r.changes.push_back(fmt::format("{} missing: {}", what, c.problem));
      } else if (it == recorded.end()) {
        r.changes.push_back(fmt::format("{} added: {} (not in the bundle)", what, c.input.path));
      } else if (it->second->sha256 != c.input.sha256) {
        r.changes.push_back(fmt::format("{} changed: {} (sha256 {} -> {})", what, c.input.path,
                                        short16(it->second->sha256), short16(c.input.sha256)));
      }
    }
    for (const auto& [k, in] : recorded)
      if (!seen.count(k)) r.changes.push_back(fmt::format("{} no longer used by the plan: {}", in->role, in->path));
    r.inputsChecked += static_cast<int>(src->inputs.size());
    checkPlanChain(planPath, params.toolVersion, r);
  }

  // Artifacts against the manifest.
  std::set<std::string> listed;
  for (const auto& a : m.artifacts) {
    listed.insert(a.path);
    const fs::path p = params.bundle / a.path;
    auto bytes = readFile(p);
    if (!bytes.ok()) {
      r.changes.push_back(fmt::format("artifact missing: {}", a.path));
    } else if (static_cast<int64_t>(bytes->size()) != a.size || sha256Hex(*bytes) != a.sha256) {
      r.changes.push_back(fmt::format("artifact modified: {} ({} bytes, sha256 {}; manifest: {} bytes, sha256 {})",
                                      a.path, bytes->size(), short16(sha256Hex(*bytes)), a.size, short16(a.sha256)));
    }
  }
  std::error_code ec;
  std::vector<std::string> extra;
  for (fs::recursive_directory_iterator it(params.bundle, ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->is_regular_file()) continue;
    std::string rel = fs::relative(it->path(), params.bundle).generic_string();
    if (rel != "manifest.json" && !listed.count(rel)) extra.push_back(rel);
  }
  std::sort(extra.begin(), extra.end());
  for (const auto& e : extra) r.changes.push_back(fmt::format("unexpected file in the bundle: {}", e));
  return r;
}

}  // namespace zp::drivers
