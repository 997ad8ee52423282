// zoo-profile's driver: reads the stitch directory and the zoo, opens the
// staged output, runs the steps of zoo_profile_steps.h in order and writes
// profile.csv, node_profile.csv, accuracy.csv, latency_model.json, the accuracy
// estimators and report.json (last, with the hashes of the files beside it).
#include "drivers/stitch_flow/zoo_profile.h"

#include <cmath>

#include "drivers/stitch_flow/subgraph_models_read.h"
#include "drivers/stitch_flow/zoo_profile_steps.h"
#include "libplan/plan/unit.h"
#include "libplan/artifacts/accuracy_csv.h"
#include "libplan/artifacts/cold_profile_csv.h"
#include "libplan/artifacts/node_profile_csv.h"
#include "passes/measure/cold_profile_measure.h"
#include "libplan/artifacts/latency_model_json.h"
#include "libplan/artifacts/mts_json.h"
#include "libplan/artifacts/profile_csv.h"
#include "libplan/artifacts/profile_report.h"
#include "libplan/artifacts/stitch_json.h"
#include "libplan/artifacts/zoo_json.h"
#include "libplan/estimate/latency_model.h"
#include "libplan/util/file.h"
#include "libplan/util/hash.h"
#include "libplan/util/progress.h"
#include "libplan/util/output_dir.h"

namespace zp::drivers {
namespace fs = std::filesystem;
using profile::ProfileDb;
using zoo_profile::Reusable;
using zoo_profile::Run;
using zoo_profile::Sources;

Expected<stitch::SubgraphModels> zoo_profile::readSubgraphModels(const Run& run, const zoo::TaskStitch& task,
                                                                 const graph::LoadOptions& options) {
  std::vector<std::string> files;
  for (const auto& row : task.subgraphs)
    for (const auto& sg : row) files.push_back(sg.file);
  return drivers::readSubgraphModels(files, run.src.stitchDir, options);
}

namespace {

// sha256 of every file in `dir` but report.json and the output marker: what
// report.json records of the files written beside it.
Expected<Json> filesBeside(const fs::path& dir) {
  std::map<std::string, std::string> hashes;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!it->is_regular_file() || name == "report.json" || name == kOutputMarker) continue;
    ZP_ASSIGN_OR_RETURN(std::string bytes, readFile(it->path()));
    hashes[name] = sha256Hex(bytes);
  }
  if (ec) return makeError("{}: cannot list: {}", dir.string(), ec.message());
  Json j = Json::object();
  for (const auto& [name, hash] : hashes) j[name] = hash;
  return j;
}

// Writes report.json last, recording in it the hashes of the files beside it.
Status writeReport(const fs::path& dir, Json& report) {
  ZP_ASSIGN_OR_RETURN(report[artifacts::kReportFilesKey], filesBeside(dir));
  return writeFileAtomic(dir / "report.json", canonicalJson(report));
}

// An earlier run's rows that this run may reuse: its report.json was made from
// the same inputs and its profile.csv is the one that report recorded.
std::optional<Reusable> reusableRows(const fs::path& dir, const Json& inputs) {
  auto text = readFile(dir / "report.json");
  auto csv = readFile(dir / "profile.csv");
  if (!text.ok() || !csv.ok()) return std::nullopt;
  Json report = Json::parse(*text, nullptr, false);
  if (report.is_discarded() || !report.is_object() || report.value("inputs", Json()) != inputs) return std::nullopt;
  const Json files = report.value(artifacts::kReportFilesKey, Json());
  if (!files.is_object() || files.value("profile.csv", std::string()) != sha256Hex(*csv)) return std::nullopt;
  auto db = artifacts::parseProfileCsv(*csv, (dir / "profile.csv").string());
  if (!db.ok()) return std::nullopt;
  return Reusable{std::move(*db), std::move(report)};
}

}  // namespace

int64_t zoo_profile::measuredBatch(const Sources& src, const ProfileParams& params) {
  return params.batch > 0 ? params.batch : src.manifest.batch;
}

