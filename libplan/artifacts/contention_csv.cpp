#include "libplan/artifacts/contention_csv.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdlib>
#include <map>

#include "libplan/util/csv.h"
#include "libplan/util/file.h"

namespace zp::artifacts {
using sim::ContentionModel;

namespace {

bool parseNumber(const std::string& s, double& v) {
  if (s.empty()) return false;
  char* end = nullptr;
  v = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size() && std::isfinite(v);
}

}  // namespace

Expected<ContentionModel> readContentionCsv(const std::filesystem::path& path, const std::vector<std::string>& accelerators) {
  ZP_ASSIGN_OR_RETURN(std::string text, readFile(path));
  return parseContentionCsv(text, path.string(), accelerators);
}

Expected<ContentionModel> parseContentionCsv(const std::string& text, const std::string& label,
                                             const std::vector<std::string>& accelerators) {
  static const std::vector<std::string> kColumns = {"accelerator", "own_demand", "external_demand",
                                                    "slowdown"};
  ZP_ASSIGN_OR_RETURN(auto records, parseCsv(text, label, CsvOptions{',', true, true, true}));
  std::vector<std::string> header;
  // accelerator -> (own, external) -> slowdown
  std::map<std::string, std::map<std::pair<double, double>, double>> points;
  for (const auto& rec : records) {
    const int lineNo = rec.line;
    const auto& cells = rec.fields;
    if (header.empty()) {
      header = cells;
      if (header != kColumns)
        return makeError("{}:{}: header must be 'accelerator,own_demand,external_demand,slowdown'",
                         label, lineNo);
      continue;
    }
    if (cells.size() != kColumns.size())
      return makeError("{}:{}: expected 4 columns, got {}", label, lineNo, cells.size());
    double own, ext, slow;
    if (!parseNumber(cells[1], own) || own < 0)
      return makeError("{}:{}: own_demand '{}' is not a non-negative number", label, lineNo, cells[1]);
    if (!parseNumber(cells[2], ext) || ext < 0)
      return makeError("{}:{}: external_demand '{}' is not a non-negative number", label, lineNo,
                       cells[2]);
    if (!parseNumber(cells[3], slow) || slow < 1.0)
      return makeError("{}:{}: slowdown '{}' is not a number >= 1", label, lineNo, cells[3]);
    if (slow > 1e6)  // slowed-down times must stay finite
      return makeError("{}:{}: slowdown '{}' is above 1000000", label, lineNo, cells[3]);
    auto& acc = points[cells[0]];
    if (!acc.emplace(std::make_pair(own, ext), slow).second)
      return makeError("{}:{}: duplicate point ({}, {}) for accelerator '{}'", label, lineNo, cells[1],
                       cells[2], cells[0]);
  }
  if (header.empty()) return makeError("{}: empty contention CSV", label);
  std::vector<ContentionModel::Surface> surfaces;
  for (const auto& name : accelerators) {
    auto it = points.find(name);
    if (it == points.end()) return makeError("{}: no rows for accelerator '{}'", label, name);
    ContentionModel::Surface s;
    for (const auto& [k, v] : it->second) {
      s.own.push_back(k.first);
      s.external.push_back(k.second);
    }
    std::sort(s.own.begin(), s.own.end());
    s.own.erase(std::unique(s.own.begin(), s.own.end()), s.own.end());
    std::sort(s.external.begin(), s.external.end());
    s.external.erase(std::unique(s.external.begin(), s.external.end()), s.external.end());
    if (s.own.size() * s.external.size() != it->second.size())
      return makeError("{}: accelerator '{}': the points do not form a complete own x external grid "
                       "({} own values x {} external values, {} points)",
                       label, name, s.own.size(), s.external.size(), it->second.size());
    for (double o : s.own)
      for (double e : s.external) s.slowdown.push_back(it->second.at({o, e}));
    surfaces.push_back(std::move(s));
  }
  for (const auto& [name, pts] : points)
    if (std::find(accelerators.begin(), accelerators.end(), name) == accelerators.end())
      return makeError("{}: rows for unknown accelerator '{}'", label, name);
  return ContentionModel::fromSurfaces(std::move(surfaces));
}

std::string formatContentionCsv(const ContentionModel& model, const std::vector<std::string>& accelerators) {
  assert(!model.isNone() && model.surfaces().size() == accelerators.size());
  std::string out = "accelerator,own_demand,external_demand,slowdown\n";
  for (size_t a = 0; a < accelerators.size(); ++a) {
    const auto& s = model.surfaces()[a];
    for (size_t i = 0; i < s.own.size(); ++i)
      for (size_t j = 0; j < s.external.size(); ++j)
        out += csvLine({accelerators[a], formatNumber(s.own[i]), formatNumber(s.external[j]),
                        formatNumber(s.slowdown[i * s.external.size() + j])});
  }
  return out;
}

}  // namespace zp::artifacts
