#include "drivers/run/run_placed.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "drivers/run/bundle.h"
#include "libplan/runtime/measure.h"
#include "libplan/runtime/placed_program.h"
#include "libplan/runtime/serve/placed_executor.h"
#include "libplan/util/file.h"
#include "libplan/util/hash.h"

namespace zp::drivers {
namespace fs = std::filesystem;
using runtime::Session;
using runtime::TensorMap;

namespace {

// The placed unit for one processor, with the bundle's weight cache for its kernel policy when there is one.
Expected<std::unique_ptr<Session>> loadFor(Bundle& bundle, const plan::Unit& unit, const Processor& processor,
                                           PlacedRunReport& r) {
  ZP_ASSIGN_OR_RETURN(const fs::path model, bundle.model(unit));
  runtime::SessionOptions so = runtime::serve::sessionOptions(processor);
  if (auto cache = bundle.cache(unit, processor.policy)) {
    so.cache = *cache;
  } else {
    const std::string w = fmt::format("{}: no weight cache in the bundle; transforming the raw ONNX weights",
                                      bundle.cachePath(unit, processor.policy).string());
    if (std::find(r.warnings.begin(), r.warnings.end(), w) == r.warnings.end()) r.warnings.push_back(w);
  }
  ZP_ASSIGN_OR_RETURN(auto s, Session::load(model, so));
  for (const auto& w : s->warnings())
    if (std::find(r.warnings.begin(), r.warnings.end(), w) == r.warnings.end()) r.warnings.push_back(w);
  return s;
}

void compareOutputs(const TensorMap& got, const TensorMap& want, double tolerance, PlacedRunReport& r) {
  OutputDiff diff;
  diff.add(got, want);
  r.maxAbsDiff = diff.maxAbsDiff;
  r.refScale = diff.refScale;
  r.match = diff.within(tolerance);
}

double plannedBaseline(const plan::OpPlacement& o, const std::string& name) {
  for (const auto& b : o.baselines)
    if (b.name == name) return b.latencyMs;
  return -1;
}

}  // namespace

Expected<PlacedRunReport> runPlacedBundle(const PlacedRunParams& params, Bundle& bundle) {
  const plan::OpPlacement& o = *bundle.plan().opplace;
  PlacedRunReport r;
  ZP_ASSIGN_OR_RETURN(const plan::Unit* unit, bundle.unit(o.unit));
  ZP_ASSIGN_OR_RETURN(fs::path model, bundle.model(*unit));
  r.model = fs::relative(model, params.bundle).generic_string();
  ZP_ASSIGN_OR_RETURN(auto placement, operatorPlacement(bundle, *unit, o, r.warnings));
  const auto& processors = placement.processors;
  ZP_ASSIGN_OR_RETURN(auto exec, runtime::serve::loadPlaced(model, placement, &r.warnings));
  const runtime::PlacedProgram& program = exec->program();
  for (int p = 0; p < program.processors(); ++p) {
    r.cacheHits += program.session(p).loadStats().cacheHits;
    r.cacheFallbacks += program.session(p).loadStats().cacheFallbacks;
    r.processors.push_back(processors[static_cast<size_t>(p)].name);
  }
  r.nodes = static_cast<int>(program.steps());
  r.handoffs = program.handoffs();
  const TensorMap inputs = runtime::randomInputs(program.session(0), params.seed);

  // The single-processor run: the whole model on the first processor alone.
  r.reference = processors.front().name;
  ZP_ASSIGN_OR_RETURN(auto single, loadFor(bundle, *unit, processors.front(), r));
  ZP_ASSIGN_OR_RETURN(TensorMap want, single->run(inputs));
  ZP_ASSIGN_OR_RETURN(TensorMap got, exec->run(inputs));
  compareOutputs(got, want, params.tolerance, r);
  r.predictedMs = o.latencyMs;
  if (params.repeat > 0) {
    ZP_ASSIGN_OR_RETURN(auto placed, exec->measure(inputs, params.warmup, params.repeat));
    r.measuredMs = placed.medianMs;
    r.measuredP90Ms = placed.p90Ms;
    r.runs = placed.runs;
    for (size_t p = 0; p < processors.size(); ++p) {
      std::unique_ptr<Session> alone;
      if (p == 0) alone = std::move(single);
      else { ZP_ASSIGN_OR_RETURN(alone, loadFor(bundle, *unit, processors[p], r)); }
      ZP_ASSIGN_OR_RETURN(auto m, runtime::serve::measureOnProcessor(*alone, processors[p], inputs, params.warmup,
                                                                     params.repeat));
      r.alone.push_back({processors[p].name, plannedBaseline(o, processors[p].name + "-only"), m.medianMs});
    }
  }
  if (!params.trace.empty()) {
    ZP_TRY(exec->run(inputs, true));
    const Json trace = runtime::serve::placedRunTrace(exec->program(), processors, "plan-run " + r.model);
    ZP_TRY(writeFileAtomic(params.trace, trace.dump(1) + "\n"));
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
