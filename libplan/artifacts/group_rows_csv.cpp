#include "libplan/artifacts/group_rows_csv.h"

#include <cmath>
#include <cstdlib>
#include <map>
#include <set>

#include <fmt/format.h>

#include "libplan/util/csv.h"
#include "libplan/util/file.h"
#include "libplan/util/validate.h"

namespace zp::artifacts {
using sim::GroupCost;

namespace {

int accIndex(const std::vector<std::string>& accs, const std::string& name) {
  for (size_t i = 0; i < accs.size(); ++i)
    if (accs[i] == name) return static_cast<int>(i);
  return -1;
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

Expected<std::vector<GroupCost>> readGroupRowsCsv(const std::filesystem::path& path,
                                                  const std::vector<std::string>& accelerators) {
  ZP_ASSIGN_OR_RETURN(std::string text, readFile(path));
  return parseGroupRowsCsv(text, path.string(), accelerators);
}

std::string formatGroupRowsCsv(const std::vector<GroupCost>& groups, const std::vector<std::string>& accs) {
  std::string out = "group,accelerator,time_ms,transition_out_ms,transition_in_ms,mem_throughput\n";
  for (const auto& g : groups)
    for (size_t a = 0; a < accs.size(); ++a) {
      if (!g.allowed(static_cast<int>(a))) continue;
      // A leading '#' would read as a comment line: quoted, it is a name.
      std::string name = !g.name.empty() && g.name[0] == '#' ? "\"" + g.name + "\"" : csvQuote(g.name);
      out += name + "," + csvLine({accs[a], formatNumber(g.timeMs[a]), formatNumber(g.transitionOutMs[a]),
                                   formatNumber(g.transitionInMs[a]), formatNumber(g.demand[a])});
    }
  return out;
}

}  // namespace zp::artifacts
