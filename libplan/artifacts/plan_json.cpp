#include "libplan/artifacts/plan_json.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "libplan/util/file.h"
#include "libplan/util/hash.h"
#include "libplan/util/validate.h"
#include "libplan/util/json_reader.h"

namespace zp::artifacts {
using namespace plan;

namespace {

// Small typed accessors that report "<label>: <json path>: problem".
struct Reader {
  const std::string& label;

  Expected<const Json*> field(const Json& obj, const std::string& path, const char* key) const {
    if (!obj.is_object()) return makeError("{}: {}: expected an object", label, path);
    auto it = obj.find(key);
    if (it == obj.end()) return makeError("{}: {}: missing field '{}'", label, path, key);
    return &*it;
  }
  Expected<std::string> str(const Json& obj, const std::string& path, const char* key) const {
    ZP_ASSIGN_OR_RETURN(const Json* v, field(obj, path, key));
    if (!v->is_string()) return makeError("{}: {}.{}: expected a string", label, path, key);
    return v->get<std::string>();
  }
  Expected<double> num(const Json& obj, const std::string& path, const char* key) const {
    ZP_ASSIGN_OR_RETURN(const Json* v, field(obj, path, key));
    if (!v->is_number()) return makeError("{}: {}.{}: expected a number", label, path, key);
    // JSON text cannot hold NaN or an infinity, but a plan.pb checked through
    // this reader (plan_pb.cpp) can.
    if (!std::isfinite(v->get<double>())) return makeError("{}: {}.{}: not a finite number", label, path, key);
    return v->get<double>();
  }
  Expected<int64_t> integer(const Json& obj, const std::string& path, const char* key, int64_t lo = 0,
                            int64_t hi = std::numeric_limits<int>::max()) const {
    ZP_ASSIGN_OR_RETURN(const Json* v, field(obj, path, key));
    if (!v->is_number_integer()) return makeError("{}: {}.{}: expected an integer", label, path, key);
    if (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(hi))
      return makeError("{}: {}.{}: {} is above {}", label, path, key, v->get<uint64_t>(), hi);
    const int64_t n = v->get<int64_t>();
    if (auto p = integerProblem(n, lo, hi)) return makeError("{}: {}.{}: {}", label, path, key, *p);
    return n;
  }
  Expected<const Json*> arr(const Json& obj, const std::string& path, const char* key) const {
    ZP_ASSIGN_OR_RETURN(const Json* v, field(obj, path, key));
    if (!v->is_array()) return makeError("{}: {}.{}: expected an array", label, path, key);
    return v;
  }
  bool has(const Json& obj, const char* key) const { return obj.is_object() && obj.contains(key); }
  Expected<std::vector<std::string>> strs(const Json& obj, const std::string& path, const char* key) const {
    ZP_ASSIGN_OR_RETURN(const Json* a, arr(obj, path, key));
    std::vector<std::string> out;
    for (size_t i = 0; i < a->size(); ++i) {
      if (!(*a)[i].is_string()) return makeError("{}: {}.{}[{}]: expected a string", label, path, key, i);
      out.push_back((*a)[i].get<std::string>());
    }
    return out;
  }
};

Json dnnJson(const ConcurrentDnn& d) {
  Json groups = Json::array();
  for (const auto& g : d.groups) {
    Json gj{{"name", g.name}, {"accelerator", g.accelerator}, {"startMs", g.startMs}, {"endMs", g.endMs},
            {"standaloneMs", g.standaloneMs}};
    if (!g.nodes.empty()) gj["nodes"] = g.nodes;
    groups.push_back(std::move(gj));
  }
  Json trs = Json::array();
  for (const auto& t : d.transitions)
    trs.push_back({{"afterGroup", t.afterGroup}, {"from", t.from}, {"to", t.to}, {"startMs", t.startMs},
                   {"endMs", t.endMs}});
  Json dj{{"name", d.name}, {"releaseMs", d.releaseMs}, {"endMs", d.endMs}, {"groups", groups}, {"transitions", trs}};
  if (d.unit) dj["unit"] = d.unit->str();
  if (!d.dependsOn.empty()) dj["dependsOn"] = d.dependsOn;
  return dj;
}

Expected<ConcurrentGroup> groupFromJson(const Reader& rd, const Json& j, const std::string& gp,
                                        const std::vector<std::string>& accelerators) {
  ConcurrentGroup g;
  ZP_ASSIGN_OR_RETURN(g.name, rd.str(j, gp, "name"));
  ZP_ASSIGN_OR_RETURN(g.accelerator, rd.str(j, gp, "accelerator"));
  ZP_ASSIGN_OR_RETURN(g.startMs, rd.num(j, gp, "startMs"));
  ZP_ASSIGN_OR_RETURN(g.endMs, rd.num(j, gp, "endMs"));
  ZP_ASSIGN_OR_RETURN(g.standaloneMs, rd.num(j, gp, "standaloneMs"));
  if (rd.has(j, "nodes")) {
    ZP_ASSIGN_OR_RETURN(g.nodes, rd.strs(j, gp, "nodes"));
  }
  if (std::find(accelerators.begin(), accelerators.end(), g.accelerator) == accelerators.end())
    return makeError("{}: {}.accelerator: unknown accelerator '{}'", rd.label, gp, g.accelerator);
  return g;
}

Expected<ConcurrentDnn> dnnFromJson(const Reader& rd, const Json& dj, const std::string& dp,
                                    const std::vector<std::string>& accelerators) {
  ConcurrentDnn d;
  ZP_ASSIGN_OR_RETURN(d.name, rd.str(dj, dp, "name"));
  if (rd.has(dj, "unit")) {
    ZP_ASSIGN_OR_RETURN(std::string unit, rd.str(dj, dp, "unit"));
    auto id = parseUnitId(unit);
    if (!id.ok()) return makeError("{}: {}.unit: {}", rd.label, dp, id.error().message);
    d.unit = *id;
  }
  if (rd.has(dj, "dependsOn")) {
    ZP_ASSIGN_OR_RETURN(d.dependsOn, rd.strs(dj, dp, "dependsOn"));
  }
  ZP_ASSIGN_OR_RETURN(d.releaseMs, rd.num(dj, dp, "releaseMs"));
  ZP_ASSIGN_OR_RETURN(d.endMs, rd.num(dj, dp, "endMs"));
  ZP_ASSIGN_OR_RETURN(const Json* gs, rd.arr(dj, dp, "groups"));
  for (size_t i = 0; i < gs->size(); ++i) {
    ZP_ASSIGN_OR_RETURN(auto g, groupFromJson(rd, (*gs)[i], fmt::format("{}.groups[{}]", dp, i), accelerators));
    d.groups.push_back(std::move(g));
  }
  ZP_ASSIGN_OR_RETURN(const Json* ts, rd.arr(dj, dp, "transitions"));
  for (size_t i = 0; i < ts->size(); ++i) {
    std::string tp = fmt::format("{}.transitions[{}]", dp, i);
    ConcurrentTransition t;
    ZP_ASSIGN_OR_RETURN(int64_t after, rd.integer((*ts)[i], tp, "afterGroup", -1));
    t.afterGroup = static_cast<int>(after);
    ZP_ASSIGN_OR_RETURN(t.from, rd.str((*ts)[i], tp, "from"));
    ZP_ASSIGN_OR_RETURN(t.to, rd.str((*ts)[i], tp, "to"));
    ZP_ASSIGN_OR_RETURN(t.startMs, rd.num((*ts)[i], tp, "startMs"));
    ZP_ASSIGN_OR_RETURN(t.endMs, rd.num((*ts)[i], tp, "endMs"));
    d.transitions.push_back(std::move(t));
  }
  return d;
}

Json resultJson(const ScheduleResult& r) {
  Json j{{"name", r.name}, {"latencyMs", r.latencyMs}, {"throughput", r.throughput}, {"transitions", r.transitions}};
  if (!r.dnns.empty()) {
    j["dnns"] = Json::array();
    for (const auto& d : r.dnns) j["dnns"].push_back(dnnJson(d));
  }
  return j;
}

// `accelerators`: the concurrent section's, which a baseline's schedule names (empty: it may have none).
Expected<ScheduleResult> resultFromJson(const Reader& rd, const Json& j, const std::string& p,
                                        const std::vector<std::string>& accelerators = {}) {
  ScheduleResult r;
  ZP_ASSIGN_OR_RETURN(r.name, rd.str(j, p, "name"));
  ZP_ASSIGN_OR_RETURN(r.latencyMs, rd.num(j, p, "latencyMs"));
  ZP_ASSIGN_OR_RETURN(r.throughput, rd.num(j, p, "throughput"));
  ZP_ASSIGN_OR_RETURN(int64_t t, rd.integer(j, p, "transitions"));
  r.transitions = static_cast<int>(t);
  if (rd.has(j, "dnns")) {
    if (accelerators.empty()) return makeError("{}: {}.dnns: only a concurrent baseline has a schedule", rd.label, p);
    ZP_ASSIGN_OR_RETURN(const Json* ds, rd.arr(j, p, "dnns"));
    for (size_t n = 0; n < ds->size(); ++n) {
      ZP_ASSIGN_OR_RETURN(auto d, dnnFromJson(rd, (*ds)[n], fmt::format("{}.dnns[{}]", p, n), accelerators));
      r.dnns.push_back(std::move(d));
    }
  }
  return r;
}

Json solverJson(const SolverReport& s) {
  return Json{{"solver", s.solver},       {"status", s.status},
              {"searchSpace", s.searchSpace}, {"maxTransitionsPerDnn", s.maxTransitionsPerDnn},
              {"objective", s.objective}, {"bound", s.bound},
              {"gap", s.gap},             {"timeLimitS", s.timeLimitS},
              {"seed", s.seed},           {"nodes", s.nodes},
              {"simulations", s.simulations}, {"crossCheck", s.crossCheck}};
}

// The "solver" field of the object `j` at `path`.
Expected<SolverReport> solverFromJson(const Reader& rd, const Json& j, const std::string& path) {
  ZP_ASSIGN_OR_RETURN(const Json* sj, rd.field(j, path, "solver"));
  std::string sp = path + ".solver";
  SolverReport s;
  ZP_ASSIGN_OR_RETURN(s.solver, rd.str(*sj, sp, "solver"));
  ZP_ASSIGN_OR_RETURN(s.status, rd.str(*sj, sp, "status"));
  ZP_ASSIGN_OR_RETURN(s.searchSpace, rd.str(*sj, sp, "searchSpace"));
  ZP_ASSIGN_OR_RETURN(int64_t k, rd.integer(*sj, sp, "maxTransitionsPerDnn", -1));
  s.maxTransitionsPerDnn = static_cast<int>(k);
  ZP_ASSIGN_OR_RETURN(s.objective, rd.num(*sj, sp, "objective"));
  ZP_ASSIGN_OR_RETURN(s.bound, rd.num(*sj, sp, "bound"));
  ZP_ASSIGN_OR_RETURN(s.gap, rd.num(*sj, sp, "gap"));
  ZP_ASSIGN_OR_RETURN(s.timeLimitS, rd.num(*sj, sp, "timeLimitS"));
  ZP_ASSIGN_OR_RETURN(s.seed, rd.integer(*sj, sp, "seed", std::numeric_limits<int64_t>::min(),
                                          std::numeric_limits<int64_t>::max()));
  ZP_ASSIGN_OR_RETURN(int64_t nodes, rd.integer(*sj, sp, "nodes", 0, std::numeric_limits<int64_t>::max()));
  ZP_ASSIGN_OR_RETURN(int64_t sims, rd.integer(*sj, sp, "simulations", 0, std::numeric_limits<int64_t>::max()));
  s.nodes = static_cast<uint64_t>(nodes);
  s.simulations = static_cast<uint64_t>(sims);
  ZP_ASSIGN_OR_RETURN(s.crossCheck, rd.str(*sj, sp, "crossCheck"));
  return s;
}

}  // namespace

Expected<std::vector<std::string>> processorNamesFromJson(const JsonAt& section) {
  ZP_ASSIGN_OR_RETURN(auto names, section.strings("processors"));
  if (names.empty()) return section.error("processors: empty");
  for (auto it = names.begin(); it != names.end(); ++it)
    if (std::find(names.begin(), it, *it) != it) return section.error(fmt::format("processors: '{}' is listed twice", *it));
  return names;
}

Json toJson(const OpPlacement& o) {
  Json nodes = Json::array();
  for (const auto& n : o.nodes)
    nodes.push_back({{"node", n.node}, {"processor", n.processor}, {"startMs", n.startMs}, {"endMs", n.endMs}});
  Json baselines = Json::array();
  for (const auto& b : o.baselines) baselines.push_back(resultJson(b));
  Json j{{"unit", o.unit.str()},       {"costSource", o.costSource}, {"processors", o.processors},
          {"latencyMs", o.latencyMs},   {"solver", solverJson(o.solver)}, {"minMixGain", o.minMixGain},
          {"mixedLatencyMs", o.mixedLatencyMs}, {"nodes", nodes}, {"baselines", baselines}};
  if (o.minMixGainMs > 0) j["minMixGainMs"] = o.minMixGainMs;
  if (o.memoryBytes > 0) j["memoryBytes"] = o.memoryBytes;
  return j;
}

Expected<OpPlacement> opPlacementFromJson(const Json& j, const std::string& label, const std::string& path) {
  Reader rd{label};
  OpPlacement o;
  ZP_ASSIGN_OR_RETURN(std::string unit, rd.str(j, path, "unit"));
  auto id = parseUnitId(unit);
  if (!id.ok()) return makeError("{}: {}.unit: {}", label, path, id.error().message);
  o.unit = *id;
  ZP_ASSIGN_OR_RETURN(o.costSource, rd.str(j, path, "costSource"));
  if (o.costSource != "predicted" && o.costSource != "measured")
    return makeError("{}: {}.costSource: must be 'predicted' or 'measured'", label, path);
  ZP_ASSIGN_OR_RETURN(o.processors, processorNamesFromJson(JsonAt(j, label, path)));
  ZP_ASSIGN_OR_RETURN(o.latencyMs, rd.num(j, path, "latencyMs"));
  ZP_ASSIGN_OR_RETURN(o.solver, solverFromJson(rd, j, path));
  // Absent in plans written before a mix had to earn its place: 0, every mix kept.
  if (j.contains("minMixGain")) {
    ZP_ASSIGN_OR_RETURN(o.minMixGain, rd.num(j, path, "minMixGain"));
    if (!(o.minMixGain >= 0 && o.minMixGain < 1)) return makeError("{}: {}.minMixGain: must be in [0, 1)", label, path);
  }
  if (j.contains("minMixGainMs")) {
    ZP_ASSIGN_OR_RETURN(o.minMixGainMs, rd.num(j, path, "minMixGainMs"));
    if (!(o.minMixGainMs >= 0 && o.minMixGainMs <= 1e6))
      return makeError("{}: {}.minMixGainMs: must be in [0, 1e6] ms", label, path);
  }
  if (j.contains("mixedLatencyMs")) {
    ZP_ASSIGN_OR_RETURN(o.mixedLatencyMs, rd.num(j, path, "mixedLatencyMs"));
    if (!(o.mixedLatencyMs >= 0)) return makeError("{}: {}.mixedLatencyMs: must be >= 0", label, path);
  }
  if (j.contains("memoryBytes")) {
    ZP_ASSIGN_OR_RETURN(double bytes, rd.num(j, path, "memoryBytes"));
    if (!(bytes >= 1 && bytes <= 9e15 && bytes == std::floor(bytes)))
      return makeError("{}: {}.memoryBytes: must be a whole number of bytes >= 1", label, path);
    o.memoryBytes = static_cast<int64_t>(bytes);
  }
  ZP_ASSIGN_OR_RETURN(const Json* ns, rd.arr(j, path, "nodes"));
  for (size_t i = 0; i < ns->size(); ++i) {
    std::string np = fmt::format("{}.nodes[{}]", path, i);
    OpPlacementNode n;
    ZP_ASSIGN_OR_RETURN(n.node, rd.str((*ns)[i], np, "node"));
    ZP_ASSIGN_OR_RETURN(n.processor, rd.str((*ns)[i], np, "processor"));
    ZP_ASSIGN_OR_RETURN(n.startMs, rd.num((*ns)[i], np, "startMs"));
    ZP_ASSIGN_OR_RETURN(n.endMs, rd.num((*ns)[i], np, "endMs"));
    if (std::find(o.processors.begin(), o.processors.end(), n.processor) == o.processors.end())
      return makeError("{}: {}.processor: unknown processor '{}'", label, np, n.processor);
    if (n.endMs < n.startMs) return makeError("{}: {}: ends before it starts", label, np);
    o.nodes.push_back(std::move(n));
  }
  ZP_ASSIGN_OR_RETURN(const Json* bs, rd.arr(j, path, "baselines"));
  for (size_t i = 0; i < bs->size(); ++i) {
    ZP_ASSIGN_OR_RETURN(auto r, resultFromJson(rd, (*bs)[i], fmt::format("{}.baselines[{}]", path, i)));
    o.baselines.push_back(std::move(r));
  }
  return o;
}

Json toJson(const ConcurrentSchedule& c) {
  Json dnns = Json::array();
  for (const auto& d : c.dnns) dnns.push_back(dnnJson(d));
  Json baselines = Json::array();
  for (const auto& b : c.baselines) baselines.push_back(resultJson(b));
  Json solver = solverJson(c.solver);
  Json j{{"workload", c.workload},         {"objective", c.objective},
         {"accelerators", c.accelerators}, {"source", c.source},
         {"objectiveValue", c.objectiveValue}, {"latencyMs", c.latencyMs},
         {"throughput", c.throughput},     {"solver", solver},
         {"dnns", dnns},                   {"baselines", baselines}};
  return j;
}

Expected<ConcurrentSchedule> concurrentFromJson(const Json& j, const std::string& label,
                                                const std::string& path) {
  Reader rd{label};
  ConcurrentSchedule c;
  ZP_ASSIGN_OR_RETURN(c.workload, rd.str(j, path, "workload"));
  ZP_ASSIGN_OR_RETURN(c.objective, rd.str(j, path, "objective"));
  if (c.objective != "latency" && c.objective != "throughput")
    return makeError("{}: {}.objective: must be 'latency' or 'throughput'", label, path);
  ZP_ASSIGN_OR_RETURN(c.accelerators, rd.strs(j, path, "accelerators"));
  ZP_ASSIGN_OR_RETURN(c.source, rd.str(j, path, "source"));
  ZP_ASSIGN_OR_RETURN(c.objectiveValue, rd.num(j, path, "objectiveValue"));
  ZP_ASSIGN_OR_RETURN(c.latencyMs, rd.num(j, path, "latencyMs"));
  ZP_ASSIGN_OR_RETURN(c.throughput, rd.num(j, path, "throughput"));
  ZP_ASSIGN_OR_RETURN(c.solver, solverFromJson(rd, j, path));
  ZP_ASSIGN_OR_RETURN(const Json* dnns, rd.arr(j, path, "dnns"));
  for (size_t n = 0; n < dnns->size(); ++n) {
    ZP_ASSIGN_OR_RETURN(auto d, dnnFromJson(rd, (*dnns)[n], fmt::format("{}.dnns[{}]", path, n), c.accelerators));
    for (const auto& e : d.dependsOn)
      if (std::none_of(c.dnns.begin(), c.dnns.end(), [&](const ConcurrentDnn& o) { return o.name == e; }))
        return makeError("{}: {}.dnns[{}].dependsOn: '{}' is not a DNN listed before it", label, path, n, e);
    c.dnns.push_back(std::move(d));
  }
  if (rd.has(j, "processors"))
    return makeError("{}: {}.processors: a schedule's processors are the plan's now ($.processors); written by an older "
                     "plan-solve: re-run plan-solve", label, path);
  ZP_ASSIGN_OR_RETURN(const Json* bs, rd.arr(j, path, "baselines"));
  for (size_t i = 0; i < bs->size(); ++i) {
    ZP_ASSIGN_OR_RETURN(auto r, resultFromJson(rd, (*bs)[i], fmt::format("{}.baselines[{}]", path, i), c.accelerators));
    if (!r.dnns.empty() && r.dnns.size() != c.dnns.size())
      return makeError("{}: {}.baselines[{}].dnns: {} DNNs, the plan has {}", label, path, i, r.dnns.size(), c.dnns.size());
    c.baselines.push_back(std::move(r));
  }
  return c;
}

Json toJson(const Unit& u) {
  Json j{{"id", u.id.str()}, {"file", u.file}, {"sha256", u.sha256}, {"residency", u.residency}};
  if (!u.processor.empty()) j["processor"] = u.processor;
  if (u.operatorPlaced) j["operator_placed"] = true;
  if (u.group) j["group"] = u.group->str();
  return j;
}

Expected<Unit> unitFromJson(const JsonAt& j) {
  Unit u;
  ZP_ASSIGN_OR_RETURN(JsonAt id, j.at("id"));
  ZP_ASSIGN_OR_RETURN(std::string idText, id.string());
  auto parsed = parseUnitId(idText);
  if (!parsed.ok()) return id.error(parsed.error().message);
  u.id = *parsed;
  ZP_ASSIGN_OR_RETURN(u.file, j.string("file"));
  if (u.file.empty()) return j.error("file: empty");
  ZP_ASSIGN_OR_RETURN(u.sha256, j.string("sha256"));
  if (!isSha256Hex(u.sha256)) return j.error("sha256: expected 64 lowercase hex digits");
  ZP_ASSIGN_OR_RETURN(JsonAt residency, j.at("residency"));
  ZP_ASSIGN_OR_RETURN(u.residency, residency.string());
  if (u.residency != kResidentUnit && u.residency != kPreloadSetUnit && u.residency != kColdUnit)
    return residency.error("expected \"resident\", \"preload-set\" or \"cold\"");
  if (j.has("processor")) { ZP_ASSIGN_OR_RETURN(u.processor, j.string("processor")); }
  if (j.has("operator_placed")) { ZP_ASSIGN_OR_RETURN(u.operatorPlaced, j.boolean("operator_placed")); }
  if (j.has("group")) {
    ZP_ASSIGN_OR_RETURN(JsonAt g, j.at("group"));
    ZP_ASSIGN_OR_RETURN(std::string text, g.string());
    auto group = parseUnitId(text);
    if (!group.ok() || group->kind != UnitKind::Group) return g.error("expected group:NAME");
    u.group = *group;
  }
  return u;
}

// Unit ids are unique, and a member's group is a unit of the plan.
Status checkUnits(const std::vector<Unit>& units, const std::string& label) {
  std::set<UnitId> ids;
  for (size_t i = 0; i < units.size(); ++i)
    if (!ids.insert(units[i].id).second)
      return makeError("{}: $.units[{}].id: '{}' is listed twice", label, i, units[i].id.str());
  for (size_t i = 0; i < units.size(); ++i)
    if (units[i].group && !ids.count(*units[i].group))
      return makeError("{}: $.units[{}].group: '{}' is not a unit of the plan", label, i, units[i].group->str());
  return {};
}

// Every unit a section names is a unit of the plan.
Status checkUnitReferences(const Plan& p, const std::string& label) {
  auto known = [&](const UnitId& id) { return findUnit(p.units, id) != nullptr; };
  if (p.stitch) {
    for (size_t t = 0; t < p.stitch->tasks.size(); ++t) {
      const auto& task = p.stitch->tasks[t];
      for (size_t g = 0; g < task.subgraphs.size(); ++g) {
        const auto id = UnitId::subgraph(task.name, task.subgraphs[g].position, task.subgraphs[g].variant);
        if (!known(id))
          return makeError("{}: $.stitch.tasks[{}].subgraphs[{}]: '{}' is not a unit of the plan", label, t, g, id.str());
      }
    }
    for (size_t g = 0; g < p.stitch->groups.size(); ++g)
      if (!known(UnitId::group(p.stitch->groups[g].name)))
        return makeError("{}: $.stitch.groups[{}]: 'group:{}' is not a unit of the plan", label, g, p.stitch->groups[g].name);
    for (size_t s = 0; s < p.stitch->systems.size(); ++s)
      for (const auto& sel : p.stitch->systems[s].selections)
        for (const auto& c : sel.tasks)
          if (answeredByGroup(c)) {
            auto id = parseUnitId(c.combination);
            if (!id.ok() || !known(*id))
              return makeError("{}: $.stitch.systems[{}]: task '{}' under {} runs '{}', which is not a unit of the plan",
                               label, s, c.task, sel.slo, c.combination);
          } else if (answeredByPlacedModel(c)) {
            auto id = parseUnitId(c.combination);
            const OpPlacement* o = id.ok() ? placementOf(p, *id) : nullptr;
            if (!o || !known(*id))
              return makeError("{}: $.stitch.systems[{}]: task '{}' under {} runs '{}', which the plan does not place "
                               "(no unit with a placement in $.opplace)",
                               label, s, c.task, sel.slo, c.combination);
            if (c.placement != o->processors)
              return makeError("{}: $.stitch.systems[{}]: task '{}' under {} runs '{}' on {}, not on its placement's "
                               "processors {}",
                               label, s, c.task, sel.slo, c.combination, fmt::join(c.placement, ","),
                               fmt::join(o->processors, ","));
          }
    for (size_t b = 0; b < p.stitch->preload.size(); ++b)
      for (const auto* set : {&p.stitch->preload[b].greedy, &p.stitch->preload[b].exact})
        for (const auto& text : *set) {
          auto id = parseUnitId(text);
          if (!id.ok() || !known(*id))
            return makeError("{}: $.stitch.preload[{}]: '{}' is not a unit of the plan", label, b, text);
        }
  }
  if (p.concurrent)
    for (size_t d = 0; d < p.concurrent->dnns.size(); ++d)
      if (const auto& unit = p.concurrent->dnns[d].unit; unit && !known(*unit))
        return makeError("{}: $.concurrent.dnns[{}].unit: '{}' is not a unit of the plan", label, d, unit->str());
  for (size_t i = 0; i < p.opplace.size(); ++i) {
    const UnitId& unit = p.opplace[i].unit;
    if (!known(unit)) return makeError("{}: $.opplace[{}].unit: '{}' is not a unit of the plan", label, i, unit.str());
    for (size_t k = 0; k < i; ++k)
      if (p.opplace[k].unit == unit)
        return makeError("{}: $.opplace[{}].unit: '{}' is placed twice", label, i, unit.str());
  }
  if (p.mts)
    for (size_t g = 0; g < p.mts->units.size(); ++g) {
      const auto& group = p.mts->units[g];
      const UnitId id = UnitId::group(group.group);
      if (!known(id)) return makeError("{}: $.mts.units[{}]: '{}' is not a unit of the plan", label, g, id.str());
      for (size_t m = 0; m < group.members.size(); ++m) {
        const Unit* member = findUnit(p.units, UnitId::model(group.group + "/" + group.members[m].task));
        if (!member || member->group != id)
          return makeError("{}: $.mts.units[{}].members[{}]: 'model:{}/{}' is not a unit of the plan in group '{}'",
                           label, g, m, group.group, group.members[m].task, group.group);
      }
    }
  for (size_t c = 0; c < p.cold.size(); ++c)
    if (!known(p.cold[c].unit))
      return makeError("{}: $.cold[{}].unit: '{}' is not a unit of the plan", label, c, p.cold[c].unit.str());
  return {};
}

// Every processor a unit or section names is one of the plan's; a concurrent
// schedule's accelerators are all defined (plan-run executes it) or none are
// (simulated only).
Status checkProcessorReferences(const Plan& p, const std::string& label) {
  auto check = [&](const std::string& name, const std::string& where) -> Status {
    if (findProcessor(p, name)) return {};
    return makeError("{}: {}: '{}' is not one of the plan's processors ($.processors)", label, where, name);
  };
  for (size_t u = 0; u < p.units.size(); ++u)
    if (!p.units[u].processor.empty()) ZP_TRY(check(p.units[u].processor, fmt::format("$.units[{}].processor", u)));
  if (p.stitch) {
    for (size_t i = 0; i < p.stitch->processors.size(); ++i)
      ZP_TRY(check(p.stitch->processors[i], fmt::format("$.stitch.processors[{}]", i)));
    for (size_t i = 0; i < p.stitch->placementOrder.size(); ++i)
      ZP_TRY(check(p.stitch->placementOrder[i], fmt::format("$.stitch.placement_order[{}]", i)));
  }
  for (size_t k = 0; k < p.opplace.size(); ++k)
    for (size_t i = 0; i < p.opplace[k].processors.size(); ++i)
      ZP_TRY(check(p.opplace[k].processors[i], fmt::format("$.opplace[{}].processors[{}]", k, i)));
  if (p.mts)
    for (size_t i = 0; i < p.mts->processors.size(); ++i)
      ZP_TRY(check(p.mts->processors[i], fmt::format("$.mts.processors[{}]", i)));
  if (p.concurrent) {
    const auto& acc = p.concurrent->accelerators;
    const auto defined = std::count_if(acc.begin(), acc.end(), [&](const std::string& a) { return findProcessor(p, a); });
    if (defined != 0 && defined != static_cast<std::ptrdiff_t>(acc.size()))
      for (size_t i = 0; i < acc.size(); ++i) ZP_TRY(check(acc[i], fmt::format("$.concurrent.accelerators[{}]", i)));
  }
  return {};
}

Json toJson(const Plan& p) {
  Json j = {{"header", {{"tool", p.header.tool}, {"version", p.header.version},
                        {"inputs", p.header.inputs}}}};
  j["processors"] = Json::array();
  for (const auto& q : p.processors) j["processors"].push_back(toJson(q));
  j["units"] = Json::array();
  for (const auto& u : p.units) j["units"].push_back(toJson(u));
  if (p.stitch) j["stitch"] = toJson(*p.stitch);
  if (p.concurrent) j["concurrent"] = toJson(*p.concurrent);
  if (!p.opplace.empty()) {
    j["opplace"] = Json::array();
    for (const auto& o : p.opplace) j["opplace"].push_back(toJson(o));
  }
  if (!p.cold.empty()) {
    j["cold"] = Json::array();
    for (const auto& c : p.cold) j["cold"].push_back(toJson(c));
  }
  if (p.mts) j["mts"] = toJson(*p.mts);
  return j;
}

Expected<Plan> planFromJson(const Json& j, const std::string& label) {
  Reader rd{label};
  Plan p;
  ZP_ASSIGN_OR_RETURN(const Json* h, rd.field(j, "$", "header"));
  ZP_ASSIGN_OR_RETURN(p.header.tool, rd.str(*h, "$.header", "tool"));
  ZP_ASSIGN_OR_RETURN(p.header.version, rd.str(*h, "$.header", "version"));
  ZP_ASSIGN_OR_RETURN(const Json* in, rd.field(*h, "$.header", "inputs"));
  if (!in->is_object()) return makeError("{}: $.header.inputs: expected an object", label);
  for (auto it = in->begin(); it != in->end(); ++it) {
    if (!it.value().is_string())
      return makeError("{}: $.header.inputs.{}: expected a string", label, it.key());
    p.header.inputs[it.key()] = it.value().get<std::string>();
  }
  if (!j.contains("units"))
    return makeError("{}: $.units: missing: written by an older plan-solve (a plan is now a list of units); re-run plan-solve",
                     label);
  if (!j.contains("processors"))
    return makeError("{}: $.processors: missing: written by an older plan-solve (a plan lists its processors once); "
                     "re-run plan-solve", label);
  {
    JsonAt root(j, label);
    ZP_ASSIGN_OR_RETURN(auto processors, root.array("processors"));
    for (const auto& pj : processors) {
      ZP_ASSIGN_OR_RETURN(auto proc, processorFromJson(pj));
      if (findProcessor(p, proc.name)) return pj.error(fmt::format("processor '{}' is listed twice", proc.name));
      p.processors.push_back(std::move(proc));
    }
  }
  {
    JsonAt root(j, label);
    ZP_ASSIGN_OR_RETURN(auto units, root.array("units"));
    for (const auto& uj : units) {
      ZP_ASSIGN_OR_RETURN(auto u, unitFromJson(uj));
      p.units.push_back(std::move(u));
    }
    ZP_TRY(checkUnits(p.units, label));
  }
  if (j.contains("stitch")) {
    ZP_ASSIGN_OR_RETURN(auto st, stitchPlanFromJson(j["stitch"], label));
    p.stitch = std::move(st);
  }
  if (j.contains("concurrent")) {
    ZP_ASSIGN_OR_RETURN(auto c, concurrentFromJson(j["concurrent"], label, "$.concurrent"));
    p.concurrent = std::move(c);
  }
  if (j.contains("opplace")) {
    // One placement per placed unit; plans written before held one object.
    if (j["opplace"].is_object()) {
      ZP_ASSIGN_OR_RETURN(auto o, opPlacementFromJson(j["opplace"], label, "$.opplace"));
      p.opplace.push_back(std::move(o));
    } else {
      JsonAt root(j, label);
      ZP_ASSIGN_OR_RETURN(auto placements, root.array("opplace"));
      if (placements.empty()) return makeError("{}: $.opplace: empty (leave the section out)", label);
      for (size_t i = 0; i < placements.size(); ++i) {
        ZP_ASSIGN_OR_RETURN(auto o, opPlacementFromJson(j["opplace"][i], label, fmt::format("$.opplace[{}]", i)));
        p.opplace.push_back(std::move(o));
      }
    }
  }
  if (j.contains("cold")) {
    JsonAt root(j, label);
    ZP_ASSIGN_OR_RETURN(auto colds, root.array("cold"));
    if (colds.empty()) return makeError("{}: $.cold: empty (leave the section out)", label);
    for (const auto& cj : colds) {
      ZP_ASSIGN_OR_RETURN(auto c, coldPlanFromJson(cj));
      p.cold.push_back(std::move(c));
    }
  }
  if (j.contains("mts")) {
    JsonAt root(j, label);
    ZP_ASSIGN_OR_RETURN(JsonAt mj, root.at("mts"));
    ZP_ASSIGN_OR_RETURN(auto m, mtsPlanFromJson(mj));
    p.mts = std::move(m);
  }
  ZP_TRY(checkProcessorReferences(p, label));
  ZP_TRY(checkUnitReferences(p, label));
  return p;
}

std::string planToText(const Plan& p) { return canonicalJson(toJson(p)); }

Status writePlan(const Plan& p, const std::filesystem::path& path) {
  return writeFileAtomic(path, planToText(p));
}

Expected<Plan> readPlan(const std::filesystem::path& path) {
  ZP_ASSIGN_OR_RETURN(std::string text, readFile(path));
  return parsePlanJson(text, path.string());
}

Expected<Plan> parsePlanJson(std::string_view text, const std::string& label) {
  ZP_ASSIGN_OR_RETURN(Json j, parseJson(text, label));
  // plan.json holds 9 significant digits (canonicalJson). The plan returned is
  // the one its own canonical text reads as, so a number written with more
  // digits (a float, or an integer in a number field) reads as what plan-emit
  // would write for it, and the plan read, its rewritten plan.json and the
  // plan.pb made from it all agree.
  ZP_ASSIGN_OR_RETURN(const Plan asWritten, planFromJson(j, label));
  return planFromJson(Json::parse(planToText(asWritten)), label);
}

}  // namespace zp::artifacts
