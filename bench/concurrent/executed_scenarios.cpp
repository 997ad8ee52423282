#include "bench/concurrent/executed_scenarios.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>

#include "drivers/concurrent_flow/executed_schedule.h"
#include "libplan/graph/analysis.h"
#include "libplan/graph/model_io.h"
#include "libplan/runtime/serve/processor.h"
#include "libplan/util/file.h"
#include "libplan/util/stats.h"
#include "passes/grouping/grouping.h"
#include "passes/measure/node_profile.h"
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

struct Processor {
  runtime::serve::ProcessorConfig config;
  measure::HostConfig host;
};

// The realistic zoo's two processors (testdata/realistic/zoo.json), on the given cores.
std::vector<Processor> processors(const ExecutedOptions& o) {
  std::vector<Processor> ps;
  for (auto [name, core, policy, gemm] : {std::tuple{"cpu", o.coreA, "default", runtime::GemmLibrary::OneDnn},
                                         std::tuple{"npu", o.coreB, "sparse", runtime::GemmLibrary::Blis}}) {
    Processor p{{name, {core}, policy, gemm, 1}, {}};
    p.host.policy = policy;
    p.host.gemm = gemm;
    p.host.cores = {core};
    ps.push_back(p);
  }
  return ps;
}

// Node rows of `model` on every processor as the grouping pass reads them:
// executed nodes at their measured time, folded or fused ones at 0 (their
// time is in the node they joined).
profile::ProfileDb profileModel(const std::string& name, const onnx::ModelProto& model,
                                const std::vector<Processor>& procs, const ExecutedOptions& o) {
  profile::ProfileDb db;
  for (const auto& p : procs) {
    std::cerr << fmt::format("profiling {} on {}\n", name, p.config.name);
    auto pin = must(runtime::serve::ScopedCorePin::pin(p.config.name, p.config.cores));
    auto session = must(runtime::Session::fromModel(model, name, measure::sessionOptions(p.host)));
    const auto inputs = runtime::randomInputs(*session, o.seed);
    auto rows = must(measure::profileNodes(model, name, p.host, inputs, measure::MeasureParams{o.profileRepeat, 3}));
    std::map<std::string, double> ms;
    for (const auto& r : rows) ms[r.node] = r.ms;
    for (const auto& n : model.graph().node()) {
      profile::ProfileRow row;
      row.kind = profile::RowKind::Node;
      row.task = name;
      row.variant = "dense";
      row.node = n.name();
      row.processor = p.config.name;
      row.policy = "default";
      row.medianMs = ms.count(n.name()) ? ms[n.name()] : 0.0;
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
};

ModelDnn groupedModel(const std::string& name, const fs::path& file, const std::vector<Processor>& procs,
                      const ExecutedOptions& o) {
  auto model = must(graph::loadModel(file));
  const auto db = profileModel(name, model, procs, o);
  grouping::GroupingParams gp;
  for (const auto& p : procs) gp.accelerators.push_back(p.config.name);
  gp.task = name;
  gp.variant = "dense";
  graph::GraphView view(model);
  auto g = must(grouping::groupLayers(view, db, gp, file.string()));
  ModelDnn m{{name, model, g.nodes}, {}};
  m.dnn.name = name;
  m.dnn.groups = g.groups;
  return m;
}

struct Candidate {
  std::string name, status;
  sim::Schedule schedule;
  double predictedMs = 0;
  std::vector<double> roundMedians, roundP90s;
  int handoffs = 0;
  Json trace;
};

// zooplan's schedule and every baseline's, each with its simulated makespan.
std::vector<Candidate> candidates(const sim::Problem& problem, const std::string& scenario, const ExecutedOptions& o) {
  schedule::Workload w{scenario, problem, sim::Objective::Latency, {}};
  schedule::ConcurrentParams prm;
  prm.objective = sim::Objective::Latency;
  prm.maxTransitionsPerDnn = o.maxTransitions;
  prm.timeLimitS = o.timeLimitS;
  prm.seed = o.seed;
  auto solved = must(schedule::solveConcurrent(w, scenario, prm));
  std::vector<Candidate> out{{"zooplan", solved.section.solver.status, solved.schedule, solved.result.latencyMs}};
  for (const auto& b : schedule::makeBaselines(problem, sim::Objective::Latency))
    out.push_back({b.name, "baseline", b.schedule, sim::simulate(problem, b.schedule).latencyMs});
  return out;
}

// Every candidate executed, `rounds` times in turn (the machine is shared:
// interleaving spreads its noise over all of them alike).
void execute(std::vector<Candidate>& cs, const std::vector<drivers::ScheduledModel>& models,
             const sim::Problem& problem, const std::vector<runtime::serve::ProcessorConfig>& procs,
             const ExecutedOptions& o) {
  for (int round = 0; round < o.rounds; ++round)
    for (auto& c : cs) {
      auto run = must(drivers::executeSchedule(models, problem, c.schedule, procs, o.warmup, o.repeat, o.seed));
      c.roundMedians.push_back(run.wall.medianMs);
      c.roundP90s.push_back(run.wall.p90Ms);
      c.handoffs = run.handoffs;
      if (round == 0) c.trace = std::move(run.trace);
    }
}

Json scenarioRows(const std::string& scenario, const std::vector<Candidate>& cs, Json& summary) {
  Json rows = Json::array();
  double bestBaseline = 1e300;
  std::string bestName;
  for (const auto& c : cs)
    if (c.name != "zooplan" && median(c.roundMedians) < bestBaseline) bestBaseline = median(c.roundMedians), bestName = c.name;
  const auto& ours = cs.front();
  const double measured = median(ours.roundMedians);
  summary[scenario] = Json{{"zooplan_measured_ms", measured},
                           {"zooplan_predicted_ms", ours.predictedMs},
                           {"best_baseline", bestName},
                           {"best_baseline_measured_ms", bestBaseline},
                           {"zooplan_at_least_as_good_as_every_baseline", measured <= bestBaseline},
                           {"measured_over_predicted", measured / ours.predictedMs}};
  for (const auto& c : cs) {
    const double m = median(c.roundMedians);
    rows.push_back(Json{{"instance", scenario + "/" + c.name}, {"scenario", scenario}, {"schedule", c.name},
                        {"status", c.status}, {"objective", "latency"}, {"predicted_makespan_ms", c.predictedMs},
                        {"measured_makespan_ms", m}, {"measured_p90_ms", median(c.roundP90s)},
                        {"measured_round_medians_ms", c.roundMedians}, {"handoffs", c.handoffs}});
    std::cout << fmt::format("  {:<18} {:<9} {:>10.3f} {:>11.3f} {:>9.2f} {:>8}\n", c.name, c.status, c.predictedMs, m,
                             m / c.predictedMs, c.handoffs);
  }
  return rows;
}

}  // namespace

ExecutedResult executedScenarios(const ExecutedOptions& o) {
  const auto procs = processors(o);
  std::vector<runtime::serve::ProcessorConfig> configs;
  for (const auto& p : procs) {
    if (auto st = runtime::serve::checkProcessor(p.config); !st.ok()) die(st.error().message);
    configs.push_back(p.config);
  }
  const fs::path zoo = fs::path(ZP_SOURCE_DIR) / "testdata/realistic/models";
  std::vector<ModelDnn> all;
  for (const char* name : {"resnet", "mobilenet", "vit"})
    all.push_back(groupedModel(name, zoo / name / "dense.onnx", procs, o));
  ExecutedResult r;
  const std::vector<std::vector<int>> scenarios{{0, 1}, {0, 2}, {1, 2}, {0, 1, 2}};
  for (const auto& pick : scenarios) {
    sim::Problem problem;
    for (const auto& p : procs) problem.accelerators.push_back(p.config.name);
    problem.contention = sim::ContentionModel::none(problem.numAccelerators());
    std::vector<drivers::ScheduledModel> models;
    std::string scenario, groups;
    for (int i : pick) {
      problem.dnns.push_back(all[static_cast<size_t>(i)].dnn);
      models.push_back(all[static_cast<size_t>(i)].scheduled);
      scenario += (scenario.empty() ? "" : "+") + all[static_cast<size_t>(i)].dnn.name;
      groups += fmt::format("{}{}", groups.empty() ? "" : "+", all[static_cast<size_t>(i)].dnn.groups.size());
    }
    auto cs = candidates(problem, scenario, o);
    execute(cs, models, problem, configs, o);
    std::cout << fmt::format("\nexecuted {} ({} layer groups), latency objective, no contention model\n", scenario, groups);
    std::cout << fmt::format("  {:<18} {:<9} {:>10} {:>11} {:>9} {:>8}\n", "schedule", "status", "pred ms", "meas ms",
                             "meas/pred", "handoffs");
    for (auto& row : scenarioRows(scenario, cs, r.summary)) r.instances.push_back(std::move(row));
    if (!o.traceDir.empty())
      if (auto st = writeFileAtomic(fs::path(o.traceDir) / ("trace_" + scenario + ".json"), cs.front().trace.dump());
          !st.ok())
        die(st.error().message);
  }
  return r;
}

}  // namespace zp::bench
