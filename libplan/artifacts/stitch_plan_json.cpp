#include "libplan/artifacts/plan_json.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "libplan/util/json_reader.h"
#include "libplan/util/dim_limits.h"
#include "libplan/util/validate.h"
#include "libplan/util/validate.h"
#include "libplan/zoo/stitch_manifest.h"

namespace zp::artifacts {
using namespace plan;

namespace {

// A predicted latency; null when a subgraph of the choice has no latency on the
// processor it is placed on (infinite to the planner).
Json latencyJson(double ms) { return std::isfinite(ms) ? Json(ms) : Json(nullptr); }

Expected<double> latencyFrom(const JsonAt& j) {
  if (j.has("latency_ms") && j.json().at("latency_ms").is_null()) return std::numeric_limits<double>::infinity();
  return j.number("latency_ms", 0);
}

Json predictedJson(const PredictedServing& pr) {
  Json j{{"violation_rate", pr.violationRate}, {"throughput_qps", pr.throughputQps}};
  if (pr.slowedViolationRate >= 0) j["slowed_violation_rate"] = pr.slowedViolationRate;
  if (pr.judged > 0)
    j["search"] = Json{{"judged", pr.judged}, {"proven_best", pr.provenBest}, {"violation_bound", pr.violationBound}};
  return j;
}

}  // namespace

Json toJson(const Processor& p) {
  Json pj{{"name", p.name}, {"kind", p.kind}, {"source", p.source}, {"policy", p.policy}, {"threads", p.threads}};
  if (!p.cores.empty()) pj["cores"] = p.cores;
  pj["gemm"] = p.gemm;
  if (!p.profileFile.empty()) pj["profile_file"] = p.profileFile;
  return pj;
}

Json toJson(const GroupMember& m) {
  return Json{{"task", m.task}, {"input", m.input}, {"stitched_input", m.stitchedInput},
              {"outputs", m.outputs}, {"stitched_outputs", m.stitchedOutputs}};
}

Expected<GroupMember> groupMemberFromJson(const JsonAt& j) {
  GroupMember m;
  ZP_ASSIGN_OR_RETURN(m.task, j.id("task"));
  ZP_ASSIGN_OR_RETURN(m.input, j.string("input"));
  ZP_ASSIGN_OR_RETURN(m.stitchedInput, j.string("stitched_input"));
  ZP_ASSIGN_OR_RETURN(m.outputs, j.strings("outputs"));
  ZP_ASSIGN_OR_RETURN(m.stitchedOutputs, j.strings("stitched_outputs"));
  if (m.input.empty() || m.stitchedInput.empty()) return j.error("input and stitched_input: empty");
  if (m.outputs.empty() || m.outputs.size() != m.stitchedOutputs.size())
    return j.error(fmt::format("outputs: {} for {} stitched outputs (one or more each, in the same order)",
                               m.outputs.size(), m.stitchedOutputs.size()));
  return m;
}

Json toJson(const StitchPlan& s) {
  Json j;
  j["stitch_dir"] = s.stitchDir;
  if (!s.profileDir.empty()) j["profile_dir"] = s.profileDir;
  if (!s.sloSource.empty()) j["slo_source"] = s.sloSource;
  j["accuracy_source"] = s.accuracySource;
  j["processors"] = s.processors;
  j["placement_order"] = s.placementOrder;
  j["orders_evaluated"] = s.ordersEvaluated;
  j["mean_latency_ms"] = s.meanLatencyMs;
  j["batch"] = s.batch;
  j["dims"] = Json::object();
  for (const auto& [name, value] : s.dims) j["dims"][name] = value;
  j["slo_configurations"] = Json::array();
  for (const auto& c : s.slos) {
    Json tj = Json::object();
    for (const auto& [t, slo] : c.tasks) tj[t] = Json{{"accuracy", slo.accuracy}, {"latency_ms", slo.latencyMs}};
    j["slo_configurations"].push_back(Json{{"id", c.id}, {"tasks", tj}});
  }
  j["tasks"] = Json::array();
  for (const auto& t : s.tasks) {
    Json tj{{"name", t.name}, {"positions", t.positions}, {"subgraphs", Json::array()}};
    for (const auto& g : t.subgraphs)
      tj["subgraphs"].push_back(Json{{"position", g.position}, {"variant", g.variant}, {"processor", g.processor},
                                     {"memory_bytes", g.memoryBytes}, {"latency_ms", g.latencyMs}});
    j["tasks"].push_back(tj);
  }
  if (!s.groups.empty()) {
    j["groups"] = Json::array();
    for (const auto& g : s.groups) {
      Json members = Json::array(), runs = Json::array();
      for (const auto& m : g.members) members.push_back(toJson(m));
      for (const auto& r : g.runs)
        runs.push_back(Json{{"processor", r.processor}, {"memory_bytes", r.memoryBytes}, {"latency_ms", r.latencyMs}});
      j["groups"].push_back(Json{{"name", g.name}, {"shared_input", g.sharedInput}, {"members", members}, {"runs", runs}});
    }
  }
  j["preload"] = Json::array();
  for (const auto& p : s.preload)
    j["preload"].push_back(Json{{"budget", p.budget}, {"budget_bytes", p.budgetBytes},
                                {"greedy", Json{{"subgraphs", p.greedy}, {"bytes", p.greedyBytes}, {"hotness", p.greedyHotness}}},
                                {"exact", Json{{"subgraphs", p.exact}, {"bytes", p.exactBytes}, {"hotness", p.exactHotness},
                                               {"optimal", p.exactOptimal}}},
                                {"gap", p.gap}});
  j["chosen_system"] = s.chosenSystem;
  if (s.workload)
    j["workload"] = Json{{"process", s.workload->process},
                         {"rate_qps", s.workload->rateQps},
                         {"duration_ms", s.workload->durationMs},
                         {"seed", s.workload->seed},
                         {"calibration", Json{{"rounds", s.workload->calibrationRounds},
                                              {"dispatch_ms", s.workload->dispatchMs},
                                              {"handoff_ms", s.workload->handoffMs},
                                              {"load_ms_per_mb", s.workload->loadMsPerMB}}},
                         {"memory_budget_bytes", s.workload->memoryBudgetBytes}};
  if (s.workload && !s.workload->servedInTurn.empty()) j["workload"]["served_in_turn"] = s.workload->servedInTurn;
  if (s.workload && s.workload->slowdownJudged != 1.0) j["workload"]["slowdown_judged"] = s.workload->slowdownJudged;
  if (s.workload && !s.workload->frames.empty()) {
    Json frames = Json::array();
    for (const auto& f : s.workload->frames) {
      Json deps = Json::array();
      for (const auto& [dnn, after] : f.dependsOn) deps.push_back(Json{{"dnn", dnn}, {"after", after}});
      frames.push_back(Json{{"name", f.name}, {"period_ms", f.periodMs}, {"latency_ms", f.latencyMs},
                            {"dnns", f.dnns}, {"depends_on", deps}});
    }
    j["workload"]["frames"] = std::move(frames);
  }
  {
    j["systems"] = Json::array();
    for (const auto& sys : s.systems) {
      Json sj{{"name", sys.name}, {"description", sys.description}, {"selections", Json::array()}};
      for (const auto& sel : sys.selections) {
        Json tasks = Json::array();
        for (const auto& c : sel.tasks) {
          Json cj{{"task", c.task}, {"combination", c.combination}, {"placement", c.placement},
                  {"feasible", c.feasible}, {"accuracy", c.accuracy}, {"accuracy_source", c.accuracySource},
                  {"latency_ms", latencyJson(c.latencyMs)}};
          if (c.miss)
            cj["miss"] = Json{{"combination", c.miss->combination}, {"accuracy_short", c.miss->accuracyShort},
                              {"latency_over_ms", c.miss->latencyOverMs}};
          tasks.push_back(std::move(cj));
        }
        Json selj{{"slo", sel.slo}, {"tasks", tasks}};
        if (sel.predicted) selj["predicted"] = predictedJson(*sel.predicted);
        sj["selections"].push_back(std::move(selj));
      }
      if (sys.predictedInTurn) sj["predicted_in_turn"] = predictedJson(*sys.predictedInTurn);
      if (sys.servingOrder != ServingOrder::FirstCome) sj["serving_order"] = servingOrderName(sys.servingOrder);
      if (sys.predictedFirstCome) sj["predicted_first_come"] = predictedJson(*sys.predictedFirstCome);
      j["systems"].push_back(sj);
    }
  }
  return j;
}

Expected<Processor> processorFromJson(const JsonAt& p) {
  Processor out;
  ZP_ASSIGN_OR_RETURN(out.name, p.id("name"));
  ZP_ASSIGN_OR_RETURN(out.kind, p.string("kind"));
  ZP_ASSIGN_OR_RETURN(out.source, p.string("source"));
  ZP_ASSIGN_OR_RETURN(out.policy, p.string("policy"));
  ZP_ASSIGN_OR_RETURN(JsonAt threads, p.at("threads"));
  ZP_ASSIGN_OR_RETURN(int64_t n, threads.integer());
  if (auto problem = threadCountProblem(n)) return threads.error(*problem);
  out.threads = static_cast<int>(n);
  if (p.has("cores")) {
    ZP_ASSIGN_OR_RETURN(auto cores, p.array("cores"));
    for (const auto& c : cores) {
      ZP_ASSIGN_OR_RETURN(int64_t id, c.integer(0, 4095));
      out.cores.push_back(static_cast<int>(id));
    }
  }
  if (p.has("gemm")) {
    ZP_ASSIGN_OR_RETURN(JsonAt gemm, p.at("gemm"));
    ZP_ASSIGN_OR_RETURN(out.gemm, gemm.string());
    if (out.gemm != "onednn" && out.gemm != "blis") return gemm.error("expected \"onednn\" or \"blis\"");
  }
  if (p.has("profile_file")) { ZP_ASSIGN_OR_RETURN(out.profileFile, p.string("profile_file")); }
  return out;
}

namespace {

constexpr int64_t kMaxInt = std::numeric_limits<int>::max();

// A combination id: safe variant ids joined by '+'.
Expected<std::string> combinationId(const JsonAt& j) {
  ZP_ASSIGN_OR_RETURN(std::string id, j.string());
  if (id.empty()) return id;  // an infeasible selection names none
  // A weight-shared group's unit or a placed model answering the task: its unit
  // id (the plan's units list it; a placed model's placement is in $.opplace).
  if (id.rfind("group:", 0) == 0 || id.rfind("model:", 0) == 0) {
    auto unit = parseUnitId(id);
    if (!unit.ok()) return j.error(unit.error().message);
    return id;
  }
  if (auto p = zoo::combinationIdProblem(id)) return j.error(*p);
  return id;
}

Expected<SloConfiguration> sloFrom(const JsonAt& c) {
  SloConfiguration cfg;
  ZP_ASSIGN_OR_RETURN(cfg.id, c.string("id"));
  ZP_ASSIGN_OR_RETURN(JsonAt tasks, c.at("tasks"));
  ZP_ASSIGN_OR_RETURN(auto members, tasks.members());
  for (const auto& [task, tj] : members) {
    if (auto p = idProblem(task)) return tj.error(*p);
    TaskSlo slo;
    ZP_ASSIGN_OR_RETURN(slo.accuracy, tj.number("accuracy", 0, 1));
    ZP_ASSIGN_OR_RETURN(slo.latencyMs, tj.number("latency_ms", 0));
    cfg.tasks[task] = slo;
  }
  return cfg;
}

Expected<std::string> accuracySourceFrom(const JsonAt& j) {
  ZP_ASSIGN_OR_RETURN(JsonAt at, j.at("accuracy_source"));
  ZP_ASSIGN_OR_RETURN(std::string source, at.string());
  if (source != "measured" && source != "estimated") return at.error("expected \"measured\" or \"estimated\"");
  return source;
}

Expected<std::optional<SloMiss>> missFrom(const JsonAt& cj) {
  if (!cj.has("miss")) return std::optional<SloMiss>();
  ZP_ASSIGN_OR_RETURN(JsonAt mj, cj.at("miss"));
  SloMiss miss;
  ZP_ASSIGN_OR_RETURN(JsonAt mc, mj.at("combination"));
  ZP_ASSIGN_OR_RETURN(miss.combination, combinationId(mc));
  ZP_ASSIGN_OR_RETURN(miss.accuracyShort, mj.number("accuracy_short"));
  ZP_ASSIGN_OR_RETURN(miss.latencyOverMs, mj.number("latency_over_ms"));
  return std::optional<SloMiss>(miss);
}

Expected<PlannedGroup> groupFrom(const JsonAt& gj, const std::vector<std::string>& processors) {
  PlannedGroup g;
  ZP_ASSIGN_OR_RETURN(g.name, gj.id("name"));
  ZP_ASSIGN_OR_RETURN(g.sharedInput, gj.boolean("shared_input"));
  ZP_ASSIGN_OR_RETURN(auto members, gj.array("members"));
  if (members.empty()) return gj.error("members: empty");
  for (const auto& mj : members) {
    ZP_ASSIGN_OR_RETURN(GroupMember m, groupMemberFromJson(mj));
    if (memberOf(g, m.task)) return mj.error(fmt::format("task '{}' is a member twice", m.task));
    g.members.push_back(std::move(m));
  }
  ZP_ASSIGN_OR_RETURN(auto runs, gj.array("runs"));
  if (runs.empty()) return gj.error("runs: empty");
  for (const auto& rj : runs) {
    PlannedGroupRun r;
    ZP_ASSIGN_OR_RETURN(r.processor, rj.id("processor"));
    if (std::find(processors.begin(), processors.end(), r.processor) == processors.end())
      return rj.error(fmt::format("processor: '{}' is not one the section plans on", r.processor));
    if (std::any_of(g.runs.begin(), g.runs.end(), [&](const auto& x) { return x.processor == r.processor; }))
      return rj.error(fmt::format("processor: '{}' is named twice", r.processor));
    ZP_ASSIGN_OR_RETURN(r.memoryBytes, rj.integer("memory_bytes", 0, kMaxBytes));
    ZP_ASSIGN_OR_RETURN(r.latencyMs, rj.number("latency_ms", 0, kMaxLatencyMs));
    g.runs.push_back(std::move(r));
  }
  return g;
}

// A choice answered by a group names one of the section's groups, of which the
// task is a member, on one processor the group runs on.
Status checkGroupChoices(const JsonAt& root, const StitchPlan& s) {
  for (const auto& sys : s.systems)
    for (const auto& sel : sys.selections)
      for (const auto& c : sel.tasks) {
        if (!answeredByGroup(c)) continue;
        const PlannedGroup* g = groupOf(s, c);
        auto where = [&] { return fmt::format("systems: '{}' under {}: task '{}'", sys.name, sel.slo, c.task); };
        if (!g) return root.error(fmt::format("{}: '{}' is none of the section's groups", where(), c.combination));
        if (!memberOf(*g, c.task)) return root.error(fmt::format("{}: not a member of '{}'", where(), c.combination));
        if (c.placement.size() != 1 ||
            std::none_of(g->runs.begin(), g->runs.end(), [&](const auto& r) { return r.processor == c.placement[0]; }))
          return root.error(fmt::format("{}: '{}' is placed on one processor it runs on", where(), c.combination));
      }
  return {};
}

Expected<TaskPlan> taskFrom(const JsonAt& tj) {
  TaskPlan t;
  ZP_ASSIGN_OR_RETURN(t.name, tj.id("name"));
  ZP_ASSIGN_OR_RETURN(int64_t positions, tj.integer("positions", 1, zoo::kMaxPositions));
  t.positions = static_cast<int>(positions);
  if (tj.has("selections"))
    return tj.error("selections: written by an older plan-solve (the plan's choice is now its chosen system's); "
                    "re-run plan-solve");
  ZP_ASSIGN_OR_RETURN(auto subgraphs, tj.array("subgraphs"));
  for (const auto& g : subgraphs) {
    PlannedSubgraph sg;
    ZP_ASSIGN_OR_RETURN(int64_t position, g.integer("position", 0, positions - 1));
    sg.position = static_cast<int>(position);
    ZP_ASSIGN_OR_RETURN(sg.variant, g.id("variant"));
    ZP_ASSIGN_OR_RETURN(sg.processor, g.id("processor"));
    ZP_ASSIGN_OR_RETURN(sg.memoryBytes, g.integer("memory_bytes", 0, kMaxBytes));
    if (g.has("latency_ms")) { ZP_ASSIGN_OR_RETURN(sg.latencyMs, g.number("latency_ms", 0)); }
    t.subgraphs.push_back(std::move(sg));
  }
  return t;
}

Expected<PreloadSet> preloadFrom(const JsonAt& p) {
  PreloadSet ps;
  ZP_ASSIGN_OR_RETURN(ps.budget, p.string("budget"));
  ZP_ASSIGN_OR_RETURN(ps.budgetBytes, p.integer("budget_bytes", 0));
  ZP_ASSIGN_OR_RETURN(JsonAt greedy, p.at("greedy"));
  ZP_ASSIGN_OR_RETURN(ps.greedy, greedy.strings("subgraphs"));
  ZP_ASSIGN_OR_RETURN(ps.greedyBytes, greedy.integer("bytes", 0));
  ZP_ASSIGN_OR_RETURN(ps.greedyHotness, greedy.number("hotness"));
  ZP_ASSIGN_OR_RETURN(JsonAt exact, p.at("exact"));
  ZP_ASSIGN_OR_RETURN(ps.exact, exact.strings("subgraphs"));
  ZP_ASSIGN_OR_RETURN(ps.exactBytes, exact.integer("bytes", 0));
  ZP_ASSIGN_OR_RETURN(ps.exactHotness, exact.number("hotness"));
  ZP_ASSIGN_OR_RETURN(ps.exactOptimal, exact.boolean("optimal"));
  ZP_ASSIGN_OR_RETURN(ps.gap, p.number("gap"));
  return ps;
}

Expected<PredictedServing> predictedFrom(const JsonAt& selj, const char* key = "predicted") {
  ZP_ASSIGN_OR_RETURN(JsonAt pj, selj.at(key));
  PredictedServing p;
  ZP_ASSIGN_OR_RETURN(p.violationRate, pj.number("violation_rate", 0, 1));
  ZP_ASSIGN_OR_RETURN(p.throughputQps, pj.number("throughput_qps", 0));
  if (pj.has("slowed_violation_rate")) {
    ZP_ASSIGN_OR_RETURN(p.slowedViolationRate, pj.number("slowed_violation_rate", 0, 1));
  }
  if (pj.has("search")) {
    ZP_ASSIGN_OR_RETURN(JsonAt search, pj.at("search"));
    ZP_ASSIGN_OR_RETURN(p.judged, search.integer("judged", 1));
    ZP_ASSIGN_OR_RETURN(p.provenBest, search.boolean("proven_best"));
    ZP_ASSIGN_OR_RETURN(p.violationBound, search.number("violation_bound", 0, 1));
  }
  return p;
}

Expected<ServedSystem> systemFrom(const JsonAt& sj) {
  ServedSystem sys;
  ZP_ASSIGN_OR_RETURN(sys.name, sj.string("name"));
  ZP_ASSIGN_OR_RETURN(sys.description, sj.string("description"));
  ZP_ASSIGN_OR_RETURN(auto selections, sj.array("selections"));
  for (const auto& selj : selections) {
    SystemSelection sel;
    ZP_ASSIGN_OR_RETURN(sel.slo, selj.string("slo"));
    ZP_ASSIGN_OR_RETURN(auto tasks, selj.array("tasks"));
    for (const auto& cj : tasks) {
      SystemTaskChoice c;
      ZP_ASSIGN_OR_RETURN(c.task, cj.id("task"));
      ZP_ASSIGN_OR_RETURN(JsonAt combination, cj.at("combination"));
      ZP_ASSIGN_OR_RETURN(c.combination, combinationId(combination));
      ZP_ASSIGN_OR_RETURN(c.placement, cj.strings("placement"));
      ZP_ASSIGN_OR_RETURN(c.feasible, cj.boolean("feasible"));
      ZP_ASSIGN_OR_RETURN(c.accuracy, cj.number("accuracy", 0, 1));
      ZP_ASSIGN_OR_RETURN(c.accuracySource, accuracySourceFrom(cj));
      ZP_ASSIGN_OR_RETURN(c.latencyMs, latencyFrom(cj));
      ZP_ASSIGN_OR_RETURN(c.miss, missFrom(cj));
      sel.tasks.push_back(std::move(c));
    }
    if (selj.has("predicted")) {
      ZP_ASSIGN_OR_RETURN(sel.predicted, predictedFrom(selj));
    }
    sys.selections.push_back(std::move(sel));
  }
  if (sj.has("predicted_in_turn")) {
    ZP_ASSIGN_OR_RETURN(sys.predictedInTurn, predictedFrom(sj, "predicted_in_turn"));
  }
  if (sj.has("serving_order")) {
    ZP_ASSIGN_OR_RETURN(const std::string order, sj.string("serving_order"));
    const auto parsed = parseServingOrder(order);
    if (!parsed) return sj.error(fmt::format("serving_order: '{}' is not first-come or earliest-deadline", order));
    sys.servingOrder = *parsed;
  }
  if (sj.has("predicted_first_come")) {
    ZP_ASSIGN_OR_RETURN(sys.predictedFirstCome, predictedFrom(sj, "predicted_first_come"));
  }
  return sys;
}

Expected<ServingWorkloadRecord> workloadFrom(const JsonAt& root) {
  ZP_ASSIGN_OR_RETURN(JsonAt w, root.at("workload"));
  ServingWorkloadRecord r;
  ZP_ASSIGN_OR_RETURN(r.process, w.string("process"));
  if (r.process != "poisson" && r.process != "periodic")
    return w.error(fmt::format("process: '{}' is not poisson or periodic", r.process));
  ZP_ASSIGN_OR_RETURN(JsonAt rates, w.at("rate_qps"));
  ZP_ASSIGN_OR_RETURN(auto members, rates.members());
  for (const auto& [task, rate] : members) {
    ZP_ASSIGN_OR_RETURN(r.rateQps[task], rate.number(1e-9, 1e9));
  }
  ZP_ASSIGN_OR_RETURN(r.durationMs, w.number("duration_ms", 0, 1e9));
  ZP_ASSIGN_OR_RETURN(int64_t seed, w.integer("seed", 0, INT64_MAX));
  r.seed = static_cast<uint64_t>(seed);
  ZP_ASSIGN_OR_RETURN(JsonAt cal, w.at("calibration"));
  ZP_ASSIGN_OR_RETURN(int64_t rounds, cal.integer("rounds", 0, 1000));
  r.calibrationRounds = static_cast<int>(rounds);
  ZP_ASSIGN_OR_RETURN(r.dispatchMs, cal.number("dispatch_ms", 0, 1e6));
  ZP_ASSIGN_OR_RETURN(r.handoffMs, cal.number("handoff_ms", 0, 1e6));
  ZP_ASSIGN_OR_RETURN(r.loadMsPerMB, cal.number("load_ms_per_mb", 0, 1e6));
  if (w.has("memory_budget_bytes")) { ZP_ASSIGN_OR_RETURN(r.memoryBudgetBytes, w.integer("memory_budget_bytes", 0)); }
  if (w.has("served_in_turn")) { ZP_ASSIGN_OR_RETURN(r.servedInTurn, w.strings("served_in_turn")); }
  if (w.has("slowdown_judged")) { ZP_ASSIGN_OR_RETURN(r.slowdownJudged, w.number("slowdown_judged", 1, 10)); }
  if (w.has("frames")) {
    ZP_ASSIGN_OR_RETURN(auto frames, w.array("frames"));
    for (const auto& fj : frames) {
      FrameSpec f;
      ZP_ASSIGN_OR_RETURN(f.name, fj.id("name"));
      ZP_ASSIGN_OR_RETURN(f.periodMs, fj.number("period_ms", 1e-9, 1e9));
      ZP_ASSIGN_OR_RETURN(f.latencyMs, fj.number("latency_ms", 1e-9, 1e9));
      ZP_ASSIGN_OR_RETURN(f.dnns, fj.strings("dnns"));
      ZP_ASSIGN_OR_RETURN(auto deps, fj.array("depends_on"));
      for (const auto& d : deps) {
        ZP_ASSIGN_OR_RETURN(std::string dnn, d.string("dnn"));
        ZP_ASSIGN_OR_RETURN(std::string after, d.string("after"));
        f.dependsOn.emplace_back(dnn, after);
      }
      if (auto chains = frameChains(f); !chains.ok()) return fj.error(chains.error().message);
      r.frames.push_back(std::move(f));
    }
  }
  return r;
}

}  // namespace

Expected<StitchPlan> stitchPlanFromJson(const Json& j, const std::string& label) {
  JsonAt root(j, label, "$.stitch");
  StitchPlan s;
  // Plans from before the plan named its choice ran Algorithm 1's selections
  // while serving another system's: they are not run under the new meaning.
  const auto* chosen = j.contains("chosen_system") ? &j.at("chosen_system") : nullptr;
  if (!chosen || (chosen->is_string() && chosen->get<std::string>().empty()))
    return root.error("written by an older plan-solve (its selections are not the plan's choice); re-run plan-solve");
  ZP_ASSIGN_OR_RETURN(s.chosenSystem, root.id("chosen_system"));
  ZP_ASSIGN_OR_RETURN(s.stitchDir, root.string("stitch_dir"));
  if (root.has("profile_dir")) {
    ZP_ASSIGN_OR_RETURN(s.profileDir, root.string("profile_dir"));
  }
  if (root.has("slo_source")) {
    ZP_ASSIGN_OR_RETURN(s.sloSource, root.string("slo_source"));
  }
  ZP_ASSIGN_OR_RETURN(s.accuracySource, root.string("accuracy_source"));
  ZP_ASSIGN_OR_RETURN(s.processors, processorNamesFromJson(root));
  ZP_ASSIGN_OR_RETURN(s.placementOrder, root.strings("placement_order"));
  ZP_ASSIGN_OR_RETURN(int64_t orders, root.integer("orders_evaluated", 0, kMaxInt));
  s.ordersEvaluated = static_cast<int>(orders);
  ZP_ASSIGN_OR_RETURN(s.meanLatencyMs, root.number("mean_latency_ms"));
  // Plans written before symbolic dims were bound have neither: batch 1, no dims.
  if (root.has("batch")) { ZP_ASSIGN_OR_RETURN(s.batch, root.integer("batch", 1, kMaxDimValue)); }
  if (root.has("dims")) {
    ZP_ASSIGN_OR_RETURN(JsonAt dims, root.at("dims"));
    ZP_ASSIGN_OR_RETURN(auto members, dims.members());
    for (const auto& [name, value] : members) {
      ZP_ASSIGN_OR_RETURN(s.dims[name], value.integer(1, kMaxDimValue));
    }
  }
  ZP_ASSIGN_OR_RETURN(auto slos, root.array("slo_configurations"));
  for (const auto& c : slos) {
    ZP_ASSIGN_OR_RETURN(auto cfg, sloFrom(c));
    s.slos.push_back(std::move(cfg));
  }
  ZP_ASSIGN_OR_RETURN(auto tasks, root.array("tasks"));
  for (const auto& tj : tasks) {
    ZP_ASSIGN_OR_RETURN(auto t, taskFrom(tj));
    s.tasks.push_back(std::move(t));
  }
  if (root.has("groups")) {
    ZP_ASSIGN_OR_RETURN(auto groups, root.array("groups"));
    for (const auto& gj : groups) {
      ZP_ASSIGN_OR_RETURN(auto g, groupFrom(gj, s.processors));
      if (std::any_of(s.groups.begin(), s.groups.end(), [&](const auto& x) { return x.name == g.name; }))
        return gj.error(fmt::format("group '{}' is listed twice", g.name));
      for (const auto& m : g.members)
        if (std::none_of(s.tasks.begin(), s.tasks.end(), [&](const TaskPlan& t) { return t.name == m.task; }))
          return gj.error(fmt::format("member '{}' is not a task of the section", m.task));
      s.groups.push_back(std::move(g));
    }
  }
  ZP_ASSIGN_OR_RETURN(auto preload, root.array("preload"));
  for (const auto& p : preload) {
    ZP_ASSIGN_OR_RETURN(auto ps, preloadFrom(p));
    s.preload.push_back(std::move(ps));
  }
  if (root.has("workload")) { ZP_ASSIGN_OR_RETURN(s.workload, workloadFrom(root)); }
  if (s.workload)
    for (size_t i = 0; i < s.workload->servedInTurn.size(); ++i) {
      const auto& turn = s.workload->servedInTurn;
      if (std::none_of(s.slos.begin(), s.slos.end(), [&](const SloConfiguration& c) { return c.id == turn[i]; }))
        return root.error(fmt::format("workload.served_in_turn: '{}' is none of its SLO configurations", turn[i]));
      if (std::count(turn.begin(), turn.end(), turn[i]) > 1)
        return root.error(fmt::format("workload.served_in_turn: '{}' is named twice", turn[i]));
    }
  ZP_ASSIGN_OR_RETURN(auto systems, root.array("systems"));
  for (const auto& sj : systems) {
    ZP_ASSIGN_OR_RETURN(auto sys, systemFrom(sj));
    if (sys.selections.size() != s.slos.size())
      return root.error(fmt::format("systems: '{}' has {} selections for {} SLO configurations", sys.name,
                                    sys.selections.size(), s.slos.size()));
    for (const auto& sel : sys.selections)
      if (sel.tasks.size() != s.tasks.size())
        return root.error(fmt::format("systems: '{}' under {} chooses for {} tasks of {}", sys.name, sel.slo,
                                      sel.tasks.size(), s.tasks.size()));
    s.systems.push_back(std::move(sys));
  }
  if (std::none_of(s.systems.begin(), s.systems.end(), [&](const ServedSystem& x) { return x.name == s.chosenSystem; }))
    return root.error(fmt::format("chosen_system '{}' is none of its systems", s.chosenSystem));
  ZP_TRY(checkGroupChoices(root, s));
  return s;
}

}  // namespace zp::artifacts
