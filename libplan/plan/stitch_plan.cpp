#include "libplan/plan/stitch_plan.h"

namespace zp::plan {

Json toJson(const StitchPlan& s) {
  Json j;
  j["stitch_dir"] = s.stitchDir;
  j["accuracy_source"] = s.accuracySource;
  j["processors"] = Json::array();
  for (const auto& p : s.processors)
    j["processors"].push_back(Json{{"name", p.name}, {"kind", p.kind}, {"source", p.source}, {"policy", p.policy},
                                   {"threads", p.threads}});
  j["placement_order"] = s.placementOrder;
  j["orders_evaluated"] = s.ordersEvaluated;
  j["mean_latency_ms"] = s.meanLatencyMs;
  j["slo_configurations"] = Json::array();
  for (const auto& c : s.slos) {
    Json tj = Json::object();
    for (const auto& [t, slo] : c.tasks) tj[t] = Json{{"accuracy", slo.accuracy}, {"latency_ms", slo.latencyMs}};
    j["slo_configurations"].push_back(Json{{"id", c.id}, {"tasks", tj}});
  }
  j["tasks"] = Json::array();
  for (const auto& t : s.tasks) {
    Json tj{{"name", t.name}, {"positions", t.positions}, {"selections", Json::array()}, {"subgraphs", Json::array()}};
    for (const auto& sel : t.selections) {
      Json sj{{"slo", sel.slo}, {"feasible", sel.feasible}, {"combination", sel.combination},
              {"accuracy", sel.accuracy}, {"latency_ms", sel.latencyMs}};
      if (sel.miss)
        sj["miss"] = Json{{"combination", sel.miss->combination}, {"accuracy_short", sel.miss->accuracyShort},
                          {"latency_over_ms", sel.miss->latencyOverMs}};
      tj["selections"].push_back(sj);
    }
    for (const auto& g : t.subgraphs)
      tj["subgraphs"].push_back(Json{{"position", g.position}, {"variant", g.variant}, {"hash", g.hash},
                                     {"file", g.file}, {"processor", g.processor}, {"memory_bytes", g.memoryBytes}});
    j["tasks"].push_back(tj);
  }
  j["preload"] = Json::array();
  for (const auto& p : s.preload)
    j["preload"].push_back(Json{{"budget", p.budget}, {"budget_bytes", p.budgetBytes},
                                {"greedy", Json{{"subgraphs", p.greedy}, {"bytes", p.greedyBytes}, {"hotness", p.greedyHotness}}},
                                {"exact", Json{{"subgraphs", p.exact}, {"bytes", p.exactBytes}, {"hotness", p.exactHotness},
                                               {"optimal", p.exactOptimal}}},
                                {"gap", p.gap}});
  return j;
}

Expected<StitchPlan> stitchPlanFromJson(const Json& j, const std::string& label) {
  try {
    StitchPlan s;
    s.stitchDir = j.at("stitch_dir").get<std::string>();
    s.accuracySource = j.at("accuracy_source").get<std::string>();
    for (const auto& p : j.at("processors"))
      s.processors.push_back(PlanProcessor{p.at("name").get<std::string>(), p.at("kind").get<std::string>(),
                                           p.at("source").get<std::string>(), p.at("policy").get<std::string>(),
                                           p.at("threads").get<int>()});
    s.placementOrder = j.at("placement_order").get<std::vector<std::string>>();
    s.ordersEvaluated = j.at("orders_evaluated").get<int>();
    s.meanLatencyMs = j.at("mean_latency_ms").get<double>();
    for (const auto& c : j.at("slo_configurations")) {
      SloConfiguration cfg;
      cfg.id = c.at("id").get<std::string>();
      for (auto it = c.at("tasks").begin(); it != c.at("tasks").end(); ++it)
        cfg.tasks[it.key()] = TaskSlo{it.value().at("accuracy").get<double>(), it.value().at("latency_ms").get<double>()};
      s.slos.push_back(std::move(cfg));
    }
    for (const auto& tj : j.at("tasks")) {
      TaskPlan t;
      t.name = tj.at("name").get<std::string>();
      t.positions = tj.at("positions").get<int>();
      for (const auto& sj : tj.at("selections")) {
        Selection sel;
        sel.slo = sj.at("slo").get<std::string>();
        sel.feasible = sj.at("feasible").get<bool>();
        sel.combination = sj.at("combination").get<std::string>();
        sel.accuracy = sj.at("accuracy").get<double>();
        sel.latencyMs = sj.at("latency_ms").get<double>();
        if (sj.contains("miss"))
          sel.miss = SloMiss{sj["miss"].at("combination").get<std::string>(), sj["miss"].at("accuracy_short").get<double>(),
                             sj["miss"].at("latency_over_ms").get<double>()};
        t.selections.push_back(std::move(sel));
      }
      for (const auto& g : tj.at("subgraphs"))
        t.subgraphs.push_back(PlannedSubgraph{g.at("position").get<int>(), g.at("variant").get<std::string>(),
                                              g.at("hash").get<std::string>(), g.at("file").get<std::string>(),
                                              g.at("processor").get<std::string>(), g.at("memory_bytes").get<int64_t>()});
      s.tasks.push_back(std::move(t));
    }
    for (const auto& p : j.at("preload")) {
      PreloadSet ps;
      ps.budget = p.at("budget").get<std::string>();
      ps.budgetBytes = p.at("budget_bytes").get<int64_t>();
      ps.greedy = p.at("greedy").at("subgraphs").get<std::vector<std::string>>();
      ps.greedyBytes = p.at("greedy").at("bytes").get<int64_t>();
      ps.greedyHotness = p.at("greedy").at("hotness").get<double>();
      ps.exact = p.at("exact").at("subgraphs").get<std::vector<std::string>>();
      ps.exactBytes = p.at("exact").at("bytes").get<int64_t>();
      ps.exactHotness = p.at("exact").at("hotness").get<double>();
      ps.exactOptimal = p.at("exact").at("optimal").get<bool>();
      ps.gap = p.at("gap").get<double>();
      s.preload.push_back(std::move(ps));
    }
    return s;
  } catch (const Json::exception& e) {
    return makeError("{}: $.stitch: {}", label, e.what());
  }
}

}  // namespace zp::plan
