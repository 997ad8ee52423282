#include "drivers/run/run_bundle.h"
#include "drivers/run/bundle.h"
#include "drivers/emit/emit_bundle.h"
#include "drivers/run/cold_run.h"
#include "drivers/run/unit_runs.h"
#include "libplan/runtime/measure.h"

#include <algorithm>
#include <cassert>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
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
  std::vector<Processor> processors;  // the stitch section's, checked against this machine
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

// A system's choice for a task as the executor runs it: a slot per position on
// the processor the choice places it on, with the bundle's weight caches
// (`cached`), without them (`reference`), and loaded following each position's
// cold section (`cold`, with --cold).
struct ChainSetups {
  UnitRunSetup cached, reference, cold;
  std::vector<const plan::ColdPlan*> coldPlans;  // per position, with --cold
  std::vector<const plan::Unit*> units;          // per position
  // A weight-shared group's unit answering the task: the other members' inputs
  // in its graph (every query feeds them), the output that answers, and the
  // task's outputs by their names in the graph.
  TensorMap otherInputs;
  std::string answerOutput;
  std::map<std::string, std::string> ownOutputNames;  // stitched name -> the task's own
};

Status addPosition(BundleContext& ctx, const plan::TaskPlan& task, int pos, const std::string& v,
                   const std::string& onProc, const std::string& where, ChainSetups& c, TaskRunReport& r) {
  auto g = std::find_if(task.subgraphs.begin(), task.subgraphs.end(), [&](const plan::PlannedSubgraph& s) {
    return s.position == pos && s.variant == v && s.processor == onProc;
  });
  if (g == task.subgraphs.end()) return makeError("{}: no planned subgraph for position {} variant '{}'", where, pos, v);
  auto proc = std::find_if(ctx.processors.begin(), ctx.processors.end(),
                           [&](const Processor& p) { return p.name == g->processor; });
  if (proc == ctx.processors.end()) return makeError("{}: unknown processor '{}'", where, g->processor);
  const plan::UnitId id = plan::UnitId::subgraph(task.name, pos, v);
  ZP_ASSIGN_OR_RETURN(const plan::Unit* unit, ctx.bundle.unit(id));
  ZP_ASSIGN_OR_RETURN(const fs::path model, ctx.bundle.model(*unit));
  c.units.push_back(unit);
  r.processors.push_back(g->processor);
  const runtime::serve::ServeSlot slot{id.profileKey(), static_cast<int>(proc - ctx.processors.begin()), 0, true};
  for (UnitRunSetup* s : {&c.cached, &c.reference, &c.cold}) {
    s->slots.push_back(slot);
    s->processors = ctx.processors;
  }
  c.reference.files.push_back({model, {}});
  // A subgraph with a cold section has its cold cache only: its entries that fit are used.
  auto cache = ctx.bundle.cache(*unit, proc->policy);
  if (!cache) cache = ctx.bundle.cache(*unit, kColdCachePolicy);
  if (!cache)
    ctx.warn(fmt::format("{}: no weight cache in the bundle; transforming the raw ONNX weights",
                         ctx.bundle.cachePath(*unit, proc->policy).string()));
  c.cached.files.push_back({model, cache.value_or(fs::path())});
  if (!ctx.params.cold) return {};
  const auto& cold = ctx.plan->cold;
  auto cp = std::find_if(cold.begin(), cold.end(), [&](const plan::ColdPlan& p) { return p.unit == id; });
  ZP_ASSIGN_OR_RETURN(auto files, coldUnitFiles(ctx.bundle, *unit));
  if (cp == cold.end() || !files)
    return makeError("{}: no cold section for subgraph '{}' (plan-solve with zoo-profile --cold-profile)", where,
                     id.profileKey());
  c.cold.files.push_back(*files);
  c.coldPlans.push_back(&*cp);
  return {};
}

