#include "drivers/run/serve_bundle.h"

#include <algorithm>
#include <cmath>
#include <future>
#include <map>

#include <malloc.h>

#include <fmt/format.h>

#include "drivers/run/bundle_inputs.h"
#include "drivers/run/serve_mts.h"
#include "libplan/artifacts/arrivals_csv.h"
#include "libplan/runtime/serve/executor.h"
#include "libplan/runtime/serve/model_file_loader.h"
#include "libplan/runtime/serve/pinned_worker.h"
#include "libplan/runtime/serve/run_calibration.h"
#include "libplan/sim/queries/serve_sim.h"
#include "libplan/util/file.h"
#include "libplan/util/stats.h"
#include "libplan/util/output_dir.h"
#include "libplan/zoo/stitch_manifest.h"

namespace zp::drivers {
namespace fs = std::filesystem;
using namespace runtime::serve;

namespace {

// What every system's run shares: the plan, the processors, the trace, the samples.
struct Context {
  const ServeBundleParams& params;
  plan::Plan plan;
  const plan::StitchPlan* st = nullptr;
  std::vector<Processor> processors;
  std::vector<size_t> slos;                   // active configurations in turn (indices into st->slos)
  double phaseMs = 0;                         // each configuration is active this long
  ArrivalTrace trace;                         // tasks: the plan's, in plan order
  std::vector<std::vector<runtime::TensorMap>> samples;  // per task
  std::vector<std::vector<int64_t>> labels;   // per task (empty: none)
  std::vector<std::string> preload;           // unit ids, the plan's greedy set
  int64_t budgetBytes = 0;
  std::map<std::string, double> loadMs;       // slot key -> measured median load
  std::vector<std::string> notes;
};

Status chooseConfigurations(Context& c) {
  const auto& slos = c.st->slos;
  if (c.params.slos.empty())
    for (size_t i = 0; i < slos.size(); ++i) c.slos.push_back(i);
  for (const auto& id : c.params.slos) {
    auto it = std::find_if(slos.begin(), slos.end(), [&](const auto& s) { return s.id == id; });
    if (it == slos.end()) return makeError("--slo {}: no such SLO configuration in {}", id, (c.params.bundle / "plan.pb").string());
    c.slos.push_back(static_cast<size_t>(it - slos.begin()));
  }
  if (c.slos.empty()) return makeError("{}: the plan has no SLO configurations", (c.params.bundle / "plan.pb").string());
  auto budget = std::find_if(c.st->preload.begin(), c.st->preload.end(),
                             [&](const auto& p) { return c.params.budget.empty() || p.budget == c.params.budget; });
  if (!c.params.budget.empty() && budget == c.st->preload.end())
    return makeError("--budget {}: the plan has no preload set for this budget", c.params.budget);
  if (budget != c.st->preload.end()) {
    c.preload = budget->greedy;
    c.budgetBytes = budget->budgetBytes;
  } else {
    c.budgetBytes = INT64_MAX;  // no budget planned: everything may stay resident
  }
  return {};
}

const plan::PlannedSubgraph* findSubgraph(const plan::TaskPlan& t, int pos, const std::string& v, const std::string& proc) {
  for (const auto& g : t.subgraphs)
    if (g.position == pos && g.variant == v && g.processor == proc) return &g;
  return nullptr;
}

// Dataset samples of every task (seeded random inputs when the zoo has none).
Status readSamples(Context& c, const artifacts::BundleManifest& manifest) {
  auto zoo = bundleZoo(c.params.bundle, manifest, c.notes);
  for (const auto& t : c.st->tasks) {
    const auto& g = t.subgraphs.front();  // position 0 (sorted by position)
    const plan::Unit* unit = plan::findUnit(c.plan.units, plan::UnitId::subgraph(t.name, g.position, g.variant));
    if (!unit) return makeError("{}: no unit for task '{}' position 0", (c.params.bundle / "plan.pb").string(), t.name);
    runtime::SessionOptions so;
    so.checkModel = false;
    ZP_ASSIGN_OR_RETURN(auto first, runtime::Session::load(c.params.bundle / unit->file, so));
    const runtime::IoInfo in = first->inputs().at(0);
    Dataset d;
    std::string why = "no zoo";
    if (zoo) { ZP_ASSIGN_OR_RETURN(d, datasetSamples(*zoo, t.name, in, c.params.samples, &why)); }
    if (d.samples.empty()) {
      c.notes.push_back(fmt::format("{}: {}; serving seeded random inputs", t.name, why));
      for (int k = 0; k < c.params.samples; ++k)
        d.samples.push_back(runtime::randomInput({in.name, in.dtype, staticShape(in)}, c.params.seed + static_cast<uint64_t>(k)));
    }
    std::vector<runtime::TensorMap> maps;
    for (auto& x : d.samples) maps.push_back(runtime::TensorMap{{in.name, std::move(x)}});
    c.samples.push_back(std::move(maps));
    c.labels.push_back(d.labels);
  }
  return {};
}

Status makeTrace(Context& c) {
  std::vector<artifacts::KnownTask> known;
  for (size_t t = 0; t < c.st->tasks.size(); ++t) {
    const int read = static_cast<int>(c.samples[t].size());
    known.push_back({c.st->tasks[t].name, read,
                     read == c.params.samples ? fmt::format("serving reads the first {} of its dataset: raise --samples", read)
                                              : ""});
  }
  if (!c.params.arrivals.empty()) {
    ZP_ASSIGN_OR_RETURN(c.trace, artifacts::readArrivalsCsv(c.params.arrivals, known));
  } else {
    ArrivalParams ap;
    for (const auto& k : known)
      ap.tasks.push_back({k.name, c.params.process == "periodic" ? ArrivalProcess::Periodic : ArrivalProcess::Poisson,
                          c.params.rateQps, k.samples});
    ap.seed = c.params.seed;
    ap.durationMs = c.params.durationMs;
    ap.count = c.params.durationMs > 0 ? 0 : (c.params.count > 0 ? c.params.count : 60);
    ZP_ASSIGN_OR_RETURN(c.trace, generateArrivals(ap));
  }
  const double last = c.trace.arrivals.empty() ? 0.0 : c.trace.arrivals.back().timeMs;
  c.phaseMs = std::max(last, 1e-9) * (1 + 1e-12) / static_cast<double>(c.slos.size());
  return {};
}

// One system's run as the executor and the simulator take it.
struct SystemRun {
  ServeSetup setup;
  std::vector<SubgraphFiles> files;        // per slot
  std::vector<std::string> slotKeys;       // per slot: "file@processor" (load times are measured per key)
  std::vector<sim::ServeSimSlot> simSlots;
  std::vector<sim::ServeSimTask> simTasks;
  ArrivalTrace trace;                      // tasks: the setup's (task x active configuration)
};

int processorIndex(const Context& c, const std::string& name) {
  for (size_t p = 0; p < c.processors.size(); ++p)
    if (c.processors[p].name == name) return static_cast<int>(p);
  return -1;
}

// The slot of a subgraph on a processor, made on first use.
Expected<int> slotFor(const Context& c, SystemRun& r, std::map<std::string, int>& slots, const plan::TaskPlan& t,
                      int pos, const std::string& variant, const std::string& proc) {
  const plan::UnitId unitId = plan::UnitId::subgraph(t.name, pos, variant);
  const std::string id = unitId.str();
  const std::string key = id + "@" + proc;
  if (auto it = slots.find(key); it != slots.end()) return it->second;
  const auto* g = findSubgraph(t, pos, variant, proc);
  const plan::Unit* unit = plan::findUnit(c.plan.units, unitId);
  const int p = processorIndex(c, proc);
  if (!g || !unit || p < 0)
    return makeError("{}: no planned subgraph {} on processor '{}'", (c.params.bundle / "plan.pb").string(), id, proc);
  const fs::path model = c.params.bundle / unit->file;
  const fs::path cache =
      c.params.bundle / artifacts::cacheFileName(unit->sha256, c.processors[static_cast<size_t>(p)].policy);
  for (const auto& f : {model, cache})
    if (!fs::is_regular_file(f)) return makeError("{}: missing from the bundle (needed by {} on '{}')", f.string(), id, proc);
  const int slot = static_cast<int>(r.setup.slots.size());
  r.setup.slots.push_back({key, p, g->memoryBytes, false});
  r.files.push_back({model, cache});
  r.slotKeys.push_back(unit->file + "@" + proc);
  r.simSlots.push_back({p, g->latencyMs, 0.0, g->memoryBytes, false, {}, {}});
  slots[key] = slot;
  return slot;
}

// Marks the plan's preload set resident, in its order, as far as the budget allows.
void markPreload(const Context& c, SystemRun& r) {
  int64_t used = 0;
  for (const auto& id : c.preload)
    for (size_t s = 0; s < r.setup.slots.size(); ++s) {
      auto& slot = r.setup.slots[s];
      if (slot.preload || slot.name.rfind(id + "@", 0) != 0 || used + slot.bytes > c.budgetBytes) continue;
      slot.preload = r.simSlots[s].preload = true;
      used += slot.bytes;
    }
}

Expected<SystemRun> buildRun(const Context& c, const plan::ServedSystem& sys) {
  SystemRun r;
  r.setup.processors = c.processors;
  r.setup.memoryBudgetBytes = c.budgetBytes;
  std::map<std::string, int> slots;
  const size_t K = c.slos.size();
  for (size_t t = 0; t < c.st->tasks.size(); ++t) {
    const auto& task = c.st->tasks[t];
    for (size_t k = 0; k < K; ++k) {
      const auto& cfg = c.st->slos[c.slos[k]];
      const auto sel = std::find_if(sys.selections.begin(), sys.selections.end(), [&](const auto& s) { return s.slo == cfg.id; });
      if (sel == sys.selections.end() || sel->tasks.size() <= t || sel->tasks[t].task != task.name)
        return makeError("{}: system '{}' has no choice for task '{}' under {}", (c.params.bundle / "plan.pb").string(),
                         sys.name, task.name, cfg.id);
      const auto& choice = sel->tasks[t];
      const auto variants = zoo::combinationVariants(choice.combination);
      ServeTask st{K > 1 ? task.name + "@" + cfg.id : task.name, {}, cfg.tasks.at(task.name).latencyMs,
                   choice.accuracy >= cfg.tasks.at(task.name).accuracy, c.samples[t], c.labels[t], task.name};
      for (int pos = 0; pos < task.positions; ++pos) {
        ZP_ASSIGN_OR_RETURN(int slot, slotFor(c, r, slots, task, pos, variants.at(static_cast<size_t>(pos)),
                                              choice.placement.at(static_cast<size_t>(pos))));
        st.slots.push_back(slot);
      }
      r.simTasks.push_back({st.name, st.slots, st.sloMs, st.accuracySloMet});
      r.trace.tasks.push_back(st.name);
      r.setup.tasks.push_back(std::move(st));
    }
  }
  for (const auto& a : c.trace.arrivals) {
    const size_t k = std::min(K - 1, static_cast<size_t>(a.timeMs / c.phaseMs));
    r.trace.arrivals.push_back({a.timeMs, static_cast<int>(static_cast<size_t>(a.task) * K + k), a.sample});
  }
  markPreload(c, r);
  return r;
}

// Median of three loads of every slot not measured yet, on its processor's pinned worker.
Status measureLoads(Context& c, SystemRun& r) {
  for (size_t s = 0; s < r.setup.slots.size(); ++s) {
    if (!c.loadMs.count(r.slotKeys[s])) {
      const auto& slot = r.setup.slots[s];
      const auto& proc = c.processors[static_cast<size_t>(slot.processor)];
      ZP_ASSIGN_OR_RETURN(auto worker, PinnedWorker::start(proc));
      ModelFileLoader loader({r.files[s]});
      std::promise<Expected<double>> done;
      worker->post([&] {
        std::vector<double> ms;
        for (int i = 0; i < 3; ++i) {
          const auto t0 = SteadyClock::now();
          auto l = loader.load(0, slot, runtime::serve::sessionOptions(proc));
          if (!l.ok()) return done.set_value(l.error());
          ms.push_back(msSince(t0));
        }
        done.set_value(median(ms));
      });
      ZP_ASSIGN_OR_RETURN(c.loadMs[r.slotKeys[s]], done.get_future().get());
    }
    r.simSlots[s].loadMs = c.loadMs[r.slotKeys[s]];
  }
  return {};
}

struct SystemOutcome {
  std::string name, description;
  ServeResult measured;
  sim::ServeSimResult predicted;          // calibrated on this host (the plan's latencies when not calibrated)
  sim::ServeSimResult predictedFromPlan;  // the plan's per-position latencies, no wake-up delays
  Json calibration = Json::object();
};

// What the calibration found, per processor: calibrated medians over the plan's
// latencies (geometric mean over the processor's slots), and the wake-up delays.
Json calibrationJson(const Context& c, const SystemRun& r, const RunCalibration& cal) {
  Json procs = Json::object();
  for (size_t p = 0; p < c.processors.size(); ++p) {
    double hot = 0, idle = 0;
    int n = 0;
    for (size_t s = 0; s < r.simSlots.size(); ++s)
      if (r.simSlots[s].processor == static_cast<int>(p) && r.simSlots[s].runMs > 0) {
        hot += std::log(median(cal.hotMs[s]) / r.simSlots[s].runMs);
        idle += std::log(median(cal.idleMs[s]) / r.simSlots[s].runMs);
        ++n;
      }
    if (n > 0)
      procs[c.processors[p].name] = Json{{"slots", n}, {"back_to_back_over_planned", std::exp(hot / n)},
                                         {"after_idle_over_planned", std::exp(idle / n)}};
  }
  return Json{{"processors", procs}, {"dispatch_ms", cal.dispatchMs}, {"handoff_ms", cal.handoffMs}};
}

// A prediction's summary and counts without its per-query records: only they
// are reported, and a long trace's records would hold memory per arrival.
sim::ServeSimResult summaryOnly(sim::ServeSimResult r) {
  r.queries = {};
  r.spans = {};
  return r;
}

// keepTimeline: the measured queries and slices stay (the system --trace writes);
// otherwise only the summary and counts do.
Expected<SystemOutcome> serveSystem(Context& c, const plan::ServedSystem& sys, SystemRun& r, bool keepTimeline) {
  ZP_TRY(measureLoads(c, r));
  std::vector<sim::ServeSimArrival> arrivals;
  for (const auto& a : r.trace.arrivals) arrivals.push_back({a.timeMs, a.task});
  SystemOutcome o{sys.name, sys.description, {}, {}, {}};
  sim::ServeSimParams sp{static_cast<int>(c.processors.size()), c.budgetBytes, 0.0};
  sp.seed = c.params.seed;
  o.predictedFromPlan = summaryOnly(sim::simulateServing(r.simSlots, r.simTasks, arrivals, sp));
  o.predicted = o.predictedFromPlan;
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
    o.predicted = summaryOnly(sim::simulateServing(r.simSlots, r.simTasks, arrivals, sp));
    o.calibration = calibrationJson(c, r, cal);
  }
  arrivals = {};
  ZP_ASSIGN_OR_RETURN(o.measured, runtime::serve::serve(r.setup, loader, r.trace, {.maxQueuedPerTask = c.params.maxQueuedPerTask}));
  if (!keepTimeline) o.measured.queries = {}, o.measured.slices = {};
  return o;
}

Json reportJson(const Context& c, const std::vector<SystemOutcome>& outcomes) {
  Json systems = Json::object();
  for (const auto& o : outcomes) {
    Json measured = querySummaryJson(o.measured.summary);
    measured["peak_rss_bytes"] = o.measured.peakRssBytes;
    measured["peak_resident_bytes"] = o.measured.peakResidentBytes;
    measured["loads"] = o.measured.loads;
    measured["evictions"] = o.measured.evictions;
    measured["dropped"] = o.measured.dropped;
    measured["accuracy"] = o.measured.labelled > 0 ? Json(static_cast<double>(o.measured.correct) / o.measured.labelled)
                                                   : Json(nullptr);
    Json predicted = querySummaryJson(o.predicted.summary);
    predicted["loads"] = o.predicted.loads;
    predicted["peak_resident_bytes"] = o.predicted.peakResidentBytes;
    systems[o.name] = Json{{"description", o.description},
                           {"measured", measured},
                           {"predicted", predicted},
                           {"predicted_from_plan_latencies", querySummaryJson(o.predictedFromPlan.summary)},
                           {"calibration", o.calibration}};
  }
  Json slos = Json::array();
  for (size_t k : c.slos) slos.push_back(c.st->slos[k].id);
  return Json{{"systems", systems},
              {"slo_configurations", slos},
              {"phase_ms", c.phaseMs},
              {"queries", c.trace.arrivals.size()},
              {"arrivals", c.params.arrivals.empty() ? Json{{"process", c.params.process}, {"rate_qps", c.params.rateQps},
                                                            {"seed", c.params.seed}}
                                                     : Json(c.params.arrivals.string())},
              {"memory_budget_bytes", c.budgetBytes},
              {"calibration_rounds", c.params.calibrationRounds},
              {"processors", processorsJson(c.processors)},
              {"notes", c.notes}};
}

std::string reportTable(const std::vector<SystemOutcome>& outcomes, bool calibrated) {
  std::string s = fmt::format("{:<12} {:>17} {:>8} {:>19} {:>19} {:>19} {:>10} {:>9}\n", "system", "violation m / p",
                              "p(plan)", "p50 ms m / p", "p99 ms m / p", "q/s m / p", "peak RSS", "accuracy");
  for (const auto& o : outcomes) {
    const auto& m = o.measured.summary;
    const auto& p = o.predicted.summary;
    // Accuracy of the served queries' answers against their samples' labels (none known: "-").
    const std::string accuracy = o.measured.labelled > 0
                                     ? fmt::format("{:.4f}", static_cast<double>(o.measured.correct) / o.measured.labelled)
                                     : "-";
    s += fmt::format("{:<12} {:>7.1f}% / {:>5.1f}% {:>7.1f}% {:>9.2f} / {:>7.2f} {:>9.2f} / {:>7.2f} {:>9.1f} / {:>7.1f} {:>7.1f} MB {:>9}\n",
                     o.name, 100 * m.violationRate, 100 * p.violationRate, 100 * o.predictedFromPlan.summary.violationRate,
                     m.p50Ms, p.p50Ms, m.p99Ms, p.p99Ms, m.throughputQps, p.throughputQps,
                     static_cast<double>(o.measured.peakRssBytes) / 1e6, accuracy);
  }
  for (size_t i = 0; i < outcomes.size(); ++i)
    s += fmt::format("{}{}: {}\n", outcomes[i].name, i == 0 ? " (the plan's choice)" : "", outcomes[i].description);
  for (const auto& o : outcomes)
    if (o.measured.dropped > 0)
      s += fmt::format("{}: {} of {} queries dropped at arrival (their task's queue full: --max-queue), counted as "
                       "violations\n", o.name, o.measured.dropped, o.measured.summary.queries);
  s += "m: measured by the executor on this host; p: predicted by the open-loop simulator from ";
  s += calibrated ? "run times and wake-up delays calibrated on the pinned processors (back to back and after idle), "
                    "and measured load times; p(plan): from the plan's per-position latencies instead\n"
                  : "the plan's per-position latencies and measured load times\n";
  return s;
}

}  // namespace

