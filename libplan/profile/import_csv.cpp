// The generic profile CSV as an import source (its rows, read by libplan/artifacts/profile_csv.h).
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "libplan/profile/import.h"

namespace zp::profile {

Expected<CsvImport> importProfileRows(const ProfileDb& db, const std::string& label, const graph::GraphView* model,
                                      const ImportParams& params) {
  if (params.reportNames < 0) return makeError("{}: reportNames must not be negative", label);
  CsvImport out;
  ImportReport& rep = out.report;
  rep.file = label;
  int skipped = 0;
  // Node rows grouped by everything but the node, so each group maps like one profiler file.
  using GroupKey = std::tuple<std::string, std::string, std::string, std::string, std::string>;
  std::map<GroupKey, std::vector<LayerTime>> groups;
  for (const ProfileRow* r : db.rows()) {
    if ((!params.task.empty() && r->task != params.task) || (!params.variant.empty() && r->variant != params.variant) ||
        (!params.processor.empty() && r->kind != RowKind::Transition && r->processor != params.processor)) {
      ++skipped;
      continue;
    }
    if (r->kind != RowKind::Node || model == nullptr) {
      out.rows.add(*r);
      continue;
    }
    LayerTime l;
    l.name = r->node;
    l.medianMs = r->medianMs;
    l.p90Ms = r->p90Ms;
    l.runs = r->runs.value_or(1);
    groups[GroupKey{r->task, r->variant, r->processor, r->policy, r->source}].push_back(std::move(l));
  }
  if (model) {
    NameMapper mapper(*model);
    for (const auto& [key, layers] : groups) {
      ImportParams p = params;
      std::tie(p.task, p.variant, p.processor, p.policy, std::ignore) = key;
      p.reportNames = params.reportNames - static_cast<int>(rep.unmatchedNames.size());
      ZP_ASSIGN_OR_RETURN(NodeImport imp, mapLayersToNodes(layers, mapper, p, std::get<4>(key), label));
      for (ProfileRow& r : imp.rows) out.rows.add(std::move(r));
      const ImportReport& g = imp.report;
      rep.layers += g.layers;
      rep.matched += g.matched;
      rep.approximate += g.approximate;
      rep.unmatched += g.unmatched;
      rep.totalMs += g.totalMs;
      rep.matchedMs += g.matchedMs;
      rep.approximateMs += g.approximateMs;
      rep.unmatchedMs += g.unmatchedMs;
      rep.unmatchedNames.insert(rep.unmatchedNames.end(), g.unmatchedNames.begin(), g.unmatchedNames.end());
      for (const auto& [rule, n] : g.rules) rep.rules[rule] += n;
    }
  }
  if (skipped)
    rep.notes.push_back(fmt::format("{}: {} row{} of other tasks, variants or processors skipped", label, skipped,
                                    skipped == 1 ? "" : "s"));
  return out;
}

}  // namespace zp::profile
