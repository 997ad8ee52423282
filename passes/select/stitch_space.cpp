#include "passes/select/stitch_space.h"

#include <charconv>
#include <limits>
#include <map>

#include "libplan/profile/profile_db.h"
#include "libplan/util/file.h"
#include "libplan/plan/plan.h"
#include "libplan/util/hash.h"
#include "libplan/util/json_reader.h"
#include "libplan/util/validate.h"
#include "libplan/zoo/zoo.h"
#include "libplan/artifacts/accuracy_csv.h"
#include "libplan/artifacts/profile_csv.h"
#include "libplan/artifacts/profile_report.h"
#include "libplan/artifacts/stitch_json.h"
#include "libplan/artifacts/zoo_json.h"

namespace zp::select {
namespace fs = std::filesystem;

double TaskSpace::latencyMs(const Candidate& c, const std::vector<std::string>& placement) const {
  auto v = latency.estimate(c.variants, placement, boundaryBytes);
  return v ? *v : std::numeric_limits<double>::infinity();
}

void TaskSpace::buildDense(const std::vector<std::string>& processors) {
  std::map<std::string, int> vIndex;
  for (const auto& c : candidates)
    for (const auto& v : c.variants) vIndex.emplace(v, 0);
  int k = 0;
  for (auto& [v, i] : vIndex) i = k++;
  variants_ = vIndex.size();
  processors_ = processors.size();
  candidateVariants_.clear();
  for (const auto& c : candidates) {
    std::vector<int> idx;
    for (const auto& v : c.variants) idx.push_back(vIndex[v]);
    candidateVariants_.push_back(std::move(idx));
  }
  overhead_.assign(processors_, 0.0);
  for (size_t p = 0; p < processors_; ++p) overhead_[p] = latency.overhead(processors[p]);
  work_.assign(static_cast<size_t>(positions) * variants_ * processors_, std::numeric_limits<double>::infinity());
  for (const auto& [v, vi] : vIndex)
    for (int pos = 0; pos < positions; ++pos)
      for (size_t p = 0; p < processors_; ++p)
        if (auto ms = latency.subgraph(pos, v, processors[p]))
          work_[(static_cast<size_t>(pos) * variants_ + static_cast<size_t>(vi)) * processors_ + p] = *ms - overhead_[p];
  transfer_.assign(static_cast<size_t>(std::max(positions - 1, 0)) * processors_ * processors_, 0.0);
  for (int pos = 0; pos + 1 < positions; ++pos)
    for (size_t a = 0; a < processors_; ++a)
      for (size_t b = 0; b < processors_; ++b)
        transfer_[(static_cast<size_t>(pos) * processors_ + a) * processors_ + b] =
            latency.transition(processors[a], processors[b], boundaryBytes[static_cast<size_t>(pos)]);
}

double TaskSpace::latencyMs(size_t candidate, const std::vector<int>& placement) const {
  const auto& vs = candidateVariants_[candidate];
  double total = 0;
  for (int pos = 0; pos < positions; ++pos) {
    const size_t p = static_cast<size_t>(placement[static_cast<size_t>(pos)]);
    total += work_[(static_cast<size_t>(pos) * variants_ + static_cast<size_t>(vs[static_cast<size_t>(pos)])) * processors_ + p];
    if (pos == 0 || placement[static_cast<size_t>(pos - 1)] != placement[static_cast<size_t>(pos)]) {
      total += overhead_[p];
      if (pos > 0)
        total += transfer_[(static_cast<size_t>(pos - 1) * processors_ + static_cast<size_t>(placement[static_cast<size_t>(pos - 1)])) * processors_ + p];
    }
  }
  return total;
}


namespace {

// What plan-solve takes from report.json.
struct ProfileReport {
  std::string text;  // the file's bytes (hashed into the plan header)
  Json json;         // the whole document (for the recorded hashes of the files beside it)
  std::string stitchDir;                          // relative to the profile directory
  std::map<std::string, std::string> hostConfig;  // processor -> "policy@threads" it was measured under
  std::map<std::string, std::string> importFormat;  // processor -> format of its imported profile
  std::map<std::string, std::map<std::string, double>> overheadMs;  // task -> processor -> ms
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
  ZP_ASSIGN_OR_RETURN(auto tasks, root.array("tasks"));
  for (const auto& t : tasks) {
    ZP_ASSIGN_OR_RETURN(std::string name, t.id("name"));
    if (!t.has("latency_estimator")) continue;
    ZP_ASSIGN_OR_RETURN(JsonAt est, t.at("latency_estimator"));
    ZP_ASSIGN_OR_RETURN(JsonAt overheads, est.at("run_overhead_ms_calibrated_on_originals"));
    ZP_ASSIGN_OR_RETURN(auto members, overheads.members());
    for (const auto& [proc, ms] : members) {
      ZP_ASSIGN_OR_RETURN(r.overheadMs[name][proc], ms.number(0, kMaxLatencyMs));
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

}  // namespace

Expected<StitchSpace> loadStitchSpace(const fs::path& profileDir) {
  StitchSpace sp;
  sp.profileDir = profileDir;
  const fs::path reportPath = profileDir / "report.json";
  ZP_ASSIGN_OR_RETURN(ProfileReport report, readProfileReport(reportPath));
  sp.stitchDir = (profileDir / report.stitchDir).lexically_normal();
  ZP_ASSIGN_OR_RETURN(sp.manifest, artifacts::loadStitchManifest(sp.stitchDir));
  ZP_ASSIGN_OR_RETURN(auto zoo, artifacts::loadZoo((sp.stitchDir / sp.manifest.zooPath).lexically_normal()));
  // Each file is read once, checked against the hash report.json recorded
  // (files of two runs are never planned on together) and parsed from those bytes.
  std::map<std::string, std::string> bytesOf;
  for (const char* f : {"profile.csv", "accuracy.csv"}) {
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
  ZP_ASSIGN_OR_RETURN(auto db, artifacts::parseProfileCsv(bytesOf["profile.csv"], (profileDir / "profile.csv").string()));
  ZP_ASSIGN_OR_RETURN(auto acc, artifacts::parseAccuracyCsv(bytesOf["accuracy.csv"], (profileDir / "accuracy.csv").string()));

  // Processors, with the host configuration the profile measured them under.
  for (const auto& p : zoo.processors) {
    plan::PlanProcessor pp{p.name, p.kind, "host", "default", 1};
    if (p.profile) {
      pp.source = p.profile->source;
      if (!p.profile->policy.empty()) pp.policy = p.profile->policy;
      if (p.profile->threads) pp.threads = p.profile->threads;
    }
    if (auto it = report.hostConfig.find(p.name); it != report.hostConfig.end()) {
      ZP_ASSIGN_OR_RETURN(auto cfg, parseHostConfig(it->second, reportPath.string(), p.name));
      pp.source = "host";
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
    for (const auto& c : task.combinations) {
      const bool original = std::all_of(c.variants.begin(), c.variants.end(), [&](const auto& v) { return v == c.variants[0]; });
      // A variant's own subgraphs always chain; the baselines choose among the originals.
      if (!c.valid && original)
        return makeError("{}: task '{}': original variant '{}' is marked invalid", (sp.stitchDir / "stitch.json").string(),
                         task.name, c.id);
      if (!c.valid) continue;
      auto it = acc.find({task.name, c.id});
      if (it == acc.end())
        return makeError("{}: no accuracy for {}/{}", (profileDir / "accuracy.csv").string(), task.name, c.id);
      Candidate cand{c.id, c.variants, it->second.predicted, it->second.measured.value_or(-1.0), original};
      ts.candidates.push_back(std::move(cand));
    }
    ZP_TRY(estimate::checkPlacementSearch((sp.stitchDir / "stitch.json").string(), task.name, ts.candidates.size(),
                                          sp.processors.size(), ts.positions));
    // Latency model: subgraph rows under each processor's policy, overheads, transitions.
    for (const auto* r : db.select(profile::RowKind::Subgraph, task.name)) {
      auto p = std::find_if(sp.processors.begin(), sp.processors.end(), [&](const auto& x) { return x.name == r->processor; });
      if (p == sp.processors.end()) continue;
      if (p->source == "host" && r->policy != p->policy) continue;
      ts.latency.setSubgraph(*r->position, r->variant, r->processor, r->medianMs);
    }
    if (auto it = report.overheadMs.find(task.name); it != report.overheadMs.end())
      for (const auto& [proc, ms] : it->second) ts.latency.setOverhead(proc, ms);
    double perByte = 0;
    for (int pos = 0; pos + 1 < ts.positions; ++pos)
      ts.boundaryBytes.push_back(static_cast<double>(task.subgraph(pos, task.reference).outputs.at(0).bytes()));
    for (const auto* r : db.select(profile::RowKind::Transition, task.name))
      if (r->bytes && *r->bytes > 0) perByte = std::max(perByte, r->medianMs / static_cast<double>(*r->bytes));
    for (const auto& a : sp.processors)
      for (const auto& b : sp.processors)
        if (a.name != b.name) ts.latency.setTransition(a.name, b.name, {0.0, perByte});
    std::vector<std::string> names;
    for (const auto& p : sp.processors) names.push_back(p.name);
    ts.buildDense(names);
    sp.tasks.push_back(std::move(ts));
  }
  return sp;
}

}  // namespace zp::select
