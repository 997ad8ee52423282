// zoo-profile's processors: each measured on the host under its kernel policy
// and threads, or its rows imported from a device profiler's output and
// mapped onto the subgraphs.
#include <algorithm>

#include "drivers/stitch_flow/subgraph_models_read.h"
#include "drivers/stitch_flow/zoo_profile_steps.h"
#include "libplan/artifacts/profile_csv.h"
#include "libplan/graph/analysis.h"
#include "libplan/graph/model_io.h"
#include "libplan/profile/import.h"
#include "libplan/profile/subgraph_map.h"
#include "libplan/runtime/kernel_policy.h"
#include "libplan/runtime/serve/processor.h"

namespace zp::drivers::zoo_profile {
namespace fs = std::filesystem;
using profile::ProfileDb;
using profile::ProfileRow;
using profile::RowKind;

Status resolveProcessors(Sources& src, const ProfileParams& params) {
  const zoo::Zoo& zoo = src.zoo;
  std::vector<Processor> out = zoo.processors;
  std::map<std::string, ImportSpec> imports;
  for (const auto& p : out) {
    ZP_TRY(runtime::serve::checkCores(fmt::format("{}: processor '{}'", zoo.file.string(), p.name), p.cores));
    if (!runtime::isKnownPolicy(p.policy))
      return makeError("{}: processor '{}': unknown kernel policy '{}'", zoo.file.string(), p.name, p.policy);
    if (!p.host()) imports[p.name] = ImportSpec{p.name, p.source, zoo.resolve(p.profileFile).string(), "", "", ""};
  }
  for (const auto& o : params.hostOverrides) {
    auto it = std::find_if(out.begin(), out.end(), [&](const Processor& p) { return p.name == o.processor; });
    if (it == out.end()) return makeError("--processor: the zoo has no processor '{}'", o.processor);
    // The override names the policy and threads; the zoo's cores and GEMM library stay.
    it->source = kHostSource;
    it->profileFile.clear();
    it->policy = o.policy;
    it->threads = o.threads;
    imports.erase(o.processor);
  }
  for (const auto& imp : params.imports) {
    auto it = std::find_if(out.begin(), out.end(), [&](const Processor& p) { return p.name == imp.processor; });
    if (it == out.end()) return makeError("--import: the zoo has no processor '{}'", imp.processor);
    it->source = imp.format;
    it->profileFile = imp.file;
    imports[imp.processor] = imp;
  }
  for (const auto& [name, spec] : imports)
    if (spec.format != "csv" && spec.task.empty())
      return makeError("{}: processor '{}' imports {} but no variant is named (use --import {}={}:FILE@TASK/VARIANT)",
                       zoo.file.string(), name, spec.format, name, spec.format);
  src.processors = std::move(out);
  src.importSpecs = std::move(imports);
  return {};
}

Expected<ProfileDb> importProcessor(const Processor& proc, const ImportSpec& spec, const zoo::Zoo& zoo,
                                    const zoo::StitchManifest& manifest, const fs::path& stitchDir, Json& imports) {
  profile::ImportParams ip;
  ip.task = spec.task;
  ip.variant = spec.variant;
  ip.processor = proc.name;
  ProfileDb db;
  std::optional<onnx::ModelProto> model;
  if (!spec.task.empty()) {
    const zoo::TaskSpec* task = nullptr;
    for (const auto& t : zoo.tasks)
      if (t.name == spec.task) task = &t;
    if (!task) return makeError("--import {}: the zoo has no task '{}'", spec.file, spec.task);
    auto v = std::find_if(task->variants.begin(), task->variants.end(), [&](const auto& x) { return x.id == spec.variant; });
    if (v == task->variants.end()) return makeError("--import {}: task '{}' has no variant '{}'", spec.file, spec.task, spec.variant);
    ZP_ASSIGN_OR_RETURN(auto m, graph::loadModel(zoo.resolve(v->onnx)));
    model = std::move(m);
  }
  std::optional<graph::GraphView> view;
  if (model) view.emplace(*model);
  std::vector<ProfileRow> nodeRows;
  profile::ImportReport rep;
  if (spec.format == "csv") {
    ZP_ASSIGN_OR_RETURN(auto rows, artifacts::readProfileCsv(spec.file));
    ZP_ASSIGN_OR_RETURN(auto imp, profile::importProfileRows(rows, spec.file, view ? &*view : nullptr, ip));
    for (const auto* r : imp.rows.rows()) {
      ProfileRow row = *r;
      row.processor = proc.name;
      if (row.kind == RowKind::Node) nodeRows.push_back(row);
      else db.add(row);
    }
    rep = imp.report;
  } else {
    Expected<profile::NodeImport> imp = spec.format == "ort-json"   ? profile::importOrtProfile(spec.file, *view, ip)
                                       : spec.format == "trtexec"  ? profile::importTrtexecProfile(
                                                                         spec.file,
                                                                         spec.layerInfo.empty() ? std::nullopt : std::optional<fs::path>(spec.layerInfo),
                                                                         *view, ip)
                                                                   : profile::importOpenVinoCounters(spec.file, *view, ip);
    if (!imp.ok()) return imp.error();
    nodeRows = imp->rows;
    rep = imp->report;
  }
  Json j{{"processor", proc.name}, {"format", spec.format}, {"file", spec.file}, {"summary", rep.summary()},
         {"matched_share", rep.matchedShare()}, {"unmatched_names", rep.unmatchedNames}};
  if (!nodeRows.empty()) {
    ZP_ASSIGN_OR_RETURN(auto files, profile::subgraphFilesFor(nodeRows, manifest));
    // Node names are all the mapping reads: no checker, no shape inference.
    ZP_ASSIGN_OR_RETURN(auto models, drivers::readSubgraphModels(files, stitchDir, graph::LoadOptions{false, false}));
    ZP_ASSIGN_OR_RETURN(auto mapping, profile::mapToSubgraphs(nodeRows, manifest, models));
    for (auto& r : mapping.rows) db.add(r);
    for (auto& r : nodeRows) db.add(r);
    j["subgraph_mapping"] = mapping.summary();
    j["subgraph_coverage"] = mapping.coverage();
  }
  imports.push_back(j);
  return db;
}

}  // namespace zp::drivers::zoo_profile