// The group's unit as the task's one position, on the processor the choice
// places it on (a group has no cold section: it runs from its weight cache).
Status addGroup(BundleContext& ctx, const plan::PlannedGroup& g, const std::string& task, const std::string& onProc,
                const std::string& where, ChainSetups& c, TaskRunReport& r) {
  if (ctx.params.cold)
    return makeError("{}: answered by group '{}', which has no cold section (--cold runs subgraphs)", where, g.name);
  auto proc = std::find_if(ctx.processors.begin(), ctx.processors.end(), [&](const Processor& p) { return p.name == onProc; });
  if (proc == ctx.processors.end()) return makeError("{}: unknown processor '{}'", where, onProc);
  const plan::UnitId id = plan::UnitId::group(g.name);
  ZP_ASSIGN_OR_RETURN(const plan::Unit* unit, ctx.bundle.unit(id));
  ZP_ASSIGN_OR_RETURN(const fs::path model, ctx.bundle.model(*unit));
  c.units.push_back(unit);
  r.processors.push_back(onProc);
  const runtime::serve::ServeSlot slot{id.profileKey(), static_cast<int>(proc - ctx.processors.begin()), 0, true};
  for (UnitRunSetup* s : {&c.cached, &c.reference}) {
    s->slots.push_back(slot);
    s->processors = ctx.processors;
  }
  c.reference.files.push_back({model, {}});
  auto cache = ctx.bundle.cache(*unit, proc->policy);
  if (!cache)
    ctx.warn(fmt::format("{}: no weight cache in the bundle; transforming the raw ONNX weights",
                         ctx.bundle.cachePath(*unit, proc->policy).string()));
  c.cached.files.push_back({model, cache.value_or(fs::path())});
  const plan::GroupMember* member = plan::memberOf(g, task);
  c.answerOutput = member->stitchedOutputs.front();
  for (size_t k = 0; k < member->outputs.size(); ++k) c.ownOutputNames[member->stitchedOutputs[k]] = member->outputs[k];
  ZP_ASSIGN_OR_RETURN(const auto inputs, ctx.bundle.inputs(*unit));
  for (const auto& in : inputs)
    if (in.name != member->stitchedInput)
      c.otherInputs.emplace(in.name, runtime::randomInput({in.name, in.dtype, staticShape(in)}, ctx.params.seed));
  return {};
}

// A placed model as the task's one position: dispatched on the first of its
// processors, holding the others, each operator on its processor (no cold section).
Status addPlaced(BundleContext& ctx, const plan::OpPlacement& o, const std::string& where, ChainSetups& c,
                 TaskRunReport& r) {
  if (ctx.params.cold)
    return makeError("{}: answered by the placed model {}, which has no cold section (--cold runs subgraphs)", where,
                     o.unit.str());
  std::vector<int> indices;
  for (const auto& name : o.processors) {
    auto proc = std::find_if(ctx.processors.begin(), ctx.processors.end(), [&](const Processor& p) { return p.name == name; });
    if (proc == ctx.processors.end()) return makeError("{}: unknown processor '{}'", where, name);
    indices.push_back(static_cast<int>(proc - ctx.processors.begin()));
  }
  ZP_ASSIGN_OR_RETURN(const plan::Unit* unit, ctx.bundle.unit(o.unit));
  ZP_ASSIGN_OR_RETURN(const fs::path model, ctx.bundle.model(*unit));
  std::vector<std::string> warnings;
  ZP_ASSIGN_OR_RETURN(auto placement, operatorPlacement(ctx.bundle, *unit, o, warnings));
  for (const auto& w : warnings) ctx.warn(w);
  c.units.push_back(unit);
  r.processors = o.processors;
  const runtime::serve::ServeSlot slot{o.unit.str(), indices.front(), 0, true,
                                       std::vector<int>(indices.begin() + 1, indices.end())};
  for (UnitRunSetup* s : {&c.cached, &c.reference}) {
    s->slots.push_back(slot);
    s->processors = ctx.processors;
  }
  auto raw = placement;
  for (auto& cache : raw.caches) cache.clear();
  c.reference.files.push_back({model, {}, {}, std::move(raw)});
  c.cached.files.push_back({model, {}, {}, std::move(placement)});
  return {};
}

// Every setup's one task, on `samples`.
void setTask(ChainSetups& c, const std::string& name, std::vector<TensorMap> samples,
             const std::vector<int64_t>& labels) {
  std::vector<int> slots(c.units.size());
  for (size_t i = 0; i < slots.size(); ++i) slots[i] = static_cast<int>(i);
  for (auto& s : samples)
    for (const auto& [input, x] : c.otherInputs) s.emplace(input, x);
  for (UnitRunSetup* s : {&c.cached, &c.reference, &c.cold}) {
    s->tasks = {runtime::serve::ServeTask{name, slots, kUnboundedMs, true, samples, labels}};
    s->tasks.front().answerOutput = c.answerOutput;
  }
}

std::vector<UnitQuery> queriesOf(int checked, int timed) {
  std::vector<UnitQuery> q;
  for (int i = 0; i < checked; ++i) q.push_back({0, i});
  for (int k = 0; k < timed; ++k) q.push_back({0, 0});
  return q;
}