Expected<Json> zoo_profile::runInputs(const Sources& src, const ProfileParams& params) {
  // The measuring program is an input too: a rebuilt runtime must re-measure.
  std::string toolSha = "unknown";
  if (auto exe = readFile("/proc/self/exe"); exe.ok()) toolSha = sha256Hex(*exe);
  Json inputs{{artifacts::kReportStitchKey, sha256Hex(src.stitchBytes)}, {"zoo_json_sha256", src.zoo.sha256},
              {"tool_sha256", toolSha}, {"repeat", params.repeat}, {"warmup", params.warmup},
              {"batch", measuredBatch(src, params)}, {"processors", Json::array()}};
  for (const auto& p : src.processors) {
    Json pj{{"name", p.name}, {"host", p.host()}};
    if (p.host()) pj["config"] = p.label();
    else {
      const ImportSpec& spec = src.importSpecs.at(p.name);
      ZP_ASSIGN_OR_RETURN(std::string bytes, readFile(spec.file));
      pj["import"] = Json{{"format", spec.format}, {"file", spec.file}, {"sha256", sha256Hex(bytes)},
                          {"variant", spec.task + "/" + spec.variant}};
    }
    inputs["processors"].push_back(pj);
  }
  if (src.groups) inputs[artifacts::kReportGroupsKey] = sha256Hex(src.groupsBytes);
  // The datasets accuracy is measured on: a changed one is measured again (and a plan made from it is stale).
  inputs["datasets"] = Json::array();
  for (const auto& t : src.zoo.tasks) {
    if (!t.dataset) continue;
    for (const std::string* file : {&t.dataset->inputs, &t.dataset->labels, &t.dataset->calibration}) {
      if (file->empty()) continue;
      ZP_ASSIGN_OR_RETURN(std::string bytes, readFile(src.zoo.resolve(*file)));
      inputs["datasets"].push_back(Json{{"task", t.name}, {"file", *file}, {"sha256", sha256Hex(bytes)}});
    }
  }
  return inputs;
}

