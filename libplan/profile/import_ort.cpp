// ONNX Runtime profiling JSON (enableProfiling / profileFilePrefix).
#include <algorithm>
#include <limits>
#include <map>

#include <fmt/format.h>

#include "libplan/profile/import.h"
#include "libplan/profile/lenient_json.h"
#include "libplan/util/file.h"
#include "libplan/util/stats.h"

namespace zp::profile {

namespace {

constexpr std::string_view kKernelSuffix = "_kernel_time";

// Integer or numeric-string field of an event (ORT writes numbers, args as strings).
std::optional<double> number(const Json& j) {
  if (j.is_number()) return j.get<double>();
  if (j.is_string()) {
    try {
      size_t used = 0;
      const std::string& s = j.get_ref<const std::string&>();
      double v = std::stod(s, &used);
      if (used == s.size()) return v;
    } catch (const std::exception&) {
    }
  }
  return std::nullopt;
}

}  // namespace

Expected<std::vector<LayerTime>> readOrtProfile(const std::filesystem::path& file, const ImportParams& params,
                                                std::vector<std::string>* notes) {
  const std::string label = file.string();
  if (params.skipRuns < 0) return makeError("{}: skipRuns must not be negative", label);
  ZP_ASSIGN_OR_RETURN(std::string text, readFile(file));
  bool repaired = false;
  ZP_ASSIGN_OR_RETURN(Json doc, parseLenientJson(text, label, JsonRepair{.backslashesLiteral = true}, &repaired));
  if (!doc.is_array()) return makeError("{}: expected a JSON array of trace events", label);
  if (notes && repaired) notes->push_back(fmt::format("{}: repaired unescaped characters in names", label));

  struct Run {
    double start, end;
  };
  std::vector<Run> runs;
  struct Event {
    std::string name;
    std::string op;
    std::optional<int> nodeIndex;
    double ts, dur;
  };
  std::vector<Event> events;
  int otherNode = 0;
  for (size_t i = 0; i < doc.size(); ++i) {
    const Json& e = doc[i];
    if (!e.is_object() || !e.contains("cat") || !e.contains("name")) continue;  // not a trace event
    if (!e["cat"].is_string() || !e["name"].is_string())
      return makeError("{}: event {}: 'cat' and 'name' must be strings", label, i);
    const std::string& cat = e["cat"].get_ref<const std::string&>();
    const std::string& name = e["name"].get_ref<const std::string&>();
    double ts = -1, dur = -1;  // -1: missing or not a number
    if (e.contains("ts")) ts = number(e["ts"]).value_or(-1);
    if (e.contains("dur")) dur = number(e["dur"]).value_or(-1);
    if (cat == "Session" && name == "model_run") {
      if (ts < 0 || dur < 0)
        return makeError("{}: event {} (model_run): needs non-negative numeric 'ts' and 'dur'", label, i);
      runs.push_back({ts, ts + dur});
      continue;
    }
    if (cat != "Node") continue;
    if (name.size() < kKernelSuffix.size() || name.compare(name.size() - kKernelSuffix.size(), kKernelSuffix.size(),
                                                           kKernelSuffix) != 0) {
      ++otherNode;  // fences and the like
      continue;
    }
    if (ts < 0 || dur < 0)
      return makeError("{}: event {} ('{}'): needs non-negative numeric 'ts' and 'dur'", label, i, name);
    Event ev{name.substr(0, name.size() - kKernelSuffix.size()), "", std::nullopt, ts, dur};
    if (e.contains("args") && e["args"].is_object()) {
      const Json& a = e["args"];
      if (a.contains("op_name") && a["op_name"].is_string()) ev.op = a["op_name"].get<std::string>();
      if (a.contains("node_index"))  // an index only when it is one (a double beyond int would not convert)
        if (auto ni = number(a["node_index"]); ni && *ni >= 0 && *ni <= std::numeric_limits<int>::max())
          ev.nodeIndex = static_cast<int>(*ni);
    }
    events.push_back(std::move(ev));
  }
  if (events.empty()) return makeError("{}: no node events ('<node>_kernel_time', cat Node)", label);

  std::sort(runs.begin(), runs.end(), [](const Run& a, const Run& b) { return a.start < b.start; });
  size_t numRuns = runs.empty() ? 1 : runs.size();
  if (static_cast<size_t>(params.skipRuns) >= numRuns)
    return makeError("{}: {} model_run event{}, cannot skip {} warm-up run{}", label, runs.size(),
                     runs.size() == 1 ? "" : "s", params.skipRuns, params.skipRuns == 1 ? "" : "s");

  // Per layer (name, or node index for unnamed nodes): time summed per run.
  struct Acc {
    LayerTime layer;
    std::vector<double> perRunUs;
    size_t order;  // first appearance, to keep file order
  };
  std::map<std::pair<std::string, int>, Acc> acc;
  int outside = 0;
  for (const Event& ev : events) {
    size_t run = 0;
    if (!runs.empty()) {
      // the last run starting at or before the event
      auto it = std::upper_bound(runs.begin(), runs.end(), ev.ts, [](double t, const Run& r) { return t < r.start; });
      if (it == runs.begin() || ev.ts > std::prev(it)->end) {
        ++outside;
        continue;
      }
      run = static_cast<size_t>(std::prev(it) - runs.begin());
    }
    if (run < static_cast<size_t>(params.skipRuns)) continue;
    auto key = std::make_pair(ev.name, ev.name.empty() ? ev.nodeIndex.value_or(-1) : -1);
    auto [it, inserted] = acc.try_emplace(key);
    Acc& a = it->second;
    if (inserted) {
      a.layer.name = ev.name;
      a.layer.opType = ev.op;
      if (ev.name.empty()) a.layer.nodeIndex = ev.nodeIndex;
      a.perRunUs.assign(numRuns - static_cast<size_t>(params.skipRuns), 0.0);
      a.order = acc.size();
    }
    a.perRunUs[run - static_cast<size_t>(params.skipRuns)] += ev.dur;
  }
  if (notes) {
    notes->push_back(fmt::format("{}: {} model_run event{}, {} skipped as warm-up", label, runs.size(),
                                 runs.size() == 1 ? "" : "s", params.skipRuns));
    if (outside) notes->push_back(fmt::format("{}: {} node events outside any model_run ignored", label, outside));
    if (otherNode) notes->push_back(fmt::format("{}: {} fence/other node events ignored", label, otherNode));
  }
  std::vector<const Acc*> ordered;
  for (const auto& [k, a] : acc) ordered.push_back(&a);
  std::sort(ordered.begin(), ordered.end(), [](const Acc* a, const Acc* b) { return a->order < b->order; });
  std::vector<LayerTime> out;
  for (const Acc* a : ordered) {
    LayerTime l = a->layer;
    std::vector<double> ms;
    for (double us : a->perRunUs) ms.push_back(us / 1000.0);
    l.medianMs = median(ms);
    l.p90Ms = percentile(ms, 0.9);
    l.runs = static_cast<int64_t>(ms.size());
    out.push_back(std::move(l));
  }
  return out;
}

Expected<NodeImport> importOrtProfile(const std::filesystem::path& file, const graph::GraphView& model,
                                      const ImportParams& params) {
  ZP_TRY(checkImportParams(params, file.string()));
  std::vector<std::string> notes;
  ZP_ASSIGN_OR_RETURN(std::vector<LayerTime> layers, readOrtProfile(file, params, &notes));
  return mapLayersToNodes(layers, NameMapper(model), params, "ort-json", file.string(), std::move(notes));
}

}  // namespace zp::profile