// The task's cold start through the executor: every position's files evicted,
// the first query loading each position following its cold section on its
// processor; then the next query at once (warm kernels where ready).
Status coldStart(BundleContext& ctx, ChainSetups& c, const runtime::IoInfo& in0, TaskRunReport& r) {
  setTask(c, r.task, {TensorMap{{in0.name, runtime::randomInput({in0.name, in0.dtype, staticShape(in0)}, ctx.params.seed)}}},
          {});
  std::vector<Json> positions(c.units.size());
  std::vector<std::string> tables(c.units.size());
  std::mutex mu;
  UnitRunParams up;
  up.preload = false;
  up.afterRun = [&](const runtime::serve::ExecSlice& run, runtime::serve::LoadedUnit& unit) {
    const runtime::Session* session = unit.plainSession();
    const auto report = session ? session->coldReport() : std::nullopt;
    if (run.query != 0 || !report) return;
    const size_t pos = static_cast<size_t>(run.position);
    std::lock_guard lock(mu);
    positions[pos] = coldRunJson(*report, *session, *c.coldPlans[pos]);
    tables[pos] = coldRunTable(*report, *session, *c.coldPlans[pos]);
    for (const auto& w : session->warnings()) ctx.warn(w);
  };
  ZP_ASSIGN_OR_RETURN(UnitRuns runs, runUnits(c.cold, queriesOf(1, 1), up));
  r.coldPositions = Json::array();
  for (size_t pos = 0; pos < c.units.size(); ++pos) {
    double ms = 0;
    for (const auto& s : runs.served.slices)
      if (s.query == 0 && s.position == static_cast<int>(pos)) ms += s.endMs - s.startMs;
    const std::string label = c.units[pos]->id.profileKey();
    Json pj = positions[pos].is_null() ? Json::object() : positions[pos];
    pj["subgraph"] = label;
    pj["cold_ms"] = ms;
    r.coldPositions.push_back(std::move(pj));
    r.coldTable += fmt::format("position {} ({}): {:.2f} ms\n", pos, label, ms) + tables[pos];
    r.predictedColdMs += c.coldPlans[pos]->predictedColdMs;
    r.cacheHits += runs.loads[pos].cacheHits;
  }
  r.coldMs = runs.served.queries.at(0).latencyMs;
  r.secondRunMs = runs.served.queries.at(1).latencyMs;
  return {};
}

// Inputs without a dataset: enough to compare outputs, none to score.
constexpr int kRandomSamples = 8;

// Dataset samples or seeded random ones, read once per task (every system --compare runs shares them).
Expected<const Dataset*> taskInputs(BundleContext& ctx, const plan::TaskPlan& task, const runtime::IoInfo& in0) {
  if (auto it = ctx.datasets.find(task.name); it != ctx.datasets.end()) return &it->second;
  const int limit = ctx.params.samples > 0 ? ctx.params.samples : std::numeric_limits<int>::max();
  ZP_ASSIGN_OR_RETURN(Dataset data, ctx.bundle.samples(task.name, in0, limit,
                                                       ctx.params.samples > 0 ? ctx.params.samples : kRandomSamples,
                                                       ctx.params.seed));
  return &ctx.datasets.emplace(task.name, std::move(data)).first->second;
}

// The choice with the bundle's caches against the reference on `checked` samples
// (top-1 accuracy when labelled), then `repeat` warm queries of the first timed.
Expected<std::vector<TensorMap>> checkAndTime(BundleContext& ctx, ChainSetups& c, int checked, bool labelled,
                                              TaskRunReport& r) {
  ZP_ASSIGN_OR_RETURN(UnitRuns got, runUnits(c.cached, queriesOf(checked, std::max(0, ctx.params.repeat))));
  ZP_ASSIGN_OR_RETURN(UnitRuns want, runUnits(c.reference, queriesOf(checked, 0)));
  OutputDiff diff;
  int correct = 0;
  for (size_t i = 0; i < static_cast<size_t>(checked); ++i) {
    diff.add(got.served.outputs.at(i), want.served.outputs.at(i));
    correct += got.served.queries[i].correct;
  }
  r.maxAbsDiff = diff.maxAbsDiff;
  r.refScale = diff.refScale;
  r.match = diff.within(ctx.params.tolerance);
  if (labelled) r.accuracy = static_cast<double>(correct) / checked;
  if (ctx.params.repeat > 0) r.measuredMs = medianLatencyMs(got.served, static_cast<size_t>(checked));
  for (const auto& l : got.loads) {
    r.cacheHits += l.cacheHits;
    r.cacheFallbacks += l.cacheFallbacks;
    for (const auto& w : l.warnings) ctx.warn(w);
  }
  got.served.outputs.resize(static_cast<size_t>(checked));
  return std::move(got.served.outputs);
}