namespace {
using zoo_profile::measuredBatch;
using zoo_profile::runInputs;

Expected<Json> reportHead(const OutputDir& out, const Sources& src, const ProfileParams& params) {
  Json report;
  report["tool"] = params.tool;
  // Later stages find the stitch directory from here: relative to the profile directory.
  report["stitch_dir"] = fs::weakly_canonical(fs::absolute(src.stitchDir))
                             .lexically_relative(out.destination())
                             .generic_string();
  report["imports"] = src.imports;
  ZP_ASSIGN_OR_RETURN(report["inputs"], runInputs(src, params));
  report["batch"] = measuredBatch(src, params);
  report["params"] = Json{{"training_fraction", params.trainingFraction}, {"accuracy_estimator", params.accuracyEstimator},
                          {"audit_fraction", params.auditFraction},
                          {"active_top", params.activeTop},
                          {"accuracy_budget", params.accuracyBudget},
                          {"seed", params.seed},
                          {"exhaustive_limit", params.exhaustiveLimit}, {"latency_validation", params.latencyValidation},
                          {"xgboost", Json{{"rounds", params.xgb.rounds}, {"max_depth", params.xgb.maxDepth},
                                           {"eta", params.xgb.eta}, {"seed", params.xgb.seed}}}};
  return report;
}

// Rows measured by an earlier run with the same inputs are kept (unless
// --force): from the output this run replaces, then from runs into it that
// were interrupted.
std::vector<Reusable> earlierRuns(const OutputDir& out, const Json& inputs, bool force) {
  std::vector<Reusable> previous;
  if (force) return previous;
  std::vector<fs::path> dirs;
  if (out.replacesEarlierRun()) dirs.push_back(out.destination());
  for (const auto& l : out.leftovers()) dirs.push_back(l);
  for (const auto& d : dirs)
    if (auto r = reusableRows(d, inputs)) previous.push_back(std::move(*r));
  return previous;
}

// Profiling cost: SparseLoom Table 1 and Eq. 6, in the paper's units, against
// the runs this run made.
struct CostSummary {
  double exhaustive = 0, withEstimators = 0;
  double reduction() const { return exhaustive > 0 ? 1.0 - withEstimators / exhaustive : 0.0; }
};
CostSummary profilingCost(const Run& run, Json& report, double latencySeconds, double accuracySeconds,
                          SteadyClock::time_point tStart) {
  const auto& manifest = run.src.manifest;
  const size_t processors = run.src.processors.size();
  double T = static_cast<double>(manifest.tasks.size()), P = static_cast<double>(processors);
  double factP = 1;
  for (int i = 2; i <= static_cast<int>(processors); ++i) factP *= i;
  CostSummary cost;
  for (const auto& t : manifest.tasks) {
    double V = static_cast<double>(t.variants.size()), S = t.positions();
    cost.exhaustive += std::pow(V, S) * (factP + 1);
    cost.withEstimators += V + S * V * P;
  }
  const auto& n = run.counts;
  report["profiling_cost"] = Json{
      {"paper_units", Json{{"exhaustive_T_V^S_(P!+1)", cost.exhaustive}, {"with_estimators_T_V+T_S_V_P", cost.withEstimators},
                           {"reduction", cost.reduction()}, {"tasks", T}, {"processors", P}}},
      {"runs_made", Json{{"subgraph_latency_measurements", n.measuredSubgraphs},
                         {"reused_rows", n.reused},
                         {"timed_model_runs", n.timedRuns},
                         {"node_profile_rows", n.nodeProfileRows},
                         {"accuracy_subgraph_runs", n.accuracySubgraphRuns},
                         {"accuracy_model_runs", n.accuracyModelRuns},
                         {"stitched_variants_with_measured_accuracy", n.measuredCombinations}}},
      {"seconds", Json{{"latency", latencySeconds}, {"node_profile", n.nodeProfileSeconds},
                       {"accuracy_and_estimators", accuracySeconds},
                       {"estimator_training", n.estimatorSeconds}, {"total", secondsSince(tStart)}}}};
  if (n.reused)
    report["reused_rows_note"] =
        fmt::format("{} subgraph rows reused from the previous run (inputs unchanged; --force re-measures)", n.reused);
  return cost;
}

std::string summaryHeader() {
  return fmt::format("{:<14} {:>6} {:>9} {:>9} {:>8} {:>8} {:>9} {:>9}\n", "task", "valid", "measured", "training",
                     "top10", "spearman", "lat MAPE", "lat MAE");
}

std::string summaryLine(const zoo::TaskStitch& task, const zoo_profile::TaskAccuracy& acc, const Json& tj) {
  const Json& lat = tj["latency_estimator"];
  auto estimator = [&](const char* key) {
    return acc.exhaustive ? fmt::format("{:.3f}", tj["accuracy_estimator"][key].get<double>()) : std::string("-");
  };
  return fmt::format("{:<14} {:>6} {:>9} {:>9} {:>8} {:>8} {:>8.2f}% {:>7.4f}ms\n", task.name, acc.valid.size(),
                     acc.measured.size(), acc.trainRows.size(), estimator("top10_recall_tie_aware"), estimator("spearman"),
                     100.0 * lat["mape"].get<double>(), lat["mae_ms"].get<double>());
}

// Step 2: imported rows merged, profile.csv written and a checkpoint report:
// should the run stop before the end, the next run reuses these rows (the
// report is replaced by the complete one at the end).
Status checkpoint(Run& run, const fs::path& stage, const Json& report) {
  for (const auto& rows : run.src.imported) run.db.merge(rows);  // read before measuring, in processor order
  ZP_TRY(artifacts::writeProfileCsv(run.db, stage / "profile.csv"));
  Json marked = report;
  marked["interrupted"] = true;
  return writeReport(stage, marked);
}

ProfileResult interruptedResult(OutputDir& out, const Run& run, Json report) {
  const fs::path kept = out.keepUnfinished();
  report["interrupted"] = true;
  ProfileResult result;
  result.interrupted = true;
  result.report = report;
  result.summary = fmt::format("interrupted: {} is unchanged; kept {} measured rows in {} for the next run\n",
                               out.destination().string(), run.db.size(), kept.string());
  return result;
}

// Step 4 over every task: accuracy.csv's rows, the latency models, report.json's tasks.
struct TaskResults {
  std::vector<artifacts::AccuracyCsvRow> accuracy;
  std::vector<estimate::TaskLatencyModel> latency;
  std::string summary;
};
Expected<TaskResults> profileTasks(Run& run, const fs::path& stage, Json& report) {
  TaskResults out;
  out.summary = summaryHeader();
  report["tasks"] = Json::array();
  for (const auto& task : run.src.manifest.tasks) {
    Json tj{{"name", task.name}};
    ZP_ASSIGN_OR_RETURN(auto acc, zoo_profile::profileTaskAccuracy(run, task, tj));
    for (auto& r : zoo_profile::accuracyRows(task, acc)) out.accuracy.push_back(std::move(r));
    ZP_ASSIGN_OR_RETURN(auto model, zoo_profile::calibrateTaskLatency(run, task, acc, tj));
    out.latency.push_back(std::move(model));
    out.summary += summaryLine(task, acc, tj);
    report["tasks"].push_back(tj);
  }
  return out;
}

// cold_profile.csv: the host's cold costs and every subgraph (label task/position/variant)
// under every kernel; first, while no GEMM library has run in this process.
Status measureColdProfiles(const Sources& src, const ProfileParams& params, const fs::path& stage, Json& report) {
  const auto t0 = SteadyClock::now();
  measure::ColdProfileParams cp;
  cp.warmRepeat = params.coldWarmRepeat;
  cp.workDir = stage / ".cold-profile-scratch";
  profile::ColdProfile profile;
  Status st = measure::measureColdHost(cp, profile);
  size_t subgraphs = 0, total = 0;
  for (const auto& task : src.manifest.tasks)
    for (const auto& position : task.subgraphs) total += position.size();
  Progress progress("zoo-profile: cold profile (every subgraph under every kernel)", total, "subgraphs");
  for (const auto& task : src.manifest.tasks)
    for (const auto& position : task.subgraphs)
      for (const auto& g : position) {
        if (!st.ok()) break;
        progress.advance();
        // Keyed as the plan's cold sections name the subgraph's unit.
        st = measure::measureColdModel(src.stitchDir / g.file,
                                       plan::UnitId::subgraph(task.name, g.position, g.variant).profileKey(), cp, profile);
        ++subgraphs;
      }
  std::error_code ec;
  fs::remove_all(cp.workDir, ec);
  if (!st.ok()) return st.error();
  ZP_TRY(artifacts::writeColdProfileCsv(profile, stage / "cold_profile.csv"));
  report["cold_profile"] = Json{{"subgraphs", subgraphs}, {"seconds", secondsSince(t0)}};
  return {};
}

Expected<ProfileResult> profileInto(OutputDir& out, const Sources& src, const ProfileParams& params,
                                    const zoo_profile::Given* given, SteadyClock::time_point tStart) {
  const fs::path stage = out.path();
  ZP_ASSIGN_OR_RETURN(Json report, reportHead(out, src, params));
  Run run{src, params, measure::MeasureParams{params.repeat, params.warmup}, {}, {}, {}, {}};
  run.previous = earlierRuns(out, report["inputs"], params.force);
  run.batch = measuredBatch(src, params);
  if (given) {
    run.given = &given->measurements;
    if (report["inputs"] != given->inputs)
      return makeError("{}: the shards were measured from other inputs than this merge sees ({} differs); merge "
                       "with the zoo-profile and the files the shards were made with",
                       given->label, zoo_profile::firstDifference(given->inputs, report["inputs"]));
  }

  if (params.coldProfile) ZP_TRY(measureColdProfiles(src, params, stage, report));
  const auto tLatency = SteadyClock::now();
  ZP_ASSIGN_OR_RETURN(bool interrupted, zoo_profile::measureHostLatency(run));
  const double latencySeconds = secondsSince(tLatency);
  report["run_overhead_ms"] = Json::object();
  for (const auto& [k, v] : run.overheadMs) report["run_overhead_ms"][k] = v;
  ZP_TRY(checkpoint(run, stage, report));
  if (interrupted) return interruptedResult(out, run, report);

  const auto tNodes = SteadyClock::now();
  ZP_ASSIGN_OR_RETURN(auto nodeRows, zoo_profile::measureNodeProfiles(run));
  ZP_TRY(writeFileAtomic(stage / "node_profile.csv", artifacts::formatNodeProfileCsv(nodeRows)));
  run.counts.nodeProfileRows = nodeRows.size();
  run.counts.nodeProfileSeconds = secondsSince(tNodes);

  const auto tAccuracy = SteadyClock::now();
  ZP_ASSIGN_OR_RETURN(TaskResults tasks, profileTasks(run, stage, report));
  const double accuracySeconds = secondsSince(tAccuracy);
  const CostSummary cost = profilingCost(run, report, latencySeconds, accuracySeconds, tStart);

  ZP_TRY(writeFileAtomic(stage / "accuracy.csv", artifacts::formatAccuracyCsv(tasks.accuracy)));
  ZP_TRY(writeFileAtomic(stage / "latency_model.json", artifacts::formatLatencyModel(tasks.latency)));
  ZP_TRY(writeReport(stage, report));
  ZP_TRY(out.commit());
  ProfileResult result;
  result.summary = tasks.summary;
  result.summary += fmt::format(
      "profiling cost (SparseLoom Table 1 units): {:.0f} exhaustive vs {:.0f} with estimators ({:.1f}% less); took {:.1f} s\n",
      cost.exhaustive, cost.withEstimators, 100.0 * cost.reduction(), secondsSince(tStart));
  if (run.counts.reused) result.summary += report["reused_rows_note"].get<std::string>() + "\n";
  result.report = report;
  return result;
}

}  // namespace

