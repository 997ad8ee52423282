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
    "on each core, execution in order on core 0, reads in order on the storage";

struct Solved {
  Problem problem;
  Choice choice;
  Timeline timeline;
  bool optimal = false;
  uint64_t states = 0;
};

// The GEMM libraries a plan may use: every library the profile timed the start-up of.
std::vector<std::string> libraries(const profile::ColdProfile& p, bool kernelSelection) {
  std::vector<std::string> out;
  for (const auto& [g, ms] : p.gemmStartupMs) out.push_back(g);
  // Without kernel selection the session keeps the runtime's default library.
  if (!kernelSelection && p.gemmStartupMs.count("onednn")) out = {"onednn"};
  if (out.empty()) out.push_back("");  // no library timed: plans use no GEMM kernel
  return out;
}

std::optional<Solved> solveOne(Problem p, const Knobs& k, const ColdStartParams& params) {
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

// The best plan under `k` over the GEMM libraries, with and without GEMM kernels.
Expected<Solved> solveKnobs(const profile::ColdProfile& profile, const std::string& model, int cores, const Knobs& k,
                            const ColdStartParams& params) {
  std::optional<Solved> best;
  std::optional<Error> firstError;
  bool allOptimal = true;  // the best of several solves is proven only when each is
  bool solvedWithoutGemm = false;
  for (const auto& g : libraries(profile, k.kernelSelection)) {
    for (bool allowGemm : {true, false}) {
      if (g.empty() && allowGemm) continue;
      if (!k.kernelSelection && !g.empty() && !allowGemm) continue;  // that would be choosing kernels
      // Without GEMM kernels the problem is the same whatever the library: solved
      // once (a later library's equal latency would not replace it anyway).
      if (!allowGemm && std::exchange(solvedWithoutGemm, true)) continue;
      auto p = buildProblem(profile, model, g, cores, k, allowGemm);
      if (!p.ok()) {
        if (!firstError) firstError = p.error();
        continue;
      }
      auto s = solveOne(std::move(*p), k, params);
      if (!s) continue;
      allOptimal &= s->optimal;
      if (!best || s->timeline.latencyMs < best->timeline.latencyMs - 1e-12) best = std::move(s);
    }
  }
  if (!best) return *firstError;
  best->optimal = allOptimal;
  return *best;
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

// §3.5: each node's fastest warm kernel on the session's library; when it is not the
// cold kernel its weights are read from the cache or transformed (whichever is ready
// first) after the cold start's own reads, on the core free first.
void planWarmSwitch(const profile::ColdProfile& profile, const Solved& s, plan::ColdPlan& out) {
  auto warm = buildProblem(profile, s.problem.model, s.problem.gemm, s.problem.cores,
                           Knobs{true, true, true}, !s.problem.gemm.empty());
  std::vector<double> free = s.timeline.coreFree;
  double disk = s.timeline.diskFree;
  double startupEnd = s.timeline.gemmStartup ? 0 : -1;  // -1: not started by the cold start
  out.predictedWarmReadyMs = s.timeline.latencyMs;
  out.predictedWarmMs = 0;
  for (size_t i = 0; i < s.problem.steps.size(); ++i) {
    const Option& cold = s.problem.steps[i].options[s.choice[i].option];
    auto& node = out.nodes[i];
    node.warmKernel = cold.kernel;
    node.warmWeights = "none";
    double warmExec = cold.warmExecMs;
    if (warm.ok() && !cold.kernel.empty()) {
      const Option* best = nullptr;
      for (const auto& o : warm->steps[i].options)
        if (!best || o.warmExecMs < best->warmExecMs) best = &o;
      if (best && best->kernel != cold.kernel && best->warmExecMs < cold.warmExecMs) {
        const Option* cached = nullptr;
        const Option* raw = nullptr;
        for (const auto& o : warm->steps[i].options)
          if (o.kernel == best->kernel) (o.cached ? cached : raw) = &o;
        size_t core = static_cast<size_t>(std::min_element(free.begin(), free.end()) - free.begin());
        double viaCache = cached ? disk + cached->readMs : std::numeric_limits<double>::infinity();
        double viaRaw = std::max(disk + raw->readMs, free[core]) + raw->transformMs;
        if (best->usesGemm && startupEnd < 0) {  // the library starts on that core first
          startupEnd = free[core] + s.problem.gemmStartupMs;
          free[core] = startupEnd;
          viaRaw = std::max(disk + raw->readMs, free[core]) + raw->transformMs;
        }
        double ready = std::min(viaCache, viaRaw);
        if (viaCache <= viaRaw) {
          disk = viaCache;
          node.warmWeights = "cache";
        } else {
          disk += raw->readMs;
          free[core] = viaRaw;
          node.warmWeights = "transform";
          node.warmCore = static_cast<int>(core);
        }
        if (best->usesGemm) ready = std::max(ready, startupEnd);
        node.warmKernel = best->kernel;
        node.warmReadyMs = ready;
        warmExec = best->warmExecMs;
        out.predictedWarmReadyMs = std::max(out.predictedWarmReadyMs, ready);
      }
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

Expected<plan::ColdPlan> planColdStart(const profile::ColdProfile& profile, const std::string& model,
                                       const ColdStartParams& params) {
  const int cores = params.cores > 0 ? params.cores : profile.cores;
  plan::ColdPlan out;
  out.model = model;
  out.cores = cores;
  out.storageMBps = profile.storageMBps;
  for (const auto& k : ablationKnobs()) {
    ZP_ASSIGN_OR_RETURN(Solved s, solveKnobs(profile, model, cores, k, params));
    out.configurations.push_back(plan::ColdConfiguration{knobsName(k), k.kernelSelection, k.caching, k.pipelining,
                                                         s.problem.gemm, s.timeline.latencyMs,
                                                         s.optimal ? "optimal" : "heuristic"});
    if (!(k.kernelSelection && k.caching && k.pipelining)) continue;
    out.gemm = s.problem.gemm;
    out.gemmStartup = s.timeline.gemmStartup;
    out.setupMs = s.problem.setupMs;
    out.predictedColdMs = s.timeline.latencyMs;
    out.solver = s.optimal ? "pareto-dp" : "nnv12-heuristic";
    out.status = s.optimal ? "optimal" : "heuristic";
    out.searchSpace = kSearchSpace;
    out.lowerBoundMs = s.optimal ? s.timeline.latencyMs : std::min(s.timeline.latencyMs, lowerBound(profile, model));
    out.states = s.states;
    fillNodes(s, true, out);
    planWarmSwitch(profile, s, out);
  }
  return out;
}

}  // namespace zp::coldstart
