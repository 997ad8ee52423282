// serve_bench: two tasks served by the executor on two pinned processors (one
// core each) against both on one processor, on the same arrival trace; measured
// throughput, violation rate and latency beside the open-loop predictor's, whose
// per-position times and load times are profiled here on the same processors.
// Prints a table and writes JSON (--out).
#include <cstdlib>
#include <future>
#include <map>
#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "libplan/graph/model_io.h"
#include "libplan/runtime/measure.h"
#include "libplan/runtime/serve/executor.h"
#include "libplan/runtime/serve/pinned_worker.h"
#include "libplan/sim/queries/serve_sim.h"
#include "libplan/util/file.h"
#include "libplan/util/stats.h"

namespace zp::runtime::serve {
namespace {

struct Params {
  int rows = 64, width = 256, depth = 6;  // one position: `depth` [rows x width] x [width x width] MatMuls
  int queries = 60;                       // per task
  double saturateQps = 2000;              // arrival rate per task for the throughput runs
  double loadFraction = 0.6;              // open-loop runs: arrivals at this fraction of one-processor capacity
  int runs = 3;
  uint64_t seed = 1;
  std::string out;
};

// in -> out through `depth` MatMul+Relu with a deterministic weight matrix (values k/1000 scaled).
std::string chainText(const std::string& in, const std::string& out, const Params& p, int salt) {
  const std::string shape = fmt::format("[{},{}]", p.rows, p.width);
  std::string w;
  for (int i = 0; i < p.width * p.width; ++i) w += fmt::format("{}{}", i ? "," : "", ((i * 7 + salt) % 11 - 5) * 0.004);
  std::string body, prev = in;
  for (int d = 0; d < p.depth; ++d) {
    const std::string next = d + 1 == p.depth ? out : fmt::format("{}_h{}", out, d);
    body += fmt::format("{0}_mm{1} = MatMul ({2}, W)\n{3} = Relu ({0}_mm{1})\n", out, d, prev, next);
    prev = next;
  }
  return fmt::format("<ir_version: 8, opset_import: [\"\" : 13]>\nchain (float{0} {1}) => (float{0} {2})\n"
                     "<float[{3},{3}] W = {{{4}}}>\n{{\n{5}}}\n",
                     shape, in, out, p.width, w, body);
}

class TextLoader : public SubgraphLoader {
 public:
  explicit TextLoader(std::vector<std::string> texts) : texts_(std::move(texts)) {}
  Expected<LoadedSubgraph> load(int slot, const ServeSlot& info, const SessionOptions& options) override {
    ZP_ASSIGN_OR_RETURN(auto model, graph::parseModelText(texts_[static_cast<size_t>(slot)]));
    ZP_ASSIGN_OR_RETURN(auto session, Session::fromModel(model, info.name, options));
    const int64_t bytes = sessionBytes(*session);
    return LoadedSubgraph{std::move(session), bytes};
  }
  const std::vector<std::string>& texts() const { return texts_; }

