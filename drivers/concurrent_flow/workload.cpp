#include "drivers/concurrent_flow/workload.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "libplan/artifacts/contention_csv.h"
#include "libplan/artifacts/group_rows_csv.h"
#include "libplan/artifacts/node_profile_csv.h"
#include "libplan/artifacts/profile_csv.h"
#include "libplan/artifacts/zoo_json.h"
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

// A zoo variant's node rows from zoo-profile's node_profile.csv, one set per
// accelerator: the rows measured under that zoo processor's engine (policy, threads).
Expected<profile::ProfileDb> zooNodeRows(const WorkloadDnn& d, const zoo::Zoo& zoo,
                                         const std::vector<std::string>& accelerators, const std::string& label) {
  const fs::path csv = d.profileDir / "node_profile.csv";
  auto rows = artifacts::readNodeProfileCsv(csv);
  if (!rows.ok()) return at(label, d.jsonPath + ".profile", rows.error().message + " (a zoo-profile folder)");
  const std::string key = artifacts::zooModelKey(zoo.name, d.task, d.variant);
  profile::ProfileDb db;
  for (const auto& acc : accelerators) {
    auto p = std::find_if(zoo.processors.begin(), zoo.processors.end(), [&](const Processor& x) { return x.name == acc; });
    if (p == zoo.processors.end())
      return at(label, "$.accelerators", fmt::format("'{}' is not a processor of {} (a zoo variant's DNN runs on the "
                                                     "zoo's processors, by name)", acc, zoo.file.string()));
    size_t found = 0;
    for (const auto& r : *rows)
      if (r.model == key && r.policy == p->policy && r.threads == p->threads) {
        profile::ProfileRow row;
        row.kind = profile::RowKind::Node;
        row.task = d.task;
        row.variant = d.variant;
        row.node = r.node;
        row.processor = acc;
        row.policy = std::string(profile::kDefaultPolicy);
        row.medianMs = r.ms;
        row.source = "node_profile.csv";
        db.add(std::move(row));
        ++found;
      }
    if (found == 0)
      return at(label, d.jsonPath + ".profile",
                fmt::format("{} has no rows of model '{}' under processor '{}' ({}@{}): re-run zoo-profile on the "
                            "zoo's current stitch", csv.string(), key, acc, p->policy, p->threads));
  }
  return db;
}

}  // namespace

Expected<fs::path> dnnModelFile(const WorkloadDnn& d, const std::string& label) {
  if (d.source == WorkloadDnn::Source::Model) return d.model;
  if (d.source != WorkloadDnn::Source::ZooVariant) return at(label, d.jsonPath, "not a model DNN");
  auto zoo = artifacts::loadZoo(d.zoo);
  if (!zoo.ok()) return at(label, d.jsonPath + ".zoo", zoo.error().message);
  for (const auto& t : zoo->tasks)
    if (t.name == d.task)
      for (const auto& v : t.variants)
        if (v.id == d.variant) return zoo->resolve(v.onnx);
  return at(label, d.jsonPath, fmt::format("{} has no task '{}' with a variant '{}'", d.zoo.string(), d.task, d.variant));
}

namespace {

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
  ZP_ASSIGN_OR_RETURN(const fs::path file, dnnModelFile(d, label));
  auto model = graph::loadModel(file);
  if (!model.ok()) return at(label, d.jsonPath + ".model", model.error().message);
  profile::ProfileDb db;
  if (d.source == WorkloadDnn::Source::ZooVariant) {
    ZP_ASSIGN_OR_RETURN(const zoo::Zoo zoo, artifacts::loadZoo(d.zoo));
    ZP_ASSIGN_OR_RETURN(db, zooNodeRows(d, zoo, accelerators, label));
    gp.absentNodesFused = true;  // the runtime's own profile: what it fused has no row
  } else {
    auto read = artifacts::readProfileCsv(d.profile);
    if (!read.ok()) return at(label, d.jsonPath + ".profile", read.error().message);
    db = std::move(read).value();
  }
  graph::GraphView view(*model);
  auto g = grouping::groupLayers(view, db, gp, file.string());
  if (!g.ok()) return at(label, d.jsonPath + ".model", g.error().message);
  // Nodes without rows are free only as fused ones: a model none of whose nodes has one is another model.
  for (size_t a = 0; gp.absentNodesFused && a < accelerators.size(); ++a) {
    double total = 0;
    for (const auto& grp : g->groups) total += std::max(0.0, grp.timeMs[a]);
    if (!(total > 0))
      return at(label, d.jsonPath + ".profile",
                fmt::format("no node of {} has a row under '{}' in {}: the profile is of another model (re-run "
                            "zoo-profile on the zoo's current stitch)",
                            file.string(), accelerators[a], (d.profileDir / "node_profile.csv").string()));
  }
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
    case WorkloadDnn::Source::Model:
    case WorkloadDnn::Source::ZooVariant: {
      ZP_ASSIGN_OR_RETURN(auto g, groupModel(d, accelerators, label));
      ZP_ASSIGN_OR_RETURN(const fs::path file, dnnModelFile(d, label));
      inputFiles.push_back(file);
      if (d.source == WorkloadDnn::Source::Model) {
        inputFiles.push_back(d.profile);
      } else {
        inputFiles.push_back(d.zoo);
        inputFiles.push_back(d.profileDir / "node_profile.csv");
      }
      return Grouped{std::move(g.groups), {file.string(), std::move(g.nodes)}};
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
