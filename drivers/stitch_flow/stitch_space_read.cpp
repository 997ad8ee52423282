#include "drivers/stitch_flow/stitch_space_read.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>

#include "libplan/artifacts/accuracy_csv.h"
#include "libplan/artifacts/latency_model_json.h"
#include "libplan/artifacts/mts_json.h"
#include "libplan/artifacts/profile_csv.h"
#include "libplan/artifacts/profile_report.h"
#include "libplan/artifacts/stitch_json.h"
#include "libplan/artifacts/zoo_json.h"
#include "libplan/plan/plan.h"
#include "libplan/profile/profile_db.h"
#include "libplan/util/file.h"
#include "libplan/util/hash.h"
#include "libplan/util/json_reader.h"
#include "libplan/util/dim_limits.h"
#include "libplan/util/validate.h"
#include "libplan/zoo/zoo.h"
#include "passes/select/select.h"

namespace zp::drivers {
namespace fs = std::filesystem;

namespace {

// What plan-solve takes from report.json.
struct ProfileReport {
  std::string text;  // the file's bytes (hashed into the plan header)
  Json json;         // the whole document (for the recorded hashes of the files beside it)
  std::string stitchDir;                          // relative to the profile directory
  std::map<std::string, std::string> hostConfig;  // processor -> "policy@threads" it was measured under
  std::map<std::string, std::string> importFormat;  // processor -> format of its imported profile
  std::optional<int64_t> batch;                     // absent in reports written before symbolic dims
};

Expected<ProfileReport> readProfileReport(const fs::path& path) {
  ZP_ASSIGN_OR_RETURN(std::string text, readFile(path));
  Json j = Json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("stitch_dir") || !j.contains("tasks"))
    return makeError("{}: not a zoo-profile report (run zoo-profile first)", path.string());
  const std::string label = path.string();
  JsonAt root(j, label);
  if (root.has("interrupted")) {
    ZP_ASSIGN_OR_RETURN(bool interrupted, root.boolean("interrupted"));
    if (interrupted)
      return makeError("{}: the profile run was interrupted; run zoo-profile again to complete it", label);
  }
  ProfileReport r;
  r.text = text;
  r.json = j;
  ZP_ASSIGN_OR_RETURN(r.stitchDir, root.string("stitch_dir"));
  if (root.has("batch")) { ZP_ASSIGN_OR_RETURN(r.batch, root.integer("batch", 1, kMaxDimValue)); }
  ZP_ASSIGN_OR_RETURN(JsonAt inputs, root.at("inputs"));
  ZP_ASSIGN_OR_RETURN(auto procs, inputs.array("processors"));
  for (const auto& p : procs) {
    ZP_ASSIGN_OR_RETURN(std::string name, p.id("name"));
    if (p.has("config")) {
      ZP_ASSIGN_OR_RETURN(JsonAt config, p.at("config"));
      ZP_ASSIGN_OR_RETURN(r.hostConfig[name], config.string());
      const std::string& c = r.hostConfig[name];
      if (c.find('@') == std::string::npos) return config.error(fmt::format("'{}' is not POLICY@THREADS", c));
    } else if (p.has("import")) {
      ZP_ASSIGN_OR_RETURN(JsonAt imp, p.at("import"));
      ZP_ASSIGN_OR_RETURN(r.importFormat[name], imp.string("format"));
    }
  }
  return r;
}

// "policy@threads" as zoo-profile recorded a host configuration.
Expected<std::pair<std::string, int>> parseHostConfig(const std::string& cfg, const std::string& label,
                                                      const std::string& processor) {
  const auto at = cfg.find('@');
  const std::string threadsText = cfg.substr(at + 1);
  int64_t threads = 0;
  auto r = std::from_chars(threadsText.data(), threadsText.data() + threadsText.size(), threads);
  auto where = [&] { return fmt::format("{}: processor '{}': config '{}'", label, processor, cfg); };
  if (r.ec != std::errc() || r.ptr != threadsText.data() + threadsText.size())
    return makeError("{}: '{}' is not a thread count", where(), threadsText);
  if (auto p = threadCountProblem(threads)) return makeError("{}: {}", where(), *p);
  return std::make_pair(cfg.substr(0, at), static_cast<int>(threads));
}

// The weight-shared groups zoo-stitch stitched (groups/mts.json), each with its
// members' measured accuracy (the stitched graph answers as each member's own
// model does: zoo-mts checks its outputs) and its profiled run on each processor.
Status readSharedGroups(select::StitchSpace& sp, const std::optional<std::string>& bytes,
                        const artifacts::AccuracyTable& acc,
                        const profile::ProfileDb& db, const fs::path& profileDir) {
  if (!bytes) return {};
  const fs::path path = sp.stitchDir / zoo::kStitchGroupsManifest;
  ZP_ASSIGN_OR_RETURN(auto manifest, artifacts::parseMtsManifest(*bytes, path.string()));
  if (manifest.zooSha256 != sp.manifest.zooSha256)
    return makeError("{}: made from another zoo.json than stitch.json; run zoo-stitch again", path.string());
  for (const auto& g : manifest.groups) {
    select::SharedGroup sg;
    sg.name = g.name;
    sg.file = (fs::path(zoo::kStitchGroupsDir) / g.file).generic_string();
    sg.sha256 = g.sha256;
    sg.sharedInput = g.sharedInput;
    for (const auto& m : g.members) {
      auto t = std::find_if(sp.tasks.begin(), sp.tasks.end(), [&](const auto& ts) { return ts.name == m.task; });
      if (t == sp.tasks.end())
        return makeError("{}: group '{}': member '{}' is not a task of stitch.json", path.string(), g.name, m.task);
      const auto& combos = t->stitch->combinations;
      auto own = std::find_if(combos.begin(), combos.end(), [&](const auto& c) {
        return std::all_of(c.variants.begin(), c.variants.end(), [&](const auto& v) { return v == m.variant; });
      });
      if (own == combos.end())
        return makeError("{}: group '{}': member '{}' has no variant '{}' in stitch.json", path.string(), g.name, m.task,
                         m.variant);
      auto a = acc.find({m.task, own->id});
      if (a == acc.end())
        return makeError("{}: no accuracy for {}/{}", (profileDir / "accuracy.csv").string(), m.task, own->id);
      sg.members.push_back(static_cast<int>(t - sp.tasks.begin()));
      sg.io.push_back(static_cast<const plan::GroupMember&>(m));
      sg.accuracy.push_back(a->second.measured.value_or(a->second.predicted));
    }
    for (const auto& p : sp.processors) {
      const std::string policy = p.source == "host" ? p.policy : std::string(profile::kDefaultPolicy);
      for (const auto* r : db.select(profile::RowKind::Group, g.name, {}, p.name))
        if (r->policy == policy) {
          sg.runMs[p.name] = r->medianMs;
          sg.bytes[p.name] = r->memoryBytes.value_or(0);
        }
    }
    if (sg.runMs.empty())
      return makeError("{}: group '{}' was measured on none of the processors; run zoo-profile again",
                       (profileDir / "profile.csv").string(), g.name);
    sp.groups.push_back(std::move(sg));
  }
  return {};
}

}  // namespace

