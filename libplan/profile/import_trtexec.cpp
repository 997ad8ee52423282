// TensorRT trtexec --exportProfile JSON (+ optional --exportLayerInfo JSON).
#include <map>

#include <fmt/format.h>

#include "libplan/profile/import.h"
#include "libplan/profile/lenient_json.h"
#include "libplan/util/file.h"
#include "libplan/util/validate.h"

namespace zp::profile {

namespace {

// "[ONNX Layer: /a/Conv]\x1f[ONNX Layer: /a/Relu]" -> {"/a/Conv", "/a/Relu"}
std::vector<std::string> onnxLayersOf(const std::string& metadata) {
  std::vector<std::string> out;
  constexpr std::string_view kOpen = "[ONNX Layer: ";
  size_t pos = 0;
  while ((pos = metadata.find(kOpen, pos)) != std::string::npos) {
    size_t start = pos + kOpen.size();
    // the entry ends at "]" followed by the separator or the end of the string
    size_t end = metadata.find("]\x1f", start);
    if (end == std::string::npos) end = metadata.rfind(']');
    if (end == std::string::npos || end < start) break;
    out.push_back(metadata.substr(start, end - start));
    pos = end + 1;
  }
  return out;
}

struct LayerInfo {
  std::vector<std::string> onnxNames;
  std::string type;
};

Expected<std::map<std::string, LayerInfo>> readLayerInfo(const std::filesystem::path& file,
                                                         std::vector<std::string>* notes) {
  const std::string label = file.string();
  ZP_ASSIGN_OR_RETURN(std::string text, readFile(file));
  bool repaired = false;
  ZP_ASSIGN_OR_RETURN(Json doc, parseLenientJson(text, label, JsonRepair{.backslashesLiteral = false}, &repaired));
  if (!doc.is_object() || !doc.contains("Layers") || !doc["Layers"].is_array())
    return makeError("{}: expected an object with a 'Layers' array (trtexec --exportLayerInfo)", label);
  if (notes && repaired) notes->push_back(fmt::format("{}: repaired unescaped characters in names", label));
  std::map<std::string, LayerInfo> out;
  int strings = 0;
  const Json& layers = doc["Layers"];
  for (size_t i = 0; i < layers.size(); ++i) {
    const Json& l = layers[i];
    if (l.is_string()) {  // default profiling verbosity: names only
      ++strings;
      continue;
    }
    if (!l.is_object() || !l.contains("Name") || !l["Name"].is_string())
      return makeError("{}: Layers[{}]: expected a string or an object with a string 'Name'", label, i);
    LayerInfo info;
    if (l.contains("Metadata")) {
      if (!l["Metadata"].is_string()) return makeError("{}: Layers[{}]: 'Metadata' must be a string", label, i);
      info.onnxNames = onnxLayersOf(l["Metadata"].get<std::string>());
    }
    if (l.contains("LayerType") && l["LayerType"].is_string()) info.type = l["LayerType"].get<std::string>();
    out[l["Name"].get<std::string>()] = std::move(info);
  }
  if (notes && strings)
    notes->push_back(fmt::format("{}: {} layers given by name only (default profiling verbosity): no ONNX metadata",
                                 label, strings));
  return out;
}

}  // namespace

Expected<std::vector<LayerTime>> readTrtexecProfile(const std::filesystem::path& profile,
                                                    const std::optional<std::filesystem::path>& layerInfo,
                                                    std::vector<std::string>* notes) {
  const std::string label = profile.string();
  ZP_ASSIGN_OR_RETURN(std::string text, readFile(profile));
  bool repaired = false;
  // trtexec prints names as they are: every backslash is a literal character.
  ZP_ASSIGN_OR_RETURN(Json doc, parseLenientJson(text, label, JsonRepair{.backslashesLiteral = true}, &repaired));
  if (!doc.is_array()) return makeError("{}: expected a JSON array (trtexec --exportProfile)", label);
  if (notes && repaired) notes->push_back(fmt::format("{}: repaired unescaped characters in names", label));

  std::map<std::string, LayerInfo> info;
  if (layerInfo) {
    ZP_ASSIGN_OR_RETURN(info, readLayerInfo(*layerInfo, notes));
  }

  struct Acc {
    std::vector<double> ms;
    int64_t runs = 0;
  };
  std::map<std::string, Acc> acc;
  std::vector<std::string> order;
  std::optional<int64_t> count;
  for (size_t i = 0; i < doc.size(); ++i) {
    const Json& e = doc[i];
    if (!e.is_object()) return makeError("{}: element {}: expected an object", label, i);
    if (e.contains("count") && !e.contains("name")) {
      if (!e["count"].is_number_integer() || e["count"].get<int64_t>() < 1 || e["count"].get<int64_t>() > kMaxRuns ||
          (e["count"].is_number_unsigned() && e["count"].get<uint64_t>() > static_cast<uint64_t>(kMaxRuns)))
        return makeError("{}: element {}: 'count' must be an integer in [1, {}]", label, i, kMaxRuns);
      count = e["count"].get<int64_t>();
      continue;
    }
    if (!e.contains("name") || !e["name"].is_string())
      return makeError("{}: element {}: expected {{\"count\": N}} or a layer with a string 'name'", label, i);
    std::string name = e["name"].get<std::string>();
    auto num = [&](const char* k) -> Expected<std::optional<double>> {
      if (!e.contains(k)) return std::optional<double>();
      if (!e[k].is_number()) return makeError("{}: element {} ('{}'): '{}' must be a number", label, i, name, k);
      double v = e[k].get<double>();
      if (!std::isfinite(v) || v < 0)
        return makeError("{}: element {} ('{}'): '{}' is not a finite non-negative number", label, i, name, k);
      return std::optional<double>(v);
    };
    ZP_ASSIGN_OR_RETURN(auto median, num("medianMs"));
    ZP_ASSIGN_OR_RETURN(auto average, num("averageMs"));
    ZP_ASSIGN_OR_RETURN(auto total, num("timeMs"));
    double ms;
    if (median) {
      ms = *median;
    } else if (average) {
      ms = *average;
    } else if (total && count) {
      ms = *total / static_cast<double>(*count);  // timeMs is the total over `count` runs
    } else {
      return makeError("{}: element {} ('{}'): needs 'medianMs', 'averageMs', or 'timeMs' with a preceding "
                       "{{\"count\": N}}", label, i, name);
    }
    auto [it, inserted] = acc.try_emplace(name);
    if (inserted) order.push_back(name);
    it->second.ms.push_back(ms);
    it->second.runs += count.value_or(1);
  }
  std::vector<LayerTime> out;
  for (const std::string& name : order) {
    const Acc& a = acc[name];
    LayerTime l;
    l.name = name;
    double sum = 0;
    for (double v : a.ms) sum += v;
    l.medianMs = sum / static_cast<double>(a.ms.size());  // several profiles of one layer: their mean
    l.runs = a.runs;
    if (auto it = info.find(name); it != info.end()) {
      l.onnxNames = it->second.onnxNames;
      l.opType = it->second.type;
    }
    out.push_back(std::move(l));
  }
  if (out.empty()) return makeError("{}: no layers", label);
  return out;
}

Expected<NodeImport> importTrtexecProfile(const std::filesystem::path& profile,
                                          const std::optional<std::filesystem::path>& layerInfo,
                                          const graph::GraphView& model, const ImportParams& params) {
  ZP_TRY(checkImportParams(params, profile.string()));
  std::vector<std::string> notes;
  ZP_ASSIGN_OR_RETURN(std::vector<LayerTime> layers, readTrtexecProfile(profile, layerInfo, &notes));
  return mapLayersToNodes(layers, NameMapper(model), params, "trtexec", profile.string(), std::move(notes));
}

}  // namespace zp::profile
