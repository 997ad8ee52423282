#include "libplan/sim/concurrent/contention.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <sstream>

#include "libplan/util/csv.h"
#include "libplan/util/file.h"

namespace zp::sim {

ContentionModel ContentionModel::none(int numAccelerators) {
  ContentionModel m;
  m.numAcc_ = numAccelerators;
  return m;
}

static bool parseNumber(const std::string& s, double& v) {
  if (s.empty()) return false;
  char* end = nullptr;
  v = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size() && std::isfinite(v);
}

Expected<ContentionModel> ContentionModel::loadCsv(const std::filesystem::path& path,
                                                   const std::vector<std::string>& accelerators) {
  ZP_ASSIGN_OR_RETURN(std::string text, readFile(path));
  return parseCsv(text, path.string(), accelerators);
}

Expected<ContentionModel> ContentionModel::parseCsv(const std::string& text, const std::string& label,
                                                    const std::vector<std::string>& accelerators) {
  static const std::vector<std::string> kColumns = {"accelerator", "own_demand", "external_demand",
                                                    "slowdown"};
  ZP_ASSIGN_OR_RETURN(auto records, zp::parseCsv(text, label, CsvOptions{',', true, true, true}));
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
  ContentionModel m;
  m.numAcc_ = static_cast<int>(accelerators.size());
  for (const auto& name : accelerators) {
    auto it = points.find(name);
    if (it == points.end()) return makeError("{}: no rows for accelerator '{}'", label, name);
    Surface s;
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
    m.surfaces_.push_back(std::move(s));
  }
  for (const auto& [name, pts] : points)
    if (std::find(accelerators.begin(), accelerators.end(), name) == accelerators.end())
      return makeError("{}: rows for unknown accelerator '{}'", label, name);
  return m;
}

// Position of x in an ascending grid: index i and weight w so that
// x ~ (1-w) g[i] + w g[i+1]; clamped at both ends.
static void locate(const std::vector<double>& g, double x, size_t& i, double& w) {
  if (g.size() == 1 || x <= g.front()) {
    i = 0;
    w = 0;
    return;
  }
  if (x >= g.back()) {
    i = g.size() - 2;
    w = 1;
    return;
  }
  i = static_cast<size_t>(std::upper_bound(g.begin(), g.end(), x) - g.begin()) - 1;
  w = (x - g[i]) / (g[i + 1] - g[i]);
}

double ContentionModel::slowdown(int acc, double own, double external) const {
  if (surfaces_.empty()) return 1.0;
  return slowdownAt(acc, own, external);
}

double ContentionModel::slowdownAt(int acc, double own, double external) const {
  const Surface& s = surfaces_[static_cast<size_t>(acc)];
  size_t i, j;
  double wi, wj;
  locate(s.own, own, i, wi);
  locate(s.external, external, j, wj);
  size_t ne = s.external.size();
  auto at = [&](size_t a, size_t b) {
    a = std::min(a, s.own.size() - 1);
    b = std::min(b, ne - 1);
    return s.slowdown[a * ne + b];
  };
  double v0 = (1 - wj) * at(i, j) + wj * at(i, j + 1);
  double v1 = (1 - wj) * at(i + 1, j) + wj * at(i + 1, j + 1);
  double v = (1 - wi) * v0 + wi * v1;
  // Quantized to 1e-6 so exact solvers work with short rationals.
  return std::max(1.0, std::round(v * 1e6) / 1e6);
}

ContentionModel ContentionModel::scaled(double f) const {
  ContentionModel m = *this;
  if (f == 0) {
    m.surfaces_.clear();
    return m;
  }
  for (auto& s : m.surfaces_)
    for (auto& v : s.slowdown) v = 1 + f * (v - 1);
  return m;
}

}  // namespace zp::sim
