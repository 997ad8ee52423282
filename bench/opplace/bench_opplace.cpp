// Operator placement on this host's two real processors, predicted and measured.
//
// Processors: "cpu" (core A: default kernels, oneDNN, 1 thread), "npu" (core B:
// sparse kernels, BLIS, 1 thread) and "all-cores" (both cores: default kernels,
// oneDNN, 2 intra-operator threads), which shares the other two's cores: the
// placement may run some operators with intra-operator threads and independent
// branches apart on cpu and npu (passes/opplace/problem.h: processors on shared
// cores take turns). Per model: per-node profiles under the three (each pinned
// to its cores, right before the model is measured), the hand-off cost between
// processors measured with the placed executor itself, the placement (exact
// search under the list-schedule cost model) and its baselines (each processor
// alone, greedy, SparOA's threshold rule); the same again on cpu and npu only
// ("-2p"). Then every schedule MEASURED: a processor alone as one session on a
// worker pinned to its cores, the placed ones on the placed executor (one pinned
// worker per processor), in interleaved rounds (median of the rounds' medians;
// speed-ups are medians of the rounds' ratios).
// The per-operator latency predictor is validated leave one model out (and one
// architecture out) on every profiled model (the placed ones and --train-models).
//
// Writes OUT/results.json, OUT/predictions.csv (each node left out, predicted beside
// measured), OUT/node_profile.csv (reused unless --remeasure) and
// OUT/trace_<model>.json (the placement's run, one track per processor); prints tables.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "drivers/opplace_flow/node_profiles.h"
#include "drivers/opplace_flow/place_model.h"
#include "libplan/artifacts/node_profile_csv.h"
#include "libplan/graph/model_io.h"
#include "libplan/runtime/measure.h"
#include "libplan/runtime/serve/placed_executor.h"
#include "libplan/util/file.h"
#include "libplan/util/stats.h"
#include "passes/measure/node_profile.h"
#include "passes/measure/placed_handoff.h"

using namespace zp;
namespace fs = std::filesystem;
namespace of = zp::drivers::opplace_flow;
using nlohmann::json;

namespace {

struct Options {
  std::vector<std::string> models, trainModels, sweepModels;
  bool predictorOnly = false;
  std::string out = "bench_opplace";
  int coreA = 0, coreB = 1;
  int repeat = 3, rounds = 10, warmup = 2;
  measure::MeasureParams profile{10, 2};
  int profileRounds = 3;
  double timeLimitS = 30;
  bool remeasure = false;
  bool reusePlacedProfiles = false;
  double minMixGain = opplace::SolveParams{}.minMixGain;
  double spinUs = runtime::PlacedProgramParams{}.spinUs;  // a placed processor on its own cores
  uint64_t seed = 0;
  estimate::XgbParams xgb = estimate::defaultOpLatencyParams();
};

struct Config {
  Processor proc;
  Processor host;  // the node profile's key and how it was measured
};

Config config(const std::string& name, std::vector<int> cores, const std::string& policy, const std::string& gemm,
              int threads) {
  Config c{Processor{name, "cpu", "host", policy, threads, cores, gemm}, {}};
  c.host = c.proc.engine();
  return c;
}

std::string loadAverage() {
  std::ifstream f("/proc/loadavg");
  std::string a, b, c;
  f >> a >> b >> c;
  return a + " " + b + " " + c;
}

[[noreturn]] void die(const std::string& what) {
  fmt::print(stderr, "error: {}\n", what);
  std::exit(1);
}

template <typename T>
T must(Expected<T> e) {
  if (!e.ok()) die(e.error().message);
  return std::move(*e);
}

void must(const Status& s) {
  if (!s.ok()) die(s.error().message);
}

// Per-node rows of `model` under `c`, measured on c's cores.
std::vector<artifacts::NodeProfileRow> profileOne(const of::ModelSource& m, const Config& c, const Options& o) {
  auto pin = must(runtime::serve::ScopedCorePin::pin(c.proc.name, c.proc.cores));
  auto model = must(graph::loadModel(m.file));
  runtime::TensorMap inputs;
  {
    auto s = must(runtime::Session::fromModel(model, m.file.string(), measure::sessionOptions(c.host)));
    inputs = runtime::randomInputs(*s, o.seed);
  }
  return must(measure::profileNodes(model, m.name, c.host, inputs, o.profile));
}

// The node profile of every model under the configurations it needs, reusing OUT/node_profile.csv.
// OUT/node_profile.csv: rows reused from an earlier run (unless --remeasure),
// the missing ones measured when first needed and saved at once; `fresh` drops
// a model's rows first (a placed model is profiled right before it is measured,
// so its costs are the current kernels' under the current load).
struct ProfileStore {
  fs::path file;
  std::vector<artifacts::NodeProfileRow> rows;
  std::set<std::tuple<std::string, std::string, int>> have;