 private:
  std::vector<std::string> texts_;
};

struct Scenario {
  std::string name;
  ServeSetup setup;
};

// Tasks a and b, two positions each; `procOf[task]` places both of a task's positions.
Scenario makeScenario(const std::string& name, const std::vector<Processor>& procs, std::vector<int> procOf,
                      const Params& p, bool preloadAll) {
  Scenario s{name, {}};
  s.setup.processors = procs;
  const int64_t slotBytes = int64_t{p.width} * p.width * 4;
  const char* names[] = {"a", "b"};
  for (int t = 0; t < 2; ++t) {
    ServeTask task{names[t], {}, 0, true, {}, {}};
    for (int pos = 0; pos < 2; ++pos) {
      task.slots.push_back(static_cast<int>(s.setup.slots.size()));
      s.setup.slots.push_back({fmt::format("{}/p{}", names[t], pos), procOf[static_cast<size_t>(t)], slotBytes,
                               preloadAll || pos == 0});
    }
    for (int k = 0; k < 8; ++k) {
      TensorMap m;
      m[fmt::format("x{}", names[t])] =
          randomInput({fmt::format("x{}", names[t]), DType::F32, {p.rows, p.width}}, p.seed * 100 + k);
      task.samples.push_back(std::move(m));
    }
    s.setup.tasks.push_back(std::move(task));
  }
  // Budget: everything preloaded, or the preload set plus one more slot (on-demand slots evict each other).
  int64_t preload = 0;
  for (const auto& sl : s.setup.slots) preload += sl.preload ? sl.bytes : 0;
  s.setup.memoryBudgetBytes = preloadAll ? preload : preload + slotBytes;
  return s;
}

std::vector<std::string> scenarioTexts(const Params& p) {
  return {chainText("xa", "ha", p, 0), chainText("ha", "ya", p, 1), chainText("xb", "hb", p, 2),
          chainText("hb", "yb", p, 3)};
}

// The profile the predictor uses: per slot, median warm run and median load on its processor.
Expected<std::vector<sim::ServeSimSlot>> profileSlots(const ServeSetup& setup, TextLoader& loader) {
  std::vector<sim::ServeSimSlot> out;
  for (size_t s = 0; s < setup.slots.size(); ++s) {
    const auto& slot = setup.slots[s];
    const auto& proc = setup.processors[static_cast<size_t>(slot.processor)];
    ZP_ASSIGN_OR_RETURN(auto worker, PinnedWorker::start(proc));
    std::promise<Expected<sim::ServeSimSlot>> done;
    worker->post([&] {
      std::vector<double> loads;
      LoadedUnit unit;
      for (int i = 0; i < 5; ++i) {
        auto t0 = std::chrono::steady_clock::now();
        auto l = loader.load(static_cast<int>(s), slot, sessionOptions(proc));
        loads.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
        if (!l.ok()) return done.set_value(l.error());
        unit = std::move(l->unit);
      }
      // One untimed run, then the median of 20.
      const TensorMap in = randomInputs(unit.session(), 0);
      std::vector<double> runs;
      for (int i = 0; i < 21; ++i) {
        auto t0 = std::chrono::steady_clock::now();
        if (auto r = unit.run(in); !r.ok()) return done.set_value(r.error());
        if (i > 0) runs.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      }
      done.set_value(sim::ServeSimSlot{slot.processor, percentile(runs, 0.5), percentile(loads, 0.5), slot.bytes, slot.preload, {}, {}});
    });
    ZP_ASSIGN_OR_RETURN(auto row, done.get_future().get());
    out.push_back(row);
  }
  return out;
}

struct Row {
  std::string scenario, trace;
  QuerySummary measured, predicted;
  int loads = 0, predictedLoads = 0;
  int64_t peakRss = 0;
  double slowdown = 0;  // run slices: total measured wall time / total profiled time
  double onCpu = 0;     // run slices: total worker CPU time / total wall time
  double busy = 0;      // run and load slices' wall time / (span x processors)
};

Expected<Row> runOnce(const Scenario& sc, TextLoader& loader, const std::vector<sim::ServeSimSlot>& profile,
                      const ArrivalTrace& trace, const std::string& traceName) {
  ZP_ASSIGN_OR_RETURN(auto r, serve(sc.setup, loader, trace));
  std::vector<sim::ServeSimTask> tasks;
  for (const auto& t : sc.setup.tasks) tasks.push_back({t.name, t.slots, t.sloMs, t.accuracySloMet});
  std::vector<sim::ServeSimArrival> arrivals;
  for (const auto& a : trace.arrivals) arrivals.push_back({a.timeMs, a.task});
  auto pred = sim::simulateServing(profile, tasks, arrivals,
                                   {static_cast<int>(sc.setup.processors.size()), sc.setup.memoryBudgetBytes, 0});
  double wall = 0, profiled = 0, cpu = 0, occupied = 0;
  for (const auto& e : r.slices) {
    occupied += e.endMs - e.startMs;
    if (e.kind != ExecSlice::Kind::Run) continue;
    wall += e.endMs - e.startMs;
    profiled += profile[static_cast<size_t>(e.slot)].runMs;
    cpu += e.cpuMs;
  }
  const double capacity = r.summary.spanMs * static_cast<double>(sc.setup.processors.size());
  return Row{sc.name, traceName, r.summary, pred.summary, r.loads, pred.loads, r.peakRssBytes,
             profiled > 0 ? wall / profiled : 0, wall > 0 ? cpu / wall : 0, capacity > 0 ? occupied / capacity : 0};
}

ArrivalTrace makeTrace(const Params& p, double rateQps, ArrivalProcess process) {
  ArrivalParams a;
  a.tasks = {{"a", process, rateQps, 8}, {"b", process, rateQps, 8}};
  a.count = p.queries;
  a.seed = p.seed;
  return generateArrivals(a).value();
}

Json rowJson(const Row& r) {
  auto s = [](const QuerySummary& q) {
    return Json{{"violation_rate", q.violationRate}, {"p50_ms", q.p50Ms}, {"p99_ms", q.p99Ms},
                {"throughput_qps", q.throughputQps}, {"completed", q.completed}};
  };
  Json m = s(r.measured);
  m["peak_rss_bytes"] = r.peakRss;
  m["loads"] = r.loads;
  m["run_wall_over_profile"] = r.slowdown;
  m["run_cpu_over_wall"] = r.onCpu;
  m["processor_busy_fraction"] = r.busy;
  Json pr = s(r.predicted);
  pr["loads"] = r.predictedLoads;
  return Json{{"scenario", r.scenario}, {"trace", r.trace}, {"measured", m}, {"predicted", pr}};
}

int run(const Params& p) {
  double loadBefore[3] = {0, 0, 0};
  getloadavg(loadBefore, 3);
  fmt::print("load average before: {:.2f}\n", loadBefore[0]);
  const auto cores = availableCores();
  if (cores.size() < 2) {
    std::cerr << "serve_bench: needs two cores, this process may use " << cores.size() << "\n";
    return 1;
  }
  Processor p0, p1;
  p0.name = "p0";
  p0.cores = {cores[0]};
  p1.name = "p1";
  p1.cores = {cores[1]};
  TextLoader loader(scenarioTexts(p));
  std::vector<Scenario> scenarios = {makeScenario("two-processors", {p0, p1}, {0, 1}, p, true),
                                     makeScenario("one-processor", {p0}, {0, 0}, p, true),
                                     makeScenario("two-processors-on-demand", {p0, p1}, {0, 1}, p, false)};
  std::vector<std::vector<sim::ServeSimSlot>> profiles;
  for (const auto& sc : scenarios) {
    auto prof = profileSlots(sc.setup, loader);
    if (!prof.ok()) return std::cerr << "serve_bench: " << prof.error().message << "\n", 1;
    profiles.push_back(*prof);
  }
  // SLO: 3x a query's profiled time alone (both positions).
  const double queryMs = profiles[1][0].runMs + profiles[1][1].runMs;
  for (auto& sc : scenarios)
    for (auto& t : sc.setup.tasks) t.sloMs = 3 * queryMs;
  // Open-loop rate: a fraction of what one processor can serve for the two tasks.
  const double openQps = p.loadFraction * 1000.0 / (2 * queryMs);
  const std::vector<std::pair<std::string, ArrivalTrace>> traces = {
      {"saturating", makeTrace(p, p.saturateQps, ArrivalProcess::Periodic)},
      {fmt::format("poisson-{:.0f}qps", openQps), makeTrace(p, openQps, ArrivalProcess::Poisson)}};
  std::vector<Row> rows;
  Json jrows = Json::array();
  for (int rep = 0; rep < p.runs; ++rep)
    for (size_t s = 0; s < scenarios.size(); ++s)
      for (const auto& [name, trace] : traces) {
        auto row = runOnce(scenarios[s], loader, profiles[s], trace, name);
        if (!row.ok()) return std::cerr << "serve_bench: " << row.error().message << "\n", 1;
        rows.push_back(*row);
        Json j = rowJson(*row);
        j["run"] = rep;
        jrows.push_back(j);
      }
  // Medians over runs per (scenario, trace).
  fmt::print("one query alone: {:.3f} ms (SLO {:.3f} ms); load of one position {:.3f} ms\n", queryMs, 3 * queryMs,
             profiles[0][1].loadMs);
  fmt::print("{:<26} {:<16} {:>22} {:>18} {:>18} {:>18} {:>6} {:>9} {:>7} {:>6}\n", "scenario", "trace",
             "throughput qps (m / p)", "violation (m / p)", "p50 ms (m / p)", "p99 ms (m / p)", "loads", "run/prof",
             "on-cpu", "busy");
  Json summary = Json::object();
  std::map<std::string, double> medianThroughput;
  for (const auto& sc : scenarios)
    for (const auto& [name, trace] : traces) {
      std::vector<double> tm, tp, vm, vp, p50m, p50p, p99m, p99p, loads, slow, onCpu, busy;
      for (const auto& r : rows) {
        if (r.scenario != sc.name || r.trace != name) continue;
        tm.push_back(r.measured.throughputQps), tp.push_back(r.predicted.throughputQps);
        vm.push_back(r.measured.violationRate), vp.push_back(r.predicted.violationRate);
        p50m.push_back(r.measured.p50Ms), p50p.push_back(r.predicted.p50Ms);
        p99m.push_back(r.measured.p99Ms), p99p.push_back(r.predicted.p99Ms);
        loads.push_back(r.loads);
        slow.push_back(r.slowdown), onCpu.push_back(r.onCpu), busy.push_back(r.busy);
      }
      auto med = [](const std::vector<double>& v) { return percentile(v, 0.5); };
      fmt::print("{:<26} {:<16} {:>10.1f} / {:>9.1f} {:>8.3f} / {:>7.3f} {:>8.2f} / {:>7.2f} {:>8.2f} / {:>7.2f} "
                 "{:>6.0f} {:>9.2f} {:>7.2f} {:>6.2f}\n",
                 sc.name, name, med(tm), med(tp), med(vm), med(vp), med(p50m), med(p50p), med(p99m), med(p99p),
                 med(loads), med(slow), med(onCpu), med(busy));
      summary[sc.name + "/" + name] = {{"throughput_qps_measured_median", med(tm)},
                                       {"throughput_qps_predicted_median", med(tp)},
                                       {"violation_rate_measured_median", med(vm)},
                                       {"violation_rate_predicted_median", med(vp)}};
      medianThroughput[sc.name + "/" + name] = med(tm);
    }
  const double ratio = medianThroughput["two-processors/saturating"] / medianThroughput["one-processor/saturating"];
  fmt::print("two processors / one processor, measured saturating throughput: {:.2f}x (target >= 1.6x)\n", ratio);
  double load[3] = {0, 0, 0};
  getloadavg(load, 3);
  fmt::print("load average after: {:.2f}\n", load[0]);
  if (!p.out.empty()) {
    Json j{{"rows", jrows}, {"medians", summary}, {"two_over_one_throughput", ratio}, {"query_alone_ms", queryMs},
           {"cores", cores}, {"load_average_before", loadBefore[0]}, {"load_average_after", load[0]},
           {"params", {{"rows", p.rows}, {"width", p.width}, {"depth", p.depth}, {"queries", p.queries},
                       {"runs", p.runs}, {"seed", p.seed}, {"saturate_qps", p.saturateQps}}}};
    auto s = writeFileAtomic(p.out, j.dump(2) + "\n");
    if (!s.ok()) return std::cerr << "serve_bench: " << s.error().message << "\n", 1;
  }
  return 0;
}

}  // namespace
}  // namespace zp::runtime::serve

int main(int argc, char** argv) {
  zp::runtime::serve::Params p;
  CLI::App app{"serve two tasks on two pinned processors vs one; measured beside predicted"};
  app.add_option("--queries", p.queries, "queries per task per run")->check(CLI::Range(1, 100000));
  app.add_option("--runs", p.runs, "repetitions (medians reported)")->check(CLI::Range(1, 100));
  app.add_option("--depth", p.depth, "MatMuls per position")->check(CLI::Range(1, 64));
  app.add_option("--rows", p.rows, "rows of a position's activations")->check(CLI::Range(1, 4096));
  app.add_option("--seed", p.seed, "seed of inputs and Poisson arrivals");
  app.add_option("--out", p.out, "write the JSON here");
  CLI11_PARSE(app, argc, argv);
  return zp::runtime::serve::run(p);
}
