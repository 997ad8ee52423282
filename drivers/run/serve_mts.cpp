#include "drivers/run/serve_mts.h"

#include <algorithm>

#include <fmt/format.h>

#include "drivers/run/bundle_inputs.h"
#include "libplan/artifacts/arrivals_csv.h"
#include "libplan/runtime/serve/executor.h"
#include "libplan/runtime/serve/model_file_loader.h"
#include "libplan/runtime/serve/run_calibration.h"
#include "libplan/sim/queries/serve_sim.h"
#include "libplan/util/file.h"

namespace zp::drivers {
namespace fs = std::filesystem;
using namespace runtime::serve;
using runtime::TensorMap;

namespace {

constexpr double kNoSloMs = 1e9;     // units carry no latency SLO: the figures are latency and throughput
constexpr double kTolerance = 1e-4;  // stitched vs own outputs, relative (products regrouped and batched)
constexpr int kCheckedSamples = 8;

struct UnitSamples {
  std::vector<TensorMap> stitched;              // per sample: the stitched graph's inputs
  std::vector<std::vector<TensorMap>> members;  // per member, per sample: its own model's input
};

struct MtsContext {
  const ServeBundleParams& params;
  const plan::MtsPlan& m;
  std::vector<Processor> processors;
  std::optional<zoo::Zoo> zoo;      // the members' datasets
  std::vector<UnitSamples> samples;  // per unit
  ArrivalTrace trace;                // tasks: the units' groups
  Json checks = Json::array();
  std::vector<std::string> notes;
};

fs::path modelFile(const MtsContext& c, const std::string& sha) {
  return c.params.bundle / artifacts::modelFileName(sha);
}

// One member's samples: its dataset's first ones, else seeded random inputs.
Expected<std::vector<TensorMap>> memberSamples(MtsContext& c, const plan::MtsPlanMember& b) {
  runtime::SessionOptions so;
  so.checkModel = false;
  ZP_ASSIGN_OR_RETURN(auto session, runtime::Session::load(modelFile(c, b.sha256), so));
  const auto& ins = session->inputs();
  auto io = std::find_if(ins.begin(), ins.end(), [&](const runtime::IoInfo& i) { return i.name == b.input; });
  if (io == ins.end()) return makeError("{}: has no input '{}' (task '{}')", modelFile(c, b.sha256).string(), b.input, b.task);
  Dataset d;
  std::string why = "no zoo";
  if (c.zoo) { ZP_ASSIGN_OR_RETURN(d, datasetSamples(*c.zoo, b.task, *io, c.params.samples, &why)); }
  if (d.samples.empty()) {
    c.notes.push_back(fmt::format("{}: {}; serving seeded random inputs", b.task, why));
    for (int k = 0; k < c.params.samples; ++k)
      d.samples.push_back(runtime::randomInput({io->name, io->dtype, staticShape(*io)}, c.params.seed + static_cast<uint64_t>(k)));
  }
  std::vector<TensorMap> out;
  for (auto& x : d.samples) out.push_back(TensorMap{{b.input, std::move(x)}});
  return out;
}

// Every member's samples, cut to the shortest, and the stitched inputs made of them
// (members that share the stitched input read the first one's sample).
Status readSamples(MtsContext& c) {
  for (const auto& u : c.m.units) {
    UnitSamples s;
    size_t n = SIZE_MAX;
    for (const auto& b : u.members) {
      ZP_ASSIGN_OR_RETURN(auto ms, memberSamples(c, b));
      n = std::min(n, ms.size());
      s.members.push_back(std::move(ms));
    }
    for (auto& ms : s.members) ms.resize(n);
    for (size_t i = 0; i < n; ++i) {
      TensorMap in;
      for (size_t k = 0; k < u.members.size(); ++k)
        in.emplace(u.members[k].stitchedInput, s.members[k][i].at(u.members[k].input));
      s.stitched.push_back(std::move(in));
    }
    c.samples.push_back(std::move(s));
  }
  return {};
}

// The stitched graph's outputs against each member's own model's, on the first processor's engine.
Status checkOutputs(MtsContext& c, size_t u) {
  const auto& unit = c.m.units[u];
  const auto& s = c.samples[u];
  const auto options = runtime::serve::sessionOptions(c.processors.front());
  ZP_ASSIGN_OR_RETURN(auto stitched, runtime::Session::load(modelFile(c, unit.sha256), options));
  OutputDiff diff;
  const size_t n = std::min<size_t>(kCheckedSamples, s.stitched.size());
  for (size_t k = 0; k < unit.members.size(); ++k) {
    const auto& b = unit.members[k];
    ZP_ASSIGN_OR_RETURN(auto own, runtime::Session::load(modelFile(c, b.sha256), options));
    for (size_t i = 0; i < n; ++i) {
      ZP_ASSIGN_OR_RETURN(TensorMap all, stitched->run(s.stitched[i]));
      ZP_ASSIGN_OR_RETURN(TensorMap want, own->run(s.members[k][i]));
      TensorMap got;
      for (size_t j = 0; j < b.outputs.size() && all.count(b.stitchedOutputs[j]); ++j)
        got.emplace(b.outputs[j], all.at(b.stitchedOutputs[j]));
      diff.add(got, want);
    }
  }
  const bool match = diff.within(kTolerance);
  c.checks.push_back(Json{{"group", unit.group}, {"samples", n}, {"max_abs_diff", diff.maxAbsDiff},
                          {"ref_scale", diff.refScale}, {"match", match}});
  if (!match)
    return makeError("{}: group '{}': the stitched graph's outputs differ from the members' own by {:.3g} (tolerance {} x {:.3g})",
                     modelFile(c, unit.sha256).string(), unit.group, diff.maxAbsDiff, kTolerance, std::max(1.0, diff.refScale));
  return {};
}

Status makeTrace(MtsContext& c) {
  std::vector<artifacts::KnownTask> known;
  for (size_t u = 0; u < c.m.units.size(); ++u) {
    const int read = static_cast<int>(c.samples[u].stitched.size());
    known.push_back({c.m.units[u].group, read,
                     read == c.params.samples ? fmt::format("serving reads the first {} samples: raise --samples", read)
                                              : ""});
  }
  if (!c.params.arrivals.empty()) {
    ZP_ASSIGN_OR_RETURN(c.trace, artifacts::readArrivalsCsv(c.params.arrivals, known));
    return {};
  }
  ArrivalParams ap;
  for (const auto& k : known)
    ap.tasks.push_back({k.name, c.params.process == "periodic" ? ArrivalProcess::Periodic : ArrivalProcess::Poisson,
                        c.params.rateQps, k.samples});
  ap.seed = c.params.seed;
  ap.durationMs = c.params.durationMs;
  ap.count = c.params.durationMs > 0 ? 0 : (c.params.count > 0 ? c.params.count : 60);
  ZP_ASSIGN_OR_RETURN(c.trace, generateArrivals(ap));
  return {};
}

// One system's run: slots, tasks (a unit, or a unit's members), the expanded
// trace and, per expanded arrival, the unit query it belongs to.
struct MtsRun {
  ServeSetup setup;
  std::vector<SubgraphFiles> files;
  std::vector<sim::ServeSimSlot> simSlots;
  std::vector<sim::ServeSimTask> simTasks;
  ArrivalTrace trace;
  std::vector<int> queryOf;
};

Status addTask(const MtsContext& c, MtsRun& r, const std::string& name, const std::string& sha, int proc, double ms,
               int64_t bytes, const std::vector<TensorMap>& samples) {
  const fs::path model = modelFile(c, sha);
  const fs::path cache = c.params.bundle / artifacts::cacheFileName(sha, c.processors[static_cast<size_t>(proc)].policy);
  for (const auto& f : {model, cache})
    if (!fs::is_regular_file(f)) return makeError("{}: missing from the bundle (needed by {})", f.string(), name);
  const int slot = static_cast<int>(r.setup.slots.size());
  r.setup.slots.push_back({name, proc, bytes, true});
  r.files.push_back({model, cache});
  r.simSlots.push_back({proc, ms, 0.0, bytes, true, {}, {}});
  r.simTasks.push_back({name, {slot}, kNoSloMs, true});
  r.setup.tasks.push_back(ServeTask{name, {slot}, kNoSloMs, true, samples, {}});
  r.trace.tasks.push_back(name);
  return {};
}

Expected<MtsRun> buildRun(const MtsContext& c, const plan::MtsSystem& sys) {
  MtsRun r;
  r.setup.processors = c.processors;
  r.setup.memoryBudgetBytes = INT64_MAX;  // every unit's models stay resident
  std::vector<int> firstTask;
  for (size_t u = 0; u < c.m.units.size(); ++u) {
    const auto& unit = c.m.units[u];
    auto it = std::find_if(c.processors.begin(), c.processors.end(), [&](const auto& p) { return p.name == sys.placement[u]; });
    const int p = static_cast<int>(it - c.processors.begin());
    firstTask.push_back(static_cast<int>(r.setup.tasks.size()));
    if (sys.stitched[u]) {
      ZP_TRY(addTask(c, r, unit.group, unit.sha256, p, unit.stitchedMs[static_cast<size_t>(p)], unit.weightBytes,
                     c.samples[u].stitched));
      continue;
    }
    for (size_t k = 0; k < unit.members.size(); ++k) {
      const auto& b = unit.members[k];
      ZP_TRY(addTask(c, r, unit.group + "/" + b.task, b.sha256, p, b.ms[static_cast<size_t>(p)],
                     static_cast<int64_t>(fs::file_size(modelFile(c, b.sha256))), c.samples[u].members[k]));
    }
  }
  for (size_t q = 0; q < c.trace.arrivals.size(); ++q) {
    const auto& a = c.trace.arrivals[q];
    const auto u = static_cast<size_t>(a.task);
    const int tasks = sys.stitched[u] ? 1 : static_cast<int>(c.m.units[u].members.size());
    for (int k = 0; k < tasks; ++k) {
      r.trace.arrivals.push_back({a.timeMs, firstTask[u] + k, a.sample});
      r.queryOf.push_back(static_cast<int>(q));
    }
  }
  return r;
}

// Unit queries from the expanded ones: a unit query ends with its last part.
QuerySummary unitSummary(const MtsContext& c, const MtsRun& r, const std::vector<double>& finishMs,
                         const std::vector<bool>& completed) {
  std::vector<QueryOutcome> q;
  for (const auto& a : c.trace.arrivals) q.push_back(QueryOutcome{a.timeMs, a.timeMs, true, kNoSloMs, true});
  for (size_t e = 0; e < r.queryOf.size(); ++e) {
    auto& o = q[static_cast<size_t>(r.queryOf[e])];
    o.finishMs = std::max(o.finishMs, finishMs[e]);
    o.completed = o.completed && completed[e];
  }
  return summarizeQueries(q);
}

struct MtsOutcome {
  const plan::MtsSystem* system = nullptr;
  ServeResult measured;
  QuerySummary measuredUnits, predictedUnits, fromPlanUnits;
};

QuerySummary simulatedUnits(const MtsContext& c, const MtsRun& r, const sim::ServeSimResult& s) {
  std::vector<double> finish;
  std::vector<bool> done;
  for (const auto& q : s.queries) finish.push_back(q.finishMs), done.push_back(true);
  return unitSummary(c, r, finish, done);
}

Expected<MtsOutcome> serveSystem(const MtsContext& c, const plan::MtsSystem& sys, MtsRun& r) {
  std::vector<sim::ServeSimArrival> arrivals;
  for (const auto& a : r.trace.arrivals) arrivals.push_back({a.timeMs, a.task});
  sim::ServeSimParams sp{static_cast<int>(c.processors.size()), INT64_MAX, 0.0};
  sp.seed = c.params.seed;
  MtsOutcome o{&sys, {}, {}, {}, {}};
  o.fromPlanUnits = simulatedUnits(c, r, sim::simulateServing(r.simSlots, r.simTasks, arrivals, sp));
  o.predictedUnits = o.fromPlanUnits;
  ModelFileLoader loader(r.files);
  if (c.params.calibrationRounds > 0) {
    RunCalibrationParams cp;
    cp.rounds = c.params.calibrationRounds;
    cp.seed = c.params.seed;
    ZP_ASSIGN_OR_RETURN(auto cal, calibrateServing(r.setup, loader, cp));
    for (size_t s = 0; s < r.simSlots.size(); ++s) {
      r.simSlots[s].runSamplesMs = cal.hotMs[s];
      r.simSlots[s].idleRunSamplesMs = cal.idleMs[s];
    }
    sp.dispatchMs = cal.dispatchMs;
    sp.handoffMs = cal.handoffMs;
    o.predictedUnits = simulatedUnits(c, r, sim::simulateServing(r.simSlots, r.simTasks, arrivals, sp));
  }
  ZP_ASSIGN_OR_RETURN(o.measured, runtime::serve::serve(r.setup, loader, r.trace, {.maxQueuedPerTask = c.params.maxQueuedPerTask}));
  std::vector<double> finish;
  std::vector<bool> done;
  for (const auto& q : o.measured.queries) finish.push_back(q.finishMs), done.push_back(q.completed);
  o.measuredUnits = unitSummary(c, r, finish, done);
  return o;
}

Json unitsJson(const plan::MtsPlan& m) {
  Json units = Json::array();
  for (const auto& u : m.units) {
    Json members = Json::array();
    for (const auto& b : u.members) members.push_back(b.task);
    units.push_back(Json{{"group", u.group}, {"members", members}, {"weight_bytes", u.weightBytes},
                         {"member_bytes", u.memberBytes}});
  }
  return units;
}

Json reportJson(const MtsContext& c, const std::vector<MtsOutcome>& outcomes) {
  Json systems = Json::object();
  for (const auto& o : outcomes) {
    Json measured = querySummaryJson(o.measuredUnits);
    measured["peak_rss_bytes"] = o.measured.peakRssBytes;
    systems[o.system->name] = Json{{"description", o.system->description},
                                   {"stitched", Json(o.system->stitched)},
                                   {"placement", o.system->placement},
                                   {"planned_makespan_ms", o.system->makespanMs},
                                   {"measured", measured},
                                   {"predicted", querySummaryJson(o.predictedUnits)},
                                   {"predicted_from_plan_latencies", querySummaryJson(o.fromPlanUnits)}};
  }
  return Json{{"systems", systems},
              {"units", unitsJson(c.m)},
              {"output_checks", c.checks},
              {"queries", c.trace.arrivals.size()},
              {"arrivals", c.params.arrivals.empty() ? Json{{"process", c.params.process}, {"rate_qps", c.params.rateQps},
                                                            {"seed", c.params.seed}}
                                                     : Json(c.params.arrivals.string())},
              {"calibration_rounds", c.params.calibrationRounds},
              {"processors", processorsJson(c.processors)},
              {"notes", c.notes}};
}

std::string reportTable(const std::vector<MtsOutcome>& outcomes, bool calibrated) {
  std::string s = fmt::format("{:<14} {:>9} {:>19} {:>19} {:>19} {:>10}\n", "system", "plan ms", "p50 ms m / p",
                              "p99 ms m / p", "q/s m / p", "peak RSS");
  for (const auto& o : outcomes) {
    const auto& m = o.measuredUnits;
    const auto& p = o.predictedUnits;
    s += fmt::format("{:<14} {:>9.3f} {:>9.3f} / {:>7.3f} {:>9.3f} / {:>7.3f} {:>9.1f} / {:>7.1f} {:>7.1f} MB\n",
                     o.system->name, o.system->makespanMs, m.p50Ms, p.p50Ms, m.p99Ms, p.p99Ms, m.throughputQps,
                     p.throughputQps, static_cast<double>(o.measured.peakRssBytes) / 1e6);
  }
  for (size_t i = 0; i < outcomes.size(); ++i)
    s += fmt::format("{}{}: {}\n", outcomes[i].system->name, i == 0 ? " (the plan's choice)" : "",
                     outcomes[i].system->description);
  s += "a query: one sample for every member of a group, done when the last member's outputs are; plan ms: "
       "one query of every group at once, from the plan's measured costs; m: measured by the executor on this host; "
       "p: predicted by the open-loop simulator from ";
  s += calibrated ? "run times calibrated on the pinned processors\n" : "the plan's measured costs\n";
  return s;
}

}  // namespace

Expected<ServeBundleResult> serveMtsBundle(const ServeBundleParams& params, const plan::Plan& plan,
                                           const artifacts::BundleManifest& manifest) {
  if (!params.budget.empty() || !params.slos.empty())
    return makeError("{}: an MTS plan has no preload budgets or SLO configurations (--budget, --slo apply to a "
                     "stitch plan)", (params.bundle / "plan.pb").string());
  MtsContext c{params, *plan.mts, {}, {}, {}, {}, Json::array(), {}};
  ZP_ASSIGN_OR_RETURN(c.processors, runnableProcessors(c.m.processors, params.bundle));
  c.zoo = bundleZoo(params.bundle, manifest, c.notes);
  // Before any model is read: every unit's and member's, with their caches.
  std::vector<ServedFile> files;
  for (const auto& unit : c.m.units) {
    std::vector<std::string> shas{unit.sha256};
    for (const auto& b : unit.members) shas.push_back(b.sha256);
    for (const auto& sha : shas)
      for (const auto& proc : c.processors)
        files.push_back({modelFile(c, sha), params.bundle / artifacts::cacheFileName(sha, proc.policy), sha});
  }
  ZP_TRY(verifyServedFiles(params.bundle, manifest, files, c.notes));
  ZP_TRY(readSamples(c));
  for (size_t u = 0; u < c.m.units.size(); ++u) ZP_TRY(checkOutputs(c, u));
  ZP_TRY(makeTrace(c));
  ZP_TRY(runtime::serve::checkTraceSize(c.trace));
  ZP_ASSIGN_OR_RETURN(const auto systems, selectSystems(c.m.systems, std::string("zooplan"), params.compare));
  std::vector<std::string> served;
  for (const auto* s : systems) served.push_back(s->name);
  ZP_ASSIGN_OR_RETURN(const std::string traceName, tracedSystem(params, served));
  std::vector<MtsRun> runs;
  for (const auto* s : systems) {
    ZP_ASSIGN_OR_RETURN(auto r, buildRun(c, *s));
    runs.push_back(std::move(r));
  }
  std::vector<MtsOutcome> outcomes;
  for (size_t i = 0; i < systems.size(); ++i) {
    ZP_ASSIGN_OR_RETURN(auto o, serveSystem(c, *systems[i], runs[i]));
    outcomes.push_back(std::move(o));
  }
  ServeBundleResult res{reportJson(c, outcomes), reportTable(outcomes, params.calibrationRounds > 0), c.notes};
  if (!params.trace.empty()) {
    auto traced = std::find_if(outcomes.begin(), outcomes.end(), [&](const auto& o) { return o.system->name == traceName; });
    ZP_TRY(writeFileAtomic(params.trace, canonicalJson(serveTrace(traced->measured, "plan-run --serve " + traced->system->name))));
  }
  if (!params.json.empty()) ZP_TRY(writeFileAtomic(params.json, canonicalJson(res.report)));
  return res;
}

}  // namespace zp::drivers
