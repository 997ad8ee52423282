#include "drivers/cold_flow/solve_cold.h"

#include <fmt/format.h>

#include "libplan/artifacts/cold_profile_csv.h"
#include "libplan/artifacts/cold_run_json.h"
#include "libplan/artifacts/plan_json.h"
#include "libplan/util/file.h"
#include "libplan/util/hash.h"
#include "libplan/util/json_reader.h"

namespace zp::drivers {
namespace fs = std::filesystem;

namespace {

// The outermost directory of `dir` that does not exist yet (empty: it exists).
fs::path firstMissingDir(const fs::path& dir) {
  std::error_code ec;
  fs::path missing;
  for (fs::path d = fs::absolute(dir, ec); !d.empty() && !fs::exists(d, ec); d = d.parent_path()) {
    missing = d;
    if (d == d.parent_path()) break;
  }
  return missing;
}

Expected<profile::ColdProfile> measureProfile(const SolveColdOptions& o, const std::string& label) {
  measure::ColdProfileParams mp = o.measure;
  fs::path created;  // directories the scratch space creates: removed again, the plan creates its own
  if (mp.workDir.empty()) {
    fs::path dir = o.output.parent_path().empty() ? fs::path(".") : o.output.parent_path();
    mp.workDir = dir / fmt::format(".{}.cold-profile", o.output.filename().string());
    created = firstMissingDir(dir);
  }
  profile::ColdProfile p;
  Status st = measure::measureColdHost(mp, p);
  if (st.ok()) st = measure::measureColdModel(o.model, label, mp, p);
  std::error_code ec;
  fs::remove_all(created.empty() ? mp.workDir : created, ec);
  if (!st.ok()) return st.error();
  return p;
}

Status makeParentDir(const fs::path& file) {
  if (file.parent_path().empty()) return {};
  std::error_code ec;
  fs::create_directories(file.parent_path(), ec);
  if (ec) return makeError("{}: cannot create its directory: {}", file.string(), ec.message());
  return {};
}

}  // namespace

std::string coldSummary(const plan::ColdPlan& c) {
  std::string s = fmt::format("cold start of {} on {} core(s), storage {:.0f} MB/s — PREDICTED by the cost model "
                              "from the measured cold profile, not measured runs\n",
                              c.unit.name, c.cores, c.storageMBps);
  if (c.calibrationRuns > 0)
    s += fmt::format("calibrated against {} measured cold run(s): first executions x{:.2f}, transforms {:.3f} ms + "
                     "x{:.2f}, reads {:.3f} ms + {:.0f} MB/s, GEMM start-ups x{:.2f}, setup x{:.2f}\n",
                     c.calibrationRuns, c.executeFactor, c.transformOverheadMs, c.transformFactor, c.readLatencyMs,
                     c.storageMBps, c.startupFactor, c.setupFactor);
  for (const auto& [kernel, f] : c.kernelExecuteFactors)
    s += fmt::format("  first executions of {}: x{:.2f}\n", kernel, f);
  s += fmt::format("  {:<7} {:>6} {:>6} {:>6} {:>8} {:>16} {}\n", "config", "kernel", "cache", "pipe", "gemm",
                   "predicted ms", "solved");
  for (const auto& k : c.configurations)
    s += fmt::format("  {:<7} {:>6} {:>6} {:>6} {:>8} {:>16.2f} {}\n", k.name, k.kernelSelection ? "yes" : "-",
                     k.caching ? "yes" : "-", k.pipelining ? "yes" : "-", k.gemm.empty() ? "none" : k.gemm,
                     k.predictedMs, k.status);
  int cached = 0, transformed = 0, switches = 0;
  for (const auto& n : c.nodes) {
    cached += n.weights == "cache";
    transformed += n.weights == "transform";
    switches += n.warmKernel != n.kernel || n.warmGemm != n.gemm;
  }
  s += fmt::format("plan ({}): predicted cold {:.2f} ms ({}, {}; lower bound {:.2f} ms), {} node(s) from the cache, "
                   "{} transformed at load, {} switch kernel or GEMM library for warm runs (warm weights ready at {:.2f} ms, "
                   "predicted warm run {:.2f} ms)\n",
                   c.configuration, c.predictedColdMs, c.status, c.solver, c.lowerBoundMs, cached, transformed, switches,
                   c.predictedWarmReadyMs, c.predictedWarmMs);
  return s;
}

Expected<SolveColdResult> solveCold(const SolveColdOptions& o) {
  ZP_ASSIGN_OR_RETURN(std::string modelBytes, readFile(o.model));
  const std::string label = o.profileModel.empty() ? o.model.stem().string() : o.profileModel;
  profile::ColdProfile profile;
  std::string profileBytes;  // hashed into the header: the bytes that were parsed
  if (!o.coldProfile.empty()) {
    ZP_ASSIGN_OR_RETURN(profileBytes, readFile(o.coldProfile));
    ZP_ASSIGN_OR_RETURN(profile, artifacts::parseColdProfileCsv(profileBytes, o.coldProfile.string()));
  } else {
    ZP_ASSIGN_OR_RETURN(profile, measureProfile(o, label));
  }
  coldstart::ColdStartParams solve = o.solve;
  std::vector<std::string> runBytes;  // hashed into the header
  if (!o.calibrationRuns.empty()) {
    std::vector<profile::MeasuredColdRun> runs;
    std::vector<std::string> sources;
    for (const auto& f : o.calibrationRuns) {
      sources.push_back(f.string());
      ZP_ASSIGN_OR_RETURN(std::string bytes, readFile(f));
      ZP_ASSIGN_OR_RETURN(Json doc, parseJson(bytes, f.string()));
      ZP_ASSIGN_OR_RETURN(profile::MeasuredColdRun run, artifacts::parseColdRunReport(doc, f.string()));
      runs.push_back(std::move(run));
      runBytes.push_back(std::move(bytes));
    }
    ZP_ASSIGN_OR_RETURN(solve.calibration, coldstart::calibrate(profile, label, runs, sources));
  }
  const plan::UnitId unit = plan::UnitId::model(label);
  auto cold = coldstart::planColdStart(profile, unit, solve);
  if (!cold.ok()) {
    const std::string source = o.coldProfile.empty() ? o.model.string() : o.coldProfile.string();
    return makeError("{}: {}", source, cold.error().message);
  }
  if (o.coldProfile.empty() && !o.writeProfile.empty()) {
    ZP_TRY(makeParentDir(o.writeProfile));
    ZP_TRY(artifacts::writeColdProfileCsv(profile, o.writeProfile));
  }
  plan::Plan p;
  p.header.tool = o.tool;
  p.header.version = o.version;
  p.header.inputs[o.model.string()] = sha256Hex(modelBytes);
  if (!o.coldProfile.empty()) p.header.inputs[o.coldProfile.string()] = sha256Hex(profileBytes);
  for (size_t i = 0; i < o.calibrationRuns.size(); ++i)
    p.header.inputs[o.calibrationRuns[i].string()] = sha256Hex(runBytes[i]);
  plan::Unit u;
  u.id = unit;
  u.file = o.model.string();
  u.sha256 = p.header.inputs[o.model.string()];
  u.residency = plan::kColdUnit;
  p.units.push_back(std::move(u));
  p.cold.push_back(*cold);
  ZP_TRY(makeParentDir(o.output));
  ZP_TRY(createParentDirectories(o.output));
  ZP_TRY(artifacts::writePlan(p, o.output));
  return SolveColdResult{coldSummary(*cold)};
}

}  // namespace zp::drivers
