#include "drivers/run/run_concurrent.h"

#include <cassert>
#include <algorithm>
#include <map>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "drivers/concurrent_flow/executed_schedule.h"
#include "drivers/run/bundle.h"
#include "libplan/graph/model_io.h"
#include "libplan/util/file.h"
#include "libplan/util/hash.h"
#include "libplan/util/stats.h"

namespace zp::drivers {
namespace fs = std::filesystem;

namespace {

std::string planFile(const ConcurrentRunParams& p) { return (p.bundle / "plan.pb").string(); }

// The workload's host processors as the runtime runs them: each must name cores of this machine.
Expected<std::vector<Processor>> hostProcessors(const Bundle& bundle, const plan::ConcurrentSchedule& c) {
  if (!plan::findProcessor(bundle.plan(), c.accelerators.front()))
    return makeError("{}: the plan names no host processors (its workload has no 'processors'): it can be "
                     "simulated, not run",
                     bundle.planFile());
  return bundle.processors(c.accelerators);
}

// Every DNN of the plan as the executor joins it: its model and the nodes of its groups.
Expected<std::vector<ScheduledModel>> scheduledModels(const ConcurrentRunParams& params, Bundle& bundle) {
  const plan::Plan& plan = bundle.plan();
  std::map<std::string, onnx::ModelProto> loaded;  // by content: DNNs of one model read it once
  std::vector<ScheduledModel> out;
  for (const auto& d : plan.concurrent->dnns) {
    if (!d.unit)
      return makeError("{}: DNN '{}' is given as layer-group rows, not a model: only plans of model DNNs run",
                       planFile(params), d.name);
    ZP_ASSIGN_OR_RETURN(const plan::Unit* unit, bundle.unit(*d.unit));
    if (!loaded.count(unit->sha256)) {
      ZP_ASSIGN_OR_RETURN(const fs::path path, bundle.model(*unit));
      ZP_ASSIGN_OR_RETURN(auto m, graph::loadModel(path));
      loaded.emplace(unit->sha256, std::move(m));
    }
    ScheduledModel sm{d.name, loaded.at(unit->sha256), {}};
    for (const auto& g : d.groups) {
      if (g.nodes.empty())
        return makeError("{}: DNN '{}' group '{}' names no nodes", planFile(params), d.name, g.name);
      sm.groupNodes.push_back(g.nodes);
    }
    out.push_back(std::move(sm));
  }
  return out;
}

// A recorded schedule (the plan's or a baseline's) as the executor follows it.
Expected<ExecutionOrder> orderOf(const ConcurrentRunParams& params, const plan::ConcurrentSchedule& c,
                                 const std::vector<plan::ConcurrentDnn>& dnns, const std::string& name) {
  if (dnns.size() != c.dnns.size())
    return makeError("{}: schedule '{}' has {} DNNs, the plan {}", planFile(params), name, dnns.size(), c.dnns.size());
  ExecutionOrder order;
  for (size_t d = 0; d < dnns.size(); ++d) {
    if (dnns[d].groups.size() != c.dnns[d].groups.size())
      return makeError("{}: schedule '{}': DNN '{}' has {} groups, the plan's {}", planFile(params), name,
                       dnns[d].name, dnns[d].groups.size(), c.dnns[d].groups.size());
    auto& slots = order.groups.emplace_back();
    for (const auto& g : dnns[d].groups) {
      const auto a = std::find(c.accelerators.begin(), c.accelerators.end(), g.accelerator) - c.accelerators.begin();
      slots.push_back({static_cast<int>(a), g.startMs});
    }
    auto& deps = order.deps.emplace_back();
    for (const auto& e : c.dnns[d].dependsOn)
      for (size_t k = 0; k < d; ++k)
        if (c.dnns[k].name == e) deps.push_back(static_cast<int>(k));
  }
  return order;
}

struct Candidate {
  ConcurrentRunReport::Row row;
  ExecutionOrder order;
  std::vector<std::vector<double>> dnnRounds;  // per DNN, the median of each round
  std::vector<double> throughputRounds, p90Rounds;
};

Candidate candidate(const std::string& name, const plan::ScheduleResult& simulated,
                    const std::vector<plan::ConcurrentDnn>& dnns, ExecutionOrder order) {
  Candidate c;
  c.row.schedule = name;
  c.row.predictedMakespanMs = simulated.latencyMs;
  c.row.predictedThroughput = simulated.throughput;
  for (const auto& d : dnns) c.row.predictedDnnMs.push_back(d.endMs - d.releaseMs);
  c.order = std::move(order);
  c.dnnRounds.resize(dnns.size());
  return c;
}

bool wanted(const ConcurrentRunParams& p, const std::string& name) {
  return p.schedules.empty() || std::find(p.schedules.begin(), p.schedules.end(), name) != p.schedules.end();
}

Expected<std::vector<Candidate>> candidates(const ConcurrentRunParams& params, const plan::ConcurrentSchedule& c) {
  std::vector<Candidate> out;
  if (wanted(params, "zooplan")) {
    ZP_ASSIGN_OR_RETURN(auto order, orderOf(params, c, c.dnns, "zooplan"));
    out.push_back(candidate("zooplan", {"zooplan", c.latencyMs, c.throughput, 0, {}}, c.dnns, std::move(order)));
  }
  for (const auto& b : c.baselines) {
    if (!wanted(params, b.name)) continue;
    if (b.dnns.empty()) return makeError("{}: baseline '{}' has no recorded schedule", planFile(params), b.name);
    ZP_ASSIGN_OR_RETURN(auto order, orderOf(params, c, b.dnns, b.name));
    out.push_back(candidate(b.name, b, b.dnns, std::move(order)));
  }
  for (const auto& s : params.schedules)
    if (s != "zooplan" && std::none_of(c.baselines.begin(), c.baselines.end(), [&](const auto& b) { return b.name == s; }))
      return makeError("--compare: '{}' is neither zooplan nor a baseline of {}", s, planFile(params));
  return out;
}

// Each DNN run alone on the first processor, on the inputs the schedules ran
// on: its outputs under the joined graph's names.
Expected<runtime::TensorMap> aloneOutputs(const std::vector<ScheduledModel>& models, const runtime::TensorMap& inputs,
                                          const Processor& processor) {
  runtime::TensorMap want;
  for (const auto& m : models) {
    ZP_ASSIGN_OR_RETURN(auto session, runtime::Session::fromModel(m.model, m.name, runtime::serve::sessionOptions(processor)));
    runtime::TensorMap feed;
    for (const auto& io : session->inputs()) {
      auto it = inputs.find(m.name + "/" + io.name);
      if (it == inputs.end()) return makeError("{}: input '{}' was not fed to the joined run", m.name, io.name);
      feed.emplace(io.name, it->second);
    }
    ZP_ASSIGN_OR_RETURN(auto out, session->run(feed));
    for (auto& [name, t] : out) want.emplace(m.name + "/" + name, t.clone());
  }
  return want;
}

void finish(Candidate& c, double tolerance) {
  auto& r = c.row;
  r.match = OutputDiff{r.maxAbsDiff, r.refScale}.within(tolerance);
  r.measuredMakespanMs = median(r.roundMakespanMs);
  r.measuredP90Ms = median(c.p90Rounds);
  r.measuredThroughput = median(c.throughputRounds);
  for (const auto& d : c.dnnRounds) r.measuredDnnMs.push_back(median(d));
}

}  // namespace

Expected<ConcurrentRunReport> runConcurrentBundle(const ConcurrentRunParams& params, Bundle& bundle) {
  const auto& c = *bundle.plan().concurrent;
  ZP_ASSIGN_OR_RETURN(auto processors, hostProcessors(bundle, c));
  ZP_ASSIGN_OR_RETURN(auto models, scheduledModels(params, bundle));
  ZP_ASSIGN_OR_RETURN(auto cs, candidates(params, c));
  ConcurrentRunReport r;
  r.workload = c.workload;
  r.objective = c.objective;
  r.source = c.source;
  r.repeat = params.repeat;
  r.rounds = params.rounds;
  for (const auto& p : processors)
    r.processors.push_back(fmt::format("{}: cores {}, {}, {}", p.name, fmt::join(p.cores, ","), p.policy,
                                       p.gemm));
  for (const auto& d : c.dnns) r.dnns.push_back(d.name);
  Json trace;
  std::optional<runtime::TensorMap> want;
  for (int round = 0; round < params.rounds; ++round)
    for (auto& cand : cs) {
      ZP_ASSIGN_OR_RETURN(auto run, executeSchedule(models, cand.order, processors,
                                                    {params.warmup, params.repeat, params.seed}));
      if (!want) { ZP_ASSIGN_OR_RETURN(want, aloneOutputs(models, run.inputs, processors.front())); }
      OutputDiff diff;
      diff.add(run.outputs, *want);
      cand.row.maxAbsDiff = std::max(cand.row.maxAbsDiff, diff.maxAbsDiff);
      cand.row.refScale = std::max(cand.row.refScale, diff.refScale);
      cand.row.roundMakespanMs.push_back(run.wall.medianMs);
      cand.p90Rounds.push_back(run.wall.p90Ms);
      cand.throughputRounds.push_back(run.throughput);
      for (size_t d = 0; d < run.dnnLatencyMs.size(); ++d) cand.dnnRounds[d].push_back(run.dnnLatencyMs[d]);
      cand.row.handoffs = run.handoffs;
      if (round == 0 && cand.row.schedule == cs.front().row.schedule) trace = std::move(run.trace);
    }
  for (auto& cand : cs) {
    finish(cand, params.tolerance);
    r.rows.push_back(std::move(cand.row));
  }
  if (!params.trace.empty() && !cs.empty()) ZP_TRY(writeFileAtomic(params.trace, trace.dump()));
  return r;
}

bool ConcurrentRunReport::ok() const {
  return std::all_of(rows.begin(), rows.end(), [](const Row& r) { return r.match; });
}

std::string ConcurrentRunReport::bestMeasured() const {
  const ConcurrentRunReport::Row* best = nullptr;
  for (const auto& row : rows)
    if (!best || (objective == "throughput" ? row.measuredThroughput > best->measuredThroughput
                                            : row.measuredMakespanMs < best->measuredMakespanMs))
      best = &row;
  return best ? best->schedule : std::string();
}

Json ConcurrentRunReport::json() const {
  Json rs = Json::array();
  for (const auto& row : rows)
    rs.push_back(Json{{"schedule", row.schedule},
                      {"predicted_makespan_ms", row.predictedMakespanMs},
                      {"predicted_throughput", row.predictedThroughput},
                      {"predicted_dnn_ms", row.predictedDnnMs},
                      {"measured_makespan_ms", row.measuredMakespanMs},
                      {"measured_p90_ms", row.measuredP90Ms},
                      {"measured_throughput", row.measuredThroughput},
                      {"measured_dnn_ms", row.measuredDnnMs},
                      {"measured_round_makespan_ms", row.roundMakespanMs},
                      {"measured_over_predicted", row.measuredMakespanMs / row.predictedMakespanMs},
                      {"handoffs", row.handoffs},
                      {"max_abs_diff", row.maxAbsDiff},
                      {"reference_scale", row.refScale},
                      {"match", row.match}});
  return Json{{"workload", workload}, {"objective", objective}, {"plan_source", source},
              {"processors", processors}, {"dnns", dnns}, {"repeat", repeat}, {"rounds", rounds},
              {"best_measured", bestMeasured()}, {"schedules", rs}};
}

std::string ConcurrentRunReport::table() const {
  std::string s = fmt::format("concurrent plan of {} ({} DNNs: {}), objective {}; plan source {}\n", workload,
                              dnns.size(), fmt::join(dnns, ", "), objective, source);
  s += fmt::format("processors: {}\n", fmt::join(processors, "; "));
  s += fmt::format("{:<20} {:>10} {:>10} {:>9} {:>11} {:>11} {:>8}  {}\n", "schedule", "pred ms", "meas ms",
                   "meas/pred", "pred inf/s", "meas inf/s", "handoffs", "per-DNN ms measured (predicted)");
  for (const auto& row : rows) {
    std::string per;
    for (size_t d = 0; d < row.measuredDnnMs.size(); ++d)
      per += fmt::format("{}{} {:.3f} ({:.3f})", d ? ", " : "", dnns[d], row.measuredDnnMs[d], row.predictedDnnMs[d]);
    s += fmt::format("{:<20} {:>10.3f} {:>10.3f} {:>9.2f} {:>11.1f} {:>11.1f} {:>8}  {}\n", row.schedule,
                     row.predictedMakespanMs, row.measuredMakespanMs, row.measuredMakespanMs / row.predictedMakespanMs,
                     row.predictedThroughput, row.measuredThroughput, row.handoffs, per);
  }
  for (const auto& row : rows)
    if (!row.match)
      s += fmt::format("{}: outputs differ from each DNN run alone: max|diff| {:.3g} (scale {:.3g})\n", row.schedule,
                       row.maxAbsDiff, row.refScale);
  if (ok() && !rows.empty()) {
    double worst = 0;
    for (const auto& row : rows) worst = std::max(worst, row.maxAbsDiff);
    s += fmt::format("outputs of every schedule equal each DNN run alone (max|diff| {:.3g})\n", worst);
  }
  s += fmt::format("measured: medians over {} rounds of {} timed runs each (the schedules take turns); best measured "
                   "by {}: {}\n",
                   rounds, repeat, objective, bestMeasured());
  return s;
}

}  // namespace zp::drivers