Expected<zoo_profile::SourcesRead> zoo_profile::readSources(const fs::path& stitchDir, const ProfileParams& params) {
  SourcesRead r;
  Sources& src = r.sources;
  src.stitchDir = stitchDir;
  ZP_ASSIGN_OR_RETURN(src.manifest, artifacts::loadStitchManifest(stitchDir));
  ZP_ASSIGN_OR_RETURN(src.stitchBytes, readFile(stitchDir / "stitch.json"));
  const fs::path zooPath = (stitchDir / src.manifest.zooPath).lexically_normal();
  ZP_ASSIGN_OR_RETURN(src.zoo, artifacts::loadZoo(zooPath));
  if (src.zoo.sha256 != src.manifest.zooSha256)
    return makeError("{}: {} changed since zoo-stitch wrote this directory; run zoo-stitch again",
                     (stitchDir / "stitch.json").string(), zooPath.string());
  ZP_TRY(zoo_profile::resolveProcessors(src, params));
  if (const fs::path groups = stitchDir / zoo::kStitchGroupsManifest; fs::exists(groups)) {
    ZP_ASSIGN_OR_RETURN(src.groupsBytes, readFile(groups));
    ZP_ASSIGN_OR_RETURN(src.groups, artifacts::parseMtsManifest(src.groupsBytes, groups.string()));
  }
  for (const auto& t : src.manifest.tasks) {  // the lookup table holds every valid variant under every placement
    const auto valid = std::count_if(t.combinations.begin(), t.combinations.end(), [](const auto& c) { return c.valid; });
    ZP_TRY(estimate::checkPlacementSearch((stitchDir / "stitch.json").string(), t.name, static_cast<uint64_t>(valid),
                                          src.processors.size(), t.positions()));
  }
  // Imported profiles first: a bad file fails before anything is measured or written.
  src.imports = Json::array();
  for (const auto& p : src.processors) {
    if (p.host()) continue;
    ZP_ASSIGN_OR_RETURN(auto rows, zoo_profile::importProcessor(p, src.importSpecs.at(p.name), src.zoo, src.manifest,
                                                                stitchDir, src.imports));
    src.imported.push_back(std::move(rows));
  }
  // Everything read is an input the output must keep clear of.
  r.inputs = {{stitchDir, "input"}};
  for (const auto& f : src.zoo.files()) r.inputs.push_back({f, "input"});
  for (const auto& [name, spec] : src.importSpecs) {
    r.inputs.push_back({spec.file, "input"});
    if (!spec.layerInfo.empty()) r.inputs.push_back({spec.layerInfo, "input"});
  }
  return r;
}

