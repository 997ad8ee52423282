#include "passes/coldstart/coldstart.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <utility>

namespace zp::coldstart {

namespace {

const char* kSearchSpace =
    "kernel x cache-or-transform per node and the core of each transform, transforms started in execution order "
    "on each core, execution in order on core 0, reads in order on the storage, GEMM libraries per node";
const char* kSerialSearchSpace =
    "kernel x cache-or-transform per node and the GEMM libraries started; every read and transform, then every "
    "execute";

struct Solved {
  Problem problem;
  Choice choice;
  Timeline timeline;
  bool optimal = false;
  uint64_t states = 0;
};

// The GEMM libraries a plan may use: every library the profile timed the start-up
// of; without kernel selection the session keeps the runtime's default library.
std::vector<std::string> libraries(const profile::ColdProfile& p, bool kernelSelection) {
  std::vector<std::string> out;
  for (const auto& [g, ms] : p.gemmStartupMs) out.push_back(g);
  if (!kernelSelection && p.gemmStartupMs.count("onednn")) out = {"onednn"};
  return out;
}

Solved solveOne(Problem p, const Knobs& k, const ColdStartParams& params) {
  dropDominated(p);
  Solved s;
  s.problem = std::move(p);
  if (!k.pipelining) {
    auto r = solveSerial(s.problem);
    s.choice = r.choice, s.optimal = true, s.states = r.states;
    s.timeline = simulateSerial(s.problem, s.choice);
    return s;
  }
  std::optional<ExactResult> exact;
  if (!params.forceHeuristic) exact = solveExact(s.problem, params.exact);
  if (exact) {
    s.choice = exact->choice, s.optimal = true, s.states = exact->states;
  } else {
    auto h = solveHeuristic(s.problem, params.heuristic);
    s.choice = h.choice, s.states = h.evaluations;
  }
  s.timeline = simulate(s.problem, s.choice);
  return s;
}

// The best plan under `k`: one problem over the libraries, whose solvers choose the
// subset of libraries to start and each node's library.
Expected<Solved> solveKnobs(const profile::ColdProfile& profile, const std::string& model, int cores, const Knobs& k,
                            const ColdStartParams& params) {
  ZP_ASSIGN_OR_RETURN(Problem p, buildProblem(profile, model, libraries(profile, k.kernelSelection), cores, k));
  return solveOne(std::move(p), k, params);
}

// The libraries a timeline starts, '+'-joined in start order ("" for none).
std::string startedLibraries(const Problem& p, const Timeline& t) {
  std::string s;
  for (int l : t.startups) s += (s.empty() ? "" : "+") + p.libraries[static_cast<size_t>(l)].name;
  return s;
}

// A lower bound on any plan with every knob: setup, then the least execute of every step.
double lowerBound(const profile::ColdProfile& profile, const std::string& model) {
  std::map<int, double> least;
  for (const auto& n : profile.nodes)
    if (n.model == model) {
      auto [it, fresh] = least.emplace(n.step, n.firstExecMs);
      if (!fresh) it->second = std::min(it->second, n.firstExecMs);
    }
  double lb = 0;
  for (const auto& m : profile.models)
    if (m.model == model) lb = m.setupMs;
  for (const auto& [step, ms] : least) lb += ms;
  return lb;
}

// §3.5: each node's fastest warm kernel on any library; when it is not the cold
// kernel its weights are read from the cache or transformed (whichever is ready
// first) after the cold start's own reads, on the core free first; a library the
// cold start did not start starts on that core first. A node keeping its kernel
// may still move to a library with faster warm products once that has started.
void planWarmSwitch(const profile::ColdProfile& profile, const Solved& s, plan::ColdPlan& out) {
  auto warm = buildProblem(profile, s.problem.model, libraries(profile, true), s.problem.cores, Knobs{true, true, true});
  std::vector<double> free = s.timeline.coreFree;
  double disk = s.timeline.diskFree;
  std::map<std::string, double> started;  // library -> when its start-up ends
  for (int l : s.timeline.startups)
    started[s.problem.libraries[static_cast<size_t>(l)].name] = s.timeline.libraryReady[static_cast<size_t>(l)];
  auto startOn = [&](const std::string& lib, size_t core) {
    if (started.count(lib)) return started[lib];
    return started[lib] = free[core] = free[core] + profile.gemmStartupMs.at(lib);
  };
  out.predictedWarmReadyMs = s.timeline.latencyMs;
  out.predictedWarmMs = 0;
  for (size_t i = 0; i < s.problem.steps.size(); ++i) {
    const Option& cold = s.problem.steps[i].options[s.choice[i].option];
    auto& node = out.nodes[i];
    node.warmKernel = cold.kernel;
    node.warmGemm = node.gemm;
    node.warmWeights = "none";
    double warmExec = cold.warmExecMs;
    if (!warm.ok() || cold.kernel.empty()) {
      out.predictedWarmMs += warmExec;
      continue;
    }
    const std::vector<Option>& opts = warm->steps[i].options;
    const Option* best = nullptr;
    for (const auto& o : opts)
      if (!best || o.warmExecMs < best->warmExecMs) best = &o;
    auto libOf = [&](const Option& o) { return o.usesGemm() ? warm->libraries[static_cast<size_t>(o.gemm)].name : ""; };
    if (best && best->warmExecMs < cold.warmExecMs) {
      const size_t core = static_cast<size_t>(std::min_element(free.begin(), free.end()) - free.begin());
      double ready = 0;
      if (best->kernel == cold.kernel) {
        ready = best->usesGemm() ? startOn(libOf(*best), core) : 0;  // same weights, other library
      } else {
        const Option* cached = nullptr;
        const Option* raw = nullptr;
        for (const auto& o : opts)
          if (o.kernel == best->kernel && o.gemm == best->gemm) (o.cached ? cached : raw) = &o;
        const double libReady = best->usesGemm() ? startOn(libOf(*best), core) : 0;
        const double viaCache = cached ? disk + cached->readMs : std::numeric_limits<double>::infinity();
        const double viaRaw = std::max(disk + raw->readMs, free[core]) + raw->transformMs;
        if (viaCache <= viaRaw) {
          disk = viaCache;
          node.warmWeights = "cache";
        } else {
          disk += raw->readMs;
          free[core] = viaRaw;
          node.warmWeights = "transform";
          node.warmCore = static_cast<int>(core);
        }
        ready = std::max(std::min(viaCache, viaRaw), libReady);
      }
      node.warmKernel = best->kernel;
      node.warmGemm = libOf(*best);
      node.warmReadyMs = ready;
      warmExec = best->warmExecMs;
      out.predictedWarmReadyMs = std::max(out.predictedWarmReadyMs, ready);
    }
    out.predictedWarmMs += warmExec;
  }
}

void fillNodes(const Solved& s, bool pipelined, plan::ColdPlan& out) {
  for (size_t i = 0; i < s.problem.steps.size(); ++i) {
    const Option& o = s.problem.steps[i].options[s.choice[i].option];
    const StepTimes& t = s.timeline.steps[i];
    plan::ColdNodePlan n;
    n.step = static_cast<int>(i);
    n.node = s.problem.steps[i].node;
    n.kernel = o.kernel;
    n.gemm = o.usesGemm() ? s.problem.libraries[static_cast<size_t>(o.gemm)].name : "";
    n.weights = o.kernel.empty() ? "none" : o.cached ? "cache" : "transform";
    n.transformCore = !needsCore(o) ? -1 : pipelined ? s.choice[i].core : 0;
    n.readStartMs = t.readStart, n.readEndMs = t.readEnd;
    n.transformStartMs = t.transformStart, n.transformEndMs = t.transformEnd;
    n.execStartMs = t.execStart, n.execEndMs = t.execEnd;
    out.nodes.push_back(std::move(n));
  }
}

}  // namespace

std::vector<Knobs> ablationKnobs() {
  return {{false, false, false}, {true, false, false}, {false, true, false}, {false, false, true},
          {true, true, false},   {true, false, true},  {false, true, true},  {true, true, true}};
}

std::string knobsName(const Knobs& k) {
  std::string n;
  auto add = [&](bool on, const char* letter) {
    if (!on) return;
    if (!n.empty()) n += '+';
    n += letter;
  };
  add(k.kernelSelection, "K");
  add(k.caching, "C");
  add(k.pipelining, "P");
  return n.empty() ? "none" : n;
}

std::optional<Knobs> parseKnobs(const std::string& name) {
  for (const auto& k : ablationKnobs())
    if (knobsName(k) == name) return k;
  return std::nullopt;
}

Expected<plan::ColdPlan> planColdStart(const profile::ColdProfile& measured, const plan::UnitId& unit,
                                       const ColdStartParams& params) {
  const std::string model = unit.profileKey();
  const profile::ColdProfile profile = applyCalibration(measured, model, params.calibration);
  const int cores = params.cores > 0 ? params.cores : profile.cores;
  plan::ColdPlan out;
  out.unit = unit;
  out.cores = cores;
  out.storageMBps = profile.storageMBps;
  out.calibrationRuns = params.calibration.runs;
  if (out.calibrationRuns > 0) {
    out.executeFactor = params.calibration.executeFactor;
    out.transformFactor = params.calibration.transformFactor;
    out.transformOverheadMs = params.calibration.transformOverheadMs;
    out.startupFactor = params.calibration.startupFactor;
    out.setupFactor = params.calibration.setupFactor;
    out.kernelExecuteFactors = params.calibration.kernelExecuteFactor;
    out.readLatencyMs = profile.storageLatencyMs;
  }
  const Knobs& chosen = params.knobs;
  for (const auto& k : ablationKnobs()) {
    ZP_ASSIGN_OR_RETURN(Solved s, solveKnobs(profile, model, cores, k, params));
    out.configurations.push_back(plan::ColdConfiguration{knobsName(k), k.kernelSelection, k.caching, k.pipelining,
                                                         startedLibraries(s.problem, s.timeline), s.timeline.latencyMs,
                                                         s.optimal ? "optimal" : "heuristic"});
    if (knobsName(k) != knobsName(chosen)) continue;
    out.configuration = knobsName(k);
    out.pipelined = k.pipelining;
    out.gemm = startedLibraries(s.problem, s.timeline);
    out.gemmStartup = !s.timeline.startups.empty();
    out.setupMs = s.problem.setupMs;
    out.predictedColdMs = s.timeline.latencyMs;
    out.solver = !k.pipelining ? "serial" : s.optimal ? "pareto-dp" : "nnv12-heuristic";
    out.status = s.optimal ? "optimal" : "heuristic";
    out.searchSpace = k.pipelining ? kSearchSpace : kSerialSearchSpace;
    out.lowerBoundMs = s.optimal ? s.timeline.latencyMs : std::min(s.timeline.latencyMs, lowerBound(profile, model));
    out.states = s.states;
    fillNodes(s, k.pipelining, out);
    planWarmSwitch(profile, s, out);
  }
  return out;
}

}  // namespace zp::coldstart