  ProfileStore(const Options& o) : file(fs::path(o.out) / "node_profile.csv") {
    if (!o.remeasure && fs::exists(file)) rows = must(artifacts::readNodeProfileCsv(file));
    for (const auto& r : rows) have.insert({r.model, r.policy, r.threads});
  }
  void ensure(const of::ModelSource& m, const std::vector<Config>& configs, const Options& o, bool fresh = false) {
    if (fresh) {
      std::erase_if(rows, [&](const artifacts::NodeProfileRow& r) { return r.model == m.name; });
      std::erase_if(have, [&](const auto& k) { return std::get<0>(k) == m.name; });
    }
    std::vector<const Config*> missing;
    for (const auto& c : configs)
      if (have.insert({m.name, c.host.policy, c.host.threads}).second) missing.push_back(&c);
    if (missing.empty()) return;
    // Rounds interleave the configurations; each node keeps its fastest round's row.
    // Another tenant of this host takes a core now and then for seconds at a time,
    // and a two-thread profile taken then overestimates every node by 1.5-1.8x.
    std::vector<std::vector<artifacts::NodeProfileRow>> best(missing.size());
    for (int round = 0; round < o.profileRounds; ++round)
      for (size_t i = 0; i < missing.size(); ++i) {
        fmt::print(stderr, "profiling {} on {} (round {} of {})\n", m.name, missing[i]->proc.name, round + 1,
                   o.profileRounds);
        auto r = profileOne(m, *missing[i], o);
        if (best[i].empty()) {
          best[i] = std::move(r);
          continue;
        }
        if (r.size() != best[i].size()) die(fmt::format("{}: the node profile's rounds differ in nodes", m.name));
        for (size_t k = 0; k < r.size(); ++k) {
          if (r[k].node != best[i][k].node) die(fmt::format("{}: the node profile's rounds differ in nodes", m.name));
          if (r[k].ms < best[i][k].ms) best[i][k] = r[k];
        }
      }
    for (const auto& b : best) rows.insert(rows.end(), b.begin(), b.end());
    must(writeFileAtomic(file, artifacts::formatNodeProfileCsv(rows)));
  }
};

// A model's architecture family: the name without its input size and pruning
// suffixes (googlenet_112 and googlenet_224 are one family).
std::string family(std::string name) {
  for (bool changed = true; changed;) {
    changed = false;
    const auto us = name.rfind('_');
    if (us == std::string::npos) break;
    const std::string tail = name.substr(us + 1);
    if (tail == "p90" || (!tail.empty() && std::all_of(tail.begin(), tail.end(), ::isdigit))) {
      name.resize(us);
      changed = true;
    }
  }
  return name;
}

// The share of `samples` predicted within 10% per op type and kernel (what the
// predictor gets wrong, and how much time those nodes take).
json withinByOpType(const std::vector<estimate::OpSample>& samples, const std::vector<double>& predictedMs) {
  struct Tally {
    size_t nodes = 0, within = 0;
    double ms = 0;
  };
  std::map<std::string, Tally> byOp;
  for (size_t i = 0; i < samples.size(); ++i) {
    const auto& f = samples[i].features;
    auto& t = byOp[f.kernel.empty() ? f.opType : f.opType + "/" + f.kernel];
    ++t.nodes;
    t.within += std::abs(predictedMs[i] - samples[i].ms) <= 0.1 * samples[i].ms;
    t.ms += samples[i].ms;
  }
  json out = json::array();
  for (const auto& [op, t] : byOp)
    out.push_back({{"op", op}, {"nodes", t.nodes}, {"within_10pct", double(t.within) / double(t.nodes)},
                   {"measured_ms", t.ms}});
  return out;
}

// Pairs of nodes of different families with the same operator (every feature but
// the activation sparsities and the cache context equal): the share whose
// measured times agree within 10%, and the pairs. What the features leave to the
// model's context (no predictor from these features can tell such nodes apart).
std::pair<double, size_t> crossFamilyAgreement(const std::vector<estimate::OpSample>& samples) {
  auto key = [](const estimate::OpFeatures& f) {
    return std::make_tuple(f.opType, f.kernel, f.activation, f.batch, f.inChannels, f.inH, f.inW, f.outChannels,
                           f.kernelH, f.kernelW, f.stride, f.groups, f.flops, f.bytes, f.weightSparsity);
  };
  std::map<decltype(key(samples[0].features)), std::vector<size_t>> groups;
  for (size_t i = 0; i < samples.size(); ++i) groups[key(samples[i].features)].push_back(i);
  size_t pairs = 0, agree = 0;
  for (const auto& [k, idx] : groups)
    for (size_t a = 0; a < idx.size(); ++a)
      for (size_t b = a + 1; b < idx.size(); ++b) {
        const auto &x = samples[idx[a]], &y = samples[idx[b]];
        if (family(x.model) == family(y.model)) continue;
        ++pairs;
        agree += std::abs(x.ms - y.ms) <= 0.1 * std::min(x.ms, y.ms);
      }
  return {pairs ? double(agree) / double(pairs) : 0.0, pairs};
}

struct PredictorShares {
  double lomo = 0, family = 0, lomoModelsOnly = 0;  // pooled shares of nodes within 10%
};

// One processor's profiled nodes: the bench models' (validated) and the operator
// sweep's (always trained on, never scored).
struct ProcessorSamples {
  std::vector<estimate::OpSample> scored, sweep;
  std::vector<std::string> scoredNodes;  // the node of each scored sample
};

ProcessorSamples processorSamples(const std::vector<artifacts::NodeProfileRow>& rows, const Processor& host,
                                  const std::set<std::string>& sweepModels) {
  ProcessorSamples out;
  for (const auto& r : rows) {
    if (!of::profiledUnder(r, host)) continue;
    estimate::OpSample sample{r.model, r.features, r.ms};
    if (sweepModels.count(r.model)) {
      out.sweep.push_back(std::move(sample));
    } else {
      out.scored.push_back(std::move(sample));
      out.scoredNodes.push_back(r.node);
    }
  }
  return out;
}

// The predictor validated on one processor: leaving one model out (the score),
// the same without the sweep, leaving one architecture family out; and the
// bounds any per-node predictor meets (self-agreement, the same operator
// across families).
struct ProcessorValidation {
  estimate::LomoReport lomo, modelsOnly, family;
  double selfAgreement = 0;
  std::pair<double, size_t> crossFamily;  // share agreeing within 10%, pairs
};

ProcessorValidation validate(const ProcessorSamples& ps, double selfAgreement, const Options& o) {
  ProcessorValidation v;
  v.lomo = must(estimate::leaveOneModelOut(ps.scored, o.xgb, 0.1, ps.sweep));
  v.modelsOnly = ps.sweep.empty() ? v.lomo : must(estimate::leaveOneModelOut(ps.scored, o.xgb, 0.1));
  auto families = ps.scored;
  for (auto& sample : families) sample.model = family(sample.model);
  v.family = must(estimate::leaveOneModelOut(families, o.xgb, 0.1, ps.sweep));
  v.selfAgreement = selfAgreement;
  v.crossFamily = ps.scored.empty() ? std::pair<double, size_t>{0, 0} : crossFamilyAgreement(ps.scored);
  return v;
}

void printPredictorRow(const std::string& processor, const ProcessorSamples& ps, const ProcessorValidation& v) {
  const auto& r = v.lomo;
  fmt::print("| {} | {} | {} | {} | {:.3f} | {:.3f} ({} pairs) | {:.3f} | {:.3f} | {:.3f} | {:.3f} | {:.3f} | {:.2f} |\n",
             processor, r.models.size(), r.nodes, ps.sweep.size(), v.selfAgreement, v.crossFamily.first,
             v.crossFamily.second, r.nodeWithinShare, r.timeWithinShare, v.family.nodeWithinShare, r.modelWithinShare,
             v.modelsOnly.nodeWithinShare, r.trainSeconds);
}

json predictorJson(const Config& c, const ProcessorSamples& ps, const ProcessorValidation& v) {
  const auto& r = v.lomo;
  json models = json::array();
  for (const auto& m : r.models)
    models.push_back({{"model", m.model}, {"nodes", m.nodes}, {"within_10pct", m.withinShare},
                      {"measured_ms", m.measuredMs}, {"predicted_ms", m.predictedMs}});
  return {{"processor", c.proc.name}, {"config", c.host.label()}, {"nodes", r.nodes},
          {"sweep_nodes", ps.sweep.size()}, {"within_10pct", r.nodeWithinShare},
          {"time_within_10pct", r.timeWithinShare}, {"within_10pct_leave_family_out", v.family.nodeWithinShare},
          {"within_10pct_without_sweep", v.modelsOnly.nodeWithinShare}, {"models_within_10pct", r.modelWithinShare},
          {"self_agreement", v.selfAgreement}, {"same_operator_across_families_within_10pct", v.crossFamily.first},
          {"same_operator_across_families_pairs", v.crossFamily.second}, {"train_seconds_mean", r.trainSeconds},
          {"model_bytes", r.modelBytes}, {"by_op", withinByOpType(ps.scored, r.predictedMs)}, {"models", models}};
}

// predictions.csv's rows of one processor: every scored node, measured beside predicted.
std::string predictionRows(const std::string& processor, const ProcessorSamples& ps, const std::vector<double>& predicted) {
  std::string csv;
  for (size_t i = 0; i < ps.scored.size(); ++i)
    csv += fmt::format("{},{},{},{},{},{:.6g},{:.6g}\n", processor, ps.scored[i].model, ps.scoredNodes[i],
                       ps.scored[i].features.opType, ps.scored[i].features.kernel, ps.scored[i].ms, predicted[i]);
  return csv;
}

// The predictor validated per processor (a table row, a JSON entry and
// predictions.csv's rows each) and the shares pooled over the processors.
json predictorReport(const std::vector<artifacts::NodeProfileRow>& rows, const std::set<std::string>& sweepModels,
                     const std::vector<Config>& procs, const Options& o, PredictorShares* shares) {
  json per = json::array();
  std::string csv = "processor,model,node,op_type,kernel,measured_ms,predicted_ms\n";
  double within = 0, withinFamily = 0, withinModelsOnly = 0, nodes = 0;
  fmt::print("\n| processor | models | nodes | sweep nodes | self-agreement | same operator across families | LOMO nodes "
             "within 10% | LOMO time within 10% | leave-family-out nodes within 10% | LOMO models within 10% | LOMO without "
             "the sweep | train s |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const auto& c : procs) {
    const auto ps = processorSamples(rows, c.host, sweepModels);
    const auto v = validate(ps, of::selfAgreement(rows, c.host, 0.1), o);
    printPredictorRow(c.proc.name, ps, v);
    per.push_back(predictorJson(c, ps, v));
    csv += predictionRows(c.proc.name, ps, v.lomo.predictedMs);
    const auto n = static_cast<double>(v.lomo.nodes);
    within += v.lomo.nodeWithinShare * n;
    withinFamily += v.family.nodeWithinShare * n;
    withinModelsOnly += v.modelsOnly.nodeWithinShare * n;
    nodes += n;
  }
  const double all = nodes > 0 ? nodes : 1.0;
  *shares = {within / all, withinFamily / all, withinModelsOnly / all};
  must(writeFileAtomic(fs::path(o.out) / "predictions.csv", csv));
  return per;
}

// One schedule to measure: its prediction and how to time it.
struct Schedule {
  std::string name;
  double predictedMs = 0;
  int handoffs = 0;
  std::function<Expected<runtime::WarmStats>(int warmup, int repeat)> measure;
  std::vector<double> roundMedians;
  double measuredMs = 0;
  double maxAbsDiff = 0;  // placed schedules: outputs against the cpu-only run
};

double maxRelDiff(const runtime::TensorMap& got, const runtime::TensorMap& want) {
  double d = 0, scale = 1;
  for (const auto& [name, w] : want) {
    const auto gv = got.at(name).toF32(), wv = w.toF32();
    for (size_t i = 0; i < wv.size(); ++i) {
      d = std::max(d, std::abs(double(gv[i]) - double(wv[i])));
      scale = std::max(scale, std::abs(double(wv[i])));
    }
  }
  return d / scale;
}

// A placed executor for `assignment` (problem node order = the sessions' step order).
std::unique_ptr<runtime::serve::PlacedExecutor> placedExecutor(const onnx::ModelProto& model, const std::string& label,
                                                               const std::vector<Config>& procs,
                                                               const opplace::Assignment& assignment, double spinUs) {
  std::vector<std::unique_ptr<runtime::Session>> sessions;
  std::vector<Processor> pcs;
  for (const auto& c : procs) {
    sessions.push_back(must(runtime::Session::fromModel(model, label, runtime::serve::sessionOptions(c.proc))));
    pcs.push_back(c.proc);
  }
  runtime::PlacedProgramParams params;
  params.exclusive = runtime::serve::sharedCorePairs(pcs);
  params.spinUs = spinUs;
  auto prog = must(runtime::PlacedProgram::create(std::move(sessions), assignment, params));
  return must(runtime::serve::PlacedExecutor::start(std::move(prog), pcs));
}

struct ModelRun {
  of::ModelSource source;
  // On cpu, npu and all-cores (which shares both cores), and on cpu and npu alone ("-2p").
  opplace::PlacementResult placement, placement2;
  size_t nodes = 0, edges = 0;
  // cpu-only, npu-only, all-cores-only, greedy, sparoa-threshold, opplace, then the "-2p" ones
  std::vector<Schedule> schedules;
};

}  // namespace

