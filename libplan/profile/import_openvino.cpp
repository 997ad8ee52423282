// OpenVINO benchmark_app -report_type average_counters|detailed_counters CSV.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "libplan/profile/import.h"
#include "libplan/util/csv.h"
#include "libplan/util/file.h"
#include "libplan/util/stats.h"

namespace zp::profile {


Expected<std::vector<LayerTime>> readOpenVinoCounters(const std::filesystem::path& file,
                                                      std::vector<std::string>* notes) {
  const std::string label = file.string();
  ZP_ASSIGN_OR_RETURN(std::string text, readFile(file));

  struct Block {
    std::map<std::string, double> ms;  // layer -> realTime (ms), summed when a name repeats
  };
  std::vector<Block> blocks;
  std::vector<std::string> order;            // layer names in first-seen order
  std::map<std::string, std::string> types;  // layer -> layerType
  int nameCol = -1, statusCol = -1, typeCol = -1, realCol = -1;
  size_t headerFields = 0;
  int skippedNotRun = 0, skippedOptimized = 0, totals = 0;

  ZP_ASSIGN_OR_RETURN(auto records, parseCsv(text, label, CsvOptions{';', true, false, true}));
  for (auto& rec : records) {
    const int lineNo = rec.line;
    std::vector<std::string>& f = rec.fields;
    // The C++ tool ends every field with ';', the Python tool does not.
    if (f.size() > 1 && f.back().empty()) f.pop_back();
    if (f[0] == "layerName") {  // a header: a new block (one per infer request in detailed mode)
      nameCol = statusCol = typeCol = realCol = -1;
      for (size_t i = 0; i < f.size(); ++i) {
        if (f[i] == "layerName") nameCol = static_cast<int>(i);
        else if (f[i] == "execStatus") statusCol = static_cast<int>(i);
        else if (f[i] == "layerType") typeCol = static_cast<int>(i);
        else if (f[i] == "realTime (ms)") realCol = static_cast<int>(i);
      }
      if (statusCol < 0 || realCol < 0)
        return makeError("{}:{}: header: missing column '{}'", label, lineNo,
                         statusCol < 0 ? "execStatus" : "realTime (ms)");
      headerFields = f.size();
      blocks.emplace_back();
      continue;
    }
    if (blocks.empty())
      return makeError("{}:{}: expected the header 'layerName;execStatus;layerType;execType;realTime (ms);cpuTime "
                       "(ms);' before any row", label, lineNo);
    if (f[0] == "Total" || f[0] == "Total:") {  // the per-block total row
      ++totals;
      continue;
    }
    if (f.size() != headerFields)
      return makeError("{}:{}: {} fields, the header has {}", label, lineNo, f.size(), headerFields);
    const std::string& name = f[size_t(nameCol)];
    const std::string& status = f[size_t(statusCol)];
    if (status == "NOT_RUN") {
      ++skippedNotRun;
      continue;
    }
    if (status == "OPTIMIZED_OUT") {
      ++skippedOptimized;
      continue;
    }
    if (status != "EXECUTED")
      return makeError("{}:{}: column 'execStatus': unknown status '{}' (expected EXECUTED, NOT_RUN or OPTIMIZED_OUT)",
                       label, lineNo, status);
    const std::string& cell = f[size_t(realCol)];
    double ms = 0;
    auto res = std::from_chars(cell.data(), cell.data() + cell.size(), ms);
    if (res.ec != std::errc() || res.ptr != cell.data() + cell.size() || !std::isfinite(ms) || ms < 0)
      return makeError("{}:{}: column 'realTime (ms)': '{}' is not a finite non-negative number", label, lineNo, cell);
    Block& b = blocks.back();
    if (!b.ms.count(name) && std::find(order.begin(), order.end(), name) == order.end()) order.push_back(name);
    b.ms[name] += ms;
    if (typeCol >= 0 && size_t(typeCol) < f.size()) types.emplace(name, f[size_t(typeCol)]);
  }
  if (blocks.empty()) return makeError("{}: no header line ('layerName;execStatus;...')", label);
  size_t nonEmpty = 0;
  for (const Block& b : blocks) nonEmpty += b.ms.empty() ? 0 : 1;
  if (nonEmpty == 0) return makeError("{}: no EXECUTED layers", label);
  if (notes) {
    notes->push_back(fmt::format("{}: {} counter block{} (infer request{}) averaged; skipped {} NOT_RUN, {} "
                                 "OPTIMIZED_OUT and {} Total row{}",
                                 label, nonEmpty, nonEmpty == 1 ? "" : "s", nonEmpty == 1 ? "" : "s", skippedNotRun,
                                 skippedOptimized, totals, totals == 1 ? "" : "s"));
  }
  std::vector<LayerTime> out;
  for (const std::string& name : order) {
    std::vector<double> v;
    for (const Block& b : blocks) {
      if (b.ms.empty()) continue;
      auto it = b.ms.find(name);
      v.push_back(it == b.ms.end() ? 0.0 : it->second);  // not executed in that request: no time
    }
    LayerTime l;
    l.name = name;
    if (auto it = types.find(name); it != types.end()) l.opType = it->second;
    double sum = 0;
    for (double x : v) sum += x;
    l.medianMs = sum / static_cast<double>(v.size());
    if (v.size() >= 2) l.p90Ms = std::max(percentile(v, 0.9), l.medianMs);
    l.runs = static_cast<int64_t>(v.size());
    out.push_back(std::move(l));
  }
  return out;
}

Expected<NodeImport> importOpenVinoCounters(const std::filesystem::path& file, const graph::GraphView& model,
                                            const ImportParams& params) {
  ZP_TRY(checkImportParams(params, file.string()));
  std::vector<std::string> notes;
  ZP_ASSIGN_OR_RETURN(std::vector<LayerTime> layers, readOpenVinoCounters(file, &notes));
  return mapLayersToNodes(layers, NameMapper(model), params, "openvino-csv", file.string(), std::move(notes));
}

}  // namespace zp::profile
