#include "drivers/run/run_bundle.h"
#include "drivers/run/bundle.h"
#include "drivers/emit/emit_bundle.h"
#include "drivers/run/cold_run.h"
#include "libplan/runtime/measure.h"

#include <algorithm>
#include <cassert>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <set>

#include "libplan/plan/plan.h"
#include "libplan/runtime/npy.h"
#include "libplan/runtime/session.h"
#include "libplan/util/file.h"
#include "libplan/util/hash.h"
#include "libplan/zoo/stitch_manifest.h"
#include "libplan/zoo/zoo.h"
#include "libplan/artifacts/bundle_manifest.h"
#include "libplan/artifacts/plan_pb.h"
#include "libplan/util/stats.h"
#include "libplan/artifacts/plan_json.h"
#include "libplan/artifacts/stitch_json.h"
#include "libplan/artifacts/zoo_json.h"
#include "libplan/util/output_dir.h"

namespace zp::drivers {
namespace fs = std::filesystem;
using artifacts::BundleManifest;
using runtime::Session;
using runtime::Tensor;
using runtime::TensorMap;

namespace {

// A task's chained units: one per position, loaded as the executor loads them.
struct Chain {
  std::vector<runtime::serve::LoadedUnit> units;

  const Session& session(size_t i) const { return units[i].session(); }

  // The feeds of unit i + 1 from the outputs of unit i: by name, else in order.
  Expected<TensorMap> feedsAfter(size_t i, const TensorMap& out) const {
    const Session& next = session(i + 1);
    TensorMap nextFeeds;
    bool byName = std::all_of(next.inputs().begin(), next.inputs().end(),
                              [&](const runtime::IoInfo& io) { return out.count(io.name) > 0; });
    if (byName) {
      for (const auto& io : next.inputs()) nextFeeds.emplace(io.name, out.at(io.name));
    } else if (next.inputs().size() == session(i).outputs().size()) {
      for (size_t k = 0; k < next.inputs().size(); ++k)
        nextFeeds.emplace(next.inputs()[k].name, out.at(session(i).outputs()[k].name));
    } else {
      return makeError("{}: its {} inputs do not match the {} outputs of {}", next.label(), next.inputs().size(),
                       session(i).outputs().size(), session(i).label());
    }
    return nextFeeds;
  }

