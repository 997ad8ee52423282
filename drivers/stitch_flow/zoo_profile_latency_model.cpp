// zoo-profile step 4, latency: the task's latency model (SparseLoom Eq. 5
// with a per-run overhead and hand-over costs) from the profile rows, the
// overhead calibrated on the original variants measured whole, and the
// model scored against stitched variants measured end to end.
#include <algorithm>
#include <limits>
#include <set>

#include "drivers/stitch_flow/zoo_profile_steps.h"
#include "libplan/estimate/calibrate.h"
#include "libplan/estimate/metrics.h"
#include "libplan/runtime/measure.h"
#include "libplan/runtime/serve/processor.h"
#include "passes/stitch/stitch.h"

namespace zp::drivers::zoo_profile {

Expected<const onnx::ModelProto*> StitchedModels::get(size_t validIndex) {
  auto it = models_.find(validIndex);
  if (it == models_.end()) {
    if (!subgraphs_) {
      if (acc_.subgraphs.empty()) {
        ZP_ASSIGN_OR_RETURN(read_, readSubgraphModels(run_, task_, kSubgraphLoad));
        subgraphs_ = &read_;
      } else {
        subgraphs_ = &acc_.subgraphs;
      }
    }
    ZP_ASSIGN_OR_RETURN(auto m, stitch::materializeCombination(task_, task_.combinations[acc_.valid[validIndex]], *subgraphs_));
    it = models_.emplace(validIndex, std::move(m)).first;
  }
  return &it->second;
}

Expected<double> measureWholeMs(const Run& run, StitchedModels& models, const zoo::TaskStitch& task,
                                const TaskAccuracy& acc, size_t validIndex, const Processor& p) {
  const auto& c = task.combinations[acc.valid[validIndex]];
  ZP_ASSIGN_OR_RETURN(const auto* model, models.get(validIndex));
  ZP_ASSIGN_OR_RETURN(auto pin, runtime::serve::ScopedCorePin::pin("processor " + p.name, p.cores));
  ZP_ASSIGN_OR_RETURN(auto session, runtime::Session::fromModel(*model, c.id, measure::sessionOptions(p.engine())));
  auto in = randomInputsAt(*session, task.subgraph(0, c.variants[0]).inputs, run.batch, run.params.seed);
  ZP_ASSIGN_OR_RETURN(auto m, measure::measureLatency(*session, in, run.mp));
  return m.medianMs;
}

std::vector<size_t> validationSample(const Run& run, const TaskAccuracy& acc) {
  std::vector<size_t> candidates;
  std::set<size_t> u(acc.uniform.begin(), acc.uniform.end());
  for (size_t i = 0; i < acc.valid.size(); ++i)
    if (!u.count(i)) candidates.push_back(i);
  std::vector<size_t> sample;
  for (size_t i : estimate::sampleIndices(candidates.size(), run.params.latencyValidation, run.params.seed + 1, {}))
    sample.push_back(candidates[i]);
  return sample;
}

namespace {

// Warm median of the stitched variant `validIndex` run whole on processor `p`
// (or the shards' measurement of it), counted as one measurement.
Expected<double> measureWhole(Run& run, StitchedModels& models, const zoo::TaskStitch& task, const TaskAccuracy& acc,
                              size_t validIndex, const Processor& p) {
  run.countTimedRuns();
  const auto key = std::make_tuple(task.name, task.combinations[acc.valid[validIndex]].id, p.name);
  if (const double* given = run.given ? findIn(run.given->wholeMs, key) : nullptr) return *given;
  return measureWholeMs(run, models, task, acc, validIndex, p);
}

// The per-run overhead of processor `p`: the originals, measured whole and as
// the sum of their subgraphs, tell it; the one-node probe when there is a
// single position; 0 for an imported processor.
Expected<double> calibratedOverhead(Run& run, StitchedModels& models, const zoo::TaskStitch& task,
                                    const TaskAccuracy& acc, const Processor& p) {
  if (!p.host()) return 0.0;
  const double probe = run.overheadMs[p.label()];
  std::vector<std::pair<double, double>> pairs;
  if (task.positions() > 1)
    for (size_t u : acc.uniform) {
      const auto& c = task.combinations[acc.valid[u]];
      ZP_ASSIGN_OR_RETURN(double whole, measureWhole(run, models, task, acc, u, p));
      double sum = 0;
      bool complete = true;
      for (int pos = 0; pos < task.positions(); ++pos) {
        const auto* r = run.db.find(task.name, pos, c.variants[0], p.name, p.policy);
        if (!r) complete = false;
        else sum += r->medianMs;
      }
      if (complete) pairs.push_back({sum, whole});
    }
  double fastest = std::numeric_limits<double>::infinity();
  for (const auto* r : run.db.select(profile::RowKind::Subgraph, task.name, {}, p.name))
    if (r->policy == p.policy) fastest = std::min(fastest, r->medianMs);
  return estimate::calibrateOverhead(pairs, task.positions(), probe, fastest);
}

// Every valid variant under every placement order the search considers; the
// count of those the profile cannot estimate goes to the report.
size_t unestimated(const estimate::TaskLatencyModel& m, const zoo::TaskStitch& task, const TaskAccuracy& acc,
                   const std::vector<std::vector<std::string>>& placements) {
  size_t missing = 0;
  for (size_t k : acc.valid)
    for (const auto& pl : placements)
      if (!m.model.estimate(task.combinations[k].variants, pl, m.boundaryBytes)) ++missing;
  return missing;
}

// The model against stitched variants (not the originals: they calibrated the
// overhead) measured end to end on each host processor alone.
Expected<Json> validateLatency(Run& run, StitchedModels& models, const zoo::TaskStitch& task, const TaskAccuracy& acc,
                               const estimate::TaskLatencyModel& m) {
  const std::vector<size_t> sample = validationSample(run, acc);
  std::vector<double> est, naive, meas;
  Json perProc = Json::object();
  for (const auto& p : run.src.processors) {
    if (!p.host()) continue;
    std::vector<double> pe, pm;
    for (size_t i : sample) {
      if (run.stopRequested()) break;
      const auto& c = task.combinations[acc.valid[i]];
      ZP_ASSIGN_OR_RETURN(double measured, measureWhole(run, models, task, acc, i, p));
      std::vector<std::string> placement(static_cast<size_t>(task.positions()), p.name);
      auto e = m.model.estimate(c.variants, placement, m.boundaryBytes);
      if (!e) continue;
      double sum = 0;
      for (int pos = 0; pos < task.positions(); ++pos)
        sum += *m.model.subgraph(pos, c.variants[static_cast<size_t>(pos)], p.name);
      est.push_back(*e);
      naive.push_back(sum);
      meas.push_back(measured);
      pe.push_back(*e);
      pm.push_back(measured);
    }
    perProc[p.name] = Json{{"mape", estimate::meanAbsolutePercentageError(pe, pm)},
                           {"mae_ms", estimate::meanAbsoluteError(pe, pm)}, {"variants", pm.size()}};
  }
  return Json{{"validated_measurements", meas.size()},
              {"mape", estimate::meanAbsolutePercentageError(est, meas)},
              {"mae_ms", estimate::meanAbsoluteError(est, meas)},
              {"mape_plain_sum", estimate::meanAbsolutePercentageError(naive, meas)},
              {"per_processor", perProc}};
}

}  // namespace

Expected<estimate::TaskLatencyModel> calibrateTaskLatency(Run& run, const zoo::TaskStitch& task,
                                                          const TaskAccuracy& acc, Json& tj) {
  std::vector<std::string> names;
  for (const auto& p : run.src.processors) names.push_back(p.name);
  estimate::TaskLatencyModel m;
  m.task = task.name;
  m.positions = task.positions();
  m.model = estimate::latencyFromProfile(run.db, task.name, task.positions(), run.src.processors);
  for (int pos = 0; pos + 1 < task.positions(); ++pos) {
    ZP_ASSIGN_OR_RETURN(int64_t bytes, boundaryBytes(run, task, pos));
    m.boundaryBytes.push_back(static_cast<double>(bytes));
  }
  StitchedModels models(run, task, acc);
  Json calibrated = Json::object();
  for (const auto& p : run.src.processors) {
    ZP_ASSIGN_OR_RETURN(double c0, calibratedOverhead(run, models, task, acc, p));
    calibrated[p.name] = c0;
    m.model.setOverhead(p.name, c0);
  }
  const auto placements = estimate::searchOrders(names, task.positions());
  tj["placements"] = placements.size();
  tj["variant_placements_without_estimate"] = unestimated(m, task, acc, placements);
  ZP_ASSIGN_OR_RETURN(Json lat, validateLatency(run, models, task, acc, m));
  lat["run_overhead_ms_calibrated_on_originals"] = calibrated;
  tj["latency_estimator"] = lat;
  return m;
}

}  // namespace zp::drivers::zoo_profile
