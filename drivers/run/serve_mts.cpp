// An MTS plan served: every weight-shared group unit is what queries arrive for
// (one query: one sample for every member task, periodic or Poisson from a
// seed, or an arrivals CSV naming the groups). zooplan and one-processor run a
// group's stitched unit once per query; sequential runs its member units one
// after another; a query ends when its last member's outputs are ready. Before
// anything is served, each group's outputs are checked against its members' own
// on dataset samples.
#include <algorithm>

#include <fmt/format.h>

#include "drivers/run/serve_system.h"

namespace zp::drivers {
namespace fs = std::filesystem;
using namespace runtime::serve;
using runtime::TensorMap;

namespace {

constexpr double kTolerance = 1e-4;  // stitched vs own outputs, relative (products regrouped and batched)
constexpr int kCheckedSamples = 8;

struct GroupSamples {
  std::vector<TensorMap> stitched;              // per sample: the stitched graph's inputs
  std::vector<std::vector<TensorMap>> members;  // per member, per sample: its own model's input
};

struct MtsServe {
  Bundle& bundle;
  const ServeBundleParams& params;
  const plan::MtsPlan& m;
  std::vector<Processor> processors;
  std::vector<const plan::Unit*> groups;                // per group of the section: its unit
  std::vector<std::vector<const plan::Unit*>> members;  // per group, per member: its unit
  std::vector<GroupSamples> samples;                    // per group
  ArrivalTrace trace;                                   // tasks: the groups
  Json checks = Json::array();
};

Status readUnits(MtsServe& c) {
  for (const auto& g : c.m.units) {
    ZP_ASSIGN_OR_RETURN(const plan::Unit* unit, c.bundle.unit(plan::UnitId::group(g.group)));
    c.groups.push_back(unit);
    std::vector<const plan::Unit*> members;
    for (const auto& b : g.members) {
      ZP_ASSIGN_OR_RETURN(const plan::Unit* mu, c.bundle.unit(plan::UnitId::model(g.group + "/" + b.task)));
      members.push_back(mu);
    }
    c.members.push_back(std::move(members));
  }
  return {};
}

// One member's samples: its dataset's first ones, else seeded random inputs.
Expected<std::vector<TensorMap>> memberSamples(MtsServe& c, const plan::MtsPlanMember& b, const plan::Unit& unit) {
  ZP_ASSIGN_OR_RETURN(const fs::path model, c.bundle.model(unit));
  runtime::SessionOptions so;
  so.checkModel = false;
  ZP_ASSIGN_OR_RETURN(auto session, runtime::Session::load(model, so));
  const auto& ins = session->inputs();
  auto io = std::find_if(ins.begin(), ins.end(), [&](const runtime::IoInfo& i) { return i.name == b.input; });
  if (io == ins.end()) return makeError("{}: has no input '{}' (task '{}')", model.string(), b.input, b.task);
  ZP_ASSIGN_OR_RETURN(Dataset d, c.bundle.samples(b.task, *io, c.params.samples, c.params.samples, c.params.seed));
  std::vector<TensorMap> out;
  for (auto& x : d.samples) out.push_back(TensorMap{{b.input, std::move(x)}});
  return out;
}

// Every member's samples, cut to the shortest, and the stitched inputs made of them
// (members that share the stitched input read the first one's sample).
Status readSamples(MtsServe& c) {
  for (size_t u = 0; u < c.m.units.size(); ++u) {
    const auto& g = c.m.units[u];
    GroupSamples s;
    size_t n = SIZE_MAX;
    for (size_t k = 0; k < g.members.size(); ++k) {
      ZP_ASSIGN_OR_RETURN(auto ms, memberSamples(c, g.members[k], *c.members[u][k]));
      n = std::min(n, ms.size());
      s.members.push_back(std::move(ms));
    }
    for (auto& ms : s.members) ms.resize(n);
    for (size_t i = 0; i < n; ++i) {
      TensorMap in;
      for (size_t k = 0; k < g.members.size(); ++k)
        in.emplace(g.members[k].stitchedInput, s.members[k][i].at(g.members[k].input));
      s.stitched.push_back(std::move(in));
    }
    c.samples.push_back(std::move(s));
  }
  return {};
}

// The stitched graph's outputs against each member's own model's, on the first processor's engine.
Status checkOutputs(MtsServe& c, size_t u) {
  const auto& g = c.m.units[u];
  const auto& s = c.samples[u];
  const auto options = runtime::serve::sessionOptions(c.processors.front());
  ZP_ASSIGN_OR_RETURN(const fs::path stitchedModel, c.bundle.model(*c.groups[u]));
  ZP_ASSIGN_OR_RETURN(auto stitched, runtime::Session::load(stitchedModel, options));
  OutputDiff diff;
  const size_t n = std::min<size_t>(kCheckedSamples, s.stitched.size());
  for (size_t k = 0; k < g.members.size(); ++k) {
    const auto& b = g.members[k];
    ZP_ASSIGN_OR_RETURN(const fs::path ownModel, c.bundle.model(*c.members[u][k]));
    ZP_ASSIGN_OR_RETURN(auto own, runtime::Session::load(ownModel, options));
    for (size_t i = 0; i < n; ++i) {
      ZP_ASSIGN_OR_RETURN(TensorMap all, stitched->run(s.stitched[i]));
      ZP_ASSIGN_OR_RETURN(TensorMap want, own->run(s.members[k][i]));
      TensorMap got;
      for (size_t j = 0; j < b.outputs.size() && all.count(b.stitchedOutputs[j]); ++j)
        got.emplace(b.outputs[j], all.at(b.stitchedOutputs[j]));
      diff.add(got, want);
    }
  }
  const bool match = diff.within(kTolerance);
  c.checks.push_back(Json{{"group", g.group}, {"samples", n}, {"max_abs_diff", diff.maxAbsDiff},
                          {"ref_scale", diff.refScale}, {"match", match}});
  if (!match)
    return makeError("{}: group '{}': the stitched graph's outputs differ from the members' own by {:.3g} (tolerance {} x {:.3g})",
                     stitchedModel.string(), g.group, diff.maxAbsDiff, kTolerance, std::max(1.0, diff.refScale));
  return {};
}

Status makeTrace(MtsServe& c) {
  std::vector<artifacts::KnownTask> known;
  for (size_t u = 0; u < c.m.units.size(); ++u) {
    const int read = static_cast<int>(c.samples[u].stitched.size());
    known.push_back({c.m.units[u].group, read,
                     read == c.params.samples ? fmt::format("serving reads the first {} samples: raise --samples", read)
                                              : ""});
  }
  ZP_ASSIGN_OR_RETURN(c.trace, userArrivals(c.params, known));
  return runtime::serve::checkTraceSize(c.trace);
}

// A task of one unit on processor p: its slot is resident (the plan keeps every unit's models in memory).
Status addTask(MtsServe& c, SystemSetup& r, const std::string& name, const plan::Unit& unit, int p, double ms,
               int64_t bytes, const std::vector<TensorMap>& samples) {
  ZP_ASSIGN_OR_RETURN(ServedSlot slot, servedSlot(c.bundle, unit, p, c.processors[static_cast<size_t>(p)]));
  slot.bytes = bytes;
  slot.plannedMs = ms;
  slot.preload = true;
  const int index = static_cast<int>(r.slots.size());
  r.slots.push_back(std::move(slot));
  r.tasks.push_back(ServeTask{name, {index}, kNoLatencySloMs, true, samples, {}});
  r.trace.tasks.push_back(name);
  return {};
}

Expected<SystemSetup> systemSetup(MtsServe& c, const plan::MtsSystem& sys) {
  SystemSetup r;
  r.name = sys.name;
  r.description = sys.description;
  r.plan = Json{{"stitched", Json(sys.stitched)}, {"placement", sys.placement}, {"planned_makespan_ms", sys.makespanMs}};
  std::vector<int> firstTask;
  for (size_t u = 0; u < c.m.units.size(); ++u) {
    const auto& g = c.m.units[u];
    auto it = std::find_if(c.processors.begin(), c.processors.end(), [&](const auto& p) { return p.name == sys.placement[u]; });
    const int p = static_cast<int>(it - c.processors.begin());
    firstTask.push_back(static_cast<int>(r.tasks.size()));
    if (sys.stitched[u]) {
      ZP_TRY(addTask(c, r, g.group, *c.groups[u], p, g.stitchedMs[static_cast<size_t>(p)], g.weightBytes,
                     c.samples[u].stitched));
      continue;
    }
    for (size_t k = 0; k < g.members.size(); ++k) {
      ZP_ASSIGN_OR_RETURN(const fs::path own, c.bundle.model(*c.members[u][k]));
      ZP_TRY(addTask(c, r, g.group + "/" + g.members[k].task, *c.members[u][k], p,
                     g.members[k].ms[static_cast<size_t>(p)], static_cast<int64_t>(fs::file_size(own)),
                     c.samples[u].members[k]));
    }
  }
  for (size_t q = 0; q < c.trace.arrivals.size(); ++q) {
    const auto& a = c.trace.arrivals[q];
    const auto u = static_cast<size_t>(a.task);
    const int tasks = sys.stitched[u] ? 1 : static_cast<int>(c.m.units[u].members.size());
    for (int k = 0; k < tasks; ++k) {
      r.trace.arrivals.push_back({a.timeMs, firstTask[u] + k, a.sample});
      r.queryOf.push_back(static_cast<int>(q));
    }
    r.queryArrivalMs.push_back(a.timeMs);
  }
  return r;
}

Json groupsJson(const plan::MtsPlan& m) {
  Json units = Json::array();
  for (const auto& u : m.units) {
    Json members = Json::array();
    for (const auto& b : u.members) members.push_back(b.task);
    units.push_back(Json{{"group", u.group}, {"members", members}, {"weight_bytes", u.weightBytes},
                         {"member_bytes", u.memberBytes}});
  }
  return units;
}

}  // namespace

Expected<ServedPlan> mtsServedPlan(Bundle& bundle, const ServeBundleParams& params) {
  if (!params.budget.empty() || !params.slos.empty())
    return makeError("{}: an MTS plan has no preload budgets or SLO configurations (--budget, --slo apply to a "
                     "stitch plan)", bundle.planFile());
  MtsServe c{bundle, params, *bundle.plan().mts, {}, {}, {}, {}, {}, Json::array()};
  ZP_ASSIGN_OR_RETURN(c.processors, bundle.processors(c.m.processors));
  ZP_TRY(readUnits(c));
  ZP_TRY(readSamples(c));
  for (size_t u = 0; u < c.m.units.size(); ++u) ZP_TRY(checkOutputs(c, u));
  ZP_TRY(makeTrace(c));
  ZP_ASSIGN_OR_RETURN(const auto systems, selectSystems(c.m.systems, std::string("zooplan"), params.compare));
  ServedPlan out;
  out.processors = c.processors;
  out.queries = c.trace.arrivals.size();
  out.latencySlos = false;
  for (const auto* s : systems) {
    ZP_ASSIGN_OR_RETURN(auto setup, systemSetup(c, *s));
    out.systems.push_back(std::move(setup));
  }
  out.report = Json{{"units", groupsJson(c.m)}, {"output_checks", c.checks}};
  out.queryLegend = "a query: one sample for every member of a group, done when the last member's outputs are";
  return out;
}

}  // namespace zp::drivers
