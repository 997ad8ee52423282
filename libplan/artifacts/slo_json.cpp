#include "libplan/artifacts/slo_json.h"

#include <algorithm>

#include "libplan/util/file.h"
#include "libplan/util/json_reader.h"

namespace zp::artifacts {
namespace fs = std::filesystem;

Expected<std::vector<plan::SloConfiguration>> readSloFile(const fs::path& path, const std::vector<std::string>& taskNames) {
  ZP_ASSIGN_OR_RETURN(std::string text, readFile(path));
  ZP_ASSIGN_OR_RETURN(Json j, parseJson(text, path.string()));
  const std::string label = path.string();
  JsonAt root(j, label);
  if (!j.is_object() || !j.contains("configurations") || !j["configurations"].is_array() || j["configurations"].empty())
    return makeError("{}: $.configurations: expected a non-empty array", label);
  ZP_ASSIGN_OR_RETURN(auto configs, root.array("configurations"));
  std::vector<plan::SloConfiguration> out;
  for (const auto& c : configs) {
    plan::SloConfiguration cfg;
    ZP_ASSIGN_OR_RETURN(cfg.id, c.string("id"));
    ZP_ASSIGN_OR_RETURN(JsonAt tasks, c.at("tasks"));
    ZP_ASSIGN_OR_RETURN(auto members, tasks.members());
    for (const auto& name : taskNames) {
      if (!tasks.has(name)) return tasks.error(fmt::format("no SLO for task '{}'", name));
      ZP_ASSIGN_OR_RETURN(JsonAt tj, tasks.at(name));
      plan::TaskSlo slo;
      ZP_ASSIGN_OR_RETURN(slo.accuracy, tj.number("accuracy", 0, 1));
      ZP_ASSIGN_OR_RETURN(slo.latencyMs, tj.number("latency_ms", 0));
      cfg.tasks[name] = slo;
    }
    for (const auto& [name, tj] : members)
      if (std::find(taskNames.begin(), taskNames.end(), name) == taskNames.end())
        return tj.error("the profile has no such task");
    out.push_back(std::move(cfg));
  }
  return out;
}

Expected<std::optional<plan::ServingWorkloadRecord>> readSloWorkload(const fs::path& path,
                                                                     const std::vector<std::string>& taskNames) {
  ZP_ASSIGN_OR_RETURN(std::string text, readFile(path));
  ZP_ASSIGN_OR_RETURN(Json j, parseJson(text, path.string()));
  const std::string label = path.string();  // JsonAt refers to it
  JsonAt root(j, label);
  if (!root.has("workload")) return std::optional<plan::ServingWorkloadRecord>();
  ZP_ASSIGN_OR_RETURN(JsonAt w, root.at("workload"));
  plan::ServingWorkloadRecord r;
  if (w.has("process")) { ZP_ASSIGN_OR_RETURN(r.process, w.string("process")); }
  if (r.process != "poisson" && r.process != "periodic")
    return w.error(fmt::format("process: '{}' is not poisson or periodic", r.process));
  ZP_ASSIGN_OR_RETURN(JsonAt rates, w.at("rate_qps"));
  for (const auto& name : taskNames) {
    if (!rates.has(name)) return rates.error(fmt::format("no rate for task '{}' (queries per second)", name));
    ZP_ASSIGN_OR_RETURN(r.rateQps[name], rates.number(name, 1e-6, 1e6));
  }
  ZP_ASSIGN_OR_RETURN(auto members, rates.members());
  for (const auto& [name, rj] : members)
    if (std::find(taskNames.begin(), taskNames.end(), name) == taskNames.end())
      return rj.error("the profile has no such task");
  return std::optional<plan::ServingWorkloadRecord>(std::move(r));
}

Json sloFileJson(const std::vector<plan::SloConfiguration>& configs,
                 const std::optional<plan::ServingWorkloadRecord>& workload) {
  Json j{{"schema_version", 1}, {"configurations", Json::array()}};
  if (workload) j["workload"] = Json{{"process", workload->process}, {"rate_qps", workload->rateQps}};
  for (const auto& c : configs) {
    Json tj = Json::object();
    for (const auto& [t, s] : c.tasks) tj[t] = Json{{"accuracy", s.accuracy}, {"latency_ms", s.latencyMs}};
    j["configurations"].push_back(Json{{"id", c.id}, {"tasks", tj}});
  }
  return j;
}

}  // namespace zp::artifacts
