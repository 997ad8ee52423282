#include "libplan/artifacts/slo_json.h"

#include <algorithm>

#include <fmt/ranges.h>

#include "libplan/util/file.h"
#include "libplan/util/json_reader.h"

namespace zp::artifacts {
namespace fs = std::filesystem;

// The longest time a plan records (its readers' bound): a file's larger one is refused here.
constexpr double kMaxMs = 1e9;

Expected<std::vector<plan::SloConfiguration>> readSloFile(const fs::path& path, const std::vector<std::string>& taskNames) {
  ZP_ASSIGN_OR_RETURN(std::string text, readFile(path));
  ZP_ASSIGN_OR_RETURN(Json j, parseJson(text, path.string()));
  const std::string label = path.string();
  JsonAt root(j, label);
  if (!j.is_object()) return makeError("{}: $: expected an object (schemas/slo.schema.json)", label);
  const bool perTask = j.contains("tasks"), grid = j.contains("configurations");
  if (perTask == grid)
    return makeError("{}: $: expected 'tasks' (one SLO per task: {{\"tasks\": {{\"TASK\": {{\"accuracy\": 0.9, "
                     "\"latency_ms\": 5}}}}}}) or 'configurations' (several named sets of them){}",
                     label, perTask ? ", not both" : "");
  if (grid && (!j["configurations"].is_array() || j["configurations"].empty()))
    return makeError("{}: $.configurations: expected a non-empty array", label);
  std::vector<JsonAt> configs;
  if (grid) {
    ZP_ASSIGN_OR_RETURN(configs, root.array("configurations"));
  } else {
    configs.push_back(root);
  }
  std::vector<plan::SloConfiguration> out;
  for (const auto& c : configs) {
    plan::SloConfiguration cfg;
    if (grid) {
      ZP_ASSIGN_OR_RETURN(cfg.id, c.string("id"));
    } else {
      cfg.id = kPerTaskSloId;
    }
    ZP_ASSIGN_OR_RETURN(JsonAt tasks, c.at("tasks"));
    ZP_ASSIGN_OR_RETURN(auto members, tasks.members());
    for (const auto& name : taskNames) {
      if (!tasks.has(name)) return tasks.error(fmt::format("no SLO for task '{}'", name));
      ZP_ASSIGN_OR_RETURN(JsonAt tj, tasks.at(name));
      plan::TaskSlo slo;
      ZP_ASSIGN_OR_RETURN(slo.accuracy, tj.number("accuracy", 0, 1));
      ZP_ASSIGN_OR_RETURN(slo.latencyMs, tj.number("latency_ms", 0, kMaxMs));
      cfg.tasks[name] = slo;
    }
    for (const auto& [name, tj] : members)
      if (std::find(taskNames.begin(), taskNames.end(), name) == taskNames.end())
        return tj.error("the profile has no such task");
    out.push_back(std::move(cfg));
  }
  return out;
}

namespace {

bool named(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// A field the schema does not know is a typo the reader would silently ignore.
Status knownFields(const JsonAt& at, const std::vector<std::string>& fields) {
  ZP_ASSIGN_OR_RETURN(auto members, at.members());
  for (const auto& [name, v] : members)
    if (!named(fields, name)) return v.error(fmt::format("unknown field (expected one of {})", fmt::join(fields, ", ")));
  return {};
}

Expected<plan::FrameSpec> readFrame(const JsonAt& f, const std::vector<std::string>& taskNames) {
  ZP_TRY(knownFields(f, {"name", "period_ms", "latency_ms", "dnns", "depends_on"}));
  plan::FrameSpec frame;
  ZP_ASSIGN_OR_RETURN(frame.name, f.id("name"));
  ZP_ASSIGN_OR_RETURN(JsonAt period, f.at("period_ms"));
  ZP_ASSIGN_OR_RETURN(frame.periodMs, period.number(-kMaxMs, kMaxMs));
  if (!(frame.periodMs > 0)) return period.error("a frame's period must be > 0 ms");
  frame.latencyMs = frame.periodMs;
  if (f.has("latency_ms")) {
    ZP_ASSIGN_OR_RETURN(JsonAt lat, f.at("latency_ms"));
    ZP_ASSIGN_OR_RETURN(frame.latencyMs, lat.number(-kMaxMs, kMaxMs));
    if (!(frame.latencyMs > 0)) return lat.error("a frame's latency bound must be > 0 ms");
  }
  ZP_ASSIGN_OR_RETURN(JsonAt dnns, f.at("dnns"));
  ZP_ASSIGN_OR_RETURN(auto items, dnns.array());
  if (items.empty()) return dnns.error("a frame runs at least one DNN");
  for (const auto& d : items) {
    ZP_ASSIGN_OR_RETURN(std::string name, d.string());
    if (!named(taskNames, name)) return d.error(fmt::format("the profile has no task '{}'", name));
    if (named(frame.dnns, name)) return d.error(fmt::format("'{}' is named twice", name));
    frame.dnns.push_back(name);
  }
  if (f.has("depends_on")) {
    ZP_ASSIGN_OR_RETURN(JsonAt deps, f.at("depends_on"));
    ZP_ASSIGN_OR_RETURN(auto members, deps.members());
    for (const auto& [dnn, on] : members) {
      if (!named(frame.dnns, dnn)) return on.error(fmt::format("the frame runs no DNN '{}'", dnn));
      ZP_ASSIGN_OR_RETURN(auto list, on.strings());
      for (const auto& e : list) {
        if (!named(frame.dnns, e)) return on.error(fmt::format("'{}' depends on '{}', which the frame does not run", dnn, e));
        frame.dependsOn.emplace_back(dnn, e);
      }
    }
    auto chains = plan::frameChains(frame);
    if (!chains.ok()) return deps.error(chains.error().message);
  }
  return frame;
}

}  // namespace

Expected<std::optional<plan::WorkloadSpec>> readSloWorkload(const fs::path& path,
                                                            const std::vector<std::string>& taskNames) {
  ZP_ASSIGN_OR_RETURN(std::string text, readFile(path));
  ZP_ASSIGN_OR_RETURN(Json j, parseJson(text, path.string()));
  const std::string label = path.string();  // JsonAt refers to it
  JsonAt root(j, label);
  if (!root.has("workload")) return std::optional<plan::WorkloadSpec>();
  ZP_ASSIGN_OR_RETURN(JsonAt w, root.at("workload"));
  ZP_TRY(knownFields(w, {"process", "rate_qps", "arrivals", "frames", "memory_budget"}));
  plan::WorkloadSpec r;
  if (w.has("process")) { ZP_ASSIGN_OR_RETURN(r.process, w.string("process")); }
  if (r.process != "poisson" && r.process != "periodic")
    return w.error(fmt::format("process: '{}' is not poisson or periodic", r.process));
  if (!w.has("rate_qps") && !w.has("arrivals") && !w.has("frames"))
    return w.error("names no queries: give rate_qps (per task), arrivals (a CSV file) or frames");
  if (w.has("rate_qps") && w.has("arrivals"))
    return w.error("rate_qps and arrivals: give one (the arrivals file replaces the rates)");
  if (w.has("rate_qps")) {
    ZP_ASSIGN_OR_RETURN(JsonAt rates, w.at("rate_qps"));
    ZP_ASSIGN_OR_RETURN(auto members, rates.members());
    for (const auto& [name, rj] : members) {
      if (!named(taskNames, name)) return rj.error("the profile has no such task");
      ZP_ASSIGN_OR_RETURN(r.rateQps[name], rj.number(1e-6, 1e6));
    }
  }
  if (w.has("arrivals")) { ZP_ASSIGN_OR_RETURN(r.arrivals, w.string("arrivals")); }
  if (w.has("frames")) {
    ZP_ASSIGN_OR_RETURN(auto frames, w.array("frames"));
    for (const auto& f : frames) {
      ZP_ASSIGN_OR_RETURN(auto frame, readFrame(f, taskNames));
      for (const auto& other : r.frames)
        if (other.name == frame.name) return f.error(fmt::format("a second frame named '{}'", frame.name));
      r.frames.push_back(std::move(frame));
    }
  }
  if (r.arrivals.empty())
    for (const auto& name : taskNames) {
      const bool framed = std::any_of(r.frames.begin(), r.frames.end(), [&](const auto& f) { return named(f.dnns, name); });
      if (!r.rateQps.count(name) && !framed)
        return w.error(fmt::format("task '{}' has no rate (rate_qps) and runs in no frame", name));
    }
  if (w.has("memory_budget")) {
    ZP_ASSIGN_OR_RETURN(JsonAt b, w.at("memory_budget"));
    if (b.json().is_number()) {
      ZP_ASSIGN_OR_RETURN(int64_t bytes, b.integer(1));
      r.memoryBudget = std::to_string(bytes);
    } else {
      ZP_ASSIGN_OR_RETURN(r.memoryBudget, b.string());
      if (r.memoryBudget.empty()) return b.error("expected a percentage such as \"60%\" or a number of bytes");
    }
  }
  return std::optional<plan::WorkloadSpec>(std::move(r));
}

Json workloadJson(const plan::WorkloadSpec& w) {
  Json j{{"process", w.process}};
  if (!w.rateQps.empty()) j["rate_qps"] = w.rateQps;
  if (!w.arrivals.empty()) j["arrivals"] = w.arrivals;
  if (!w.memoryBudget.empty()) j["memory_budget"] = w.memoryBudget;
  if (!w.frames.empty()) {
    Json frames = Json::array();
    for (const auto& f : w.frames) {
      Json deps = Json::object();
      for (const auto& [dnn, on] : f.dependsOn) deps[dnn].push_back(on);
      Json fj{{"name", f.name}, {"period_ms", f.periodMs}, {"latency_ms", f.latencyMs}, {"dnns", f.dnns}};
      if (!f.dependsOn.empty()) fj["depends_on"] = deps;
      frames.push_back(std::move(fj));
    }
    j["frames"] = std::move(frames);
  }
  return j;
}

Json sloFileJson(const std::vector<plan::SloConfiguration>& configs, const std::optional<plan::WorkloadSpec>& workload) {
  auto tasksJson = [](const plan::SloConfiguration& c) {
    Json tj = Json::object();
    for (const auto& [t, s] : c.tasks) tj[t] = Json{{"accuracy", s.accuracy}, {"latency_ms", s.latencyMs}};
    return tj;
  };
  Json j{{"schema_version", 1}};
  if (workload) j["workload"] = workloadJson(*workload);
  if (configs.size() == 1 && configs.front().id == kPerTaskSloId) {
    j["tasks"] = tasksJson(configs.front());
    return j;
  }
  j["configurations"] = Json::array();
  for (const auto& c : configs) {
    Json tj = Json::object();
    for (const auto& [t, s] : c.tasks) tj[t] = Json{{"accuracy", s.accuracy}, {"latency_ms", s.latencyMs}};
    j["configurations"].push_back(Json{{"id", c.id}, {"tasks", tj}});
  }
  return j;
}

}  // namespace zp::artifacts
