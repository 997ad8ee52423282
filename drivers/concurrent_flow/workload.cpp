#include "drivers/concurrent_flow/workload.h"

#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "libplan/artifacts/contention_csv.h"
#include "libplan/artifacts/group_rows_csv.h"
#include "libplan/artifacts/profile_csv.h"
#include "libplan/graph/model_io.h"
#include "libplan/runtime/kernel_policy.h"
#include "libplan/util/file.h"
#include "passes/grouping/grouping.h"

namespace zp::drivers {
namespace fs = std::filesystem;
using artifacts::WorkloadDnn;

namespace {

// "<workload>: <json path>: <message>".
Error at(const std::string& label, const std::string& path, const std::string& message) {
  return Error{label + ": " + path + ": " + message};
}

// A model DNN's layer groups: the model and its profile rows through the grouping pass.
Expected<grouping::Grouping> groupModel(const WorkloadDnn& d, const std::vector<std::string>& accelerators,
                                                 const std::string& label) {
  grouping::GroupingParams gp;
  gp.accelerators = accelerators;
  gp.task = d.task;
  gp.variant = d.variant;
  const auto& o = d.grouping;
  gp.minTimeToTransition = o.minTimeToTransition.value_or(gp.minTimeToTransition);
  gp.maxGroups = o.maxGroups.value_or(gp.maxGroups);
  gp.transitionOverheadMs = o.transitionOverheadMs.value_or(gp.transitionOverheadMs);
  gp.transitionBandwidthGBs = o.transitionBandwidthGBs.value_or(gp.transitionBandwidthGBs);
  gp.peakBandwidthGBs = o.peakBandwidthGBs.value_or(gp.peakBandwidthGBs);
  auto model = graph::loadModel(d.model);
  if (!model.ok()) return at(label, d.jsonPath + ".model", model.error().message);
  auto db = artifacts::readProfileCsv(d.profile);
  if (!db.ok()) return at(label, d.jsonPath + ".profile", db.error().message);
  graph::GraphView view(*model);
  auto g = grouping::groupLayers(view, *db, gp, d.model.string());
  if (!g.ok()) return at(label, d.jsonPath + ".model", g.error().message);
  return g;
}

// A DNN's layer groups; for a model, also its file and the nodes of each group.
struct Grouped {
  std::vector<sim::GroupCost> groups;
  schedule::Workload::ModelSource source;
};

// Where a DNN's groups come from; the files read join `inputFiles`.
Expected<Grouped> groupsOf(const WorkloadDnn& d, const std::vector<std::string>& accelerators,
                                               const std::string& label, std::vector<fs::path>& inputFiles) {
  switch (d.source) {
    case WorkloadDnn::Source::Groups:
      return Grouped{d.groups, {}};
    case WorkloadDnn::Source::GroupsCsv: {
      auto text = readFile(d.groupsCsv);
      if (!text.ok()) return at(label, d.jsonPath + ".groupsCsv", text.error().message);
      ZP_ASSIGN_OR_RETURN(auto rows, artifacts::parseGroupRowsCsv(*text, d.groupsCsv.string(), accelerators));
      inputFiles.push_back(d.groupsCsv);
      return Grouped{std::move(rows), {}};
    }
    case WorkloadDnn::Source::Model: {
      ZP_ASSIGN_OR_RETURN(auto g, groupModel(d, accelerators, label));
      inputFiles.push_back(d.model);
      inputFiles.push_back(d.profile);
      return Grouped{std::move(g.groups), {d.model.string(), std::move(g.nodes)}};
    }
  }
  return at(label, d.jsonPath, "unknown source");
}

}  // namespace

Expected<schedule::Workload> loadWorkload(const fs::path& path) {
  ZP_ASSIGN_OR_RETURN(artifacts::WorkloadSpec spec, artifacts::readWorkloadJson(path));
  return resolveWorkload(spec, path);
}

Expected<schedule::Workload> resolveWorkload(const artifacts::WorkloadSpec& spec, const fs::path& path) {
  const std::string label = path.string();
  schedule::Workload w;
  w.name = spec.name;
  w.objective = spec.objective;
  w.inputFiles.push_back(path);
  sim::Problem& p = w.problem;
  p.accelerators = spec.accelerators;
  if (spec.contention) {
    auto m = artifacts::readContentionCsv(*spec.contention, p.accelerators);
    if (!m.ok()) return at(label, "$.contention", m.error().message);
    p.contention = std::move(m).value();
    w.inputFiles.push_back(*spec.contention);
  } else {
    p.contention = sim::ContentionModel::none(static_cast<int>(p.accelerators.size()));
  }
  for (size_t a = 0; a < spec.processors.size(); ++a)
    if (!runtime::isKnownPolicy(spec.processors[a].policy))
      return at(label, fmt::format("$.processors[{}].policy", a),
                fmt::format("unknown kernel policy '{}' (known: {})", spec.processors[a].policy,
                            fmt::join(runtime::policyNames(), ", ")));
  w.processors = spec.processors;
  bool anyModel = false;
  // Instances expand to "<name>#k"; instance k of a dependent follows instance k
  // (or the single instance) of each dependency.
  std::map<std::string, std::vector<int>> ids;
  for (const auto& d : spec.dnns) {
    ZP_ASSIGN_OR_RETURN(Grouped grouped, groupsOf(d, p.accelerators, label, w.inputFiles));
    const auto& groups = grouped.groups;
    anyModel = anyModel || !grouped.source.model.empty();
    for (size_t i = 0; i < groups.size(); ++i) {
      bool any = false;
      for (size_t a = 0; a < p.accelerators.size(); ++a) any = any || groups[i].allowed(static_cast<int>(a));
      if (!any) return at(label, fmt::format("{}.groups[{}]", d.jsonPath, i), "runs on no accelerator (no timeMs entry)");
    }
    for (int k = 0; k < d.instances; ++k) {
      sim::Dnn dnn;
      dnn.name = d.instances == 1 ? d.name : fmt::format("{}#{}", d.name, k);
      dnn.groups = groups;
      for (const auto& dep : d.dependsOn) {
        const auto& di = ids.at(dep);
        dnn.deps.push_back(di.size() == 1 ? di[0] : di[static_cast<size_t>(k)]);
      }
      ids[d.name].push_back(p.numDnns());
      p.dnns.push_back(std::move(dnn));
      w.sources.push_back(grouped.source);
    }
  }
  if (!anyModel) w.sources.clear();
  return w;
}

}  // namespace zp::drivers
