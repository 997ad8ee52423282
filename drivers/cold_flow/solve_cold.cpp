#include "drivers/cold_flow/solve_cold.h"

#include <fmt/format.h>

#include "libplan/artifacts/cold_profile_csv.h"
#include "libplan/artifacts/plan_json.h"
#include "libplan/util/file.h"
#include "libplan/util/hash.h"

namespace zp::drivers {
namespace fs = std::filesystem;

namespace {

Expected<profile::ColdProfile> measureProfile(const SolveColdOptions& o, const std::string& label) {
  measure::ColdProfileParams mp = o.measure;
  if (mp.workDir.empty()) {
    fs::path dir = o.output.parent_path().empty() ? fs::path(".") : o.output.parent_path();
    mp.workDir = dir / fmt::format(".{}.cold-profile", o.output.filename().string());
  }
  profile::ColdProfile p;
  Status st = measure::measureColdHost(mp, p);
  if (st.ok()) st = measure::measureColdModel(o.model, label, mp, p);
  std::error_code ec;
  fs::remove_all(mp.workDir, ec);
  if (!st.ok()) return st.error();
  return p;
}

}  // namespace

std::string coldSummary(const plan::ColdPlan& c) {
  std::string s = fmt::format("cold start of {} on {} core(s), storage {:.0f} MB/s — PREDICTED by the cost model "
                              "from the measured cold profile, not measured runs\n",
                              c.model, c.cores, c.storageMBps);
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
    switches += n.warmKernel != n.kernel;
  }
  s += fmt::format("plan (K+C+P): predicted cold {:.2f} ms ({}, {}; lower bound {:.2f} ms), {} node(s) from the cache, "
                   "{} transformed at load, {} switch kernel for warm runs (warm weights ready at {:.2f} ms, "
                   "predicted warm run {:.2f} ms)\n",
                   c.predictedColdMs, c.status, c.solver, c.lowerBoundMs, cached, transformed, switches,
                   c.predictedWarmReadyMs, c.predictedWarmMs);
  return s;
}

Expected<SolveColdResult> solveCold(const SolveColdOptions& o) {
  ZP_ASSIGN_OR_RETURN(std::string modelBytes, readFile(o.model));
  const std::string label = o.profileModel.empty() ? o.model.stem().string() : o.profileModel;
  profile::ColdProfile profile;
  if (!o.coldProfile.empty()) {
    ZP_ASSIGN_OR_RETURN(profile, artifacts::readColdProfileCsv(o.coldProfile));
  } else {
    ZP_ASSIGN_OR_RETURN(profile, measureProfile(o, label));
    if (!o.writeProfile.empty()) ZP_TRY(artifacts::writeColdProfileCsv(profile, o.writeProfile));
  }
  auto cold = coldstart::planColdStart(profile, label, o.solve);
  if (!cold.ok()) {
    const std::string source = o.coldProfile.empty() ? o.model.string() : o.coldProfile.string();
    return makeError("{}: {}", source, cold.error().message);
  }
  plan::Plan p;
  p.header.tool = o.tool;
  p.header.version = o.version;
  p.header.inputs[o.model.string()] = sha256Hex(modelBytes);
  if (!o.coldProfile.empty()) {
    ZP_ASSIGN_OR_RETURN(std::string profileBytes, readFile(o.coldProfile));
    p.header.inputs[o.coldProfile.string()] = sha256Hex(profileBytes);
  }
  p.cold.push_back(*cold);
  ZP_TRY(artifacts::writePlan(p, o.output));
  return SolveColdResult{coldSummary(*cold)};
}

}  // namespace zp::drivers