// The chain on the user's --input: checked against the reference and timed; the
// plan's own choice saves its outputs with --save-outputs.
Status runOnUserInput(BundleContext& ctx, const fs::path& file, const Tensor& x, bool save, ChainSetups& c,
                      const runtime::IoInfo& in0, TaskRunReport& r) {
  if (auto why = inputMismatch(in0, x)) return makeError("{}: --input {}: {}", file.string(), r.task, *why);
  setTask(c, r.task, {TensorMap{{in0.name, x}}}, {});
  r.inputs = file.string();
  r.samples = 1;
  ZP_ASSIGN_OR_RETURN(auto outputs, checkAndTime(ctx, c, 1, false, r));
  if (save && ctx.saved)
    for (const auto& [name, t] : outputs.at(0)) {
      // A group's unit answers every member: the task's own outputs, by its own names.
      if (!c.ownOutputNames.empty() && !c.ownOutputNames.count(name)) continue;
      const std::string& own = c.ownOutputNames.empty() ? name : c.ownOutputNames.at(name);
      ZP_TRY(runtime::writeNpy(ctx.saved->path() / npyFileName(r.task + "." + own), t));
    }
  return {};
}

// One task: one system's choice run through the executor, checked and timed.
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
  const std::string where = fmt::format("{}: task '{}' SLO {} ({})", (ctx.params.bundle / "plan.pb").string(),
                                        task.name, run->slo, system.name);
  ChainSetups c;
  const plan::PlannedGroup* group = plan::groupOf(*ctx.plan->stitch, sel);
  if (group) {
    ZP_TRY(addGroup(ctx, *group, task.name, sel.placement.at(0), where, c, r));
  } else if (plan::answeredByPlacedModel(sel)) {
    ZP_ASSIGN_OR_RETURN(const auto id, plan::parseUnitId(sel.combination));
    ZP_TRY(addPlaced(ctx, *plan::placementOf(*ctx.plan, id), where, c, r));
  } else {
    const auto variants = zoo::combinationVariants(sel.combination);
    if (static_cast<int>(variants.size()) != task.positions || static_cast<int>(sel.placement.size()) != task.positions)
      return makeError("{}: combination '{}' and placement of {} processors for {} positions", where, sel.combination,
                       sel.placement.size(), task.positions);
    for (int pos = 0; pos < task.positions; ++pos)
      ZP_TRY(addPosition(ctx, task, pos, variants[static_cast<size_t>(pos)], sel.placement[static_cast<size_t>(pos)],
                         where, c, r));
  }
  ZP_ASSIGN_OR_RETURN(const auto inputs, ctx.bundle.inputs(*c.units.front()));
  // The task's input: the first of its first subgraph, or its own in the group's graph.
  auto in = group ? std::find_if(inputs.begin(), inputs.end(),
                                 [&](const runtime::IoInfo& io) { return io.name == plan::memberOf(*group, task.name)->stitchedInput; })
                  : inputs.begin();
  if (in == inputs.end()) return makeError("{}: group '{}' has no input for the task", where, group->name);
  const runtime::IoInfo& in0 = *in;
  // A cold start first, before any other load reads these files.
  if (ctx.params.cold) ZP_TRY(coldStart(ctx, c, in0, r));
  if (auto user = ctx.userInputs.find(task.name); user != ctx.userInputs.end()) {
    ZP_TRY(runOnUserInput(ctx, user->second.first, user->second.second,
                          system.name == ctx.plan->stitch->chosenSystem, c, in0, r));
    return r;
  }
  ZP_ASSIGN_OR_RETURN(const Dataset* data, taskInputs(ctx, task, in0));
  std::vector<TensorMap> samples;
  for (const auto& x : data->samples) samples.push_back(TensorMap{{in0.name, x}});
  setTask(c, task.name, samples, data->labels);
  r.inputs = data->source;
  r.samples = static_cast<int>(samples.size());
  ZP_TRY(checkAndTime(ctx, c, r.samples, !data->labels.empty(), r));
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
  if (!plan.stitch && !plan.opplace.empty()) return runPlaced(params, bundle);
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
  ZP_ASSIGN_OR_RETURN(auto processors, bundle.processors(plan.stitch->processors));
  BundleContext ctx{params, bundle, std::move(processors), &plan, {}, {}, {}, {}, {}};
  ctx.res.legend = {
      "accuracy: top-1 on the samples run (all of the task's dataset unless --samples); planned: the plan's figure",
      "measured: median of warm queries run one at a time through the executor, each position on its processor's "
      "pinned worker; predicted: the plan's latency on its processors",
      "match: outputs with the bundle's weight caches equal the same subgraphs run without caches"};
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
