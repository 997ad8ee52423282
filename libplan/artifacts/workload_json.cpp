#include "libplan/artifacts/workload_json.h"

#include <cmath>
#include <set>

#include <fmt/format.h>

#include "libplan/util/file.h"
#include "libplan/util/json.h"
#include "libplan/util/validate.h"
#include "libplan/util/json_reader.h"

namespace zp::artifacts {

namespace fs = std::filesystem;
using sim::GroupCost;

namespace {

struct Ctx {
  std::string label;
  Error err(const std::string& path, const std::string& msg) const { return Error{label + ": " + path + ": " + msg}; }
};

int accIndex(const std::vector<std::string>& accs, const std::string& name) {
  for (size_t i = 0; i < accs.size(); ++i)
    if (accs[i] == name) return static_cast<int>(i);
  return -1;
}

// {"GPU": 0.45, "DLA": 0.75} -> per-accelerator vector (missing = `missing`), each at most `max`.
Expected<std::vector<double>> perAcc(const Ctx& c, const Json& j, const std::string& path,
                                     const std::vector<std::string>& accs, double missing, bool positive,
                                     double max = kMaxLatencyMs) {
  std::vector<double> v(accs.size(), missing);
  if (!j.is_object()) return c.err(path, "expected an object {accelerator: number}");
  for (auto it = j.begin(); it != j.end(); ++it) {
    int a = accIndex(accs, it.key());
    if (a < 0) return c.err(path + "." + it.key(), "unknown accelerator");
    if (!it.value().is_number()) return c.err(path + "." + it.key(), "expected a number");
    double x = it.value().get<double>();
    if (!std::isfinite(x) || x < 0 || (positive && x <= 0))
      return c.err(path + "." + it.key(), positive ? "must be a positive number" : "must be >= 0");
    if (x > max) return c.err(path + "." + it.key(), fmt::format("{} is above {}", x, max));
    v[static_cast<size_t>(a)] = x;
  }
  return v;
}

Status checkKeys(const Ctx& c, const Json& j, const std::string& path, const std::set<std::string>& allowed) {
  for (auto it = j.begin(); it != j.end(); ++it)
    if (!allowed.count(it.key())) return c.err(path, "unknown field '" + it.key() + "'");
  return {};
}

// $.processors[i]: {name, kind?, cores?, policy?, gemm?, threads?}.
Expected<Processor> parseProcessor(const Ctx& c, const Json& pj, const std::string& p) {
  if (!pj.is_object()) return c.err(p, "expected an object");
  ZP_TRY(checkKeys(c, pj, p, {"name", "kind", "cores", "policy", "gemm", "threads"}));
  Processor out;
  auto text = [&](const char* key, std::string& into) -> Status {
    if (!pj.contains(key)) return {};
    if (!pj[key].is_string() || pj[key].get<std::string>().empty()) return c.err(p + "." + key, "expected a non-empty string");
    into = pj[key].get<std::string>();
    return {};
  };
  if (!pj.contains("name")) return c.err(p + ".name", "missing");
  ZP_TRY(text("name", out.name));
  ZP_TRY(text("kind", out.kind));
  ZP_TRY(text("policy", out.policy));
  ZP_TRY(text("gemm", out.gemm));
  if (out.gemm != "onednn" && out.gemm != "blis") return c.err(p + ".gemm", "expected \"onednn\" or \"blis\"");
  if (pj.contains("threads")) {
    if (!pj["threads"].is_number_integer()) return c.err(p + ".threads", "expected an integer");
    if (auto problem = threadCountProblem(pj["threads"].get<int64_t>())) return c.err(p + ".threads", *problem);
    out.threads = pj["threads"].get<int>();
  }
  if (pj.contains("cores")) {
    if (!pj["cores"].is_array()) return c.err(p + ".cores", "expected an array of core ids");
    for (const auto& core : pj["cores"]) {
      if (!core.is_number_integer() || core.get<int64_t>() < 0 || core.get<int64_t>() > 4095)
        return c.err(p + ".cores", "expected core ids in [0, 4095]");
      out.cores.push_back(core.get<int>());
    }
  }
  return out;
}

// Every accelerator once; kept in accelerator order.
Status parseProcessors(const Ctx& c, const Json& ps, WorkloadSpec& w) {
  if (!ps.is_array()) return c.err("$.processors", "expected an array, one host processor per accelerator");
  std::vector<std::optional<Processor>> byAcc(w.accelerators.size());
  for (size_t i = 0; i < ps.size(); ++i) {
    const std::string p = fmt::format("$.processors[{}]", i);
    ZP_ASSIGN_OR_RETURN(auto proc, parseProcessor(c, ps[i], p));
    const int a = accIndex(w.accelerators, proc.name);
    if (a < 0) return c.err(p + ".name", "'" + proc.name + "' is not an accelerator of the workload");
    if (byAcc[static_cast<size_t>(a)]) return c.err(p + ".name", "accelerator '" + proc.name + "' is given twice");
    byAcc[static_cast<size_t>(a)] = std::move(proc);
  }
  for (size_t a = 0; a < byAcc.size(); ++a) {
    if (!byAcc[a]) return c.err("$.processors", "no processor for accelerator '" + w.accelerators[a] + "'");
    w.processors.push_back(std::move(*byAcc[a]));
  }
  return {};
}

Status parseHeader(const Ctx& c, const Json& j, const fs::path& baseDir, WorkloadSpec& w) {
  if (!j.is_object()) return c.err("$", "expected an object");
  ZP_TRY(checkKeys(c, j, "$", {"version", "name", "source", "accelerators", "contention", "objective", "processors",
                                 "dnns"}));
  if (!j.contains("version") || j["version"] != 1) return c.err("$.version", "must be 1");
  if (j.contains("name")) {
    if (!j["name"].is_string()) return c.err("$.name", "expected a string");
    w.name = j["name"].get<std::string>();
  }
  if (!j.contains("accelerators") || !j["accelerators"].is_array() || j["accelerators"].size() < 1)
    return c.err("$.accelerators", "expected a non-empty array of accelerator names");
  for (size_t i = 0; i < j["accelerators"].size(); ++i) {
    const Json& a = j["accelerators"][i];
    std::string p = fmt::format("$.accelerators[{}]", i);
    if (!a.is_string() || a.get<std::string>().empty()) return c.err(p, "expected a non-empty string");
    if (accIndex(w.accelerators, a.get<std::string>()) >= 0)
      return c.err(p, "duplicate accelerator '" + a.get<std::string>() + "'");
    w.accelerators.push_back(a.get<std::string>());
  }
  if (j.contains("objective")) {
    if (j["objective"] == "latency") w.objective = sim::Objective::Latency;
    else if (j["objective"] == "throughput") w.objective = sim::Objective::Throughput;
    else return c.err("$.objective", "must be 'latency' or 'throughput'");
  }
  if (j.contains("contention")) {
    if (!j["contention"].is_string()) return c.err("$.contention", "expected a path to a contention CSV");
    w.contention = baseDir / j["contention"].get<std::string>();
  }
  if (j.contains("processors")) ZP_TRY(parseProcessors(c, j["processors"], w));
  if (!j.contains("dnns") || !j["dnns"].is_array() || j["dnns"].empty())
    return c.err("$.dnns", "expected a non-empty array");
  return {};
}

// "name", "instances", "dependsOn" of $.dnns[n] (`p`), against the DNNs before it.
Status parseIdentity(const Ctx& c, const Json& d, const std::string& p, const std::vector<WorkloadDnn>& before,
                     WorkloadDnn& e) {
  if (!d.contains("name") || !d["name"].is_string() || d["name"].get<std::string>().empty())
    return c.err(p + ".name", "expected a non-empty string");
  e.name = d["name"].get<std::string>();
  if (e.name.find('#') != std::string::npos) return c.err(p + ".name", "must not contain '#'");
  for (const auto& o : before)
    if (o.name == e.name) return c.err(p + ".name", "duplicate DNN name '" + e.name + "'");
  if (d.contains("instances")) {
    if (!d["instances"].is_number_integer() || d["instances"].get<int64_t>() < 1 || d["instances"].get<int64_t>() > 64)
      return c.err(p + ".instances", "expected an integer in [1, 64]");
    e.instances = d["instances"].get<int>();
  }
  if (!d.contains("dependsOn")) return {};
  if (!d["dependsOn"].is_array()) return c.err(p + ".dependsOn", "expected an array of DNN names");
  for (size_t k = 0; k < d["dependsOn"].size(); ++k) {
    const Json& x = d["dependsOn"][k];
    std::string xp = fmt::format("{}.dependsOn[{}]", p, k);
    if (!x.is_string()) return c.err(xp, "expected a DNN name");
    const WorkloadDnn* dep = nullptr;
    for (const auto& o : before)
      if (o.name == x.get<std::string>()) dep = &o;
    if (!dep) return c.err(xp, "'" + x.get<std::string>() + "' is not a DNN listed before this one");
    if (dep->instances != 1 && dep->instances != e.instances)
      return c.err(xp, fmt::format("'{}' has {} instances; a dependent must have 1 or the same number ({})", dep->name,
                                   dep->instances, e.instances));
    e.dependsOn.push_back(dep->name);
  }
  return {};
}

// A model DNN: model, profile, task, variant and the grouping options; or a
// zoo's variant: zoo, profile (zoo-profile's folder), task, variant.
Status parseModelSource(const Ctx& c, const Json& d, const std::string& p, const fs::path& baseDir, WorkloadDnn& e) {
  const bool zoo = d.contains("zoo");
  for (const char* k : {zoo ? "zoo" : "model", "profile", "task", "variant"})
    if (!d.contains(k) || !d[k].is_string())
      return c.err(p + "." + k, zoo ? "expected a string (a zoo's variant needs zoo, profile, task, variant)"
                                    : "expected a string (model needs model, profile, task, variant)");
  for (const char* k : {"task", "variant"})
    if (auto problem = idProblem(d[k].get<std::string>())) return c.err(p + "." + k, *problem);
  e.task = d["task"].get<std::string>();
  e.variant = d["variant"].get<std::string>();
  if (zoo) {
    e.source = WorkloadDnn::Source::ZooVariant;
    e.zoo = baseDir / d["zoo"].get<std::string>();
    e.profileDir = baseDir / d["profile"].get<std::string>();
  } else {
    e.source = WorkloadDnn::Source::Model;
    e.model = baseDir / d["model"].get<std::string>();
    e.profile = baseDir / d["profile"].get<std::string>();
  }
  if (!d.contains("grouping")) return {};
  const Json& o = d["grouping"];
  const std::string op = p + ".grouping";
  if (!o.is_object()) return c.err(op, "expected an object");
  ZP_TRY(checkKeys(c, o, op, {"minTimeToTransition", "maxGroups", "transitionOverheadMs", "transitionBandwidthGBs", "peakBandwidthGBs"}));
  auto num = [&](const char* k, std::optional<double>& dst, bool integer) -> Status {
    if (!o.contains(k)) return {};
    if (!o[k].is_number() || (integer && !o[k].is_number_integer()) || o[k].get<double>() < 0)
      return c.err(op + "." + k, integer ? "expected a non-negative integer" : "expected a non-negative number");
    dst = o[k].get<double>();
    return {};
  };
  GroupingOptions& g = e.grouping;
  std::optional<double> maxGroups;
  ZP_TRY(num("minTimeToTransition", g.minTimeToTransition, false));
  ZP_TRY(num("maxGroups", maxGroups, true));
  if (maxGroups && *maxGroups > 1e6) return c.err(op + ".maxGroups", fmt::format("{} is above 1000000", *maxGroups));
  if (maxGroups) g.maxGroups = static_cast<int>(*maxGroups);
  ZP_TRY(num("transitionOverheadMs", g.transitionOverheadMs, false));
  ZP_TRY(num("transitionBandwidthGBs", g.transitionBandwidthGBs, false));
  ZP_TRY(num("peakBandwidthGBs", g.peakBandwidthGBs, false));
  const double transitionBw = g.transitionBandwidthGBs.value_or(1), peakBw = g.peakBandwidthGBs.value_or(1);
  if (transitionBw <= 0 || peakBw <= 0) return c.err(op, "bandwidths must be positive");
  // Times derived from these must stay finite.
  if (transitionBw < 1e-6 || peakBw < 1e-6) return c.err(op, "bandwidths below 1e-06 GB/s");
  if (g.minTimeToTransition.value_or(0) > kMaxLatencyMs || g.transitionOverheadMs.value_or(0) > kMaxLatencyMs)
    return c.err(op, fmt::format("times above {} ms", kMaxLatencyMs));
  return {};
}

// Inline "groups": the layer groups as rows per accelerator.
Status parseInlineGroups(const Ctx& c, const Json& gs, const std::string& p, const std::vector<std::string>& accs,
                         WorkloadDnn& e) {
  if (!gs.is_array() || gs.empty()) return c.err(p + ".groups", "expected a non-empty array");
  for (size_t i = 0; i < gs.size(); ++i) {
    const Json& g = gs[i];
    std::string gp = fmt::format("{}.groups[{}]", p, i);
    if (!g.is_object()) return c.err(gp, "expected an object");
    ZP_TRY(checkKeys(c, g, gp, {"name", "layers", "timeMs", "transitionOutMs", "transitionInMs", "memThroughput"}));
    GroupCost gc;
    gc.name = fmt::format("g{}", i);
    if (g.contains("name")) {
      if (!g["name"].is_string()) return c.err(gp + ".name", "expected a string");
      gc.name = g["name"].get<std::string>();
    }
    if (!g.contains("timeMs")) return c.err(gp, "missing field 'timeMs'");
    ZP_ASSIGN_OR_RETURN(gc.timeMs, perAcc(c, g["timeMs"], gp + ".timeMs", accs, -1, true));
    gc.transitionOutMs.assign(accs.size(), 0);
    gc.transitionInMs.assign(accs.size(), 0);
    gc.demand.assign(accs.size(), 0);
    if (g.contains("transitionOutMs")) {
      ZP_ASSIGN_OR_RETURN(gc.transitionOutMs, perAcc(c, g["transitionOutMs"], gp + ".transitionOutMs", accs, 0, false));
    }
    if (g.contains("transitionInMs")) {
      ZP_ASSIGN_OR_RETURN(gc.transitionInMs, perAcc(c, g["transitionInMs"], gp + ".transitionInMs", accs, 0, false));
    }
    if (g.contains("memThroughput")) {
      ZP_ASSIGN_OR_RETURN(gc.demand, perAcc(c, g["memThroughput"], gp + ".memThroughput", accs, 0, false, 1e6));
    }
    e.groups.push_back(std::move(gc));
  }
  return {};
}

Expected<WorkloadDnn> parseDnn(const Ctx& c, const Json& d, size_t n, const fs::path& baseDir,
                               const WorkloadSpec& w) {
  WorkloadDnn e;
  e.jsonPath = fmt::format("$.dnns[{}]", n);
  const std::string& p = e.jsonPath;
  if (!d.is_object()) return c.err(p, "expected an object");
  ZP_TRY(checkKeys(c, d, p, {"name", "instances", "dependsOn", "groups", "groupsCsv", "model", "zoo", "profile", "task",
                             "variant", "grouping"}));
  ZP_TRY(parseIdentity(c, d, p, w.dnns, e));
  const int sources = d.contains("groups") + d.contains("groupsCsv") + d.contains("model") + d.contains("zoo");
  if (sources != 1) return c.err(p, "give exactly one of 'groups', 'groupsCsv', 'model' or 'zoo'");
  if (d.contains("model") || d.contains("zoo")) {
    ZP_TRY(parseModelSource(c, d, p, baseDir, e));
  } else if (d.contains("groupsCsv")) {
    if (!d["groupsCsv"].is_string()) return c.err(p + ".groupsCsv", "expected a path");
    e.source = WorkloadDnn::Source::GroupsCsv;
    e.groupsCsv = baseDir / d["groupsCsv"].get<std::string>();
  } else {
    ZP_TRY(parseInlineGroups(c, d["groups"], p, w.accelerators, e));
  }
  return e;
}

}  // namespace

Expected<WorkloadSpec> parseWorkloadJson(const std::string& text, const std::string& label, const fs::path& baseDir) {
  Ctx c{label};
  ZP_ASSIGN_OR_RETURN(Json j, parseJson(text, label));
  WorkloadSpec w;
  ZP_TRY(parseHeader(c, j, baseDir, w));
  for (size_t n = 0; n < j["dnns"].size(); ++n) {
    ZP_ASSIGN_OR_RETURN(WorkloadDnn d, parseDnn(c, j["dnns"][n], n, baseDir, w));
    w.dnns.push_back(std::move(d));
  }
  return w;
}

Expected<WorkloadSpec> readWorkloadJson(const fs::path& path) {
  ZP_ASSIGN_OR_RETURN(std::string text, readFile(path));
  const fs::path base = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  return parseWorkloadJson(text, path.string(), base);
}

namespace {

// `p` as the reader resolves it against `baseDir`: relative when that gives `p` back.
std::string pathFrom(const fs::path& p, const fs::path& baseDir) {
  const fs::path rel = p.lexically_relative(baseDir);
  if (rel.empty() || baseDir / rel != p) return p.generic_string();
  return rel.generic_string();
}

Json perAccJson(const std::vector<double>& v, const std::vector<std::string>& accs, bool onlyAllowed) {
  Json j = Json::object();
  for (size_t a = 0; a < accs.size(); ++a)
    if (!onlyAllowed || v[a] >= 0) j[accs[a]] = v[a];
  return j;
}

Json groupJson(const GroupCost& g, const std::vector<std::string>& accs) {
  return Json{{"name", g.name},
              {"timeMs", perAccJson(g.timeMs, accs, true)},
              {"transitionOutMs", perAccJson(g.transitionOutMs, accs, false)},
              {"transitionInMs", perAccJson(g.transitionInMs, accs, false)},
              {"memThroughput", perAccJson(g.demand, accs, false)}};
}

void putGrouping(const GroupingOptions& o, Json& d) {
  Json g = Json::object();
  if (o.minTimeToTransition) g["minTimeToTransition"] = *o.minTimeToTransition;
  if (o.maxGroups) g["maxGroups"] = *o.maxGroups;
  if (o.transitionOverheadMs) g["transitionOverheadMs"] = *o.transitionOverheadMs;
  if (o.transitionBandwidthGBs) g["transitionBandwidthGBs"] = *o.transitionBandwidthGBs;
  if (o.peakBandwidthGBs) g["peakBandwidthGBs"] = *o.peakBandwidthGBs;
  if (!g.empty()) d["grouping"] = g;
}

Json dnnJson(const WorkloadDnn& e, const std::vector<std::string>& accs, const fs::path& baseDir) {
  Json d{{"name", e.name}};
  if (e.instances != 1) d["instances"] = e.instances;
  if (!e.dependsOn.empty()) d["dependsOn"] = e.dependsOn;
  switch (e.source) {
    case WorkloadDnn::Source::Groups: {
      Json gs = Json::array();
      for (const auto& g : e.groups) gs.push_back(groupJson(g, accs));
      d["groups"] = gs;
      break;
    }
    case WorkloadDnn::Source::GroupsCsv:
      d["groupsCsv"] = pathFrom(e.groupsCsv, baseDir);
      break;
    case WorkloadDnn::Source::Model:
    case WorkloadDnn::Source::ZooVariant: {
      const bool zoo = e.source == WorkloadDnn::Source::ZooVariant;
      d[zoo ? "zoo" : "model"] = pathFrom(zoo ? e.zoo : e.model, baseDir);
      d["profile"] = pathFrom(zoo ? e.profileDir : e.profile, baseDir);
      d["task"] = e.task;
      d["variant"] = e.variant;
      putGrouping(e.grouping, d);
      break;
    }
  }
  return d;
}

}  // namespace

std::string formatWorkloadJson(const WorkloadSpec& spec, const fs::path& baseDir) {
  Json j{{"version", 1},
         {"accelerators", spec.accelerators},
         {"objective", spec.objective == sim::Objective::Throughput ? "throughput" : "latency"}};
  if (!spec.name.empty()) j["name"] = spec.name;
  if (spec.contention) j["contention"] = pathFrom(*spec.contention, baseDir);
  if (!spec.processors.empty()) {
    Json& ps = j["processors"] = Json::array();
    for (const auto& p : spec.processors) {
      Json pj{{"name", p.name}, {"kind", p.kind}, {"policy", p.policy}, {"threads", p.threads}};
      if (!p.cores.empty()) pj["cores"] = p.cores;
      if (!p.gemm.empty()) pj["gemm"] = p.gemm;
      ps.push_back(std::move(pj));
    }
  }
  Json dnns = Json::array();
  for (const auto& d : spec.dnns) dnns.push_back(dnnJson(d, spec.accelerators, baseDir));
  j["dnns"] = dnns;
  return canonicalJsonExact(j);
}

}  // namespace zp::artifacts