Json querySummaryJson(const QuerySummary& s) {
  return Json{{"queries", s.queries},         {"completed", s.completed}, {"violations", s.violations},
              {"violation_rate", s.violationRate}, {"p50_ms", s.p50Ms},   {"p99_ms", s.p99Ms},
              {"throughput_qps", s.throughputQps}};
}

Json processorsJson(const std::vector<Processor>& processors) {
  Json procs = Json::array();
  for (const auto& p : processors)
    procs.push_back(Json{{"name", p.name}, {"cores", p.cores}, {"policy", p.policy},
                         {"gemm", p.gemm}, {"threads", p.threads}});
  return procs;
}

Expected<std::string> tracedSystem(const ServeBundleParams& params, const std::vector<std::string>& served) {
  if (!params.traceSystem.empty()) {
    if (std::count(served.begin(), served.end(), params.traceSystem)) return params.traceSystem;
    return makeError("--trace-system {}: not among the systems served ({})", params.traceSystem,
                     fmt::format("{}", fmt::join(served, ", ")));
  }
  return served.empty() ? std::string() : served.front();  // the plan's own
}

Expected<ServeBundleResult> serveBundle(const ServeBundleParams& params) {
  // Before anything runs: a run that cannot write its report should not serve first.
  ZP_TRY(checkOutputFiles({params.json, params.trace}, {{params.bundle, "bundle"}, {params.arrivals, "arrivals"}}));
  ZP_ASSIGN_OR_RETURN(artifacts::BundleManifest manifest, artifacts::readBundleManifest(params.bundle));
  Context c{params, {}, nullptr, {}, {}, 0, {}, {}, {}, {}, 0, {}, {}};
  ZP_ASSIGN_OR_RETURN(c.plan, readBundlePlan(params.bundle));
  if (!c.plan.stitch && c.plan.mts) return serveMtsBundle(params, c.plan, manifest);
  ZP_TRY(requireStitchSection(c.plan, params.bundle));
  c.st = &*c.plan.stitch;
  if (c.st->systems.empty())
    return makeError("{}: the plan carries no served systems (made by an older plan-solve?)", (params.bundle / "plan.pb").string());
  ZP_ASSIGN_OR_RETURN(c.processors, runnableProcessors(c.st->processors, params.bundle));
  ZP_TRY(chooseConfigurations(c));
  // Before any subgraph is read: every one the plan names, with its caches.
  std::vector<ServedFile> files;
  for (const auto& t : c.st->tasks)
    for (const auto& g : t.subgraphs) {
      const plan::Unit* unit = plan::findUnit(c.plan.units, plan::UnitId::subgraph(t.name, g.position, g.variant));
      if (!unit) return makeError("{}: no unit for task '{}' position {} variant '{}'", (params.bundle / "plan.pb").string(),
                                  t.name, g.position, g.variant);
      for (const auto& proc : c.processors)
        if (proc.name == g.processor)
          files.push_back({params.bundle / unit->file, params.bundle / artifacts::cacheFileName(unit->sha256, proc.policy),
                           unit->sha256});
    }
  ZP_TRY(verifyServedFiles(params.bundle, manifest, files, c.notes));
  ZP_TRY(readSamples(c, manifest));
  ZP_TRY(makeTrace(c));
  ZP_TRY(runtime::serve::checkTraceSize(c.trace));
  ZP_ASSIGN_OR_RETURN(const auto systems, selectSystems(c.st->systems, c.st->chosenSystem, params.compare));
  std::vector<std::string> served;
  for (const auto* s : systems) served.push_back(s->name);
  ZP_ASSIGN_OR_RETURN(const std::string traceName, tracedSystem(params, served));
  // Every system's setup is built (caches checked) before anything is served.
  std::vector<SystemRun> runs;
  for (const auto* s : systems) {
    ZP_ASSIGN_OR_RETURN(auto r, buildRun(c, *s));
    runs.push_back(std::move(r));
  }
  std::vector<SystemOutcome> outcomes;
  for (size_t i = 0; i < systems.size(); ++i) {
    ZP_ASSIGN_OR_RETURN(auto o, serveSystem(c, *systems[i], runs[i], !params.trace.empty() && systems[i]->name == traceName));
    runs[i] = {};  // its setup's samples and trace are not needed any more
    // glibc keeps freed heap pages; handing them back keeps one system's
    // per-arrival records out of the next one's peak RSS.
    ::malloc_trim(0);
    outcomes.push_back(std::move(o));
  }
  ServeBundleResult res{reportJson(c, outcomes), reportTable(outcomes, params.calibrationRounds > 0), c.notes};
  if (!params.trace.empty()) {
    auto traced = std::find_if(outcomes.begin(), outcomes.end(), [&](const auto& o) { return o.name == traceName; });
    ZP_TRY(writeFileAtomic(params.trace, canonicalJson(serveTrace(traced->measured, "plan-run --serve " + traced->name))));
  }
  if (!params.json.empty()) ZP_TRY(writeFileAtomic(params.json, canonicalJson(res.report)));
  return res;
}

}  // namespace zp::drivers
