#include "bench/concurrent/executed_scenarios.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <functional>
#include <map>
#include <memory>

#include "drivers/concurrent_flow/executed_schedule.h"
#include "libplan/artifacts/contention_csv.h"
#include "libplan/artifacts/profile_csv.h"
#include "libplan/artifacts/workload_json.h"
#include "libplan/graph/analysis.h"
#include "libplan/sim/concurrent/contention_fit.h"
#include "libplan/graph/model_io.h"
#include "libplan/runtime/serve/placed_executor.h"
#include "libplan/runtime/serve/processor.h"
#include "libplan/util/file.h"
#include "libplan/util/stats.h"
#include "passes/grouping/grouping.h"
#include "passes/measure/contention_probe.h"
#include "passes/measure/node_profile.h"
#include "passes/measure/placed_handoff.h"
#include "passes/schedule/baselines.h"
#include "passes/schedule/concurrent.h"

namespace zp::bench {
namespace fs = std::filesystem;
namespace {

[[noreturn]] void die(const std::string& what) {
  std::cerr << "error: " << what << "\n";
  std::exit(1);
}
template <typename T>
T must(Expected<T> e) {
  if (!e.ok()) die(e.error().message);
  return std::move(*e);
}

// The realistic zoo's two processors (testdata/realistic/zoo.json), on the given cores.
std::vector<Processor> processors(const ExecutedOptions& o) {
  return {Processor{"cpu", "cpu", "host", "default", 1, {o.coreA}, "onednn"},
          Processor{"npu", "npu", "host", "sparse", 1, {o.coreB}, "blis"}};
}

// Node rows of `model` on every processor as the grouping pass reads them:
// executed nodes at their measured time, folded or fused ones at 0 (their
// time is in the node they joined). Calibrated: scaled so that they sum to
// the whole model's wall time on the processor (`calibration[processor]`:
// that factor), which also holds what a run costs beyond its nodes.
profile::ProfileDb profileModel(const std::string& name, const onnx::ModelProto& model,
                                const std::vector<Processor>& procs, const ExecutedOptions& o, Json& calibration) {
  profile::ProfileDb db;
  for (const auto& p : procs) {
    std::cerr << fmt::format("profiling {} on {}\n", name, p.name);
    auto session = must(runtime::Session::fromModel(model, name, measure::sessionOptions(p)));
    const auto inputs = runtime::randomInputs(*session, o.seed);
    std::vector<artifacts::NodeProfileRow> rows;
    {
      auto pin = must(runtime::serve::ScopedCorePin::pin(p.name, p.cores));
      rows = must(measure::profileNodes(model, name, p, inputs, measure::MeasureParams{o.profileRepeat, 3}));
    }
    const auto whole = must(runtime::serve::measureOnProcessor(*session, p, inputs, 3, o.profileRepeat));
    double sum = 0;
    std::map<std::string, double> ms;
    for (const auto& r : rows) ms[r.node] = r.ms, sum += r.ms;
    const double factor = sum > 0 ? whole.medianMs / sum : 1.0;
    calibration[name][p.name] = Json{{"node_sum_ms", sum}, {"whole_ms", whole.medianMs}, {"factor", factor}};
    for (const auto& n : model.graph().node()) {
      profile::ProfileRow row;
      row.kind = profile::RowKind::Node;
      row.task = name;
      row.variant = "dense";
      row.node = n.name();
      row.processor = p.name;
      row.policy = "default";
      row.medianMs = ms.count(n.name()) ? ms[n.name()] * factor : 0.0;
      row.runs = o.profileRepeat;
      row.source = "host";
      db.add(row);
    }
  }
  return db;
}

struct ModelDnn {
  drivers::ScheduledModel scheduled;
  sim::Dnn dnn;
  profile::ProfileDb nodeRows;        // what the grouping read
  artifacts::GroupingOptions options;  // the grouping parameters measured on this host
};

// The grouping pass charges a transition as out (on the source) + in (on the
// target), each overhead + bytes / bandwidth: half the measured hand-off each.
void setTransitions(grouping::GroupingParams& gp, const measure::HandOffFit& handOff) {
  gp.transitionOverheadMs = handOff.fixedMs / 2;
  gp.transitionBandwidthGBs = handOff.msPerByte > 0 ? 1.0 / (2 * handOff.msPerByte * 1e6) : 1e9;
}

ModelDnn groupedModel(const std::string& name, const fs::path& file, const std::vector<Processor>& procs,
                      double peakGbs, const measure::HandOffFit& handOff, const ExecutedOptions& o, Json& calibration) {
  auto model = must(graph::loadModel(file));
  const auto db = profileModel(name, model, procs, o, calibration);
  grouping::GroupingParams gp;
  for (const auto& p : procs) gp.accelerators.push_back(p.name);
  gp.task = name;
  gp.variant = "dense";
  gp.peakBandwidthGBs = peakGbs;
  setTransitions(gp, handOff);
  graph::GraphView view(model);
  auto g = must(grouping::groupLayers(view, db, gp, file.string()));
  ModelDnn m{{name, model, g.nodes}, {}, db, {}};
  m.options.peakBandwidthGBs = gp.peakBandwidthGBs;
  m.options.transitionOverheadMs = gp.transitionOverheadMs;
  m.options.transitionBandwidthGBs = gp.transitionBandwidthGBs;
  m.dnn.name = name;
  m.dnn.groups = g.groups;
  return m;
}

// A DNN's requested memory throughput on accelerator `a`: its groups' demands
// weighted by their times (bytes over time, as the grouping pass computes them).
double dnnDemand(const sim::Dnn& d, size_t a) {
  double bytesLike = 0, ms = 0;
  for (const auto& g : d.groups) {
    bytesLike += g.demand[a] * g.timeMs[a];
    ms += g.timeMs[a];
  }
  return ms > 0 ? bytesLike / ms : 0.0;
}

struct Probe {
  std::string name;
  double own = 0;  // % of peak
  std::function<Status()> run;
};

// The probes of processor `a`: every model run whole on it, and a triad pass.
std::vector<Probe> probesOn(const std::vector<ModelDnn>& all, const Processor& p, size_t a, double peakGbs,
                            const ExecutedOptions& o) {
  std::vector<Probe> probes;
  for (const auto& m : all) {
    std::shared_ptr<runtime::Session> session =
        must(runtime::Session::fromModel(m.scheduled.model, m.dnn.name, measure::sessionOptions(p)));
    auto inputs = runtime::randomInputs(*session, o.seed);
    probes.push_back({m.dnn.name, dnnDemand(m.dnn, a), [session, inputs]() -> Status {
                        ZP_ASSIGN_OR_RETURN(auto out, session->run(inputs));
                        return {};
                      }});
  }
  const size_t triadBytes = 16u << 20;
  auto triad = measure::triadProbe(triadBytes);
  const double ms = must(measure::timeProbe(triad, p.cores, 2, 10));
  probes.push_back({"triad", 3.0 * static_cast<double>(triadBytes) / (ms * 1e6) / peakGbs * 100, triad});
  return probes;
}

// Per accelerator, the slowdown of every probe beside a triad co-runner on the
// other processor at three intensities: the measured contention surfaces.
sim::ContentionModel calibrateContention(const std::vector<ModelDnn>& all, const std::vector<Processor>& procs,
                                         double peakGbs, const ExecutedOptions& o, Json& report) {
  std::vector<sim::ContentionModel::Surface> surfaces;
  for (size_t a = 0; a < procs.size(); ++a) {
    const auto& p = procs[a];
    const auto& other = procs[(a + 1) % procs.size()];
    std::cerr << fmt::format("contention on {} beside a triad on {}\n", p.name, other.name);
    auto probes = probesOn(all, p, a, peakGbs, o);
    std::vector<double> alone;
    for (const auto& pr : probes) alone.push_back(must(measure::timeProbe(pr.run, p.cores, 3, o.repeat)));
    std::vector<sim::ContentionPoint> points;
    Json rows = Json::array();
    for (double duty : {0.25, 0.5, 1.0}) {
      auto co = must(measure::StreamCoRunner::start(other.cores, duty));
      std::vector<double> beside;
      for (const auto& pr : probes) beside.push_back(must(measure::timeProbe(pr.run, p.cores, 1, o.repeat)));
      const double external = co->stop() / peakGbs * 100;
      for (size_t k = 0; k < probes.size(); ++k) {
        points.push_back({probes[k].own, external, beside[k] / alone[k]});
        rows.push_back(Json{{"probe", probes[k].name}, {"own_pct", probes[k].own}, {"external_pct", external},
                            {"alone_ms", alone[k]}, {"beside_ms", beside[k]}, {"slowdown", beside[k] / alone[k]}});
      }
    }
    auto surface = must(sim::fitContentionSurface(points));
    auto residuals = must(sim::leaveOneRowOut(points));
    double worst = 0;
    for (const auto& r : residuals) worst = std::max(worst, std::abs(r.predicted - r.point.slowdown));
    report[p.name] = Json{{"points", rows}, {"leave_one_row_out_max_abs_error", worst},
                                 {"leave_one_row_out_points", residuals.size()}};
    std::cout << fmt::format("contention on {}: {} probes x 3 co-runner intensities, slowdown {:.3f}-{:.3f}, "
                             "leave-one-row-out max error {:.3f}\n",
                             p.name, probes.size(), *std::min_element(surface.slowdown.begin(), surface.slowdown.end()),
                             *std::max_element(surface.slowdown.begin(), surface.slowdown.end()), worst);
    surfaces.push_back(std::move(surface));
  }
  return sim::ContentionModel::fromSurfaces(std::move(surfaces));
}

// workload.json files of the scenarios for plan-solve --mode concurrent, in
// `dir` (beside testdata/realistic): the models by path, the node rows measured
// here in one profile CSV, the measured contention, the measured grouping
// parameters; the pairs, the triple, and a pipeline (resnet -> mobilenet)
// beside vit.
void writeWorkloads(const fs::path& dir, const std::vector<ModelDnn>& all, const sim::ContentionModel& contention,
                    const std::vector<Processor>& procs) {
  std::error_code ec;
  if (fs::create_directories(dir, ec), ec) die(fmt::format("{}: cannot create: {}", dir.string(), ec.message()));
  profile::ProfileDb rows;
  for (const auto& m : all) rows.merge(m.nodeRows);
  const fs::path profileFile = dir / "realistic-node-profile.csv", contentionFile = dir / "contention-host-2core.csv";
  if (auto st = artifacts::writeProfileCsv(rows, profileFile); !st.ok()) die(st.error().message);
  if (auto st = writeFileAtomic(contentionFile, artifacts::formatContentionCsv(contention, {"cpu", "npu"})); !st.ok())
      die(st.error().message);
  struct Scenario { std::string name; std::vector<int> dnns; std::vector<std::pair<int, int>> deps; };
  const std::vector<Scenario> scenarios{{"resnet+mobilenet", {0, 1}, {}}, {"resnet+vit", {0, 2}, {}},
                                        {"mobilenet+vit", {1, 2}, {}}, {"resnet+mobilenet+vit", {0, 1, 2}, {}},
                                        {"resnet-to-mobilenet+vit", {0, 1, 2}, {{1, 0}}}};
  for (const auto& sc : scenarios) {
    artifacts::WorkloadSpec spec;
    spec.name = "realistic " + sc.name;
    spec.accelerators = {"cpu", "npu"};
    spec.contention = contentionFile;
    for (const auto& p : procs)
      spec.processors.push_back(p);
    for (int i : sc.dnns) {
      const auto& m = all[static_cast<size_t>(i)];
      artifacts::WorkloadDnn d;
      d.name = m.dnn.name;
      d.source = artifacts::WorkloadDnn::Source::Model;
      d.model = dir / ".." / "realistic" / "models" / m.dnn.name / "dense.onnx";
      d.profile = profileFile;
      d.task = m.dnn.name;
      d.variant = "dense";
      d.grouping = m.options;
      for (const auto& [dependent, on] : sc.deps)
        if (dependent == i) d.dependsOn.push_back(all[static_cast<size_t>(on)].dnn.name);
      spec.dnns.push_back(d);
    }
    const fs::path file = dir / ("realistic-" + sc.name + ".json");
    if (auto st = writeFileAtomic(file, artifacts::formatWorkloadJson(spec, dir)); !st.ok()) die(st.error().message);
    std::cout << "wrote " << file.string() << "\n";
  }
}

struct Candidate {
  std::string name, status;
  sim::Schedule schedule;
  double predictedMs = 0, predictedWithoutContentionMs = 0, predictedThroughput = 0;
  std::vector<double> roundMedians, roundP90s, roundThroughputs;
  int handoffs = 0;
  Json trace;
};

// zooplan's schedule and every baseline's, each with its simulated makespan and throughput.
std::vector<Candidate> candidates(const sim::Problem& problem, const std::string& scenario, sim::Objective objective,
                                  const ExecutedOptions& o) {
  schedule::Workload w{scenario, problem, objective, {}, {}, {}};
  schedule::ConcurrentParams prm;
  prm.objective = objective;
  prm.maxTransitionsPerDnn = o.maxTransitions;
  prm.timeLimitS = o.timeLimitS;
  prm.seed = o.seed;
  auto solved = must(schedule::solveConcurrent(w, scenario, prm));
  auto candidate = [&problem](std::string name, std::string status, sim::Schedule schedule) {
    Candidate c;
    c.name = std::move(name);
    c.status = std::move(status);
    c.schedule = std::move(schedule);
    const auto simulated = sim::simulate(problem, c.schedule);
    c.predictedMs = simulated.latencyMs;
    c.predictedThroughput = simulated.throughput;
    return c;
  };
  std::vector<Candidate> out{candidate("zooplan", solved.section.solver.status, solved.schedule)};
  for (const auto& b : schedule::makeBaselines(problem, objective))
    out.push_back(candidate(b.name, "baseline", b.schedule));
  sim::Problem blind = problem;
  blind.contention = sim::ContentionModel::none(problem.numAccelerators());
  for (auto& c : out) c.predictedWithoutContentionMs = sim::simulate(blind, c.schedule).latencyMs;
  return out;
}

// Every candidate executed, `rounds` times in turn (the machine is shared:
// interleaving spreads its noise over all of them alike).
void execute(std::vector<Candidate>& cs, const std::vector<drivers::ScheduledModel>& models,
             const sim::Problem& problem, const std::vector<Processor>& procs,
             const ExecutedOptions& o) {
  for (int round = 0; round < o.rounds; ++round)
    for (auto& c : cs) {
      auto run = must(drivers::executeSchedule(models, drivers::simulatedOrder(problem, c.schedule), procs,
                                                   {o.warmup, o.repeat, o.seed}));
      c.roundMedians.push_back(run.wall.medianMs);
      c.roundP90s.push_back(run.wall.p90Ms);
      c.roundThroughputs.push_back(run.throughput);
      c.handoffs = run.handoffs;
      if (round == 0) c.trace = std::move(run.trace);
    }
}

std::string fileSafe(std::string name) {
  std::replace(name.begin(), name.end(), '/', '_');
  return name;
}

// The objective's measured value of a candidate (latency: makespan, lower is
// better; throughput: Eq. 10, higher is better), as "lower is better".
double measuredCost(const Candidate& c, sim::Objective objective) {
  return objective == sim::Objective::Latency ? median(c.roundMedians) : -median(c.roundThroughputs);
}

Json scenarioRows(const std::string& scenario, sim::Objective objective, const std::vector<Candidate>& cs,
                  Json& summary) {
  Json rows = Json::array();
  const Candidate* best = nullptr;
  for (const auto& c : cs)
    if (c.name != "zooplan" && (!best || measuredCost(c, objective) < measuredCost(*best, objective))) best = &c;
  const auto& ours = cs.front();
  const double measured = median(ours.roundMedians);
  summary[scenario] = Json{{"objective", sim::objectiveName(objective)},
                           {"zooplan_measured_ms", measured},
                           {"zooplan_predicted_ms", ours.predictedMs},
                           {"zooplan_measured_throughput", median(ours.roundThroughputs)},
                           {"zooplan_predicted_throughput", ours.predictedThroughput},
                           {"best_baseline", best->name},
                           {"best_baseline_measured_ms", median(best->roundMedians)},
                           {"best_baseline_measured_throughput", median(best->roundThroughputs)},
                           {"zooplan_at_least_as_good_as_every_baseline",
                            measuredCost(ours, objective) <= measuredCost(*best, objective)},
                           {"measured_over_predicted", measured / ours.predictedMs}};
  for (const auto& c : cs) {
    const double m = median(c.roundMedians), thr = median(c.roundThroughputs);
    rows.push_back(Json{{"instance", scenario + "/" + c.name}, {"scenario", scenario}, {"schedule", c.name},
                        {"status", c.status}, {"objective", sim::objectiveName(objective)},
                        {"predicted_makespan_ms", c.predictedMs},
                        {"predicted_without_contention_ms", c.predictedWithoutContentionMs},
                        {"measured_makespan_ms", m}, {"measured_p90_ms", median(c.roundP90s)},
                        {"measured_round_medians_ms", c.roundMedians}, {"predicted_throughput", c.predictedThroughput},
                        {"measured_throughput", thr}, {"handoffs", c.handoffs}});
    std::cout << fmt::format("  {:<18} {:<9} {:>10.3f} {:>10.3f} {:>11.3f} {:>9.2f} {:>10.1f} {:>10.1f} {:>8}\n",
                             c.name, c.status, c.predictedWithoutContentionMs, c.predictedMs, m, m / c.predictedMs,
                             c.predictedThroughput, thr, c.handoffs);
  }
  return rows;
}

}  // namespace

ExecutedResult executedScenarios(const ExecutedOptions& o) {
  const auto procs = processors(o);
  std::vector<Processor> configs;
  for (const auto& p : procs) {
    if (auto st = runtime::serve::checkProcessor(p); !st.ok()) die(st.error().message);
    configs.push_back(p);
  }
  std::error_code ec;
  if (!o.traceDir.empty() && (fs::create_directories(o.traceDir, ec), ec))
    die(fmt::format("{}: cannot create: {}", o.traceDir, ec.message()));
  const fs::path zoo = fs::path(ZP_SOURCE_DIR) / "testdata/realistic/models";
  ExecutedResult r;
  Json calibration = Json::object();
  std::vector<ModelDnn> all;
  const double peakGbs = must(measure::streamBandwidth({o.coreA}, 0.5));
  std::cout << fmt::format("triad bandwidth on core {} alone: {:.2f} GB/s (100% demand)\n", o.coreA, peakGbs);
  const auto handOff = must(measure::measurePlacedHandOff(procs[0], procs[1], {}));
  std::cout << fmt::format("hand-off cpu <-> npu (placed executor): {:.4f} ms + {:.3g} ms/byte\n", handOff.fixedMs,
                           handOff.msPerByte);
  r.summary["handoff"] = Json{{"fixed_ms", handOff.fixedMs}, {"ms_per_byte", handOff.msPerByte}};
  for (const char* name : {"resnet", "mobilenet", "vit"})
    all.push_back(groupedModel(name, zoo / name / "dense.onnx", procs, peakGbs, handOff, o, calibration));
  r.summary["calibration"] = calibration;
  r.summary["peak_triad_gbs"] = peakGbs;
  Json contentionReport = Json::object();
  const auto contention = calibrateContention(all, procs, peakGbs, o, contentionReport);
  r.summary["contention"] = contentionReport;
  if (!o.workloadDir.empty()) writeWorkloads(o.workloadDir, all, contention, procs);
  // Pairs and the triple (latency); the pipeline (mobilenet on resnet's result,
  // vit beside them); the triple again for throughput (Eq. 10).
  struct Scenario {
    std::vector<int> dnns;
    std::vector<std::pair<int, int>> deps;  // (dependent, on), indices into `all`
    sim::Objective objective = sim::Objective::Latency;
    std::string name;
  };
  const std::vector<Scenario> scenarios{{{0, 1}, {}, sim::Objective::Latency, ""},
                                        {{0, 2}, {}, sim::Objective::Latency, ""},
                                        {{1, 2}, {}, sim::Objective::Latency, ""},
                                        {{0, 1, 2}, {}, sim::Objective::Latency, ""},
                                        {{0, 1, 2}, {{1, 0}}, sim::Objective::Latency, "resnet-to-mobilenet+vit"},
                                        {{0, 1, 2}, {}, sim::Objective::Throughput, "resnet+mobilenet+vit/throughput"}};
  for (const auto& sc : scenarios) {
    sim::Problem problem;
    for (const auto& p : procs) problem.accelerators.push_back(p.name);
    problem.contention = contention;
    std::vector<drivers::ScheduledModel> models;
    std::string scenario, groups;
    for (int i : sc.dnns) {
      problem.dnns.push_back(all[static_cast<size_t>(i)].dnn);
      for (const auto& [dependent, on] : sc.deps)
        if (dependent == i)
          problem.dnns.back().deps.push_back(static_cast<int>(
              std::find(sc.dnns.begin(), sc.dnns.end(), on) - sc.dnns.begin()));
      models.push_back(all[static_cast<size_t>(i)].scheduled);
      scenario += (scenario.empty() ? "" : "+") + all[static_cast<size_t>(i)].dnn.name;
      groups += fmt::format("{}{}", groups.empty() ? "" : "+", all[static_cast<size_t>(i)].dnn.groups.size());
    }
    if (!sc.name.empty()) scenario = sc.name;
    auto cs = candidates(problem, scenario, sc.objective, o);
    execute(cs, models, problem, configs, o);
    std::cout << fmt::format("\nexecuted {} ({} layer groups), {} objective, measured contention\n", scenario, groups,
                             sim::objectiveName(sc.objective));
    std::cout << fmt::format("  {:<18} {:<9} {:>10} {:>10} {:>11} {:>9} {:>10} {:>10} {:>8}\n", "schedule", "status",
                             "no-cont ms", "pred ms", "meas ms", "meas/pred", "pred inf/s", "meas inf/s", "handoffs");
    for (auto& row : scenarioRows(scenario, sc.objective, cs, r.summary)) r.instances.push_back(std::move(row));
    if (!o.traceDir.empty())
      if (auto st = writeFileAtomic(fs::path(o.traceDir) / ("trace_" + fileSafe(scenario) + ".json"),
                                    cs.front().trace.dump());
          !st.ok())
        die(st.error().message);
  }
  return r;
}

}  // namespace zp::bench
