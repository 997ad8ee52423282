#include "drivers/run/run_model.h"

#include "drivers/run/bundle_inputs.h"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "drivers/run/cold_run.h"
#include "libplan/runtime/kernels/simd_target.h"
#include "libplan/runtime/measure.h"
#include "libplan/runtime/npy.h"
#include "libplan/util/file.h"
#include "libplan/util/output_dir.h"
#include "libplan/util/stats.h"
#include "libplan/util/validate.h"

namespace zp::drivers {
namespace fs = std::filesystem;
using namespace runtime;

namespace {

// Each --input against the model's inputs: a mismatch names the .npy file it came from.
Status checkInputFiles(const Session& s, const TensorMap& inputs, const RunModelOptions& o) {
  for (const auto& input : o.inputs) {
    const auto& [name, file] = input;
    const std::string& inputName = name;  // clang 14 cannot capture a structured binding
    const std::string where = fmt::format("{}: --input {}", file.string(), name);
    auto io = std::find_if(s.inputs().begin(), s.inputs().end(), [&](const IoInfo& i) { return i.name == inputName; });
    if (io == s.inputs().end()) return makeError("{}: {} has no input '{}'", where, o.model.string(), name);
    if (auto why = inputMismatch(*io, inputs.at(name))) return makeError("{}: {}", where, *why);
  }
  return {};
}

Expected<SessionOptions> sessionOptions(const RunModelOptions& o) {
  SessionOptions so;
  if (auto p = threadCountProblem(o.threads)) return makeError("--threads: {}", *p);
  so.threads = o.threads;
  ZP_ASSIGN_OR_RETURN(so.kernels, parseKernelPolicy(o.kernels));
  if (!parseGemmLibrary(o.gemm, &so.gemm)) return makeError("--gemm: unknown GEMM library '{}' (onednn, blis)", o.gemm);
  so.cache = o.cache;
  so.computeSourceChecksums = !o.writeCache.empty();
  so.channelBlocks = o.channelBlocks;
  return so;
}

// Outputs keep clear of the inputs and of each other; checked before any work.
// --save-outputs is staged and moved into place at the end.
Expected<std::optional<OutputDir>> checkOutputs(const RunModelOptions& o) {
  std::vector<GuardedPath> read{{o.model, "input"}, {o.cache, "input"}, {o.coldPlan, "input"}};
  for (const auto& in : o.inputs) read.push_back({in.second, "input"});
  if (fs::is_regular_file(o.kernels)) read.push_back({o.kernels, "input"});
  ZP_TRY(checkOutputFiles({o.writeCache, o.trace}, read));
  std::optional<OutputDir> saved;
  if (!o.saveOutputs.empty()) {
    read.push_back({o.writeCache, "output"});
    read.push_back({o.trace, "output"});
    ZP_ASSIGN_OR_RETURN(OutputDir d, OutputDir::open(o.saveOutputs, OutputDirOptions{"plan-run", read, nullptr}));
    saved.emplace(std::move(d));
  }
  return saved;
}

// What one run of the tool carries from step to step.
struct ModelRun {
  const RunModelOptions& o;
  SessionOptions so;
  std::optional<plan::ColdPlan> coldPlan;  // --cold-plan's section for this model
  std::shared_ptr<const ColdSchedule> schedule;
  TensorMap inputs, outputs;
  std::unique_ptr<Session> session;
  std::vector<NodeTiming> coldProfile;
  Json coldTrace;  // of a cold run following a plan: per thread
  Json report;
  std::string text;
};

// Loads the model: timed as a cold start (evicted first) with --cold.
Status load(ModelRun& m) {
  const auto& o = m.o;
  if (!o.cold) {
    ZP_ASSIGN_OR_RETURN(m.session, Session::load(o.model, m.so));
    return checkInputFiles(*m.session, m.inputs, o);
  }
  // With --trace the cold run itself is traced: where a cold start spends its time.
  RunOptions coldRun;
  coldRun.profile = !o.trace.empty();
  ZP_ASSIGN_OR_RETURN(auto cs, measureCold(o.model, m.so, m.inputs, &m.outputs, coldRun,
                                           [&](const Session& s) { return checkInputFiles(s, m.inputs, o); }));
  auto& [c, s] = cs;
  m.session = std::move(s);
  m.coldProfile = m.session->lastProfile();
  if (auto report = m.session->coldReport()) {
    // Right after the cold run, before a later run switches kernels.
    m.report["cold_plan_run"] = coldRunJson(*report, *m.session, *m.coldPlan);
    m.text += coldRunTable(*report, *m.session, *m.coldPlan);
    if (!o.trace.empty()) m.coldTrace = coldRunTrace(*report, *m.session, o.model.filename().string() + " (cold run)");
  }
  m.report["cold"] = {{"read_ms", c.readMs},     {"transform_ms", c.transformMs}, {"execute_ms", c.executeMs},
                      {"verify_ms", c.verifyMs}, {"total_ms", c.totalMs},         {"from_cache", c.load.fromCache},
                      {"gemm_init_ms", c.load.gemmInitMs}};
  m.text += fmt::format("cold{}: read {:.2f} ms, transform {:.2f} ms, execute {:.2f} ms (of which payload checks {:.2f} ms), "
                        "total {:.2f} ms; {} start-up {:.2f} ms on a helper thread\n",
                        c.load.fromCache ? " (from the weight cache alone)" : "", c.readMs, c.transformMs, c.executeMs,
                        c.verifyMs, c.totalMs, m.so.gemm == GemmLibrary::Blis ? "BLIS" : "oneDNN", c.load.gemmInitMs);
  return {};
}

// The warm runs, the weight cache, and the traced (or first) run.
Status runAndTime(ModelRun& m) {
  const auto& o = m.o;
  if (!o.writeCache.empty()) {
    if (m.schedule) ZP_TRY(Session::writeColdCache(o.model, *m.schedule, m.so, o.writeCache, /*identifyModelFile=*/true));
    else ZP_TRY(m.session->writeCache(o.writeCache, /*identifyModelFile=*/true));
    m.report["cache_written"] = {{"path", o.writeCache.string()}, {"bytes", fs::file_size(o.writeCache)}};
    m.text += fmt::format("wrote weight cache {} ({} bytes)\n", o.writeCache.string(), fs::file_size(o.writeCache));
  }
  if (o.cold && m.so.coldSchedule && o.repeat > 0) {
    // The run after the cold one, at once: nodes whose warm weights are not ready yet
    // keep their cold kernels (§3.5: switching delays no run). Then the rest of the
    // warm switch is waited for before the warm runs are timed.
    const auto t0 = SteadyClock::now();
    ZP_TRY(m.session->run(m.inputs));
    const double second = msSince(t0);
    const int switched = m.session->coldReport()->warmSwitched;
    const auto tw = SteadyClock::now();
    m.session->waitForWarmSwitch();
    const double waited = msSince(tw);
    m.report["second_run"] = {{"ms", second}, {"warm_switched_before", switched}, {"warm_switch_wait_ms", waited}};
    m.text += fmt::format("second run: {:.3f} ms ({} node(s) on their warm kernel or library); waited {:.2f} ms for "
                          "the rest of the warm switch\n", second, switched, waited);
  }
  if (o.repeat > 0) {
    ZP_ASSIGN_OR_RETURN(WarmStats w, measureWarm(*m.session, m.inputs, o.repeat, !o.cold || m.so.coldSchedule));
    m.report["warm"] = {{"runs", w.runs}, {"median_ms", w.medianMs}, {"p90_ms", w.p90Ms}, {"min_ms", w.minMs},
                        {"mean_ms", w.meanMs}};
    m.text += fmt::format("warm: median {:.3f} ms, p90 {:.3f} ms over {} runs ({} thread{}, {} kernels)\n", w.medianMs,
                          w.p90Ms, w.runs, m.so.threads, m.so.threads == 1 ? "" : "s", simdTargetInUse());
  }
  if (o.cold && !o.trace.empty()) {
    const Json trace = m.coldTrace.is_null() ? chromeTrace(m.coldProfile, o.model.filename().string() + " (cold run)")
                                             : m.coldTrace;
    ZP_TRY(writeFileAtomic(o.trace, canonicalJson(trace)));
    m.text += fmt::format("trace of the cold run: {}\n", o.trace.string());
  } else if (m.outputs.empty() || !o.trace.empty()) {
    RunOptions ro;
    ro.profile = !o.trace.empty();
    ZP_ASSIGN_OR_RETURN(m.outputs, m.session->run(m.inputs, ro));
    if (!o.trace.empty()) {
      ZP_TRY(writeFileAtomic(o.trace, canonicalJson(chromeTrace(m.session->lastProfile(), o.model.filename().string()))));
      m.text += fmt::format("trace: {}\n", o.trace.string());
    }
  }
  return {};
}

// The session's load statistics, heavy nodes, memory and outputs.
void describeSession(ModelRun& m) {
  // Named only now: asking BLIS for its kernels starts it up, which belongs to the
  // cold run's timing.
  m.report["gemm_library"] = gemmLibraryName(m.so.gemm);
  // After the first run: a session built from the cache alone rebuilds itself
  // from the model when a payload turns out corrupt, and then reports that load.
  const LoadStats& ls = m.session->loadStats();
  m.report["load"] = {{"read_ms", ls.readMs},           {"cache_read_ms", ls.cacheReadMs}, {"fold_ms", ls.foldMs},
                      {"transform_ms", ls.transformMs}, {"total_ms", ls.totalMs},          {"cache_hits", ls.cacheHits},
                      {"cache_fallbacks", ls.cacheFallbacks}, {"from_cache", ls.fromCache}, {"verify_ms", ls.verifyMs}};
  Json nodes = Json::array();
  for (const auto& n : m.session->nodes()) {
    if (!n.hasWeights) continue;
    nodes.push_back({{"name", n.name}, {"op", n.opType}, {"kernel", n.kernel}, {"transform", n.transform},
                     {"transform_ms", n.transformMs}, {"from_cache", n.fromCache}, {"packed_bytes", n.packedBytes},
                     {"weight_zero_fraction", n.weightZeroFraction}});
  }
  m.report["heavy_nodes"] = nodes;
  m.report["memory"] = {{"arena_bytes", m.session->arenaBytes()}, {"weight_bytes", m.session->weightBytes()},
                        {"scratch_bytes", m.session->scratchBytes()}};
  Json outs = Json::object();
  for (const auto& [name, t] : m.outputs) {
    outs[name] = {{"dtype", dtypeName(t.dtype)}, {"shape", t.shape}};
    m.text += fmt::format("output {}: {} {}\n", name, dtypeName(t.dtype), shapeString(t.shape));
  }
  m.report["outputs"] = outs;
}

Status saveOutputs(OutputDir& saved, const TensorMap& outputs) {
  for (const auto& [name, t] : outputs) ZP_TRY(writeNpy(saved.path() / npyFileName(name), t));
  return saved.commit();
}

}  // namespace

Expected<RunModelResult> runModel(const RunModelOptions& o) {
  ModelRun m{o, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}};
  ZP_ASSIGN_OR_RETURN(m.so, sessionOptions(o));
  if (!o.coldPlan.empty()) {
    ZP_ASSIGN_OR_RETURN(plan::ColdPlan cp, readColdPlan(o.coldPlan, o.model));
    ZP_ASSIGN_OR_RETURN(ColdSchedule sc, coldstart::coldScheduleOf(cp, o.coldPlan.string()));
    m.coldPlan = std::move(cp);
    m.schedule = std::make_shared<const ColdSchedule>(std::move(sc));
    // With the plan's cache the session follows the plan; without it, it only writes that cache.
    if (!o.cache.empty()) m.so.coldSchedule = m.schedule;
  }
  ZP_ASSIGN_OR_RETURN(auto saved, checkOutputs(o));
  for (const auto& [name, file] : o.inputs) {
    ZP_ASSIGN_OR_RETURN(Tensor t, readNpy(file));
    m.inputs[name] = std::move(t);
  }
  m.report["model"] = o.model.string();
  m.report["threads"] = m.so.threads;
  m.report["kernels"] = o.kernels;
  m.report["simd_target"] = simdTargetInUse();
  m.report["simd_targets"] = simdTargetsOfThisHost();
  ZP_TRY(load(m));
  if (m.inputs.empty()) {
    uint64_t k = 0;
    for (const auto& io : m.session->inputs()) {
      IoInfo at = io;
      if (!at.shape.empty() && at.shape[0] < 0) at.shape[0] = o.batch;
      m.inputs[io.name] = randomInput(at, o.seed + k++);  // as randomInputs seeds them
    }
  }
  if (!o.cold) {
    const LoadStats& ls = m.session->loadStats();
    m.text += fmt::format("load{}: read {:.2f} ms, fold {:.2f} ms, transform {:.2f} ms, cache {:.2f} ms, total {:.2f} ms\n",
                          ls.fromCache ? " (from the weight cache alone)" : "", ls.readMs, ls.foldMs, ls.transformMs,
                          ls.cacheReadMs, ls.totalMs);
  }
  ZP_TRY(runAndTime(m));
  describeSession(m);
  if (saved) ZP_TRY(saveOutputs(*saved, m.outputs));
  RunModelResult res;
  res.warnings = m.session->warnings();
  m.report["warnings"] = res.warnings;
  res.report = std::move(m.report);
  res.text = std::move(m.text);
  return res;
}

}  // namespace zp::drivers
