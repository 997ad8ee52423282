#include "drivers/run/run_placed.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "drivers/run/bundle.h"
#include "drivers/run/unit_runs.h"
#include "libplan/runtime/measure.h"
#include "libplan/runtime/placed_program.h"
#include "libplan/runtime/serve/placed_executor.h"
#include "libplan/util/file.h"
#include "libplan/util/hash.h"
#include "libplan/util/stats.h"

namespace zp::drivers {
namespace fs = std::filesystem;
using runtime::Session;
using runtime::TensorMap;

namespace {

double plannedBaseline(const plan::OpPlacement& o, const std::string& name) {
  for (const auto& b : o.baselines)
    if (b.name == name) return b.latencyMs;
  return -1;
}

// Slot 0: the placed unit (on its first processor's worker, its operators on its
// own workers); slot 1 + p: the whole model on processor p alone, with the
// bundle's weight cache for p's policy. A task per slot, on the same inputs.
Expected<UnitRunSetup> placedSetup(Bundle& bundle, const plan::Unit& unit, const fs::path& model,
                                   const runtime::serve::OperatorPlacement& placement, const TensorMap& inputs,
                                   PlacedRunReport& r) {
  UnitRunSetup s;
  s.processors = placement.processors;
  s.files.push_back({model, {}, nullptr, placement});
  s.slots.push_back({"placed", 0, 0, true});
  for (size_t p = 0; p < s.processors.size(); ++p) {
    const Processor& proc = s.processors[p];
    const auto cache = bundle.cache(unit, proc.policy);
    const std::string w = fmt::format("{}: no weight cache in the bundle; transforming the raw ONNX weights",
                                      bundle.cachePath(unit, proc.policy).string());
    if (!cache && std::find(r.warnings.begin(), r.warnings.end(), w) == r.warnings.end()) r.warnings.push_back(w);
    s.files.push_back({model, cache.value_or(fs::path())});
    s.slots.push_back({proc.name + "-only", static_cast<int>(p), 0, true});
  }
  for (size_t k = 0; k < s.slots.size(); ++k)
    s.tasks.push_back({s.slots[k].name, {static_cast<int>(k)}, kUnboundedMs, true, {inputs}, {}});
  return s;
}

}  // namespace

Expected<PlacedRunReport> runPlacedBundle(const PlacedRunParams& params, Bundle& bundle) {
  const plan::OpPlacement& o = bundle.plan().opplace.front();  // the operator-placement plan's model
  PlacedRunReport r;
  ZP_ASSIGN_OR_RETURN(const plan::Unit* unit, bundle.unit(o.unit));
  ZP_ASSIGN_OR_RETURN(fs::path model, bundle.model(*unit));
  r.model = fs::relative(model, params.bundle).generic_string();
  ZP_ASSIGN_OR_RETURN(auto placement, operatorPlacement(bundle, *unit, o, r.warnings));
  const auto processors = placement.processors;
  for (const auto& p : processors) r.processors.push_back(p.name);
  ZP_ASSIGN_OR_RETURN(const auto ios, bundle.inputs(*unit));
  const TensorMap inputs = runtime::randomInputs(ios, params.seed);
  ZP_ASSIGN_OR_RETURN(const UnitRunSetup setup, placedSetup(bundle, *unit, model, placement, inputs, r));
  // Each task: `warmup` untimed queries, then `repeat` timed ones (one checked query without timing).
  const int runs = params.repeat > 0 ? params.warmup + params.repeat : 1;
  const size_t tasks = params.repeat > 0 ? setup.tasks.size() : 2;  // untimed: the placed unit and its reference
  std::vector<UnitQuery> queries;
  for (size_t t = 0; t < tasks; ++t)
    for (int k = 0; k < runs; ++k) queries.push_back({static_cast<int>(t), 0});
  // After the last placed query, one profiled run for the trace (the unit still resident).
  std::optional<Json> trace;
  UnitRunParams up;
  up.afterRun = [&](const runtime::serve::ExecSlice& run, runtime::serve::LoadedUnit& loaded) {
    if (run.task != 0 || run.query != runs - 1 || !loaded.placed()) return;
    r.nodes = static_cast<int>(loaded.placed()->program().steps());
    r.handoffs = loaded.placed()->program().handoffs();
    if (params.trace.empty() || !loaded.placed()->run(inputs, true).ok()) return;
    trace = runtime::serve::placedRunTrace(loaded.placed()->program(), processors, "plan-run " + r.model);
  };
  ZP_ASSIGN_OR_RETURN(UnitRuns ran, runUnits(setup, queries, up));
  r.cacheHits = ran.loads[0].cacheHits;
  r.cacheFallbacks = ran.loads[0].cacheFallbacks;
  for (const auto& loads : ran.loads)
    for (const auto& w : loads.warnings)
      if (std::find(r.warnings.begin(), r.warnings.end(), w) == r.warnings.end()) r.warnings.push_back(w);
  // The reference: the whole model on the first processor alone.
  r.reference = processors.front().name;
  OutputDiff diff;
  diff.add(ran.served.outputs.at(0), ran.served.outputs.at(static_cast<size_t>(runs)));
  r.maxAbsDiff = diff.maxAbsDiff;
  r.refScale = diff.refScale;
  r.match = diff.within(params.tolerance);
  r.predictedMs = o.latencyMs;
  if (params.repeat > 0) {
    auto timed = [&](size_t t) {
      const size_t from = t * static_cast<size_t>(runs) + static_cast<size_t>(params.warmup);
      return latenciesMs(ran.served, from, from + static_cast<size_t>(params.repeat));
    };
    r.measuredMs = median(timed(0));
    r.measuredP90Ms = percentile(timed(0), 0.9);
    r.runs = params.repeat;
    for (size_t p = 0; p < processors.size(); ++p)
      r.alone.push_back({processors[p].name, plannedBaseline(o, processors[p].name + "-only"), median(timed(1 + p))});
  }
  if (!params.trace.empty()) {
    if (!trace) return makeError("{}: the profiled run for --trace failed", r.model);
    ZP_TRY(writeFileAtomic(params.trace, trace->dump(1) + "\n"));
  }
  return r;
}

Json PlacedRunReport::json() const {
  Json a = Json::array();
  for (const auto& x : alone)
    a.push_back({{"processor", x.processor}, {"measured_ms", x.measuredMs},
                 {"predicted_ms", x.predictedMs < 0 ? Json(nullptr) : Json(x.predictedMs)}});
  return Json{{"model", model},           {"processors", processors},   {"reference", reference},
              {"nodes", nodes},           {"handoffs", handoffs},       {"cache_hits", cacheHits},
              {"cache_fallbacks", cacheFallbacks}, {"max_abs_diff", maxAbsDiff}, {"reference_scale", refScale},
              {"match", match},           {"predicted_ms", predictedMs}, {"measured_ms", measuredMs},
              {"measured_p90_ms", measuredP90Ms}, {"runs", runs},        {"alone", a}};
}

std::string PlacedRunReport::table() const {
  std::string s = fmt::format("{}: {} nodes on {} ({} hand-offs between processors)\n", model, nodes,
                              fmt::join(processors, ", "), handoffs);
  s += fmt::format("{:<20} {:>12} {:>13}\n", "schedule", "measured ms", "predicted ms");
  s += fmt::format("{:<20} {:>12.4f} {:>13.4f}\n", "opplace", measuredMs, predictedMs);
  for (const auto& a : alone)
    s += fmt::format("{:<20} {:>12.4f} {:>13}\n", a.processor + "-only", a.measuredMs,
                     a.predictedMs < 0 ? std::string("-") : fmt::format("{:.4f}", a.predictedMs));
  s += fmt::format("outputs against {} alone: max|diff| {:.3g} (scale {:.3g}): {}\n", reference, maxAbsDiff, refScale,
                   match ? "match" : "MISMATCH");
  s += fmt::format("measured: median of {} warm runs on this host, each processor on its pinned worker; "
                   "predicted: the plan's cost model\n", runs);
  return s;
}

}  // namespace zp::drivers