  Expected<TensorMap> run(const Tensor& x) {
    TensorMap feeds;
    feeds.emplace(session(0).inputs().at(0).name, x);
    TensorMap out;
    for (size_t i = 0; i < units.size(); ++i) {
      ZP_ASSIGN_OR_RETURN(out, units[i].run(feeds));
      if (i + 1 == units.size()) break;
      ZP_ASSIGN_OR_RETURN(feeds, feedsAfter(i, out));
    }
    TensorMap owned;
    for (const auto& [name, t] : out) owned.emplace(name, t.clone());
    return owned;
  }
};

}  // namespace

bool BundleRunResult::ok() const {
  return std::all_of(tasks.begin(), tasks.end(), [](const TaskRunReport& t) { return !t.feasible || t.match; }) &&
         (!placed || placed->match) && (!concurrent || concurrent->ok());
}

Json BundleRunResult::json() const {
  Json ts = Json::array();
  for (const auto& t : tasks) {
    Json j = {{"system", t.system}, {"task", t.task}, {"slo", t.slo}, {"ran", t.feasible}};
    if (!t.feasible) {
      j["skipped"] = t.skipped;
    } else {
      j["combination"] = t.combination;
      j["processors"] = t.processors;
      j["inputs"] = t.inputs;
      j["samples"] = t.samples;
      j["cache_hits"] = t.cacheHits;
      j["cache_fallbacks"] = t.cacheFallbacks;
      j["max_abs_diff"] = t.maxAbsDiff;
      j["reference_scale"] = t.refScale;
      j["match"] = t.match;
      j["measured_ms"] = t.measuredMs;
      j["predicted_ms"] = t.predictedMs;
      j["planned_accuracy"] = t.plannedAccuracy;
      j["accuracy"] = t.accuracy < 0 ? Json(nullptr) : Json(t.accuracy);
      if (!t.coldPositions.is_null())
        j["cold"] = {{"cold_ms", t.coldMs}, {"predicted_cold_ms", t.predictedColdMs},
                     {"second_run_ms", t.secondRunMs}, {"positions", t.coldPositions}};
    }
    ts.push_back(std::move(j));
  }
  Json j{{"tasks", ts}, {"warnings", warnings}, {"notes", notes}, {"ok", ok()}};
  if (placed) j["placed"] = placed->json();
  if (concurrent) j["concurrent"] = concurrent->json();
  return j;
}

std::string BundleRunResult::table() const {
  if (placed || concurrent) {
    std::string s = placed ? placed->table() : concurrent->table();
    for (const auto& n : notes) s += "note: " + n + "\n";
    return s;
  }
  // With --compare, a column says whose choice a row is (the plan's first).
  const bool compared = std::any_of(tasks.begin(), tasks.end(), [&](const auto& t) { return t.system != tasks.front().system; });
  auto systemCell = [&](const TaskRunReport& t) { return compared ? fmt::format("{:<14} ", t.system) : std::string(); };
  std::string s = (compared ? fmt::format("{:<14} ", "system") : std::string()) +
                  fmt::format("{:<14} {:<5} {:<28} {:>7} {:>11} {:>6} {:>12} {:>13} {:>8} {:>9}\n", "task", "slo",
                              "combination", "samples", "max|diff|", "match", "measured ms", "predicted ms",
                              "accuracy", "planned");
  for (const auto& t : tasks) {
    if (!t.feasible) {
      s += systemCell(t) + fmt::format("{:<14} {:<5} not run: {}\n", t.task, t.slo, t.skipped);
      continue;
    }
    s += systemCell(t) + fmt::format("{:<14} {:<5} {:<28} {:>7} {:>11.3g} {:>6} {:>12.4f} {:>13.4f} {:>8} {:>9}\n", t.task, t.slo,
                     t.combination, fmt::format("{}{}", t.samples, t.inputs == "random" ? "r" : ""), t.maxAbsDiff,
                     t.match ? "yes" : "NO", t.measuredMs, t.predictedMs,
                     t.accuracy < 0 ? std::string("-") : fmt::format("{:.4f}", t.accuracy),
                     t.plannedAccuracy < 0 ? std::string("-") : fmt::format("{:.4f}", t.plannedAccuracy));
  }
  for (const auto& t : tasks)
    if (!t.coldPositions.is_null())
      s += fmt::format("{} cold start: {:.2f} ms measured (load + first run of each position, files evicted), "
                       "{:.2f} ms predicted; second run {:.3f} ms\n{}",
                       t.task, t.coldMs, t.predictedColdMs, t.secondRunMs, t.coldTable);
  for (size_t i = 0; i < systems.size(); ++i)
    s += fmt::format("{}{}: {}\n", systems[i].first, i == 0 ? " (the plan's choice)" : "", systems[i].second);
  for (const auto& l : legend) s += l + "\n";
  for (const auto& n : notes) s += "note: " + n + "\n";
  return s;
}

namespace {

// A stitch plan, checked against --slo and --task.
Status checkStitchOptions(const BundleRunParams& params, const plan::Plan& plan) {
  const fs::path& b = params.bundle;
  const plan::StitchPlan& st = *plan.stitch;
  if (!params.slo.empty() &&
      std::none_of(st.slos.begin(), st.slos.end(), [&](const auto& c) { return c.id == params.slo; }))
    return makeError("--slo {}: no such SLO configuration in {}", params.slo, (b / "plan.pb").string());
  if (!params.task.empty() &&
      std::none_of(st.tasks.begin(), st.tasks.end(), [&](const auto& t) { return t.name == params.task; }))
    return makeError("--task {}: no such task in {}", params.task, (b / "plan.pb").string());
  if (!params.trace.empty())
    return makeError("--trace: {} is a stitch plan's bundle; --trace traces an operator-placement bundle's run",
                     b.string());
  return {};
}

// The bundle of an operator-placement plan.
Expected<BundleRunResult> runPlaced(const BundleRunParams& params, Bundle& bundle) {
  if (!params.slo.empty() || !params.task.empty())
    return makeError("--slo/--task: {} places one model's operators; it has no tasks or SLO configurations",
                     params.bundle.string());
  if (params.cold)
    return makeError("--cold: {} places one model's operators; it has no cold sections", params.bundle.string());
  if (!params.compare.empty())
    return makeError("--compare: {} places one model's operators; its baselines are in its plan.json, not run",
                     params.bundle.string());
  PlacedRunParams pp;
  pp.bundle = params.bundle;
  pp.repeat = params.repeat;
  pp.seed = params.seed;
  pp.tolerance = params.tolerance;
  pp.trace = params.trace;
  BundleRunResult res;
  ZP_ASSIGN_OR_RETURN(auto r, runPlacedBundle(pp, bundle));
  res.warnings = r.warnings;
  res.placed = std::move(r);
  return res;
}

Expected<BundleRunResult> runConcurrent(const BundleRunParams& params, Bundle& bundle) {
  const plan::Plan& plan = bundle.plan();
  if (!params.slo.empty() || !params.task.empty() || params.cold)
    return makeError("--slo/--task/--cold: {} is a concurrent schedule; it has no tasks, SLO configurations or cold "
                     "sections",
                     params.bundle.string());
  ConcurrentRunParams cp;
  cp.bundle = params.bundle;
  cp.repeat = std::max(1, params.repeat);
  cp.rounds = params.rounds;
  cp.seed = params.seed;
  cp.tolerance = params.tolerance;
  std::vector<std::string> carried{"zooplan"};  // the plan's schedule, then its baselines'
  for (const auto& b : plan.concurrent->baselines) carried.push_back(b.name);
  ZP_ASSIGN_OR_RETURN(cp.schedules, systemsToRun(carried, "zooplan", params.compare));
  cp.trace = params.trace;
  BundleRunResult res;
  ZP_ASSIGN_OR_RETURN(auto r, runConcurrentBundle(cp, bundle));
  res.concurrent = std::move(r);
  return res;
}

// What a bundle run shares between its tasks.
struct BundleContext {
  const BundleRunParams& params;
  Bundle& bundle;
  std::map<std::string, const Processor*> procs;  // by name
  const plan::Plan* plan = nullptr;
  std::map<std::string, std::pair<fs::path, Tensor>> userInputs;  // --input: task -> (file, tensor)
  std::map<std::string, Dataset> datasets;                        // per task, once read
  std::optional<OutputDir> saved;                                 // --save-outputs
  std::set<std::string> warned;
  BundleRunResult res;
  void warn(const std::string& w) {
    if (warned.insert(w).second) res.warnings.push_back(w);
  }
};

// What one system runs for a task under one configuration, and by how much it
// misses that configuration's SLO when it does.
struct ChoiceToRun {
  std::string slo;
  plan::SystemTaskChoice choice;
  std::optional<plan::SloMiss> miss;
};

// The configuration to run: --slo, else the first whose SLO the system meets for the task.
std::optional<ChoiceToRun> choiceToRun(const BundleRunParams& params, const plan::StitchPlan& st,
                                       const plan::ServedSystem& system, size_t taskIndex, TaskRunReport& r) {
  r.slo = params.slo.empty() ? "-" : params.slo;
  r.skipped = params.slo.empty() ? "no SLO configuration is feasible" : "no selection for this configuration";
  for (size_t c = 0; c < system.selections.size(); ++c) {
    const auto& sel = system.selections[c];
    const plan::SystemTaskChoice& choice = sel.tasks.at(taskIndex);
    if (!params.slo.empty() ? sel.slo != params.slo : !choice.feasible) continue;
    ChoiceToRun out{sel.slo, choice, std::nullopt};
    const plan::TaskSlo& slo = st.slos.at(c).tasks.at(choice.task);
    if (!choice.feasible)
      out.miss = plan::SloMiss{choice.combination, std::max(0.0, slo.accuracy - choice.accuracy),
                               std::max(0.0, choice.latencyMs - slo.latencyMs)};
    return out;
  }
  return std::nullopt;
}

// One position's subgraph: a session with the bundle's weight cache and a
// reference session without it.
Status loadPosition(BundleContext& ctx, const plan::TaskPlan& task, int pos, const std::string& v,
                    const std::string& onProc, const std::string& where, Chain& cached, Chain& reference,
                    TaskRunReport& r, bool referenceOnly) {
  auto g = std::find_if(task.subgraphs.begin(), task.subgraphs.end(), [&](const plan::PlannedSubgraph& s) {
    return s.position == pos && s.variant == v && s.processor == onProc;
  });
  if (g == task.subgraphs.end()) return makeError("{}: no planned subgraph for position {} variant '{}'", where, pos, v);
  auto proc = ctx.procs.find(g->processor);
  if (proc == ctx.procs.end()) return makeError("{}: unknown processor '{}'", where, g->processor);
  ZP_ASSIGN_OR_RETURN(const plan::Unit* unit, ctx.bundle.unit(plan::UnitId::subgraph(task.name, pos, v)));
  ZP_ASSIGN_OR_RETURN(const fs::path model, ctx.bundle.model(*unit));
  const auto config = *proc->second;
  const runtime::SessionOptions so = runtime::serve::sessionOptions(config);
  ZP_ASSIGN_OR_RETURN(auto ref, runtime::serve::loadUnit({model, {}}, so));
  reference.units.push_back(std::move(ref.unit));
  r.processors.push_back(g->processor);
  if (referenceOnly) return {};
  // A subgraph with a cold section has its cold cache only: its entries that fit are used.
  auto cache = ctx.bundle.cache(*unit, config.policy);
  if (!cache) cache = ctx.bundle.cache(*unit, kColdCachePolicy);
  if (!cache)
    ctx.warn(fmt::format("{}: no weight cache in the bundle; transforming the raw ONNX weights",
                         ctx.bundle.cachePath(*unit, config.policy).string()));
  ZP_ASSIGN_OR_RETURN(auto loaded, runtime::serve::loadUnit({model, cache.value_or(fs::path())}, so));
  const Session& s = loaded.unit.session();
  for (const auto& w : s.warnings()) ctx.warn(w);
  r.cacheHits += s.loadStats().cacheHits;
  r.cacheFallbacks += s.loadStats().cacheFallbacks;
  cached.units.push_back(std::move(loaded.unit));
  return {};
}

// The task's cold start: position by position, its subgraph and cold cache evicted,
// loaded following its cold section and run on what the position before gave it.
Status coldStartChain(BundleContext& ctx, const plan::Plan& plan, const plan::TaskPlan& task,
                      const std::vector<std::string>& variants, const std::vector<std::string>& placement,
                      const std::string& where, Chain& cold, TaskRunReport& r) {
  r.coldPositions = Json::array();
  TensorMap feeds, out;
  Tensor x;  // the chain's input
  for (int pos = 0; pos < task.positions; ++pos) {
    const plan::UnitId id = plan::UnitId::subgraph(task.name, pos, variants[static_cast<size_t>(pos)]);
    const std::string label = id.profileKey();
    auto cp = std::find_if(plan.cold.begin(), plan.cold.end(), [&](const plan::ColdPlan& c) { return c.unit == id; });
    auto g = std::find_if(task.subgraphs.begin(), task.subgraphs.end(), [&](const plan::PlannedSubgraph& s) {
      return s.position == pos && s.variant == variants[static_cast<size_t>(pos)] &&
             s.processor == placement.at(static_cast<size_t>(pos));
    });
    if (cp == plan.cold.end() || g == task.subgraphs.end())
      return makeError("{}: no cold section for subgraph '{}' (plan-solve with zoo-profile --cold-profile)", where, label);
    ZP_ASSIGN_OR_RETURN(const plan::Unit* unit, ctx.bundle.unit(id));
    ZP_ASSIGN_OR_RETURN(auto files, coldUnitFiles(ctx.bundle, *unit));
    assert(files && "the cold section was found above");
    ZP_TRY(runtime::evictFromPageCache(files->model));
    ZP_TRY(runtime::evictFromPageCache(files->cache));
    const auto t0 = SteadyClock::now();
    ZP_ASSIGN_OR_RETURN(auto loaded, runtime::serve::loadUnit(*files, runtime::serve::sessionOptions(*ctx.procs.at(g->processor))));
    double ms = msSince(t0);
    cold.units.push_back(std::move(loaded.unit));
    Session& session = *cold.units.back().plainSession();
    if (pos == 0) {  // the input is made outside the timed span
      const runtime::IoInfo& in0 = session.inputs().at(0);
      x = runtime::randomInput(runtime::IoInfo{in0.name, in0.dtype, staticShape(in0)}, ctx.params.seed);
      feeds.emplace(in0.name, x);
    } else {
      ZP_ASSIGN_OR_RETURN(feeds, cold.feedsAfter(static_cast<size_t>(pos) - 1, out));
    }
    const auto tRun = SteadyClock::now();
    ZP_ASSIGN_OR_RETURN(out, session.run(feeds));
    ms += msSince(tRun);
    r.coldMs += ms;
    r.predictedColdMs += cp->predictedColdMs;
    r.cacheHits += session.loadStats().cacheHits;
    const auto report = session.coldReport();
    Json pj = coldRunJson(*report, session, *cp);
    pj["subgraph"] = label;
    pj["cold_ms"] = ms;
    r.coldPositions.push_back(std::move(pj));
    r.coldTable += fmt::format("position {} ({}): {:.2f} ms\n", pos, label, ms) + coldRunTable(*report, session, *cp);
    for (const auto& w : session.warnings()) ctx.warn(w);
  }
  // The next run at once (warm kernels where ready), then the whole warm switch.
  const auto t1 = SteadyClock::now();
  ZP_TRY(cold.run(x));
  r.secondRunMs = msSince(t1);
  for (auto& u : cold.units) u.plainSession()->waitForWarmSwitch();
  return {};
}

// Inputs without a dataset: enough to compare outputs, none to score.
constexpr int kRandomSamples = 8;

// Dataset samples or seeded random ones, read once per task (every system --compare runs shares them).
Expected<const Dataset*> chainInputs(BundleContext& ctx, const plan::TaskPlan& task, const Chain& cached) {
  if (auto it = ctx.datasets.find(task.name); it != ctx.datasets.end()) return &it->second;
  const runtime::IoInfo& in0 = cached.session(0).inputs().at(0);
  const int limit = ctx.params.samples > 0 ? ctx.params.samples : std::numeric_limits<int>::max();
  ZP_ASSIGN_OR_RETURN(Dataset data, ctx.bundle.samples(task.name, in0, limit,
                                                       ctx.params.samples > 0 ? ctx.params.samples : kRandomSamples,
                                                       ctx.params.seed));
  return &ctx.datasets.emplace(task.name, std::move(data)).first->second;
}

// The cached chain against the reference on every sample, and top-1 accuracy when labelled.
Status compareChains(const BundleRunParams& params, Chain& cached, Chain& reference, const Dataset& data,
                     const std::string& where, TaskRunReport& r) {
  int correct = 0;
  for (size_t i = 0; i < data.samples.size(); ++i) {
    ZP_ASSIGN_OR_RETURN(TensorMap got, cached.run(data.samples[i]));
    ZP_ASSIGN_OR_RETURN(TensorMap want, reference.run(data.samples[i]));
    for (const auto& [name, w] : want) {
      auto it = got.find(name);
      if (it == got.end() || it->second.shape != w.shape)
        return makeError("{}: output '{}' differs in presence or shape from the reference", where, name);
      auto gv = it->second.toF32(), wv = w.toF32();
      for (size_t k = 0; k < wv.size(); ++k) {
        const double d = std::abs(static_cast<double>(gv[k]) - wv[k]);
        r.maxAbsDiff = std::isnan(d) ? INFINITY : std::max(r.maxAbsDiff, d);
        r.refScale = std::max(r.refScale, std::abs(static_cast<double>(wv[k])));
      }
    }
    if (!data.labels.empty()) {
      const auto& last = cached.session(cached.units.size() - 1).outputs().at(0).name;
      correct += argmax(got.at(last)) == data.labels[i];
    }
  }
  r.match = r.maxAbsDiff <= params.tolerance * std::max(1.0, r.refScale);
  if (!data.labels.empty()) r.accuracy = static_cast<double>(correct) / static_cast<double>(data.samples.size());
  return {};
}

// Latency: one untimed run, then the median of `repeat` runs of the chain.
Expected<double> timeChain(Chain& cached, const Tensor& input, int repeat) {
  ZP_TRY(cached.run(input));
  std::vector<double> ms;
  for (int k = 0; k < repeat; ++k) {
    auto t0 = SteadyClock::now();
    ZP_TRY(cached.run(input));
    ms.push_back(msSince(t0));
  }
  return median(std::move(ms));
}

// The chain on the user's --input: checked against the reference and timed; the
// plan's own choice saves its outputs with --save-outputs.
Expected<TaskRunReport> runOnUserInput(BundleContext& ctx, const fs::path& file, const Tensor& x, bool save,
                                       Chain& cached, Chain& reference, TaskRunReport& r) {
  const runtime::IoInfo& in0 = cached.session(0).inputs().at(0);
  if (auto why = inputMismatch(in0, x)) return makeError("{}: --input {}: {}", file.string(), r.task, *why);
  ZP_ASSIGN_OR_RETURN(TensorMap got, cached.run(x));
  ZP_ASSIGN_OR_RETURN(TensorMap want, reference.run(x));
  OutputDiff diff;
  diff.add(got, want);
  r.maxAbsDiff = diff.maxAbsDiff;
  r.refScale = diff.refScale;
  r.match = diff.within(ctx.params.tolerance);
  r.inputs = file.string();
  r.samples = 1;
  if (save && ctx.saved)
    for (const auto& [name, t] : got) ZP_TRY(runtime::writeNpy(ctx.saved->path() / npyFileName(r.task + "." + name), t));
  if (ctx.params.repeat > 0) {
    ZP_ASSIGN_OR_RETURN(r.measuredMs, timeChain(cached, x, ctx.params.repeat));
  }
  return r;
}

// One task: one system's choice chained through the runtime, checked and timed.
Expected<TaskRunReport> runTask(BundleContext& ctx, size_t taskIndex, const plan::ServedSystem& system) {
  const plan::TaskPlan& task = ctx.plan->stitch->tasks[taskIndex];
  TaskRunReport r;
  r.system = system.name;
  r.task = task.name;
  const auto run = choiceToRun(ctx.params, *ctx.plan->stitch, system, taskIndex, r);
  if (!run) return r;
  const plan::SystemTaskChoice& sel = run->choice;
  r.slo = run->slo;
  r.predictedMs = sel.latencyMs;
  r.plannedAccuracy = sel.accuracy;
  if (run->miss) {
    r.skipped = fmt::format("infeasible ({} misses by {:.4g} accuracy, {:.4g} ms)", run->miss->combination,
                            run->miss->accuracyShort, run->miss->latencyOverMs);
    return r;
  }
  r.feasible = true;
  r.combination = sel.combination;
  const auto variants = zoo::combinationVariants(sel.combination);
  const std::string where = fmt::format("{}: task '{}' SLO {} ({})", (ctx.params.bundle / "plan.pb").string(),
                                        task.name, run->slo, system.name);
  if (static_cast<int>(variants.size()) != task.positions || static_cast<int>(sel.placement.size()) != task.positions)
    return makeError("{}: combination '{}' and placement of {} processors for {} positions", where, sel.combination,
                     sel.placement.size(), task.positions);
  Chain cached, reference;
  // A cold start first, before any other load reads these files.
  if (ctx.params.cold) ZP_TRY(coldStartChain(ctx, *ctx.plan, task, variants, sel.placement, where, cached, r));
  for (int pos = 0; pos < task.positions; ++pos)
    ZP_TRY(loadPosition(ctx, task, pos, variants[static_cast<size_t>(pos)], sel.placement[static_cast<size_t>(pos)],
                        where, cached, reference, r, ctx.params.cold));
  if (auto user = ctx.userInputs.find(task.name); user != ctx.userInputs.end())
    return runOnUserInput(ctx, user->second.first, user->second.second, system.name == ctx.plan->stitch->chosenSystem,
                          cached, reference, r);
  ZP_ASSIGN_OR_RETURN(const Dataset* inputs, chainInputs(ctx, task, cached));
  const Dataset& data = *inputs;
  r.inputs = data.source;
  r.samples = static_cast<int>(data.samples.size());
  ZP_TRY(compareChains(ctx.params, cached, reference, data, where, r));
  if (ctx.params.repeat > 0) {
    ZP_ASSIGN_OR_RETURN(r.measuredMs, timeChain(cached, data.samples.front(), ctx.params.repeat));
  }
  return r;
}

// --input TASK=FILE.npy: each names a task of the plan, read before anything
// runs; --save-outputs is opened (staged) once they are.
Status readUserInputs(BundleContext& ctx) {
  const auto& tasks = ctx.plan->stitch->tasks;
  std::vector<GuardedPath> read{{ctx.params.bundle, "bundle"}};
  for (const auto& [task, file] : ctx.params.inputs) {
    const std::string& name = task;  // clang 14 cannot capture a structured binding
    if (std::none_of(tasks.begin(), tasks.end(), [&](const plan::TaskPlan& t) { return t.name == name; })) {
      std::string names;
      for (const auto& t : tasks) names += (names.empty() ? "" : ", ") + t.name;
      return makeError("--input {}={}: the plan has no task '{}' (its tasks: {})", task, file.string(), task, names);
    }
    if (ctx.userInputs.count(task)) return makeError("--input {}: given twice", task);
    ZP_ASSIGN_OR_RETURN(Tensor t, runtime::readNpy(file));
    ctx.userInputs.emplace(task, std::make_pair(file, std::move(t)));
    read.push_back({file, "input"});
  }
  if (!ctx.params.saveOutputs.empty()) {
    if (ctx.params.inputs.empty())
      return makeError("--save-outputs {}: a bundle saves the outputs of its runs on --input TASK=FILE.npy; give one",
                       ctx.params.saveOutputs.string());
    ZP_ASSIGN_OR_RETURN(OutputDir d, OutputDir::open(ctx.params.saveOutputs, OutputDirOptions{"plan-run", read, nullptr}));
    ctx.saved.emplace(std::move(d));
  }
  return {};
}

}  // namespace

Expected<BundleRunResult> runBundle(const BundleRunParams& params) {
  ZP_TRY(checkOutputFiles({params.trace}, {{params.bundle, "bundle"}}));
  ZP_ASSIGN_OR_RETURN(Bundle bundle, Bundle::open(params.bundle));
  const plan::Plan& plan = bundle.plan();
  if (!plan.stitch && plan.opplace) return runPlaced(params, bundle);
  if (!plan.stitch && plan.concurrent) return runConcurrent(params, bundle);
  if (!plan.stitch && plan.mts) {
    if (params.rounds != BundleRunParams{}.rounds)
      return makeError("--rounds: only a concurrent schedule's bundle runs schedules in rounds; {} is not one",
                       params.bundle.string());
    return runMtsBundle(params, bundle);
  }
  if (params.rounds != BundleRunParams{}.rounds)
    return makeError("--rounds: only a concurrent schedule's bundle runs schedules in rounds; {} is not one",
                     params.bundle.string());
  if (!plan.stitch)
    return makeError("{}: the plan has no stitch, MTS, operator-placement or concurrent section to run",
                     bundle.planFile());
  ZP_TRY(checkStitchOptions(params, plan));
  BundleContext ctx{params, bundle, {}, &plan, {}, {}, {}, {}, {}};
  ctx.res.legend = {
      "accuracy: top-1 on the samples run (all of the task's dataset unless --samples); planned: the plan's figure",
      "measured: median of warm runs of the chained sessions on this host; predicted: the plan's latency on its "
      "processors",
      "match: outputs with the bundle's weight caches equal the same subgraphs run without caches"};
  for (const auto& p : plan.stitch->processors) ctx.procs[p.name] = &p;
  ZP_ASSIGN_OR_RETURN(const auto systems, selectSystems(plan.stitch->systems, plan.stitch->chosenSystem, params.compare));
  ZP_TRY(readUserInputs(ctx));
  for (const auto* sys : systems) ctx.res.systems.push_back({sys->name, sys->description});
  for (const auto* system : systems)
    for (size_t t = 0; t < plan.stitch->tasks.size(); ++t) {
      const std::string& name = plan.stitch->tasks[t].name;
      if (!params.task.empty() && name != params.task) continue;
      if (!ctx.userInputs.empty() && !ctx.userInputs.count(name)) continue;  // --input: the tasks it names
      ZP_ASSIGN_OR_RETURN(TaskRunReport r, runTask(ctx, t, *system));
      ctx.res.tasks.push_back(std::move(r));
    }
  if (ctx.saved) ZP_TRY(ctx.saved->commit());
  for (const auto& n : bundle.notes()) ctx.res.notes.push_back(n);
  return std::move(ctx.res);
}

}  // namespace zp::drivers