namespace {

// The schedules of a placement result on `procs`, each with the runner that
// measures it; "-only" baselines run as one plain session (with `singles`),
// every other schedule on the placed executor; names get `suffix`.
void addSchedules(ModelRun& r, const onnx::ModelProto& model, const std::vector<Config>& procs, double spinUs,
                  const opplace::PlacementResult& result, const std::string& suffix, bool singles,
                  const runtime::TensorMap& inputs, const runtime::TensorMap& reference) {
  auto plain = [&](const Config& c, const std::string& name, double predicted) {
    auto session = std::shared_ptr<runtime::Session>(
        must(runtime::Session::fromModel(model, r.source.name, runtime::serve::sessionOptions(c.proc))));
    Schedule s{name, predicted, 0, {}, {}, 0, 0};
    s.maxAbsDiff = maxRelDiff(must(session->run(inputs)), reference);
    const Processor proc = c.proc;
    s.measure = [session, proc, inputs](int warmup, int repeat) {
      return runtime::serve::measureOnProcessor(*session, proc, inputs, warmup, repeat);
    };
    r.schedules.push_back(std::move(s));
  };
  auto placed = [&](const std::string& name, double predicted, int handoffs, const opplace::Assignment& a) {
    auto exec = std::shared_ptr<runtime::serve::PlacedExecutor>(placedExecutor(model, r.source.name, procs, a, spinUs));
    Schedule s{name + suffix, predicted, handoffs, {}, {}, 0, 0};
    s.maxAbsDiff = maxRelDiff(must(exec->run(inputs)), reference);
    s.measure = [exec, inputs](int warmup, int repeat) { return exec->measure(inputs, warmup, repeat); };
    r.schedules.push_back(std::move(s));
  };
  for (const auto& b : result.baselines) {
    const auto proc = std::find_if(procs.begin(), procs.end(), [&](const Config& c) { return b.name == c.proc.name + "-only"; });
    if (proc != procs.end()) {
      if (singles) plain(*proc, b.name, b.latencyMs);
    } else if (!b.assignment.empty()) {
      placed(b.name, b.latencyMs, b.handoffs, b.assignment);
    }
  }
  placed("opplace", result.solution.latencyMs, result.timeline.handoffs, result.solution.assignment);
}

}  // namespace

