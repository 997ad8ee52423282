#include "drivers/stitch_flow/solve_stitch_cold.h"

#include <fmt/format.h>

#include <set>

#include "libplan/artifacts/cold_profile_csv.h"
#include "libplan/artifacts/profile_report.h"
#include "libplan/util/file.h"
#include "libplan/util/hash.h"
#include "libplan/zoo/stitch_manifest.h"

namespace zp::drivers {
namespace fs = std::filesystem;

namespace {

// Every subgraph unit a feasible choice of the plan runs.
std::set<plan::UnitId> chosenSubgraphs(const plan::StitchPlan& stitch) {
  std::set<plan::UnitId> labels;
  for (const auto& sel : plan::chosenSystem(stitch).selections)
    for (const auto& c : sel.tasks) {
      // A group's unit or a placed model has no cold section here.
      if (!c.feasible || plan::answeredByGroup(c) || plan::answeredByPlacedModel(c)) continue;
      const auto variants = zoo::combinationVariants(c.combination);
      for (size_t pos = 0; pos < variants.size(); ++pos)
        labels.insert(plan::UnitId::subgraph(c.task, static_cast<int>(pos), variants[pos]));
    }
  return labels;
}

}  // namespace

Expected<std::optional<StitchColdProfile>> readStitchColdProfile(const fs::path& profileDir) {
  const fs::path csv = profileDir / "cold_profile.csv";
  std::error_code ec;
  if (!fs::exists(csv, ec)) return std::optional<StitchColdProfile>();
  ZP_ASSIGN_OR_RETURN(std::string bytes, readFile(csv));
  const fs::path reportPath = profileDir / "report.json";
  ZP_ASSIGN_OR_RETURN(std::string reportText, readFile(reportPath));
  const Json report = Json::parse(reportText, nullptr, false);
  if (report.is_discarded()) return makeError("{}: not valid JSON", reportPath.string());
  ZP_TRY(artifacts::checkRecordedFile(report, reportPath, csv, bytes));
  ZP_ASSIGN_OR_RETURN(profile::ColdProfile profile, artifacts::parseColdProfileCsv(bytes, csv.string()));
  return std::optional<StitchColdProfile>(StitchColdProfile{csv, sha256Hex(bytes), std::move(profile)});
}

Expected<StitchColdPlans> planStitchColdStarts(const std::optional<StitchColdProfile>& cold,
                                               const fs::path& profileDir, const plan::StitchPlan& stitch,
                                               const coldstart::ColdStartParams& params,
                                               const std::set<std::string>* only) {
  StitchColdPlans out;
  if (!cold) {
    out.summary = fmt::format("no cold-start sections: {} has no cold_profile.csv (zoo-profile --cold-profile)\n",
                              profileDir.string());
    return out;
  }
  out.profiled = true;
  out.profileSha256 = cold->sha256;
  double predicted = 0;
  size_t chosen = 0;
  for (const auto& unit : chosenSubgraphs(stitch)) {
    ++chosen;
    if (only && !only->contains(unit.str())) continue;
    auto p = coldstart::planColdStart(cold->profile, unit, params);
    if (!p.ok()) return makeError("{}: {}", cold->path.string(), p.error().message);
    predicted += p->predictedColdMs;
    out.plans.push_back(std::move(*p));
  }
  if (only)
    out.summary = fmt::format("cold-start sections: {} of the {} subgraph(s) of the feasible selections, those whose "
                              "loads by cold section measured faster than from their weight caches (the others "
                              "load from them), predicted cold {:.2f} ms in total (PREDICTED from {}, not measured)\n",
                              out.plans.size(), chosen, predicted, cold->path.string());
  else
    out.summary = fmt::format("cold-start sections: {} subgraph(s) of the feasible selections, predicted cold "
                              "{:.2f} ms in total (PREDICTED from {}, not measured)\n",
                              out.plans.size(), predicted, cold->path.string());
  return out;
}

}  // namespace zp::drivers
