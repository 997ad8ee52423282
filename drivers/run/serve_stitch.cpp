// A stitch plan served (SparseLoom §3.3-3.4 runtime phase): the SLO
// configurations given are active one after another (equal phases of the
// trace); under each, a task's query runs the system's chosen subgraph units
// position by position on the processors it places them on. The plan's preload
// set is resident, the other units are loaded from the bundle on demand and
// evicted under its memory budget; a plan made under a device memory budget
// keeps the chosen units resident as its planner did (by load cost per byte).
// The frames the plan was made for run as queries of their DNN chains, each
// later DNN on its own input, beside the tasks' queries.
#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "drivers/run/serve_system.h"
#include "libplan/sim/queries/serve_sim.h"
#include "libplan/zoo/stitch_manifest.h"

namespace zp::drivers {
namespace fs = std::filesystem;
using namespace runtime::serve;

namespace {

struct StitchServe {
  Bundle& bundle;
  const ServeBundleParams& params;
  const plan::StitchPlan& st;
  std::vector<Processor> processors;
  std::vector<size_t> slos;                   // active configurations in turn (indices into st.slos)
  double phaseMs = 0;                         // each configuration is active this long
  ArrivalTrace trace;                         // tasks: the plan's, in plan order
  std::vector<std::vector<runtime::TensorMap>> samples;  // per task
  std::vector<std::vector<int64_t>> labels;   // per task (empty: none)
  std::vector<std::string> preload;           // unit ids, the plan's greedy set
  int64_t budgetBytes = INT64_MAX;            // no budget planned: everything may stay resident
  bool residentByLoadCost = false;            // the plan's device budget: units kept as its planner kept them
  struct Chain {
    std::string name;
    double periodMs = 0, latencyMs = 0;
    std::vector<size_t> tasks;  // plan task indices, in the order they run
  };
  std::vector<Chain> chains;  // the frames served (trace tasks after the plan's)
};

// The plan's frames as chains of its tasks, served when the trace is the plan's workload.
Status readFrames(StitchServe& c) {
  const auto& w = c.st.workload;
  if (!w || w->frames.empty()) return {};
  if (!c.params.planWorkload) {
    c.bundle.note("the plan's frames are served only at the workload it was made for (without --rate, --process "
                  "or --arrivals)");
    return {};
  }
  for (const auto& f : w->frames) {
    ZP_ASSIGN_OR_RETURN(auto chains, plan::frameChains(f));
    for (size_t k = 0; k < chains.size(); ++k) {
      StitchServe::Chain chain{fmt::format("{}.{}", f.name, k), f.periodMs, f.latencyMs, {}};
      for (const auto& dnn : chains[k]) {
        auto it = std::find_if(c.st.tasks.begin(), c.st.tasks.end(), [&](const auto& t) { return t.name == dnn; });
        if (it == c.st.tasks.end())
          return makeError("{}: frame '{}' runs '{}', not a task of the plan", c.bundle.planFile(), f.name, dnn);
        chain.tasks.push_back(static_cast<size_t>(it - c.st.tasks.begin()));
      }
      c.chains.push_back(std::move(chain));
    }
  }
  return {};
}

Status chooseConfigurations(StitchServe& c) {
  const auto& slos = c.st.slos;
  // Without --slo: the configurations the plan was made to serve in turn, else every one.
  std::vector<std::string> ids = c.params.slos;
  if (ids.empty() && c.st.workload) ids = c.st.workload->servedInTurn;
  if (ids.empty())
    for (size_t i = 0; i < slos.size(); ++i) c.slos.push_back(i);
  for (const auto& id : ids) {
    auto it = std::find_if(slos.begin(), slos.end(), [&](const auto& s) { return s.id == id; });
    if (it == slos.end()) return makeError("--slo {}: no such SLO configuration in {}", id, c.bundle.planFile());
    c.slos.push_back(static_cast<size_t>(it - slos.begin()));
  }
  if (c.slos.empty()) return makeError("{}: the plan has no SLO configurations", c.bundle.planFile());
  auto budget = std::find_if(c.st.preload.begin(), c.st.preload.end(),
                             [&](const auto& p) { return c.params.budget.empty() || p.budget == c.params.budget; });
  if (!c.params.budget.empty() && budget == c.st.preload.end())
    return makeError("--budget {}: the plan has no preload set for this budget", c.params.budget);
  if (budget != c.st.preload.end()) {
    c.preload = budget->greedy;
    c.budgetBytes = budget->budgetBytes;
  }
  return {};
}

// Dataset samples of every task (seeded random inputs when the zoo has none).
Status readSamples(StitchServe& c) {
  for (const auto& t : c.st.tasks) {
    const auto& g = t.subgraphs.front();  // position 0 (sorted by position)
    ZP_ASSIGN_OR_RETURN(const plan::Unit* unit, c.bundle.unit(plan::UnitId::subgraph(t.name, g.position, g.variant)));
    ZP_ASSIGN_OR_RETURN(const auto inputs, c.bundle.inputs(*unit));
    const runtime::IoInfo& in = inputs.front();
    ZP_ASSIGN_OR_RETURN(Dataset d, c.bundle.samples(t.name, in, c.params.samples, c.params.samples, c.params.seed));
    std::vector<runtime::TensorMap> maps;
    for (auto& x : d.samples) maps.push_back(runtime::TensorMap{{in.name, std::move(x)}});
    c.samples.push_back(std::move(maps));
    c.labels.push_back(d.labels);
  }
  return {};
}

// A note saying whether the trace is the workload the plan's choice was made for.
void noteWorkload(StitchServe& c) {
  const auto& w = c.st.workload;
  if (!w) return;
  std::string made;
  for (const auto& [task, rate] : w->rateQps) made += fmt::format("{}{} {} q/s", made.empty() ? "" : ", ", task, rate);
  for (const auto& f : w->frames)
    made += fmt::format("{}frames {} every {} ms", made.empty() ? "" : ", ", f.name, f.periodMs);
  if (w->memoryBudgetBytes > 0) made += fmt::format(", memory budget {} bytes", w->memoryBudgetBytes);
  if (c.params.taskRateQps == w->rateQps && c.params.process == w->process) {
    c.bundle.note(fmt::format("served at the workload the plan's choice was made for: {} ({})", made, w->process));
    return;
  }
  if (!c.params.arrivals.empty()) {
    c.bundle.note(fmt::format("the plan's choice was made for {} ({}); served here on {}", made, w->process,
                              c.params.arrivals.string()));
    return;
  }
  const bool same = c.params.process == w->process &&
                    std::all_of(w->rateQps.begin(), w->rateQps.end(),
                                [&](const auto& r) { return std::abs(r.second - c.params.rateQps) <= 1e-9 * r.second; });
  if (!same)
    c.bundle.note(fmt::format("the plan's choice was made for {} ({}); served here at {} q/s per task ({})", made,
                              w->process, c.params.rateQps, c.params.process));
}

Status makeTrace(StitchServe& c) {
  noteWorkload(c);
  std::vector<artifacts::KnownTask> known;
  for (size_t t = 0; t < c.st.tasks.size(); ++t) {
    const int read = static_cast<int>(c.samples[t].size());
    known.push_back({c.st.tasks[t].name, read,
                     read == c.params.samples ? fmt::format("serving reads the first {} of its dataset: raise --samples", read)
                                              : ""});
  }
  ZP_ASSIGN_OR_RETURN(c.trace, userArrivals(c.params, known));
  if (c.params.planWorkload && c.st.workload) {
    // Tasks the workload runs in frames only get no queries of their own.
    const auto& rates = c.st.workload->rateQps;
    std::erase_if(c.trace.arrivals, [&](const Arrival& a) {
      return !rates.count(c.st.tasks[static_cast<size_t>(a.task)].name);
    });
  }
  if (!c.chains.empty()) {
    ArrivalParams ap;
    for (const auto& chain : c.chains)
      ap.tasks.push_back({chain.name, ArrivalProcess::Periodic, 1000.0 / chain.periodMs,
                          static_cast<int>(c.samples[chain.tasks.front()].size())});
    ap.durationMs = c.params.durationMs;
    ap.count = c.params.durationMs > 0 ? 0 : (c.params.count > 0 ? c.params.count : 60);
    ZP_ASSIGN_OR_RETURN(auto frames, generateArrivals(ap));
    for (auto a : frames.arrivals) {
      a.task += static_cast<int>(c.st.tasks.size());
      c.trace.arrivals.push_back(a);
    }
    for (const auto& chain : c.chains) c.trace.tasks.push_back(chain.name);
    std::stable_sort(c.trace.arrivals.begin(), c.trace.arrivals.end(),
                     [](const Arrival& a, const Arrival& b) { return a.timeMs < b.timeMs; });
  }
  const double last = c.trace.arrivals.empty() ? 0.0 : c.trace.arrivals.back().timeMs;
  c.phaseMs = std::max(last, 1e-9) * (1 + 1e-12) / static_cast<double>(c.slos.size());
  return {};
}

int processorIndex(const StitchServe& c, const std::string& name) {
  for (size_t p = 0; p < c.processors.size(); ++p)
    if (c.processors[p].name == name) return static_cast<int>(p);
  return -1;
}

// The slot of unit `id` on processor `proc`, made on first use with the plan's
// size and run time of it there (null: the plan does not run it there); a
// subgraph or group two choices share is one slot, loaded and counted once.
Expected<int> unitSlot(const StitchServe& c, SystemSetup& r, std::map<std::string, int>& slots, const plan::UnitId& id,
                       const std::string& proc, const int64_t* bytes, const double* plannedMs) {
  const std::string key = id.str() + "@" + proc;
  if (auto it = slots.find(key); it != slots.end()) return it->second;
  const int p = processorIndex(c, proc);
  if (!bytes || p < 0)
    return makeError("{}: no planned {} on processor '{}'", c.bundle.planFile(), id.str(), proc);
  ZP_ASSIGN_OR_RETURN(const plan::Unit* unit, c.bundle.unit(id));
  ZP_ASSIGN_OR_RETURN(ServedSlot slot, servedSlot(c.bundle, *unit, p, c.processors[static_cast<size_t>(p)]));
  slot.bytes = *bytes;
  slot.plannedMs = *plannedMs;
  slots[key] = static_cast<int>(r.slots.size());
  r.slots.push_back(std::move(slot));
  return slots[key];
}

// A task's subgraph at `pos` cut from `variant`, on `proc`.
Expected<int> slotFor(const StitchServe& c, SystemSetup& r, std::map<std::string, int>& slots, const plan::TaskPlan& t,
                      int pos, const std::string& variant, const std::string& proc) {
  auto g = std::find_if(t.subgraphs.begin(), t.subgraphs.end(), [&](const plan::PlannedSubgraph& s) {
    return s.position == pos && s.variant == variant && s.processor == proc;
  });
  const bool planned = g != t.subgraphs.end();
  return unitSlot(c, r, slots, plan::UnitId::subgraph(t.name, pos, variant), proc, planned ? &g->memoryBytes : nullptr,
                  planned ? &g->latencyMs : nullptr);
}

// A weight-shared group's unit on `proc`: one slot the members it answers share.
Expected<int> groupSlotFor(const StitchServe& c, SystemSetup& r, std::map<std::string, int>& slots,
                           const plan::PlannedGroup& g, const std::string& proc) {
  auto run = std::find_if(g.runs.begin(), g.runs.end(), [&](const auto& x) { return x.processor == proc; });
  const bool planned = run != g.runs.end();
  return unitSlot(c, r, slots, plan::UnitId::group(g.name), proc, planned ? &run->memoryBytes : nullptr,
                  planned ? &run->latencyMs : nullptr);
}

// A placed model on the first of its processors, holding the others (the
// executor's holds, from the slot's placement): one slot every configuration
// choosing it shares. Its size against the budget is the plan's (its file's when the plan has none).
Expected<int> placedSlotFor(const StitchServe& c, SystemSetup& r, std::map<std::string, int>& slots,
                            const plan::OpPlacement& o) {
  const std::string key = o.unit.str() + "@" + o.processors.front();
  if (auto it = slots.find(key); it != slots.end()) return it->second;
  const int p = processorIndex(c, o.processors.front());
  if (p < 0) return makeError("{}: {} is placed on '{}', not a processor of the stitch section", c.bundle.planFile(),
                              o.unit.str(), o.processors.front());
  ZP_ASSIGN_OR_RETURN(const plan::Unit* unit, c.bundle.unit(o.unit));
  ZP_ASSIGN_OR_RETURN(const fs::path model, c.bundle.model(*unit));
  std::vector<std::string> warnings;
  ZP_ASSIGN_OR_RETURN(auto placement, operatorPlacement(c.bundle, *unit, o, warnings));
  for (const auto& w : warnings) c.bundle.note(w);
  ServedSlot slot;
  slot.unit = o.unit;
  slot.processor = p;
  slot.bytes = o.memoryBytes > 0 ? o.memoryBytes : static_cast<int64_t>(fs::file_size(model));
  slot.plannedMs = o.latencyMs;
  slot.files = {model, {}, {}, std::move(placement)};
  slots[key] = static_cast<int>(r.slots.size());
  r.slots.push_back(std::move(slot));
  return slots[key];
}

// A member's samples as the group's stitched graph reads them: its own under
// its stitched input; a member with an input of its own in the graph reads its
// first sample there (the graph runs every member's heads).
std::vector<runtime::TensorMap> groupSamples(const StitchServe& c, const plan::PlannedGroup& g, size_t t) {
  const plan::GroupMember* member = plan::memberOf(g, c.st.tasks[t].name);
  std::map<std::string, runtime::Tensor> others;
  for (const auto& m : g.members) {
    if (m.stitchedInput == member->stitchedInput || others.count(m.stitchedInput)) continue;
    auto it = std::find_if(c.st.tasks.begin(), c.st.tasks.end(), [&](const auto& x) { return x.name == m.task; });
    const auto& s = c.samples[static_cast<size_t>(it - c.st.tasks.begin())];
    if (!s.empty()) others.emplace(m.stitchedInput, s.front().begin()->second);
  }
  std::vector<runtime::TensorMap> out;
  for (const auto& sample : c.samples[t]) {
    runtime::TensorMap in{{member->stitchedInput, sample.begin()->second}};
    for (const auto& [name, x] : others) in.emplace(name, x);
    out.push_back(std::move(in));
  }
  return out;
}

// Queries per second of a setup task as the plan was made for them, shared by the
// configurations in turn: a task's rate, a frame chain's one per period; when the
// frames are not served, a task also counts the frames it runs in (as the planner did).
double setupTaskQps(const StitchServe& c, size_t setupTask) {
  const size_t K = c.slos.size(), t = setupTask / K, T = c.st.tasks.size();
  if (t >= T) return 1000.0 / c.chains[t - T].periodMs / static_cast<double>(K);
  const auto& w = *c.st.workload;
  const std::string& name = c.st.tasks[t].name;
  double qps = w.rateQps.count(name) ? w.rateQps.at(name) : 0.0;
  if (c.chains.empty())
    for (const auto& f : w.frames)
      qps += std::count(f.dnns.begin(), f.dnns.end(), name) ? 1000.0 / f.periodMs : 0.0;
  return qps / static_cast<double>(K);
}

// Marks the plan's preload set resident, in its order, as far as the budget allows;
// under the plan's device budget, the system's units by the planner's rule. The
// planner judges each SLO configuration's choice alone, with its own units resident
// by load cost; served in turn, the units every configuration keeps so stay resident,
// and the budget's rest is the least-recently-used room where each phase's other
// units stay once loaded.
void markPreload(const StitchServe& c, SystemSetup& r) {
  if (c.residentByLoadCost) {
    const size_t K = c.slos.size();
    std::vector<std::map<int, double>> phaseQps(K);  // configuration k's slots and their queries per second
    for (size_t k = 0; k < K; ++k)
      for (size_t t = k; t < r.tasks.size(); t += K)
        for (int s : r.tasks[t].slots) phaseQps[k][s] += setupTaskQps(c, t);
    std::vector<double> loadMs;
    std::vector<int64_t> bytes;
    for (const auto& slot : r.slots) {
      bytes.push_back(slot.bytes);
      loadMs.push_back(c.st.workload->loadMsPerMB * static_cast<double>(slot.bytes) / 1e6);
    }
    const auto everywhere = sim::residentInEveryPhase(phaseQps, loadMs, bytes, c.budgetBytes);
    for (size_t s = 0; s < r.slots.size(); ++s) r.slots[s].preload = everywhere[s];
    return;
  }
  int64_t used = 0;
  for (const auto& id : c.preload)
    for (auto& slot : r.slots) {
      if (slot.preload || slot.unit.str() != id || used + slot.bytes > c.budgetBytes) continue;
      slot.preload = true;
      used += slot.bytes;
    }
}

Expected<SystemSetup> systemSetup(StitchServe& c, const plan::ServedSystem& sys) {
  SystemSetup r;
  r.name = sys.name;
  r.description = sys.description;
  r.order = sys.servingOrder;
  r.plan["serving_order"] = servingOrderName(sys.servingOrder);
  r.budgetBytes = c.budgetBytes;
  std::map<std::string, int> slots;
  const size_t K = c.slos.size();
  for (size_t t = 0; t < c.st.tasks.size(); ++t) {
    const auto& task = c.st.tasks[t];
    for (size_t k = 0; k < K; ++k) {
      const auto& cfg = c.st.slos[c.slos[k]];
      const auto sel = std::find_if(sys.selections.begin(), sys.selections.end(), [&](const auto& s) { return s.slo == cfg.id; });
      if (sel == sys.selections.end() || sel->tasks.size() <= t || sel->tasks[t].task != task.name)
        return makeError("{}: system '{}' has no choice for task '{}' under {}", c.bundle.planFile(), sys.name,
                         task.name, cfg.id);
      const auto& choice = sel->tasks[t];
      ServeTask st{K > 1 ? task.name + "@" + cfg.id : task.name, {}, cfg.tasks.at(task.name).latencyMs,
                   choice.accuracy >= cfg.tasks.at(task.name).accuracy, c.samples[t], c.labels[t], task.name};
      if (const plan::PlannedGroup* g = plan::groupOf(c.st, choice)) {
        // The group's unit answers the task: its sample goes in as the member's
        // input, its answer comes from the member's outputs in the stitched graph.
        ZP_ASSIGN_OR_RETURN(int slot, groupSlotFor(c, r, slots, *g, choice.placement.at(0)));
        st.slots.push_back(slot);
        st.samples = groupSamples(c, *g, t);
        st.answerOutput = plan::memberOf(*g, task.name)->stitchedOutputs.front();
        r.trace.tasks.push_back(st.name);
        r.tasks.push_back(std::move(st));
        continue;
      }
      if (plan::answeredByPlacedModel(choice)) {
        // The variant whole, its operators on their processors; it reads the task's samples.
        ZP_ASSIGN_OR_RETURN(const auto id, plan::parseUnitId(choice.combination));
        ZP_ASSIGN_OR_RETURN(int slot, placedSlotFor(c, r, slots, *plan::placementOf(c.bundle.plan(), id)));
        st.slots.push_back(slot);
        r.trace.tasks.push_back(st.name);
        r.tasks.push_back(std::move(st));
        continue;
      }
      const auto variants = zoo::combinationVariants(choice.combination);
      for (int pos = 0; pos < task.positions; ++pos) {
        ZP_ASSIGN_OR_RETURN(int slot, slotFor(c, r, slots, task, pos, variants.at(static_cast<size_t>(pos)),
                                              choice.placement.at(static_cast<size_t>(pos))));
        st.slots.push_back(slot);
      }
      r.trace.tasks.push_back(st.name);
      r.tasks.push_back(std::move(st));
    }
  }
  for (const auto& chain : c.chains)
    for (size_t k = 0; k < K; ++k) {
      const auto& cfg = c.st.slos[c.slos[k]];
      // Task t's setup task under configuration k is r.tasks[t * K + k] (pushed in that order).
      const ServeTask& first = r.tasks[chain.tasks.front() * K + k];
      ServeTask st{K > 1 ? chain.name + "@" + cfg.id : chain.name, {}, chain.latencyMs, true, first.samples, {},
                   chain.name};
      for (size_t m = 0; m < chain.tasks.size(); ++m) {
        const ServeTask& member = r.tasks[chain.tasks[m] * K + k];
        if (m > 0) st.stages.push_back({static_cast<int>(st.slots.size()), member.samples});
        st.slots.insert(st.slots.end(), member.slots.begin(), member.slots.end());
        st.accuracySloMet = st.accuracySloMet && member.accuracySloMet;
        st.answerOutput = member.answerOutput;  // the last DNN's answers the frame
      }
      // The answer is the last DNN's, on its sample of the frame's index.
      const auto& last = c.labels[chain.tasks.back()];
      if (!last.empty())
        for (size_t s = 0; s < st.samples.size(); ++s) st.labels.push_back(last[s % last.size()]);
      r.trace.tasks.push_back(st.name);
      r.tasks.push_back(std::move(st));
    }
  for (const auto& a : c.trace.arrivals) {
    const size_t k = std::min(K - 1, static_cast<size_t>(a.timeMs / c.phaseMs));
    r.trace.arrivals.push_back({a.timeMs, static_cast<int>(static_cast<size_t>(a.task) * K + k), a.sample});
  }
  markPreload(c, r);
  return r;
}

}  // namespace

Expected<ServedPlan> stitchServedPlan(Bundle& bundle, const ServeBundleParams& given) {
  const plan::StitchPlan& st = *bundle.plan().stitch;
  ServeBundleParams params = given;
  if (params.planWorkload && st.workload) {
    params.taskRateQps = st.workload->rateQps;
    params.process = st.workload->process;
    // As long as the trace the choice was simulated on, unless a length is given.
    if (params.durationMs <= 0 && params.count <= 0) params.durationMs = st.workload->durationMs;
  }
  if (st.systems.empty())
    return makeError("{}: the plan carries no served systems (made by an older plan-solve?)", bundle.planFile());
  StitchServe c{bundle, params, st, {}, {}, 0, {}, {}, {}, {}, INT64_MAX, false, {}};
  ZP_ASSIGN_OR_RETURN(c.processors, bundle.processors(st.processors));
  ZP_TRY(chooseConfigurations(c));
  if (st.workload && st.workload->memoryBudgetBytes > 0 && params.budget.empty()) {
    c.budgetBytes = st.workload->memoryBudgetBytes;
    c.residentByLoadCost = true;
  }
  ZP_TRY(readFrames(c));
  // Before any is read: every subgraph unit the plan plans and its caches, whichever system is served.
  for (const auto& t : st.tasks)
    for (const auto& g : t.subgraphs) {
      ZP_ASSIGN_OR_RETURN(const plan::Unit* unit, bundle.unit(plan::UnitId::subgraph(t.name, g.position, g.variant)));
      ZP_TRY(bundle.model(*unit));
      const int p = processorIndex(c, g.processor);
      if (p >= 0) bundle.cache(*unit, c.processors[static_cast<size_t>(p)].policy);
    }
  for (const auto& g : st.groups) {
    ZP_ASSIGN_OR_RETURN(const plan::Unit* unit, bundle.unit(plan::UnitId::group(g.name)));
    ZP_TRY(bundle.model(*unit));
    for (const auto& run : g.runs)
      if (const int p = processorIndex(c, run.processor); p >= 0) bundle.cache(*unit, c.processors[static_cast<size_t>(p)].policy);
  }
  for (const auto& o : bundle.plan().opplace) {
    ZP_ASSIGN_OR_RETURN(const plan::Unit* unit, bundle.unit(o.unit));
    ZP_TRY(bundle.model(*unit));
  }
  ZP_TRY(readSamples(c));
  ZP_TRY(makeTrace(c));
  ZP_TRY(runtime::serve::checkTraceSize(c.trace));
  ZP_ASSIGN_OR_RETURN(const auto systems, selectSystems(st.systems, st.chosenSystem, params.compare));
  ServedPlan out;
  out.processors = c.processors;
  out.queries = c.trace.arrivals.size();
  // Every system's setup is built (its units' files and caches checked) before anything is served.
  for (const auto* s : systems) {
    ZP_ASSIGN_OR_RETURN(auto setup, systemSetup(c, *s));
    out.systems.push_back(std::move(setup));
  }
  Json slos = Json::array();
  for (size_t k : c.slos) slos.push_back(st.slos[k].id);
  out.report = Json{{"slo_configurations", slos}, {"phase_ms", c.phaseMs}, {"memory_budget_bytes", c.budgetBytes},
                    {"residency", c.residentByLoadCost ? "by load cost per byte (the plan's device budget)"
                                                       : "the plan's preload set"}};
  if (!c.chains.empty()) {
    Json frames = Json::array();
    for (const auto& chain : c.chains) {
      Json dnns = Json::array();
      for (size_t t : chain.tasks) dnns.push_back(st.tasks[t].name);
      frames.push_back(Json{{"chain", chain.name}, {"period_ms", chain.periodMs}, {"latency_ms", chain.latencyMs},
                            {"dnns", dnns}});
    }
    out.report["frames"] = std::move(frames);
  }
  if (!params.taskRateQps.empty())
    out.report["arrivals"] = Json{{"process", params.process}, {"rate_qps", params.taskRateQps}, {"seed", params.seed}};
  return out;
}

}  // namespace zp::drivers