namespace {

const Schedule* find(const ModelRun& r, const std::string& name) {
  for (const auto& s : r.schedules)
    if (s.name == name) return &s;
  return nullptr;
}

using HandOffMatrix = std::vector<std::vector<estimate::TransitionCost>>;

// The hand-off cost of every pair of processors, measured (a chain alternating
// between the two, in both directions): handing over to or from the processor on
// both cores also wakes its second thread, which one cpu <-> npu fit would miss.
HandOffMatrix measureHandOffs(const std::vector<Config>& procs, json& report) {
  HandOffMatrix m(procs.size(), std::vector<estimate::TransitionCost>(procs.size()));
  for (size_t a = 0; a < procs.size(); ++a)
    for (size_t b = a + 1; b < procs.size(); ++b) {
      const auto fit = must(measure::measurePlacedHandOff(procs[a].proc, procs[b].proc, measure::HandOffParams{}));
      m[a][b] = m[b][a] = estimate::TransitionCost{fit.fixedMs, fit.msPerByte};
      json points = json::array();
      for (const auto& p : fit.points)
        points.push_back({{"bytes", p.bytes}, {"alternating_ms", p.alternatingMs}, {"same_ms", p.sameMs},
                          {"per_edge_ms", p.perEdgeMs}});
      report.push_back({{"between", {procs[a].proc.name, procs[b].proc.name}}, {"fixed_ms", fit.fixedMs},
                        {"ms_per_byte", fit.msPerByte}, {"points", points}});
      fmt::print("hand-off {} <-> {}: {:.4f} ms + {:.3g} ms/byte\n", procs[a].proc.name, procs[b].proc.name,
                 fit.fixedMs, fit.msPerByte);
    }
  return m;
}

// The placement problem of `m` on `procs` and its solution.
opplace::PlacementResult place(const onnx::ModelProto& model, const of::ModelSource& m,
                               const std::vector<artifacts::NodeProfileRow>& rows, const std::vector<Config>& procs,
                               const HandOffMatrix& handoff, const Options& o, ModelRun* run) {
  of::PlaceInputs in;
  in.modelKey = m.name;
  for (const auto& c : procs) in.processors.push_back(c.proc);
  in.profile = rows;
  in.handoff = handoff;
  in.handoff.resize(procs.size());
  for (auto& row : in.handoff) row.resize(procs.size());
  in.seed = o.seed;
  auto pp = must(of::buildPlaceProblem(model, in));
  run->nodes = pp.problem.nodes.size();
  run->edges = pp.problem.edges.size();
  return must(opplace::placeOperators(pp.problem, opplace::SolveParams{o.timeLimitS, 0, o.minMixGain}));
}

// Places one model and measures every schedule in interleaved rounds.
ModelRun placeAndMeasure(const of::ModelSource& m, const std::vector<artifacts::NodeProfileRow>& rows,
                         const std::vector<Config>& procs, const HandOffMatrix& handoff, const Options& o) {
  auto model = must(graph::loadModel(m.file));
  ModelRun r;
  r.source = m;
  const std::vector<Config> two(procs.begin(), procs.begin() + 2);
  r.placement = place(model, m, rows, procs, handoff, o, &r);
  r.placement2 = place(model, m, rows, two, handoff, o, &r);

  auto ref = must(runtime::Session::fromModel(model, m.name, runtime::serve::sessionOptions(procs[0].proc)));
  const auto inputs = runtime::randomInputs(*ref, o.seed);
  const auto reference = must(ref->run(inputs));
  ref.reset();
  addSchedules(r, model, procs, o.spinUs, r.placement, "", true, inputs, reference);
  addSchedules(r, model, two, o.spinUs, r.placement2, "-2p", false, inputs, reference);
  // Each round starts one schedule later: a schedule's place in the round (after
  // which schedule, how far into a slow spell) changes from round to round.
  const size_t n = r.schedules.size();
  for (int round = 0; round < o.rounds; ++round)
    for (size_t k = 0; k < n; ++k) {
      auto& s = r.schedules[(static_cast<size_t>(round) + k) % n];
      auto stats = must(s.measure(round == 0 ? o.warmup : 1, o.repeat));
      s.roundMedians.push_back(stats.medianMs);
    }
  for (auto& s : r.schedules) s.measuredMs = median(s.roundMedians);
  return r;
}

// The placement's run, profiled: one track per processor.
void writeTrace(const ModelRun& r, const std::vector<Config>& procs, const Options& o) {
  auto model = must(graph::loadModel(r.source.file));
  auto exec = placedExecutor(model, r.source.name, procs, r.placement.solution.assignment, o.spinUs);
  std::vector<Processor> pcs;
  for (const auto& c : procs) pcs.push_back(c.proc);
  auto s = must(runtime::Session::fromModel(model, r.source.name, runtime::serve::sessionOptions(procs[0].proc)));
  const auto inputs = runtime::randomInputs(*s, o.seed);
  for (int i = 0; i < 2; ++i) must(exec->run(inputs));
  must(exec->run(inputs, true));
  const auto trace = runtime::serve::placedRunTrace(exec->program(), pcs, "opplace " + r.source.name);
  must(writeFileAtomic(fs::path(o.out) / ("trace_" + r.source.name + ".json"), trace.dump(1) + "\n"));
}

// The median over rounds of base's round median over placed's: both measured in
// the same round, so a round in which another tenant of this shared host takes a
// core (two-thread runs then take 1.5-1.8x as long) slows both alike.
double pairedSpeedup(const Schedule& base, const Schedule& placed) {
  std::vector<double> ratios;
  for (size_t i = 0; i < placed.roundMedians.size(); ++i) ratios.push_back(base.roundMedians[i] / placed.roundMedians[i]);
  return median(ratios);
}

// One placement's figures against the single processors and all cores, measured and predicted.
json placementFigures(const ModelRun& r, const std::string& name, const opplace::PlacementResult& result) {
  const Schedule* placed = find(r, name);
  const Schedule *cpu = find(r, "cpu-only"), *npu = find(r, "npu-only"), *all = find(r, "all-cores-only");
  const Schedule* single = cpu->measuredMs <= npu->measuredMs ? cpu : npu;
  const double bestSinglePredicted = std::min(cpu->predictedMs, npu->predictedMs);
  std::map<std::string, int> on;
  const std::vector<std::string> names = {"cpu", "npu", "all-cores"};
  for (int p : result.solution.assignment) ++on[names[static_cast<size_t>(p)]];
  const auto& sol = result.solution;
  return {{"solver", sol.solver}, {"optimal", sol.optimal}, {"gap", sol.gap}, {"nodes_on", on},
          {"mixed_given_up_predicted_ms", result.mixedLatencyMs},
          {"predicted_ms", placed->predictedMs}, {"measured_ms", placed->measuredMs},
          {"measured_over_predicted", placed->measuredMs / placed->predictedMs},
          {"speedup_vs_best_single", pairedSpeedup(*single, *placed)},
          {"speedup_vs_all_cores", pairedSpeedup(*all, *placed)},
          {"speedup_vs_all_cores_of_medians", all->measuredMs / placed->measuredMs},
          {"predicted_speedup_vs_best_single", bestSinglePredicted / placed->predictedMs},
          {"predicted_speedup_vs_all_cores", all->predictedMs / placed->predictedMs},
          {"outputs_match", placed->maxAbsDiff <= 1e-5}, {"max_rel_diff_vs_cpu_only", placed->maxAbsDiff},
          {"handoffs", placed->handoffs}};
}

// The model's row: the placement on cpu, npu and all-cores at the top level, the
// placement on cpu and npu alone under "two_processors", every schedule under "schedules".
json modelRow(const ModelRun& r) {
  json row = placementFigures(r, "opplace", r.placement);
  row["model"] = r.source.name;
  row["nodes"] = r.nodes;
  row["edges"] = r.edges;
  row["two_processors"] = placementFigures(r, "opplace-2p", r.placement2);
  json schedules = json::array();
  for (const auto& s : r.schedules)
    schedules.push_back({{"name", s.name}, {"predicted_ms", s.predictedMs}, {"measured_ms", s.measuredMs},
                         {"round_medians_ms", s.roundMedians}, {"handoffs", s.handoffs},
                         {"max_rel_diff_vs_cpu_only", s.maxAbsDiff}});
  row["schedules"] = schedules;
  return row;
}

void printModel(const ModelRun& r, const json& row) {
  fmt::print("\n{}: {} nodes, {} edges; {} {} (gap {:.3g})\n", r.source.name, r.nodes, r.edges,
             r.placement.solution.solver, r.placement.solution.optimal ? "optimal" : "not proven optimal",
             r.placement.solution.gap);
  for (const auto& [label, res] : {std::pair<const char*, const opplace::PlacementResult*>{"opplace", &r.placement},
                                   {"opplace-2p", &r.placement2}})
    if (res->mixedLatencyMs > 0)
      fmt::print("{}: kept one processor over the best mix ({:.3f} ms predicted, gain below the minimum mix gain)\n",
                 label, res->mixedLatencyMs);
  fmt::print("| schedule | predicted ms | measured ms | measured/predicted | hand-offs | max rel diff |\n|---|---|---|---|---|---|\n");
  for (const auto& s : r.schedules)
    fmt::print("| {} | {:.3f} | {:.3f} | {:.3f} | {} | {:.2g} |\n", s.name, s.predictedMs, s.measuredMs,
               s.measuredMs / s.predictedMs, s.handoffs, s.maxAbsDiff);
  for (const auto& [label, f] : {std::pair<std::string, json>{"opplace (cpu, npu, all-cores)", row},
                                 {"opplace-2p (cpu, npu)", row["two_processors"]}})
    fmt::print("{}: measured {:.3f}x vs the best single processor, {:.3f}x vs all cores (medians of the rounds' "
               "ratios; predicted {:.3f}x, {:.3f}x)\n",
               label, f["speedup_vs_best_single"].get<double>(), f["speedup_vs_all_cores"].get<double>(),
               f["predicted_speedup_vs_best_single"].get<double>(), f["predicted_speedup_vs_all_cores"].get<double>());
}

std::vector<of::ModelSource> sources(const std::vector<std::string>& files) {
  std::vector<of::ModelSource> out;
  for (const auto& f : files) out.push_back(of::ModelSource{fs::path(f).stem().string(), f});
  return out;
}

// Every placed model: profiled, placed with its baselines, measured; one row each.
void placeAll(const std::vector<of::ModelSource>& placedModels, const std::vector<Config>& procs, const Options& o,
              ProfileStore& profile, json& handoffJson, json& models) {
  const HandOffMatrix handoff = measureHandOffs(procs, handoffJson);
  for (const auto& m : placedModels) {
    // Profiled right before it is measured: both under the same load, as far as a shared host allows.
    profile.ensure(m, procs, o, !o.reusePlacedProfiles);
    const std::string loadBefore = loadAverage();
    const ModelRun r = placeAndMeasure(m, profile.rows, procs, handoff, o);
    writeTrace(r, procs, o);
    json row = modelRow(r);
    row["load_average"] = {loadBefore, loadAverage()};
    printModel(r, row);
    std::fflush(stdout);
    models.push_back(std::move(row));
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Operator placement on this host's two processors: predicted and measured latency of every schedule"};
  Options o;
  app.add_option("--models", o.models, "ONNX models to place (named by file stem)")->required();
  app.add_option("--train-models", o.trainModels, "more ONNX models, for the latency predictor only");
  app.add_option("--sweep-models", o.sweepModels,
                 "operator-sweep models: the latency predictor always trains on them and never scores them");
  app.add_flag("--predictor-only", o.predictorOnly, "profile the predictor's models and validate it; place nothing");
  app.add_option("--out", o.out, "output directory (results.json, node_profile.csv, traces)");
  app.add_option("--core-a", o.coreA, "core of processor cpu");
  app.add_option("--core-b", o.coreB, "core of processor npu");
  app.add_option("--repeat", o.repeat, "timed runs per schedule and round");
  app.add_option("--rounds", o.rounds, "interleaved rounds (median of the rounds' medians)");
  app.add_option("--profile-repeat", o.profile.repeat, "timed runs of the per-node profile");
  app.add_option("--profile-rounds", o.profileRounds,
                 "per-node profile rounds, interleaved over the processors (each node keeps its fastest round)")
      ->check(CLI::Range(1, 100));
  app.add_option("--time-limit", o.timeLimitS, "branch-and-bound time limit per model, seconds");
  app.add_option("--rounds-xgb", o.xgb.rounds, "boosting rounds of the latency predictor");
  app.add_option("--depth-xgb", o.xgb.maxDepth, "tree depth of the latency predictor");
  app.add_flag("--remeasure", o.remeasure, "profile again even when OUT/node_profile.csv has the rows");
  app.add_flag("--reuse-placed-profiles", o.reusePlacedProfiles,
               "reuse OUT/node_profile.csv's rows of the placed models too (default: profile them again, "
               "right before each is measured)");
  app.add_option("--spin-us", o.spinUs,
                 "how long a placed processor on its own cores spins for another's tensor before it sleeps")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1e6));
  app.add_option("--min-mix-gain", o.minMixGain,
                 "place on several processors only when that beats the best single one by this fraction")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  fs::create_directories(o.out);
  const std::string loadStart = loadAverage();
  // cpu and npu, then one processor with all cores (it shares theirs).
  const std::vector<Config> procs = {config("cpu", {o.coreA}, "default", "onednn", 1),
                                     config("npu", {o.coreB}, "sparse", "blis", 1),
                                     config("all-cores", {o.coreA, o.coreB}, "default", "onednn", 2)};
  for (const auto& c : procs) must(runtime::serve::checkProcessor(c.proc));
  const std::vector<Config> two(procs.begin(), procs.begin() + 2);

