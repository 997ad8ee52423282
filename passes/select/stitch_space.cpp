#include "passes/select/stitch_space.h"

#include <fstream>
#include <limits>
#include <map>
#include <sstream>

#include "libplan/profile/profile_db.h"
#include "libplan/profile/profile_report.h"
#include "libplan/util/file.h"
#include "libplan/plan/plan.h"
#include "libplan/util/hash.h"
#include "libplan/zoo/zoo.h"

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


Expected<StitchSpace> loadStitchSpace(const fs::path& profileDir) {
  StitchSpace sp;
  sp.profileDir = profileDir;
  const fs::path reportPath = profileDir / "report.json";
  ZP_ASSIGN_OR_RETURN(std::string reportText, readFile(reportPath));
  Json report = Json::parse(reportText, nullptr, false);
  if (report.is_discarded() || !report.contains("stitch_dir") || !report.contains("tasks"))
    return makeError("{}: not a zoo-profile report (run zoo-profile first)", reportPath.string());
  if (report.value("interrupted", false))
    return makeError("{}: the profile run was interrupted; run zoo-profile again to complete it", reportPath.string());
  sp.stitchDir = (profileDir / report["stitch_dir"].get<std::string>()).lexically_normal();
  ZP_ASSIGN_OR_RETURN(sp.manifest, zoo::loadStitchManifest(sp.stitchDir));
  ZP_ASSIGN_OR_RETURN(auto zoo, zoo::loadZoo((sp.stitchDir / sp.manifest.zooPath).lexically_normal()));
  // Each file is read once, checked against the hash report.json recorded
  // (files of two runs are never planned on together) and parsed from those bytes.
  std::map<std::string, std::string> bytesOf;
  for (const char* f : {"profile.csv", "accuracy.csv"}) {
    ZP_ASSIGN_OR_RETURN(bytesOf[f], readFile(profileDir / f));
    ZP_TRY(profile::checkRecordedFile(report, reportPath, profileDir / f, bytesOf[f]));
    sp.inputHashes[std::string("profile/") + f] = sha256Hex(bytesOf[f]);
  }
  sp.inputHashes["profile/report.json"] = sha256Hex(reportText);
  {
    ZP_ASSIGN_OR_RETURN(std::string bytes, readFile(sp.stitchDir / "stitch.json"));
    ZP_TRY(profile::checkRecordedStitch(report, reportPath, sp.stitchDir / "stitch.json", bytes));
    sp.inputHashes[plan::kPlanStitchInput] = sha256Hex(bytes);
  }
  ZP_ASSIGN_OR_RETURN(auto db, profile::parseProfileCsv(bytesOf["profile.csv"], (profileDir / "profile.csv").string()));

  // Processors, with the host configuration the profile measured them under.
  std::map<std::string, Json> procReport;
  for (const auto& p : report["inputs"]["processors"]) procReport[p["name"].get<std::string>()] = p;
  for (const auto& p : zoo.processors) {
    plan::PlanProcessor pp{p.name, p.kind, "host", "default", 1};
    if (p.profile) {
      pp.source = p.profile->source;
      if (!p.profile->policy.empty()) pp.policy = p.profile->policy;
      if (p.profile->threads) pp.threads = p.profile->threads;
    }
    auto it = procReport.find(p.name);
    if (it != procReport.end() && it->second.contains("config")) {
      std::string cfg = it->second["config"].get<std::string>();  // "policy@threads"
      auto at = cfg.find('@');
      pp.source = "host";
      pp.policy = cfg.substr(0, at);
      pp.threads = std::stoi(cfg.substr(at + 1));
    } else if (it != procReport.end() && it->second.contains("import")) {
      pp.source = it->second["import"]["format"].get<std::string>();
    }
    sp.processors.push_back(pp);
  }

  // Accuracy per combination.
  std::map<std::pair<std::string, std::string>, std::pair<double, double>> acc;  // (task, combo) -> (pred, measured)
  {
    std::istringstream in(bytesOf["accuracy.csv"]);
    std::string line;
    std::getline(in, line);
    if (line != "task,combination,kind,measured_accuracy,predicted_accuracy,in_training_sample")
      return makeError("{}: unexpected header", (profileDir / "accuracy.csv").string());
    int lineNo = 1;
    while (std::getline(in, line)) {
      ++lineNo;
      std::vector<std::string> cells;
      std::stringstream ls(line);
      std::string cell;
      while (std::getline(ls, cell, ',')) cells.push_back(cell);
      if (cells.size() < 5) return makeError("{}:{}: expected 6 cells", (profileDir / "accuracy.csv").string(), lineNo);
      try {
        double measured = cells[3].empty() ? -1.0 : std::stod(cells[3]);
        acc[{cells[0], cells[1]}] = {std::stod(cells[4]), measured};
      } catch (...) {
        return makeError("{}:{}: not a number", (profileDir / "accuracy.csv").string(), lineNo);
      }
    }
  }

  for (const auto& task : sp.manifest.tasks) {
    TaskSpace ts;
    ts.name = task.name;
    ts.positions = task.positions();
    ts.stitch = &task;
    for (const auto& c : task.combinations) {
      if (!c.valid) continue;
      auto it = acc.find({task.name, c.id});
      if (it == acc.end())
        return makeError("{}: no accuracy for {}/{}", (profileDir / "accuracy.csv").string(), task.name, c.id);
      Candidate cand{c.id, c.variants, it->second.first, it->second.second, false};
      cand.original = std::all_of(c.variants.begin(), c.variants.end(), [&](const auto& v) { return v == c.variants[0]; });
      ts.candidates.push_back(std::move(cand));
    }
    // Latency model: subgraph rows under each processor's policy, overheads, transitions.
    for (const auto* r : db.select(profile::RowKind::Subgraph, task.name)) {
      auto p = std::find_if(sp.processors.begin(), sp.processors.end(), [&](const auto& x) { return x.name == r->processor; });
      if (p == sp.processors.end()) continue;
      if (p->source == "host" && r->policy != p->policy) continue;
      ts.latency.setSubgraph(*r->position, r->variant, r->processor, r->medianMs);
    }
    for (const auto& tj : report["tasks"])
      if (tj["name"] == task.name && tj.contains("latency_estimator"))
        for (auto it = tj["latency_estimator"]["run_overhead_ms_calibrated_on_originals"].begin();
             it != tj["latency_estimator"]["run_overhead_ms_calibrated_on_originals"].end(); ++it)
          ts.latency.setOverhead(it.key(), it.value().get<double>());
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