Expected<ProfileResult> runZooProfile(const fs::path& stitchDir, const fs::path& outDir, const ProfileParams& params) {
  return zoo_profile::runProfile(stitchDir, outDir, params, nullptr);
}

Expected<ProfileResult> zoo_profile::runProfile(const fs::path& stitchDir, const fs::path& outDir,
                                                const ProfileParams& params, const Given* given) {
  const auto tStart = SteadyClock::now();
  ZP_ASSIGN_OR_RETURN(SourcesRead read, readSources(stitchDir, params));
  const Sources& src = read.sources;
  auto inputs = read.inputs;
  if (given) inputs.insert(inputs.end(), given->guarded.begin(), given->guarded.end());
  ZP_ASSIGN_OR_RETURN(OutputDir out, OutputDir::open(outDir, OutputDirOptions{"zoo-profile", inputs, params.stop}));
  auto result = profileInto(out, src, params, given, tStart);
  if (!result.ok() && params.stop && params.stop->load()) {
    // Interrupted in a later phase: the staged tree holds the measured rows
    // (profile.csv and a report marked interrupted) for the next run.
    const fs::path kept = out.keepUnfinished();
    ProfileResult r;
    r.interrupted = true;
    r.summary = fmt::format("interrupted: {} is unchanged; the measured rows are kept in {} for the next run\n",
                            outDir.string(), kept.string());
    return r;
  }
  return result;
}

}  // namespace zp::drivers
