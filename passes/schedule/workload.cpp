#include "passes/schedule/workload.h"

#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>

#include "libplan/graph/model_io.h"
#include "libplan/util/csv.h"
#include "libplan/util/file.h"
#include "libplan/util/validate.h"
#include "passes/grouping/grouping.h"

namespace zp::schedule {

namespace fs = std::filesystem;
using sim::GroupCost;

namespace {

struct Ctx {
  std::string label;
  Error err(const std::string& path, const std::string& msg) const {
    return Error{label + ": " + path + ": " + msg};
  }
};

int accIndex(const std::vector<std::string>& accs, const std::string& name) {
  for (size_t i = 0; i < accs.size(); ++i)
    if (accs[i] == name) return static_cast<int>(i);
  return -1;
}

// {"GPU": 0.45, "DLA": 0.75} -> per-accelerator vector (missing = `missing`), each at most `max`.
Expected<std::vector<double>> perAcc(const Ctx& c, const Json& j, const std::string& path,
                                     const std::vector<std::string>& accs, double missing,
                                     bool positive, double max = kMaxLatencyMs) {
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

}  // namespace

Expected<std::vector<GroupCost>> parseGroupRowsCsv(const std::string& text, const std::string& label,
                                                   const std::vector<std::string>& accs) {
  static const std::vector<std::string> kCols = {"group", "accelerator", "time_ms", "transition_out_ms",
                                                 "transition_in_ms", "mem_throughput"};
  ZP_ASSIGN_OR_RETURN(auto records, parseCsv(text, label, CsvOptions{',', true, true, true}));
  bool header = false;
  std::vector<GroupCost> groups;
  std::map<std::string, size_t> index;
  std::set<std::pair<std::string, int>> seen;
  const size_t A = accs.size();
  for (const auto& rec : records) {
    const int lineNo = rec.line;
    const auto& cells = rec.fields;
    if (!header) {
      if (cells != kCols)
        return makeError("{}:{}: header must be '{}'", label, lineNo,
                         "group,accelerator,time_ms,transition_out_ms,transition_in_ms,mem_throughput");
      header = true;
      continue;
    }
    if (cells.size() != kCols.size())
      return makeError("{}:{}: expected {} columns, got {}", label, lineNo, kCols.size(), cells.size());
    int a = accIndex(accs, cells[1]);
    if (a < 0) return makeError("{}:{}: unknown accelerator '{}'", label, lineNo, cells[1]);
    double v[4];
    for (int k = 0; k < 4; ++k) {
      const std::string& s = cells[static_cast<size_t>(k + 2)];
      char* end = nullptr;
      v[k] = std::strtod(s.c_str(), &end);
      if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(v[k]) || v[k] < 0 ||
          (k == 0 && v[k] <= 0))
        return makeError("{}:{}: {} '{}' is not a {} number", label, lineNo, kCols[static_cast<size_t>(k + 2)], s,
                         k == 0 ? "positive" : "non-negative");
      if (v[k] > kMaxLatencyMs)  // times in ms; demands are fractions or GB/s, far below this
        return makeError("{}:{}: {} '{}' is above {}", label, lineNo, kCols[static_cast<size_t>(k + 2)], s, kMaxLatencyMs);
    }
    if (!seen.insert({cells[0], a}).second)
      return makeError("{}:{}: duplicate row for group '{}' on '{}'", label, lineNo, cells[0], cells[1]);
    auto it = index.find(cells[0]);
    if (it == index.end()) {
      GroupCost g;
      g.name = cells[0];
      g.timeMs.assign(A, -1);
      g.transitionOutMs.assign(A, 0);
      g.transitionInMs.assign(A, 0);
      g.demand.assign(A, 0);
      it = index.emplace(cells[0], groups.size()).first;
      groups.push_back(std::move(g));
    }
    auto& g = groups[it->second];
    g.timeMs[static_cast<size_t>(a)] = v[0];
    g.transitionOutMs[static_cast<size_t>(a)] = v[1];
    g.transitionInMs[static_cast<size_t>(a)] = v[2];
    g.demand[static_cast<size_t>(a)] = v[3];
  }
  if (!header) return makeError("{}: empty group rows CSV", label);
  if (groups.empty()) return makeError("{}: no group rows", label);
  return groups;
}

Expected<Workload> loadWorkload(const fs::path& path) {
  ZP_ASSIGN_OR_RETURN(std::string text, readFile(path));
  fs::path base = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  ZP_ASSIGN_OR_RETURN(Workload w, parseWorkload(text, path.string(), base));
  w.inputFiles.insert(w.inputFiles.begin(), path);
  return w;
}

Expected<Workload> parseWorkload(const std::string& text, const std::string& label, const fs::path& baseDir) {
  Ctx c{label};
  Json j = Json::parse(text, nullptr, false);
  if (j.is_discarded()) return makeError("{}: not valid JSON", label);
  if (!j.is_object()) return c.err("$", "expected an object");
  ZP_TRY(checkKeys(c, j, "$", {"version", "name", "source", "accelerators", "contention", "objective", "dnns"}));
  if (!j.contains("version") || j["version"] != 1) return c.err("$.version", "must be 1");
  Workload w;
  if (j.contains("name")) {
    if (!j["name"].is_string()) return c.err("$.name", "expected a string");
    w.name = j["name"].get<std::string>();
  }
  if (!j.contains("accelerators") || !j["accelerators"].is_array() || j["accelerators"].size() < 1)
    return c.err("$.accelerators", "expected a non-empty array of accelerator names");
  auto& accs = w.problem.accelerators;
  for (size_t i = 0; i < j["accelerators"].size(); ++i) {
    const Json& a = j["accelerators"][i];
    std::string p = fmt::format("$.accelerators[{}]", i);
    if (!a.is_string() || a.get<std::string>().empty()) return c.err(p, "expected a non-empty string");
    if (accIndex(accs, a.get<std::string>()) >= 0) return c.err(p, "duplicate accelerator '" + a.get<std::string>() + "'");
    accs.push_back(a.get<std::string>());
  }
  if (j.contains("objective")) {
    if (j["objective"] == "latency") w.objective = sim::Objective::Latency;
    else if (j["objective"] == "throughput") w.objective = sim::Objective::Throughput;
    else return c.err("$.objective", "must be 'latency' or 'throughput'");
  }
  if (j.contains("contention")) {
    if (!j["contention"].is_string()) return c.err("$.contention", "expected a path to a contention CSV");
    fs::path cp = baseDir / j["contention"].get<std::string>();
    auto m = sim::ContentionModel::loadCsv(cp, accs);
    if (!m.ok()) return c.err("$.contention", m.error().message);
    w.problem.contention = std::move(m).value();
    w.inputFiles.push_back(cp);
  } else {
    w.problem.contention = sim::ContentionModel::none(static_cast<int>(accs.size()));
  }
  if (!j.contains("dnns") || !j["dnns"].is_array() || j["dnns"].empty())
    return c.err("$.dnns", "expected a non-empty array");
  struct Entry { std::string name; int instances; std::vector<std::string> deps; std::vector<GroupCost> groups; };
  std::vector<Entry> entries;
  for (size_t n = 0; n < j["dnns"].size(); ++n) {
    const Json& d = j["dnns"][n];
    std::string p = fmt::format("$.dnns[{}]", n);
    if (!d.is_object()) return c.err(p, "expected an object");
    ZP_TRY(checkKeys(c, d, p, {"name", "instances", "dependsOn", "groups", "groupsCsv", "model", "profile", "task", "variant", "grouping"}));
    Entry e;
    if (!d.contains("name") || !d["name"].is_string() || d["name"].get<std::string>().empty())
      return c.err(p + ".name", "expected a non-empty string");
    e.name = d["name"].get<std::string>();
    if (e.name.find('#') != std::string::npos) return c.err(p + ".name", "must not contain '#'");
    for (const auto& o : entries)
      if (o.name == e.name) return c.err(p + ".name", "duplicate DNN name '" + e.name + "'");
    e.instances = 1;
    if (d.contains("instances")) {
      if (!d["instances"].is_number_integer() || d["instances"].get<int64_t>() < 1 || d["instances"].get<int64_t>() > 64)
        return c.err(p + ".instances", "expected an integer in [1, 64]");
      e.instances = d["instances"].get<int>();
    }
    if (d.contains("dependsOn")) {
      if (!d["dependsOn"].is_array()) return c.err(p + ".dependsOn", "expected an array of DNN names");
      for (size_t k = 0; k < d["dependsOn"].size(); ++k) {
        const Json& x = d["dependsOn"][k];
        std::string xp = fmt::format("{}.dependsOn[{}]", p, k);
        if (!x.is_string()) return c.err(xp, "expected a DNN name");
        const Entry* dep = nullptr;
        for (const auto& o : entries)
          if (o.name == x.get<std::string>()) dep = &o;
        if (!dep) return c.err(xp, "'" + x.get<std::string>() + "' is not a DNN listed before this one");
        if (dep->instances != 1 && dep->instances != e.instances)
          return c.err(xp, fmt::format("'{}' has {} instances; a dependent must have 1 or the same number ({})",
                                       dep->name, dep->instances, e.instances));
        e.deps.push_back(dep->name);
      }
    }
    int sources = d.contains("groups") + d.contains("groupsCsv") + d.contains("model");
    if (sources != 1) return c.err(p, "give exactly one of 'groups', 'groupsCsv' or 'model'");
    if (d.contains("model")) {
      // ONNX model + profile node rows -> layer groups (passes/grouping).
      for (const char* k : {"model", "profile", "task", "variant"})
        if (!d.contains(k) || !d[k].is_string()) return c.err(p + "." + k, "expected a string (model needs model, profile, task, variant)");
      for (const char* k : {"task", "variant"})
        if (auto problem = idProblem(d[k].get<std::string>())) return c.err(p + "." + k, *problem);
      grouping::GroupingParams gp;
      gp.accelerators = accs;
      gp.task = d["task"].get<std::string>();
      gp.variant = d["variant"].get<std::string>();
      if (d.contains("grouping")) {
        const Json& o = d["grouping"];
        std::string op = p + ".grouping";
        if (!o.is_object()) return c.err(op, "expected an object");
        ZP_TRY(checkKeys(c, o, op, {"minTimeToTransition", "maxGroups", "transitionOverheadMs", "transitionBandwidthGBs", "peakBandwidthGBs"}));
        auto num = [&](const char* k, double& dst, bool integer) -> Status {
          if (!o.contains(k)) return {};
          if (!o[k].is_number() || (integer && !o[k].is_number_integer()) || o[k].get<double>() < 0)
            return c.err(op + "." + k, integer ? "expected a non-negative integer" : "expected a non-negative number");
          dst = o[k].get<double>();
          return {};
        };
        double maxGroups = 0;
        ZP_TRY(num("minTimeToTransition", gp.minTimeToTransition, false));
        ZP_TRY(num("maxGroups", maxGroups, true));
        if (maxGroups > 1e6) return c.err(op + ".maxGroups", fmt::format("{} is above 1000000", maxGroups));
        ZP_TRY(num("transitionOverheadMs", gp.transitionOverheadMs, false));
        ZP_TRY(num("transitionBandwidthGBs", gp.transitionBandwidthGBs, false));
        ZP_TRY(num("peakBandwidthGBs", gp.peakBandwidthGBs, false));
        gp.maxGroups = static_cast<int>(maxGroups);
        if (gp.transitionBandwidthGBs <= 0 || gp.peakBandwidthGBs <= 0) return c.err(op, "bandwidths must be positive");
        // Times derived from these must stay finite.
        if (gp.transitionBandwidthGBs < 1e-6 || gp.peakBandwidthGBs < 1e-6) return c.err(op, "bandwidths below 1e-06 GB/s");
        if (gp.minTimeToTransition > kMaxLatencyMs || gp.transitionOverheadMs > kMaxLatencyMs)
          return c.err(op, fmt::format("times above {} ms", kMaxLatencyMs));
      }
      fs::path mp = baseDir / d["model"].get<std::string>();
      fs::path pp = baseDir / d["profile"].get<std::string>();
      auto model = graph::loadModel(mp);
      if (!model.ok()) return c.err(p + ".model", model.error().message);
      auto db = profile::readProfileCsv(pp);
      if (!db.ok()) return c.err(p + ".profile", db.error().message);
      graph::GraphView view(*model);
      auto g = grouping::groupLayers(view, *db, gp, mp.string());
      if (!g.ok()) return c.err(p + ".model", g.error().message);
      e.groups = std::move(g).value().groups;
      w.inputFiles.push_back(mp);
      w.inputFiles.push_back(pp);
    } else if (d.contains("groupsCsv")) {
      if (!d["groupsCsv"].is_string()) return c.err(p + ".groupsCsv", "expected a path");
      fs::path gp = baseDir / d["groupsCsv"].get<std::string>();
      auto text2 = readFile(gp);
      if (!text2.ok()) return c.err(p + ".groupsCsv", text2.error().message);
      auto rows = parseGroupRowsCsv(*text2, gp.string(), accs);
      if (!rows.ok()) return rows.error();
      e.groups = std::move(rows).value();
      w.inputFiles.push_back(gp);
    } else {
      const Json& gs = d["groups"];
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
    }
    for (size_t i = 0; i < e.groups.size(); ++i) {
      bool any = false;
      for (size_t a = 0; a < accs.size(); ++a) any = any || e.groups[i].allowed(static_cast<int>(a));
      if (!any) return c.err(fmt::format("{}.groups[{}]", p, i), "runs on no accelerator (no timeMs entry)");
    }
    entries.push_back(std::move(e));
  }
  // Expand instances: "<name>#k"; instance k of a dependent follows instance k
  // (or the single instance) of each dependency.
  std::map<std::string, std::vector<int>> ids;
  for (const auto& e : entries) {
    for (int k = 0; k < e.instances; ++k) {
      sim::Dnn d;
      d.name = e.instances == 1 ? e.name : fmt::format("{}#{}", e.name, k);
      d.groups = e.groups;
      for (const auto& dep : e.deps) {
        const auto& di = ids.at(dep);
        d.deps.push_back(di.size() == 1 ? di[0] : di[static_cast<size_t>(k)]);
      }
      ids[e.name].push_back(w.problem.numDnns());
      w.problem.dnns.push_back(std::move(d));
    }
  }
  return w;
}

}  // namespace zp::schedule
