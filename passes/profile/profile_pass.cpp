#include "passes/profile/profile_pass.h"

#include <charconv>
#include <chrono>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "libplan/estimate/latency_model.h"
#include "libplan/estimate/metrics.h"
#include "libplan/graph/analysis.h"
#include "libplan/graph/model_io.h"
#include "libplan/profile/import.h"
#include "libplan/profile/profile_db.h"
#include "libplan/profile/profile_report.h"
#include "libplan/profile/subgraph_map.h"
#include "libplan/runtime/measure.h"
#include "libplan/util/file.h"
#include "libplan/util/hash.h"
#include "libplan/util/output_dir.h"
#include "libplan/util/progress.h"
#include "libplan/util/validate.h"
#include "libplan/zoo/stitch_manifest.h"
#include "libplan/zoo/zoo.h"
#include "passes/profile/accuracy_eval.h"
#include "passes/profile/host_measure.h"
#include "passes/stitch/stitch.h"

namespace zp::profilepass {
namespace fs = std::filesystem;
using profile::ProfileDb;
using profile::ProfileRow;
using profile::RowKind;

Expected<ImportSpec> parseImportSpec(const std::string& arg) {
  ImportSpec s;
  auto eq = arg.find('='), colon = arg.find(':', eq == std::string::npos ? 0 : eq);
  if (eq == std::string::npos || colon == std::string::npos)
    return makeError("--import '{}': expected NAME=FORMAT:FILE[@TASK/VARIANT]", arg);
  s.processor = arg.substr(0, eq);
  s.format = arg.substr(eq + 1, colon - eq - 1);
  std::string rest = arg.substr(colon + 1);
  if (auto at = rest.rfind('@'); at != std::string::npos) {
    std::string tv = rest.substr(at + 1);
    rest = rest.substr(0, at);
    auto slash = tv.find('/');
    if (slash == std::string::npos) return makeError("--import '{}': expected @TASK/VARIANT after the file", arg);
    s.task = tv.substr(0, slash);
    s.variant = tv.substr(slash + 1);
  }
  if (s.format == "trtexec") {  // FILE may be PROFILE.json,LAYERINFO.json
    if (auto comma = rest.find(','); comma != std::string::npos) {
      s.layerInfo = rest.substr(comma + 1);
      rest = rest.substr(0, comma);
    }
  }
  s.file = rest;
  static const std::set<std::string> kFormats = {"ort-json", "trtexec", "openvino-csv", "csv"};
  if (!kFormats.count(s.format))
    return makeError("--import '{}': unknown format '{}' (ort-json, trtexec, openvino-csv, csv)", arg, s.format);
  if (s.file.empty()) return makeError("--import '{}': no file", arg);
  if (s.format != "csv" && s.task.empty())
    return makeError("--import '{}': say which variant the profile is of: @TASK/VARIANT", arg);
  return s;
}

Expected<HostOverride> parseHostOverride(const std::string& arg) {
  HostOverride h;
  auto eq = arg.find('=');
  if (eq == std::string::npos) return makeError("--processor '{}': expected NAME=host[:POLICY[@THREADS]]", arg);
  h.processor = arg.substr(0, eq);
  std::string rest = arg.substr(eq + 1);
  if (rest.rfind("host", 0) != 0) return makeError("--processor '{}': only 'host' can be measured here", arg);
  rest = rest.substr(4);
  if (!rest.empty()) {
    if (rest[0] != ':') return makeError("--processor '{}': expected host[:POLICY[@THREADS]]", arg);
    rest = rest.substr(1);
    if (auto at = rest.find('@'); at != std::string::npos) {
      const std::string n = rest.substr(at + 1);
      int64_t threads = 0;
      auto r = std::from_chars(n.data(), n.data() + n.size(), threads);
      if (r.ec != std::errc() || r.ptr != n.data() + n.size())
        return makeError("--processor '{}': threads must be a number", arg);
      if (auto p = threadCountProblem(threads)) return makeError("--processor '{}': {}", arg, *p);
      h.threads = static_cast<int>(threads);
      rest = rest.substr(0, at);
    }
    if (!rest.empty()) h.policy = rest;
  }
  if (!runtime::isKnownPolicy(h.policy)) return makeError("--processor '{}': unknown kernel policy '{}'", arg, h.policy);
  if (h.threads < 1) return makeError("--processor '{}': threads must be >= 1", arg);
  return h;
}

namespace {

using Clock = std::chrono::steady_clock;
double secondsSince(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

struct Processor {
  std::string name;
  bool host = true;
  HostConfig config;
  std::optional<ImportSpec> import;
};

Expected<std::vector<Processor>> resolveProcessors(const zoo::Zoo& zoo, const ProfileParams& params) {
  std::vector<Processor> out;
  for (const auto& p : zoo.processors) {
    Processor proc{p.name, true, {}, std::nullopt};
    if (p.profile) {
      if (!p.profile->policy.empty()) {
        if (!runtime::isKnownPolicy(p.profile->policy))
          return makeError("{}: processor '{}': unknown kernel policy '{}'", zoo.file.string(), p.name, p.profile->policy);
        proc.config.policy = p.profile->policy;
      }
      if (p.profile->threads) proc.config.threads = p.profile->threads;
      if (p.profile->source != "host") {
        proc.host = false;
        proc.import = ImportSpec{p.name, p.profile->source, zoo.resolve(p.profile->file).string(), "", "", ""};
      }
    }
    out.push_back(proc);
  }
  for (const auto& o : params.hostOverrides) {
    auto it = std::find_if(out.begin(), out.end(), [&](const Processor& p) { return p.name == o.processor; });
    if (it == out.end()) return makeError("--processor: the zoo has no processor '{}'", o.processor);
    it->host = true;
    it->import.reset();
    it->config = HostConfig{o.policy, o.threads};
  }
  for (const auto& imp : params.imports) {
    auto it = std::find_if(out.begin(), out.end(), [&](const Processor& p) { return p.name == imp.processor; });
    if (it == out.end()) return makeError("--import: the zoo has no processor '{}'", imp.processor);
    it->host = false;
    it->import = imp;
  }
  for (const auto& p : out)
    if (!p.host && p.import->format != "csv" && p.import->task.empty())
      return makeError("{}: processor '{}' imports {} but no variant is named (use --import {}={}:FILE@TASK/VARIANT)",
                       zoo.file.string(), p.name, p.import->format, p.name, p.import->format);
  return out;
}

std::string fmtNum(double v) { return profile::formatNumber(v); }

// `imports` (report.json's "imports") gets one entry for the processor.
Expected<ProfileDb> importProcessor(const Processor& proc, const zoo::Zoo& zoo, const zoo::StitchManifest& manifest,
                                    const fs::path& stitchDir, Json& imports) {
  const auto& spec = *proc.import;
  profile::ImportParams ip;
  ip.task = spec.task;
  ip.variant = spec.variant;
  ip.processor = proc.name;
  ProfileDb db;
  std::optional<onnx::ModelProto> model;
  if (!spec.task.empty()) {
    const zoo::TaskSpec* task = nullptr;
    for (const auto& t : zoo.tasks)
      if (t.name == spec.task) task = &t;
    if (!task) return makeError("--import {}: the zoo has no task '{}'", spec.file, spec.task);
    auto v = std::find_if(task->variants.begin(), task->variants.end(), [&](const auto& x) { return x.id == spec.variant; });
    if (v == task->variants.end()) return makeError("--import {}: task '{}' has no variant '{}'", spec.file, spec.task, spec.variant);
    ZP_ASSIGN_OR_RETURN(auto m, graph::loadModel(zoo.resolve(v->onnx)));
    model = std::move(m);
  }
  std::optional<graph::GraphView> view;
  if (model) view.emplace(*model);
  std::vector<ProfileRow> nodeRows;
  profile::ImportReport rep;
  if (spec.format == "csv") {
    ZP_ASSIGN_OR_RETURN(auto imp, profile::importGenericCsv(spec.file, view ? &*view : nullptr, ip));
    for (const auto* r : imp.rows.rows()) {
      ProfileRow row = *r;
      row.processor = proc.name;
      if (row.kind == RowKind::Node) nodeRows.push_back(row);
      else db.add(row);
    }
    rep = imp.report;
  } else {
    Expected<profile::NodeImport> imp = spec.format == "ort-json"   ? profile::importOrtProfile(spec.file, *view, ip)
                                       : spec.format == "trtexec"  ? profile::importTrtexecProfile(
                                                                         spec.file,
                                                                         spec.layerInfo.empty() ? std::nullopt : std::optional<fs::path>(spec.layerInfo),
                                                                         *view, ip)
                                                                   : profile::importOpenVinoCounters(spec.file, *view, ip);
    if (!imp.ok()) return imp.error();
    nodeRows = imp->rows;
    rep = imp->report;
  }
  Json j{{"processor", proc.name}, {"format", spec.format}, {"file", spec.file}, {"summary", rep.summary()},
         {"matched_share", rep.matchedShare()}, {"unmatched_names", rep.unmatchedNames}};
  if (!nodeRows.empty()) {
    ZP_ASSIGN_OR_RETURN(auto mapping, profile::mapToSubgraphs(nodeRows, manifest, stitchDir));
    for (auto& r : mapping.rows) db.add(r);
    for (auto& r : nodeRows) db.add(r);
    j["subgraph_mapping"] = mapping.summary();
    j["subgraph_coverage"] = mapping.coverage();
  }
  imports.push_back(j);
  return db;
}

std::string joinPlacement(const std::vector<std::string>& p) {
  std::string s;
  for (size_t i = 0; i < p.size(); ++i) s += (i ? ">" : "") + p[i];
  return s;
}

// What zoo-profile reads before it opens its output.
struct ProfileSources {
  fs::path stitchDir;
  zoo::StitchManifest manifest;
  std::string stitchBytes;
  zoo::Zoo zoo;
  std::vector<Processor> processors;
  Json imports;                    // report.json's "imports": what each imported profile matched
  std::vector<ProfileDb> imported; // their rows, in processor order
};

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
  ZP_ASSIGN_OR_RETURN(report[profile::kReportFilesKey], filesBeside(dir));
  return writeFileAtomic(dir / "report.json", canonicalJson(report));
}

// An earlier run's rows that this run may reuse: its report.json was made from
// the same inputs and its profile.csv is the one that report recorded.
struct Reusable {
  ProfileDb db;
  Json report;
};
std::optional<Reusable> reusableRows(const fs::path& dir, const Json& inputs) {
  auto text = readFile(dir / "report.json");
  auto csv = readFile(dir / "profile.csv");
  if (!text.ok() || !csv.ok()) return std::nullopt;
  Json report = Json::parse(*text, nullptr, false);
  if (report.is_discarded() || !report.is_object() || report.value("inputs", Json()) != inputs) return std::nullopt;
  const Json files = report.value(profile::kReportFilesKey, Json());
  if (!files.is_object() || files.value("profile.csv", std::string()) != sha256Hex(*csv)) return std::nullopt;
  auto db = profile::parseProfileCsv(*csv, (dir / "profile.csv").string());
  if (!db.ok()) return std::nullopt;
  return Reusable{std::move(*db), std::move(report)};
}

Expected<ProfileResult> profileInto(OutputDir& out, const ProfileSources& src, const ProfileParams& params,
                                    Clock::time_point tStart);

}  // namespace

Expected<ProfileResult> runZooProfile(const fs::path& stitchDir, const fs::path& outDir, const ProfileParams& params) {
  const auto tStart = Clock::now();
  ProfileSources src;
  src.stitchDir = stitchDir;
  ZP_ASSIGN_OR_RETURN(src.manifest, zoo::loadStitchManifest(stitchDir));
  ZP_ASSIGN_OR_RETURN(src.stitchBytes, readFile(stitchDir / "stitch.json"));
  const fs::path zooPath = (stitchDir / src.manifest.zooPath).lexically_normal();
  ZP_ASSIGN_OR_RETURN(src.zoo, zoo::loadZoo(zooPath));
  if (src.zoo.sha256 != src.manifest.zooSha256)
    return makeError("{}: {} changed since zoo-stitch wrote this directory; run zoo-stitch again",
                     (stitchDir / "stitch.json").string(), zooPath.string());
  ZP_ASSIGN_OR_RETURN(src.processors, resolveProcessors(src.zoo, params));
  for (const auto& t : src.manifest.tasks) {  // the lookup table holds every valid variant under every placement
    const auto valid = std::count_if(t.combinations.begin(), t.combinations.end(), [](const auto& c) { return c.valid; });
    ZP_TRY(estimate::checkPlacementSearch((stitchDir / "stitch.json").string(), t.name, static_cast<uint64_t>(valid),
                                          src.processors.size(), t.positions()));
  }
  // Imported profiles first: a bad file fails before anything is measured or written.
  src.imports = Json::array();
  for (const auto& p : src.processors) {
    if (p.host) continue;
    ZP_ASSIGN_OR_RETURN(auto rows, importProcessor(p, src.zoo, src.manifest, stitchDir, src.imports));
    src.imported.push_back(std::move(rows));
  }

  // Everything read is an input the output must keep clear of.
  std::vector<GuardedPath> inputs{{stitchDir, "input"}};
  for (const auto& f : src.zoo.files()) inputs.push_back({f, "input"});
  for (const auto& p : src.processors)
    if (p.import) {
      inputs.push_back({p.import->file, "input"});
      if (!p.import->layerInfo.empty()) inputs.push_back({p.import->layerInfo, "input"});
    }
  ZP_ASSIGN_OR_RETURN(OutputDir out, OutputDir::open(outDir, OutputDirOptions{"zoo-profile", inputs, params.stop}));
  auto result = profileInto(out, src, params, tStart);
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

namespace {

Expected<ProfileResult> profileInto(OutputDir& out, const ProfileSources& src, const ProfileParams& params,
                                    Clock::time_point tStart) {
  const fs::path& stitchDir = src.stitchDir;
  const auto& manifest = src.manifest;
  const auto& zoo = src.zoo;
  const auto& processors = src.processors;
  const fs::path stage = out.path();
  ProfileResult result;
  Json report;
  report["tool"] = params.tool;
  // Later stages find the stitch directory from here: relative to the profile directory.
  report["stitch_dir"] = fs::weakly_canonical(fs::absolute(stitchDir))
                             .lexically_relative(out.destination())
                             .generic_string();
  report["imports"] = src.imports;
  // The measuring program is an input too: a rebuilt runtime must re-measure.
  std::string toolSha = "unknown";
  if (auto exe = readFile("/proc/self/exe"); exe.ok()) toolSha = sha256Hex(*exe);
  Json inputs{{profile::kReportStitchKey, sha256Hex(src.stitchBytes)}, {"zoo_json_sha256", zoo.sha256}, {"tool_sha256", toolSha},
              {"repeat", params.repeat}, {"warmup", params.warmup}, {"processors", Json::array()}};
  for (const auto& p : processors) {
    Json pj{{"name", p.name}, {"host", p.host}};
    if (p.host) pj["config"] = p.config.label();
    else {
      ZP_ASSIGN_OR_RETURN(std::string bytes, readFile(p.import->file));
      pj["import"] = Json{{"format", p.import->format}, {"file", p.import->file}, {"sha256", sha256Hex(bytes)},
                          {"variant", p.import->task + "/" + p.import->variant}};
    }
    inputs["processors"].push_back(pj);
  }
  report["inputs"] = inputs;
  report["params"] = Json{{"training_fraction", params.trainingFraction}, {"seed", params.seed},
                          {"exhaustive_limit", params.exhaustiveLimit}, {"latency_validation", params.latencyValidation},
                          {"xgboost", Json{{"rounds", params.xgb.rounds}, {"max_depth", params.xgb.maxDepth},
                                           {"eta", params.xgb.eta}, {"seed", params.xgb.seed}}}};

  // Rows measured by an earlier run with the same inputs are kept (unless
  // --force): from the output this run replaces, then from runs into it that
  // were interrupted.
  std::vector<Reusable> previous;
  if (!params.force) {
    std::vector<fs::path> dirs;
    if (out.replacesEarlierRun()) dirs.push_back(out.destination());
    for (const auto& l : out.leftovers()) dirs.push_back(l);
    for (const auto& d : dirs)
      if (auto r = reusableRows(d, inputs)) previous.push_back(std::move(*r));
  }
  const bool reuse = !previous.empty();
  auto previousRow = [&](const std::string& task, int pos, const std::string& variant, const std::string& processor,
                         const std::string& policy) -> const ProfileRow* {
    for (const auto& p : previous)
      if (const auto* r = p.db.find(task, pos, variant, processor, policy); r && r->source == "host") return r;
    return nullptr;
  };

  MeasureParams mp{params.repeat, params.warmup};
  ProfileDb db;
  size_t reused = 0, measuredSubgraphs = 0, timedRuns = 0;
  std::map<std::string, double> overheadMs;  // host config label -> ms

  // --- 1. host latency per subgraph and configuration -----------------------
  const auto tLatency = Clock::now();
  std::set<HostConfig> configs;
  for (const auto& p : processors)
    if (p.host) configs.insert(p.config);
  for (const auto& c : configs) {
    const Json* earlier = nullptr;
    for (const auto& p : previous)
      if (!earlier && p.report.contains("run_overhead_ms") && p.report["run_overhead_ms"].is_object() &&
          p.report["run_overhead_ms"].contains(c.label()) && p.report["run_overhead_ms"][c.label()].is_number() &&
          !numberProblem(p.report["run_overhead_ms"][c.label()].get<double>(), 0, kMaxLatencyMs))
        earlier = &p.report["run_overhead_ms"][c.label()];
    if (earlier) {
      overheadMs[c.label()] = earlier->get<double>();
      continue;
    }
    ZP_ASSIGN_OR_RETURN(overheadMs[c.label()], measureRunOverhead(c, mp));
  }
  size_t work = 0;
  for (const auto& t : manifest.tasks) work += t.variants.size() * static_cast<size_t>(t.positions()) * configs.size();
  {
    Progress progress("measuring subgraphs", work);
    std::map<std::pair<std::string, std::string>, LatencyMeasurement> byHash;  // (hash, config) -> measurement
    for (const auto& task : manifest.tasks) {
      for (int pos = 0; pos < task.positions(); ++pos) {
        for (const auto& sg : task.subgraphs[static_cast<size_t>(pos)]) {
          for (const auto& config : configs) {
            if (params.stop && params.stop->load()) {
              result.interrupted = true;
              break;
            }
            std::vector<const Processor*> procs;
            for (const auto& p : processors)
              if (p.host && p.config == config) procs.push_back(&p);
            const ProfileRow* old = reuse ? previousRow(task.name, pos, sg.variant, procs.front()->name, config.policy) : nullptr;
            if (old) {
              for (const auto* p : procs) {
                ProfileRow r = *old;
                r.processor = p->name;
                db.add(r);
              }
              ++reused;
              progress.advance();
              continue;
            }
            auto key = std::make_pair(sg.hash, config.label());
            auto it = byHash.find(key);
            if (it == byHash.end()) {
              ZP_ASSIGN_OR_RETURN(auto session, runtime::Session::load(stitchDir / sg.file, sessionOptions(config)));
              auto in = runtime::randomInputs(*session, params.seed);
              ZP_ASSIGN_OR_RETURN(auto m, measureLatency(*session, in, mp));
              it = byHash.emplace(key, m).first;
              ++measuredSubgraphs;
              timedRuns += static_cast<size_t>(params.repeat + params.warmup + 1);
            }
            for (const auto* p : procs) {
              ProfileRow r;
              r.kind = RowKind::Subgraph;
              r.task = task.name;
              r.position = pos;
              r.variant = sg.variant;
              r.processor = p->name;
              r.policy = config.policy;
              r.medianMs = it->second.medianMs;
              r.p90Ms = it->second.p90Ms;
              r.runs = it->second.runs;
              r.memoryBytes = it->second.memoryBytes;
              r.source = "host";
              db.add(r);
            }
            progress.advance();
          }
        }
      }
      // Boundary hand-over between processors: a copy through shared memory.
      std::vector<std::string> hostNames;
      for (const auto& p : processors) hostNames.push_back(p.name);
      for (int pos = 0; pos + 1 < task.positions(); ++pos) {
        const auto& out = task.subgraph(pos, task.reference).outputs.at(0);
        const int64_t bytes = out.bytes();
        double ms = measureCopyMs(bytes, mp);
        for (const auto& from : hostNames)
          for (const auto& to : hostNames) {
            if (from == to) continue;
            ProfileRow r;
            r.kind = RowKind::Transition;
            r.task = task.name;
            r.position = pos;
            r.fromProcessor = from;
            r.toProcessor = to;
            r.bytes = bytes;
            r.medianMs = ms;
            r.source = "host";
            db.add(r);
          }
      }
    }
  }
  const double latencySeconds = secondsSince(tLatency);
  report["run_overhead_ms"] = Json::object();
  for (const auto& [k, v] : overheadMs) report["run_overhead_ms"][k] = v;

  // --- 2. imported device profiles ------------------------------------------
  for (const auto& rows : src.imported) db.merge(rows);  // read before measuring, in processor order
  ZP_TRY(profile::writeProfileCsv(db, stage / "profile.csv"));
  {
    // A checkpoint: should the run stop before the end, the next run reuses
    // these rows (the report is replaced by the complete one at the end).
    Json checkpoint = report;
    checkpoint["interrupted"] = true;
    ZP_TRY(writeReport(stage, checkpoint));
    if (result.interrupted) {
      const fs::path kept = out.keepUnfinished();
      result.report = checkpoint;
      result.summary = fmt::format("interrupted: {} is unchanged; kept {} measured rows in {} for the next run\n",
                                   out.destination().string(), db.size(), kept.string());
      return result;
    }
  }

  // --- 3. per-node features on the first host configuration ------------------
  std::string features = "task,position,variant,node,op_type,kernel,flops,weight_sparsity,activation_sparsity,intensity,ms\n";
  const Processor* featureProc = nullptr;
  for (const auto& p : processors)
    if (p.host && !featureProc) featureProc = &p;
  if (featureProc) {
    for (const auto& task : manifest.tasks) {
      const zoo::TaskSpec* spec = nullptr;
      for (const auto& t : zoo.tasks)
        if (t.name == task.name) spec = &t;
      const auto& shape = task.subgraph(0, task.reference).inputs.at(0).shape;
      std::vector<runtime::Tensor> calib;
      if (spec && spec->dataset) {
        std::string file = spec->dataset->calibration.empty() ? spec->dataset->inputs : spec->dataset->calibration;
        ZP_ASSIGN_OR_RETURN(calib, loadSamples(zoo.resolve(file), shape, params.calibrationSamples));
      }
      for (const auto& v : task.variants) {
        std::vector<runtime::TensorMap> current;
        for (int pos = 0; pos < task.positions(); ++pos) {
          const auto& sg = task.subgraph(pos, v.id);
          ZP_ASSIGN_OR_RETURN(auto model, graph::loadModel(stitchDir / sg.file, graph::LoadOptions{false, true}));
          ZP_ASSIGN_OR_RETURN(auto session, runtime::Session::fromModel(model, sg.file, sessionOptions(featureProc->config)));
          if (pos == 0) {
            current.clear();
            if (calib.empty()) current.push_back(runtime::randomInputs(*session, params.seed));
            for (const auto& x : calib) {
              runtime::TensorMap m;
              m.emplace(session->inputs().at(0).name, x);
              current.push_back(std::move(m));
            }
          } else {
            // The previous position's outputs feed this one, renamed to its input.
            for (auto& m : current) {
              runtime::Tensor t = m.begin()->second;
              m.clear();
              m.emplace(session->inputs().at(0).name, std::move(t));
            }
          }
          std::vector<runtime::TensorMap> outputs;
          ZP_ASSIGN_OR_RETURN(auto nf, nodeFeatures(*session, model, current, &outputs));
          current = std::move(outputs);
          for (const auto& f : nf) {
            features += fmt::format("{},{},{},{},{},{},{},{},{},{},{}\n", task.name, pos, v.id, f.node, f.opType, f.kernel,
                                    fmtNum(f.flops), fmtNum(f.weightSparsity), fmtNum(f.activationSparsity),
                                    fmtNum(f.intensity), fmtNum(f.ms));
          }
        }
      }
    }
  }
  ZP_TRY(writeFileAtomic(stage / "features.csv", features));

  // --- 4. accuracy, the accuracy estimator, and the lookup table --------------
  const auto tAccuracy = Clock::now();
  double estimatorSeconds = 0;
  size_t accuracySubgraphRuns = 0, accuracyModelRuns = 0, measuredCombinations = 0;
  std::string accuracyCsv = "task,combination,kind,measured_accuracy,predicted_accuracy,in_training_sample\n";
  std::string lookupCsv = "task,combination,predicted_accuracy,measured_accuracy,placement,predicted_latency_ms\n";
  report["tasks"] = Json::array();
  std::vector<std::string> procNames;
  for (const auto& p : processors) procNames.push_back(p.name);
  std::string summary = fmt::format("{:<14} {:>6} {:>9} {:>9} {:>8} {:>8} {:>9} {:>9}\n", "task", "valid", "measured",
                                    "training", "top10", "spearman", "lat MAPE", "lat MAE");

  for (const auto& task : manifest.tasks) {
    const zoo::TaskSpec* spec = nullptr;
    for (const auto& t : zoo.tasks)
      if (t.name == task.name) spec = &t;
    Json tj{{"name", task.name}};
    std::vector<size_t> valid, uniform;
    for (size_t k = 0; k < task.combinations.size(); ++k) {
      const auto& c = task.combinations[k];
      if (!c.valid) continue;
      valid.push_back(k);
      if (std::all_of(c.variants.begin(), c.variants.end(), [&](const auto& v) { return v == c.variants[0]; }))
        uniform.push_back(valid.size() - 1);
    }
    // Original variants' accuracy.
    std::map<std::string, double> originalAcc;
    std::map<size_t, double> measured;  // combination index -> measured accuracy
    std::optional<Dataset> data;
    std::map<std::string, std::vector<uint8_t>> correctness;  // per original variant, per test sample
    const auto& shape = task.subgraph(0, task.reference).inputs.at(0).shape;
    if (spec && spec->dataset) {
      ZP_ASSIGN_OR_RETURN(auto d, loadDataset(zoo.resolve(spec->dataset->inputs), zoo.resolve(spec->dataset->labels), shape));
      data = std::move(d);
      for (const auto& v : spec->variants) {
        runtime::SessionOptions o;
        o.checkModel = false;
        ZP_ASSIGN_OR_RETURN(auto session, runtime::Session::load(zoo.resolve(v.onnx), o));
        ZP_ASSIGN_OR_RETURN(originalAcc[v.id], modelAccuracy(*session, *data, &correctness[v.id]));
        accuracyModelRuns += data->samples.size();
      }
      tj["accuracy_source"] = "measured with the runtime on " + spec->dataset->inputs;
    } else {
      for (const auto& v : spec->variants) {
        if (!v.accuracy)
          return makeError("{}: task '{}' has no dataset and variant '{}' has no measured accuracy", zoo.file.string(),
                           task.name, v.id);
        originalAcc[v.id] = *v.accuracy;
      }
      tj["accuracy_source"] = "zoo.json";
    }
    Json origJ = Json::object();
    for (const auto& [k, v] : originalAcc) origJ[k] = v;
    tj["original_accuracy"] = origJ;

    // Features first: the sample is drawn in two rounds and the second round
    // looks at the first round's predictions.
    const auto tEst = Clock::now();
    estimate::StitchSignals signals;
    if (data) {
      std::vector<runtime::Tensor> calib;
      if (!spec->dataset->calibration.empty()) {
        ZP_ASSIGN_OR_RETURN(calib, loadSamples(zoo.resolve(spec->dataset->calibration), shape, params.calibrationSamples));
      } else {
        calib.assign(data->samples.begin(), data->samples.begin() + static_cast<std::ptrdiff_t>(
                                                                     std::min(data->samples.size(), params.calibrationSamples)));
      }
      ZP_ASSIGN_OR_RETURN(signals, stitchSignals(task, stitchDir, calib));
      signals.correct = correctness;
      Json dj = Json::object();
      for (const auto& [k, v] : signals.drift) dj[fmt::format("{}/{}", k.first, k.second)] = v;
      tj["subgraph_drift"] = dj;
    }
    auto feats = estimate::accuracyFeatures(task, originalAcc, signals);
    estimatorSeconds += secondsSince(tEst);

    // Measure every combination where affordable; otherwise only the training sample.
    bool exhaustive = false;
    if (data) {
      double runs = 0, level = 1;
      for (int p = 0; p < task.positions(); ++p) {
        level *= static_cast<double>(task.variants.size());
        runs += level * static_cast<double>(data->samples.size());
      }
      exhaustive = runs <= static_cast<double>(params.exhaustiveLimit);
    }
    auto measure = [&](const std::vector<size_t>& combos) -> Status {
      std::vector<size_t> todo;
      for (size_t k : combos)
        if (!measured.count(k)) todo.push_back(k);
      if (!data || todo.empty()) return {};
      Progress progress("accuracy of stitched variants (" + task.name + ")", todo.size());
      EvalStats stats;
      ZP_ASSIGN_OR_RETURN(auto acc, combinationAccuracy(task, stitchDir, *data, todo, params.jobs, &progress, params.stop, &stats));
      accuracySubgraphRuns += stats.subgraphRuns;
      for (size_t i = 0; i < todo.size(); ++i) measured[todo[i]] = acc[i];
      measuredCombinations += todo.size();
      return {};
    };
    if (!data)
      for (size_t u : uniform) measured[valid[u]] = originalAcc.at(task.combinations[valid[u]].variants[0]);
    if (exhaustive) ZP_TRY(measure(valid));

    // Training sample, originals always in it: half drawn at random, then the
    // rest where a first estimator trained on that half predicts the highest
    // accuracy — the region the top-K and the SLO choices are decided in.
    const size_t trainCount = std::max(uniform.size(), static_cast<size_t>(std::floor(params.trainingFraction * static_cast<double>(valid.size()))));
    std::vector<size_t> firstValid = estimate::sampleIndices(valid.size(), std::max(uniform.size(), trainCount / 2), params.seed, uniform);
    std::vector<size_t> trainRows;
    for (size_t i : firstValid) trainRows.push_back(valid[i]);
    ZP_TRY(measure(trainRows));
    auto labels = [&](const std::vector<size_t>& rows) {
      std::vector<double> y;
      for (size_t r : rows) y.push_back(measured.count(r) ? measured[r] : originalAcc.at(task.combinations[r].variants[0]));
      return y;
    };
    const auto tEst2 = Clock::now();
    if (trainRows.size() < trainCount) {
      ZP_ASSIGN_OR_RETURN(auto first, estimate::AccuracyEstimator::train(feats, trainRows, labels(trainRows), params.xgb));
      auto firstPred = first.predict(feats);
      std::set<size_t> chosen(trainRows.begin(), trainRows.end());
      std::vector<size_t> rest;
      for (size_t k : valid)
        if (!chosen.count(k)) rest.push_back(k);
      std::stable_sort(rest.begin(), rest.end(), [&](size_t x, size_t y) { return firstPred[x] > firstPred[y]; });
      for (size_t i = 0; i < rest.size() && trainRows.size() < trainCount; ++i) trainRows.push_back(rest[i]);
      std::sort(trainRows.begin(), trainRows.end());
      ZP_TRY(measure(trainRows));
    }
    if (data) {
      // Uniform combinations are the originals, run subgraph by subgraph: they must agree.
      int mismatches = 0;
      for (size_t u : uniform) {
        const auto& c = task.combinations[valid[u]];
        mismatches += std::abs(measured[valid[u]] - originalAcc.at(c.variants[0])) > 1e-12;
      }
      tj["original_vs_chained_subgraph_mismatches"] = mismatches;
    }
    tj["valid_combinations"] = valid.size();
    tj["measured_combinations"] = measured.size();
    tj["exhaustive"] = exhaustive;
    tj["training_sample"] = trainRows.size();
    tj["training_sample_random"] = firstValid.size();
    tj["training_fraction"] = valid.empty() ? 0.0 : static_cast<double>(trainRows.size()) / static_cast<double>(valid.size());

    ZP_ASSIGN_OR_RETURN(auto estimator, estimate::AccuracyEstimator::train(feats, trainRows, labels(trainRows), params.xgb));
    auto predicted = estimator.predict(feats);
    ZP_TRY(estimator.save(stage / ("accuracy_estimator_" + task.name + ".json")));
    estimatorSeconds += secondsSince(tEst2);

    std::set<size_t> trainSet(trainRows.begin(), trainRows.end());
    if (exhaustive) {
      std::vector<double> p, t, ph, th;
      for (size_t k : valid) {
        p.push_back(predicted[k]);
        t.push_back(measured[k]);
        if (!trainSet.count(k)) {
          ph.push_back(predicted[k]);
          th.push_back(measured[k]);
        }
      }
      Json q{{"top5_recall", estimate::topKRecall(p, t, 5)}, {"top10_recall", estimate::topKRecall(p, t, 10)},
             {"top20_recall", estimate::topKRecall(p, t, 20)}, {"spearman", estimate::spearman(p, t)},
             {"mae", estimate::meanAbsoluteError(p, t)}};
      q["held_out"] = Json{{"variants", ph.size()}, {"spearman", estimate::spearman(ph, th)},
                           {"mae", estimate::meanAbsoluteError(ph, th)}};
      // The baseline the estimator must beat: mean of the sources' accuracies.
      std::vector<double> naive;
      for (size_t k : valid) {
        double s = 0;
        for (const auto& v : task.combinations[k].variants) s += originalAcc.at(v);
        naive.push_back(s / static_cast<double>(task.positions()));
      }
      q["mean_source_accuracy_baseline"] = Json{{"top10_recall", estimate::topKRecall(naive, t, 10)},
                                                {"spearman", estimate::spearman(naive, t)},
                                                {"mae", estimate::meanAbsoluteError(naive, t)}};
      tj["accuracy_estimator"] = q;
    }
    for (size_t k : valid) {
      const auto& c = task.combinations[k];
      bool original = std::all_of(c.variants.begin(), c.variants.end(), [&](const auto& v) { return v == c.variants[0]; });
      accuracyCsv += fmt::format("{},{},{},{},{},{}\n", task.name, c.id, original ? "original" : "stitched",
                                 measured.count(k) ? fmtNum(measured[k]) : "", fmtNum(predicted[k]),
                                 trainSet.count(k) ? 1 : 0);
    }

    // Latency model from the profile rows.
    estimate::LatencyModel lm;
    for (const auto* r : db.select(RowKind::Subgraph, task.name)) {
      const Processor* proc = nullptr;
      for (const auto& p : processors)
        if (p.name == r->processor) proc = &p;
      if (!proc) continue;
      if (proc->host && r->policy != proc->config.policy) continue;
      lm.setSubgraph(*r->position, r->variant, r->processor, r->medianMs);
    }
    // The fixed cost a subgraph pays when run on its own, once per run: the
    // originals, measured whole and as the sum of their subgraphs, tell it
    // (median over originals of (sum - whole) / (S - 1)). Falls back to the
    // one-node probe when there is a single position.
    // Each stitched model is built once and run under every processor's configuration.
    std::map<size_t, onnx::ModelProto> models;  // valid index -> materialized model
    auto modelOf = [&](size_t validIndex) -> Expected<const onnx::ModelProto*> {
      auto it = models.find(validIndex);
      if (it == models.end()) {
        ZP_ASSIGN_OR_RETURN(auto m, stitch::materializeCombination(task, task.combinations[valid[validIndex]], stitchDir));
        it = models.emplace(validIndex, std::move(m)).first;
      }
      return &it->second;
    };
    Json calibrated = Json::object();
    for (const auto& p : processors) {
      double c0 = p.host ? overheadMs[p.config.label()] : 0.0;
      if (p.host && task.positions() > 1) {
        std::vector<double> samples;
        for (size_t u : uniform) {
          const auto& c = task.combinations[valid[u]];
          ZP_ASSIGN_OR_RETURN(const auto* model, modelOf(u));
          ZP_ASSIGN_OR_RETURN(auto session, runtime::Session::fromModel(*model, c.id, sessionOptions(p.config)));
          auto in = runtime::randomInputs(*session, params.seed);
          ZP_ASSIGN_OR_RETURN(auto whole, measureLatency(*session, in, mp));
          timedRuns += static_cast<size_t>(params.repeat + params.warmup + 1);
          double sum = 0;
          bool complete = true;
          for (int pos = 0; pos < task.positions(); ++pos) {
            const auto* r = db.find(task.name, pos, c.variants[0], p.name, p.config.policy);
            if (!r) complete = false;
            else sum += r->medianMs;
          }
          if (complete) samples.push_back((sum - whole.medianMs) / (task.positions() - 1));
        }
        if (!samples.empty()) {
          std::sort(samples.begin(), samples.end());
          c0 = std::max(0.0, samples[samples.size() / 2]);
        }
        // Every subgraph run pays the overhead once, so it cannot exceed the
        // fastest subgraph on this processor; on a busy machine the difference
        // of noisy medians can, and would make some estimates negative.
        for (const auto* r : db.select(RowKind::Subgraph, task.name, {}, p.name))
          if (r->policy == p.config.policy) c0 = std::min(c0, r->medianMs);
      }
      calibrated[p.name] = c0;
      lm.setOverhead(p.name, c0);
    }
    std::vector<double> boundaryBytes;
    double perByte = 0;
    for (int pos = 0; pos + 1 < task.positions(); ++pos) {
      boundaryBytes.push_back(static_cast<double>(task.subgraph(pos, task.reference).outputs.at(0).bytes()));
      for (const auto* r : db.select(RowKind::Transition, task.name))
        if (r->position == pos && r->bytes && *r->bytes > 0)
          perByte = std::max(perByte, r->medianMs / static_cast<double>(*r->bytes));
    }
    for (const auto& a : procNames)
      for (const auto& b : procNames)
        if (a != b) lm.setTransition(a, b, {0.0, perByte});
    auto placements = estimate::searchOrders(procNames, task.positions());
    size_t missingEstimates = 0;
    for (size_t k : valid) {
      const auto& c = task.combinations[k];
      for (const auto& pl : placements) {
        auto ms = lm.estimate(c.variants, pl, boundaryBytes);
        if (!ms) {
          ++missingEstimates;
          continue;
        }
        lookupCsv += fmt::format("{},{},{},{},{},{}\n", task.name, c.id, fmtNum(predicted[k]),
                                 measured.count(k) ? fmtNum(measured[k]) : "", joinPlacement(pl), fmtNum(*ms));
      }
    }
    tj["placements"] = placements.size();
    tj["lookup_rows_without_profile"] = missingEstimates;

    // Score the latency estimator against stitched variants measured end to end.
    // Validation on stitched variants only: the originals calibrated the overhead.
    std::vector<size_t> candidates;
    {
      std::set<size_t> u(uniform.begin(), uniform.end());
      for (size_t i = 0; i < valid.size(); ++i)
        if (!u.count(i)) candidates.push_back(i);
    }
    std::vector<size_t> sample;
    for (size_t i : estimate::sampleIndices(candidates.size(), params.latencyValidation, params.seed + 1, {}))
      sample.push_back(candidates[i]);
    std::vector<double> est, naive, meas;
    Json perProc = Json::object();
    for (const auto& p : processors) {
      if (!p.host) continue;
      std::vector<double> pe, pm;
      for (size_t i : sample) {
        if (params.stop && params.stop->load()) break;
        const auto& c = task.combinations[valid[i]];
        ZP_ASSIGN_OR_RETURN(const auto* model, modelOf(i));
        ZP_ASSIGN_OR_RETURN(auto session, runtime::Session::fromModel(*model, c.id, sessionOptions(p.config)));
        auto in = runtime::randomInputs(*session, params.seed);
        ZP_ASSIGN_OR_RETURN(auto m, measureLatency(*session, in, mp));
        timedRuns += static_cast<size_t>(params.repeat + params.warmup + 1);
        std::vector<std::string> placement(static_cast<size_t>(task.positions()), p.name);
        auto e = lm.estimate(c.variants, placement, boundaryBytes);
        if (!e) continue;
        double sum = 0;
        for (int pos = 0; pos < task.positions(); ++pos) sum += *lm.subgraph(pos, c.variants[static_cast<size_t>(pos)], p.name);
        est.push_back(*e);
        naive.push_back(sum);
        meas.push_back(m.medianMs);
        pe.push_back(*e);
        pm.push_back(m.medianMs);
      }
      perProc[p.name] = Json{{"mape", estimate::meanAbsolutePercentageError(pe, pm)},
                             {"mae_ms", estimate::meanAbsoluteError(pe, pm)}, {"variants", pm.size()}};
    }
    Json lat{{"validated_measurements", meas.size()},
             {"mape", estimate::meanAbsolutePercentageError(est, meas)},
             {"mae_ms", estimate::meanAbsoluteError(est, meas)},
             {"mape_plain_sum", estimate::meanAbsolutePercentageError(naive, meas)},
             {"per_processor", perProc},
             {"run_overhead_ms_calibrated_on_originals", calibrated}};
    tj["latency_estimator"] = lat;
    report["tasks"].push_back(tj);
    summary += fmt::format("{:<14} {:>6} {:>9} {:>9} {:>8} {:>8} {:>8.2f}% {:>7.4f}ms\n", task.name, valid.size(),
                           measured.size(), trainRows.size(),
                           exhaustive ? fmt::format("{:.3f}", tj["accuracy_estimator"]["top10_recall"].get<double>()) : "-",
                           exhaustive ? fmt::format("{:.3f}", tj["accuracy_estimator"]["spearman"].get<double>()) : "-",
                           100.0 * lat["mape"].get<double>(), lat["mae_ms"].get<double>());
  }
  const double accuracySeconds = secondsSince(tAccuracy);

  // --- 5. profiling cost: SparseLoom Table 1 and Eq. 6 ------------------------
  double T = static_cast<double>(manifest.tasks.size()), P = static_cast<double>(processors.size());
  double factP = 1;
  for (int i = 2; i <= static_cast<int>(processors.size()); ++i) factP *= i;
  double exhaustive = 0, withEstimators = 0;
  for (const auto& t : manifest.tasks) {
    double V = static_cast<double>(t.variants.size()), S = t.positions();
    exhaustive += std::pow(V, S) * (factP + 1);
    withEstimators += V + S * V * P;
  }
  report["profiling_cost"] = Json{
      {"paper_units", Json{{"exhaustive_T_V^S_(P!+1)", exhaustive}, {"with_estimators_T_V+T_S_V_P", withEstimators},
                           {"reduction", exhaustive > 0 ? 1.0 - withEstimators / exhaustive : 0.0},
                           {"tasks", T}, {"processors", P}}},
      {"runs_made", Json{{"subgraph_latency_measurements", measuredSubgraphs},
                         {"reused_rows", reused},
                         {"timed_model_runs", timedRuns},
                         {"accuracy_subgraph_runs", accuracySubgraphRuns},
                         {"accuracy_model_runs", accuracyModelRuns},
                         {"stitched_variants_with_measured_accuracy", measuredCombinations}}},
      {"seconds", Json{{"latency", latencySeconds}, {"accuracy_and_estimators", accuracySeconds},
                       {"estimator_training", estimatorSeconds}, {"total", secondsSince(tStart)}}}};
  if (reused) report["reused_rows_note"] = fmt::format("{} subgraph rows reused from the previous run (inputs unchanged; --force re-measures)", reused);

  ZP_TRY(writeFileAtomic(stage / "accuracy.csv", accuracyCsv));
  ZP_TRY(writeFileAtomic(stage / "lookup.csv", lookupCsv));
  ZP_TRY(writeReport(stage, report));
  ZP_TRY(out.commit());
  summary += fmt::format("profiling cost (SparseLoom Table 1 units): {:.0f} exhaustive vs {:.0f} with estimators ({:.1f}% less); took {:.1f} s\n",
                         exhaustive, withEstimators, 100.0 * (exhaustive > 0 ? 1.0 - withEstimators / exhaustive : 0.0),
                         secondsSince(tStart));
  if (reused) summary += report["reused_rows_note"].get<std::string>() + "\n";
  result.report = report;
  result.summary = summary;
  return result;
}

}  // namespace

}  // namespace zp::profilepass