  const auto placedModels = sources(o.models), trainModels = sources(o.trainModels),
             sweepModels = sources(o.sweepModels);
  ProfileStore profile(o);
  for (const auto& m : trainModels) profile.ensure(m, two, o);
  std::set<std::string> sweepNames;
  for (const auto& m : sweepModels) {
    profile.ensure(m, two, o);
    sweepNames.insert(m.name);
  }

  json handoffJson = json::array();
  json models = json::array();
  if (o.predictorOnly) {
    for (const auto& m : placedModels) profile.ensure(m, two, o);
  } else {
    placeAll(placedModels, procs, o, profile, handoffJson, models);
  }
  PredictorShares shares;
  const json predictor = predictorReport(profile.rows, sweepNames, two, o, &shares);
  json out = {{"host", {{"load_average_start", loadStart}, {"load_average_end", loadAverage()},
                        {"cores", {o.coreA, o.coreB}}}},
              {"params", {{"repeat", o.repeat}, {"rounds", o.rounds}, {"profile_repeat", o.profile.repeat}, {"profile_rounds", o.profileRounds},
                          {"time_limit_s", o.timeLimitS}, {"xgb_rounds", o.xgb.rounds}, {"xgb_depth", o.xgb.maxDepth}, {"seed", o.seed},
                          {"min_mix_gain", o.minMixGain}, {"spin_us", o.spinUs}}},
              {"handoff", handoffJson},
              {"predictor", {{"within_10pct", shares.lomo}, {"within_10pct_leave_family_out", shares.family},
                             {"within_10pct_without_sweep", shares.lomoModelsOnly},
                             {"sweep_models", sweepNames.size()}, {"processors", predictor}}},
              {"models", models}};
  must(writeFileAtomic(fs::path(o.out) / "results.json", out.dump(2) + "\n"));
  fmt::print("\npredictor: {:.3f} of nodes within 10% leaving one model out, {:.3f} leaving one architecture out "
             "({:.3f} without the operator sweep)\nload average {} -> {}\nwrote {}\n", shares.lomo, shares.family,
             shares.lomoModelsOnly, loadStart, loadAverage(),
             (fs::path(o.out) / "results.json").string());
  return 0;
}
