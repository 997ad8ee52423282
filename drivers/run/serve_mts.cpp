// An MTS plan served: every weight-shared group unit is what queries arrive for
// (one query: one sample for every member task, periodic or Poisson from a
// seed, or an arrivals CSV naming the groups). zooplan and one-processor run a
// group's stitched unit once per query; sequential runs its member units one
// after another; a query ends when its last member's outputs are ready. Before
// anything is served, each group's outputs are checked against its members' own
// on dataset samples.
#include <algorithm>

#include <fmt/format.h>

#include "drivers/run/mts_units.h"
#include "drivers/run/serve_system.h"

namespace zp::drivers {
namespace fs = std::filesystem;
using namespace runtime::serve;
using runtime::TensorMap;

namespace {

constexpr int kCheckedSamples = 8;

struct MtsServe {
  Bundle& bundle;
  const ServeBundleParams& params;
  const plan::MtsPlan& m;
  MtsBundleUnits units;
  ArrivalTrace trace;  // tasks: the groups
  Json checks = Json::array();
};

// The stitched graph's outputs against each member's own model's, on the first processor's engine.
Status checkOutputs(MtsServe& c, size_t u) {
  const auto& g = c.m.units[u];
  const auto& s = c.units.samples[u];
  const auto options = runtime::serve::sessionOptions(c.units.processors.front());
  ZP_ASSIGN_OR_RETURN(const fs::path stitchedModel, c.bundle.model(*c.units.groups[u]));
  ZP_ASSIGN_OR_RETURN(auto stitched, runtime::Session::load(stitchedModel, options));
  OutputDiff diff;
  const size_t n = std::min<size_t>(kCheckedSamples, s.stitched.size());
  for (size_t k = 0; k < g.members.size(); ++k) {
    const auto& b = g.members[k];
    ZP_ASSIGN_OR_RETURN(const fs::path ownModel, c.bundle.model(*c.units.members[u][k]));
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
  const bool match = diff.within(kStitchedTolerance);
  c.checks.push_back(Json{{"group", g.group}, {"samples", n}, {"max_abs_diff", diff.maxAbsDiff},
                          {"ref_scale", diff.refScale}, {"match", match}});
  if (!match)
    return makeError("{}: group '{}': the stitched graph's outputs differ from the members' own by {:.3g} (tolerance {} x {:.3g})",
                     stitchedModel.string(), g.group, diff.maxAbsDiff, kStitchedTolerance, std::max(1.0, diff.refScale));
  return {};
}

Status makeTrace(MtsServe& c) {
  std::vector<artifacts::KnownTask> known;
  for (size_t u = 0; u < c.m.units.size(); ++u) {
    const int read = static_cast<int>(c.units.samples[u].stitched.size());
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
  ZP_ASSIGN_OR_RETURN(ServedSlot slot, servedSlot(c.bundle, unit, p, c.units.processors[static_cast<size_t>(p)]));
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
    auto it = std::find_if(c.units.processors.begin(), c.units.processors.end(), [&](const auto& p) { return p.name == sys.placement[u]; });
    const int p = static_cast<int>(it - c.units.processors.begin());
    firstTask.push_back(static_cast<int>(r.tasks.size()));
    if (sys.stitched[u]) {
      ZP_TRY(addTask(c, r, g.group, *c.units.groups[u], p, g.stitchedMs[static_cast<size_t>(p)], g.weightBytes,
                     c.units.samples[u].stitched));
      continue;
    }
    for (size_t k = 0; k < g.members.size(); ++k) {
      ZP_ASSIGN_OR_RETURN(const fs::path own, c.bundle.model(*c.units.members[u][k]));
      ZP_TRY(addTask(c, r, g.group + "/" + g.members[k].task, *c.units.members[u][k], p,
                     g.members[k].ms[static_cast<size_t>(p)], static_cast<int64_t>(fs::file_size(own)),
                     c.units.samples[u].members[k]));
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
  MtsServe c{bundle, params, *bundle.plan().mts, {}, {}, Json::array()};
  ZP_ASSIGN_OR_RETURN(c.units, readMtsUnits(bundle, params.samples, params.samples, params.seed));
  for (size_t u = 0; u < c.m.units.size(); ++u) ZP_TRY(checkOutputs(c, u));
  ZP_TRY(makeTrace(c));
  ZP_ASSIGN_OR_RETURN(const auto systems, selectSystems(c.m.systems, std::string("zooplan"), params.compare));
  ServedPlan out;
  out.processors = c.units.processors;
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