Expected<select::StitchSpace> readStitchSpace(const fs::path& profileDir) {
  using namespace select;
  StitchSpace sp;
  sp.profileDir = profileDir;
  const fs::path reportPath = profileDir / "report.json";
  ZP_ASSIGN_OR_RETURN(ProfileReport report, readProfileReport(reportPath));
  sp.stitchDir = (profileDir / report.stitchDir).lexically_normal();
  ZP_ASSIGN_OR_RETURN(sp.manifest, artifacts::loadStitchManifest(sp.stitchDir));
  sp.batch = report.batch.value_or(sp.manifest.batch);
  ZP_ASSIGN_OR_RETURN(auto zoo, artifacts::loadZoo((sp.stitchDir / sp.manifest.zooPath).lexically_normal()));
  // Each file is read once, checked against the hash report.json recorded
  // (files of two runs are never planned on together) and parsed from those bytes.
  std::map<std::string, std::string> bytesOf;
  for (const char* f : {"profile.csv", "accuracy.csv", "latency_model.json"}) {
    ZP_ASSIGN_OR_RETURN(bytesOf[f], readFile(profileDir / f));
    ZP_TRY(artifacts::checkRecordedFile(report.json, reportPath, profileDir / f, bytesOf[f]));
    sp.inputHashes[std::string("profile/") + f] = sha256Hex(bytesOf[f]);
  }
  sp.inputHashes["profile/report.json"] = sha256Hex(report.text);
  {
    ZP_ASSIGN_OR_RETURN(std::string bytes, readFile(sp.stitchDir / "stitch.json"));
    ZP_TRY(artifacts::checkRecordedStitch(report.json, reportPath, sp.stitchDir / "stitch.json", bytes));
    sp.inputHashes[plan::kPlanStitchInput] = sha256Hex(bytes);
  }
  std::optional<std::string> groupsBytes;
  if (const fs::path groups = sp.stitchDir / zoo::kStitchGroupsManifest; fs::exists(groups)) {
    ZP_ASSIGN_OR_RETURN(groupsBytes, readFile(groups));
    sp.inputHashes[std::string("stitch/") + zoo::kStitchGroupsManifest] = sha256Hex(*groupsBytes);
  }
  ZP_TRY(artifacts::checkRecordedGroups(report.json, reportPath, sp.stitchDir / zoo::kStitchGroupsManifest, groupsBytes));
  ZP_ASSIGN_OR_RETURN(auto db, artifacts::parseProfileCsv(bytesOf["profile.csv"], (profileDir / "profile.csv").string()));
  ZP_ASSIGN_OR_RETURN(auto acc, artifacts::parseAccuracyCsv(bytesOf["accuracy.csv"], (profileDir / "accuracy.csv").string()));
  const std::string latencyLabel = (profileDir / "latency_model.json").string();
  ZP_ASSIGN_OR_RETURN(auto latency, artifacts::parseLatencyModel(bytesOf["latency_model.json"], latencyLabel));

  {
    std::vector<double> spreads;
    for (const auto* r : db.rows())
      if (r->kind == profile::RowKind::Subgraph && r->p90Ms && r->medianMs > 0)
        spreads.push_back(std::max(0.0, *r->p90Ms - r->medianMs) / r->medianMs);
    if (!spreads.empty()) {
      std::nth_element(spreads.begin(), spreads.begin() + static_cast<std::ptrdiff_t>(spreads.size() / 2), spreads.end());
      sp.latencySpread = spreads[spreads.size() / 2];
    }
  }

  // Processors, with the host configuration the profile measured them under.
  for (const auto& p : zoo.processors) {
    Processor pp = p;
    if (auto it = report.hostConfig.find(p.name); it != report.hostConfig.end()) {
      ZP_ASSIGN_OR_RETURN(auto cfg, parseHostConfig(it->second, reportPath.string(), p.name));
      pp.source = kHostSource;
      pp.profileFile.clear();
      std::tie(pp.policy, pp.threads) = cfg;
    } else if (auto imp = report.importFormat.find(p.name); imp != report.importFormat.end()) {
      pp.source = imp->second;
    }
    sp.processors.push_back(pp);
  }

  for (const auto& task : sp.manifest.tasks) {
    TaskSpace ts;
    ts.name = task.name;
    ts.positions = task.positions();
    ts.stitch = &task;
    for (const auto& v : task.variants) ts.variants.push_back(v.id);
    // stitch.json lists every combination in number order (its reader checked how many).
    std::vector<AccuracyEntry> entries;
    for (size_t k = 0; k < task.combinations.size(); ++k) {
      const auto& c = task.combinations[k];
      const bool original = std::all_of(c.variants.begin(), c.variants.end(), [&](const auto& v) { return v == c.variants[0]; });
      // A variant's own subgraphs always chain; the baselines choose among the originals.
      if (!c.valid && original)
        return makeError("{}: task '{}': original variant '{}' is marked invalid", (sp.stitchDir / "stitch.json").string(),
                         task.name, c.id);
      if (!c.valid) continue;
      auto it = acc.find({task.name, c.id});
      if (it == acc.end())
        return makeError("{}: no accuracy for {}/{}", (profileDir / "accuracy.csv").string(), task.name, c.id);
      entries.push_back(AccuracyEntry{k, it->second.predicted, it->second.measured.value_or(-1.0)});
    }
    ts.accuracy = std::make_shared<AccuracyTable>(
        Combinations(static_cast<int>(task.variants.size()), ts.positions), entries);
    // The latency model zoo-profile calibrated and validated.
    auto lm = std::find_if(latency.begin(), latency.end(), [&](const auto& m) { return m.task == task.name; });
    if (lm == latency.end()) return makeError("{}: no model for task '{}'", latencyLabel, task.name);
    if (lm->positions != ts.positions)
      return makeError("{}: task '{}' has {} positions, stitch.json {}", latencyLabel, task.name, lm->positions, ts.positions);
    ts.latency = lm->model;
    ts.boundaryBytes = lm->boundaryBytes;
    // Memory on each processor as profiled (under the policy it was measured with).
    for (const auto* r : db.select(profile::RowKind::Subgraph, task.name)) {
      auto p = std::find_if(sp.processors.begin(), sp.processors.end(), [&](const auto& x) { return x.name == r->processor; });
      if (p == sp.processors.end() || !r->memoryBytes) continue;
      if (r->policy != (p->source == "host" ? p->policy : std::string("default"))) continue;
      ts.memory[{*r->position, r->variant, r->processor}] = *r->memoryBytes;
    }
    std::vector<std::string> names;
    for (const auto& p : sp.processors) names.push_back(p.name);
    ts.buildDense(names);
    sp.tasks.push_back(std::move(ts));
  }
  ZP_TRY(readSharedGroups(sp, groupsBytes, acc, db, profileDir));
  int positions = 0;
  for (const auto& t : sp.tasks) positions = std::max(positions, t.positions);
  if (!estimate::searchOrderCount(sp.processors.size(), positions, select::kMaxPlacementOrders))
    return makeError("{}: {} positions on {} processors make more than the {} placement orders plan-solve searches; "
                     "use fewer subgraphs or processors",
                     (sp.stitchDir / "stitch.json").string(), positions, sp.processors.size(), select::kMaxPlacementOrders);
  return sp;
}

}  // namespace zp::drivers
