#include "passes/stitch/stitch.h"

#include <set>
#include <sstream>

#include "libplan/graph/analysis.h"
#include "libplan/graph/builder.h"
#include "libplan/graph/model_io.h"
#include "libplan/graph/shape_data.h"
#include "libplan/graph/tensor.h"
#include "libplan/util/hash.h"
#include "passes/partition/partition.h"

namespace zp::stitch {

namespace {

zoo::TensorSig signature(const graph::GraphView& view, const std::string& name) {
  zoo::TensorSig s;
  s.name = name;
  if (auto info = view.tensorInfo(name)) {
    s.type = graph::elemTypeName(info->elemType);
    s.shape = info->shape;
  } else {
    s.type = "unknown";
  }
  return s;
}

zoo::CostFigures costOf(const graph::GraphView& view) {
  auto t = view.totals();
  zoo::CostFigures c;
  c.flops = t.flops;
  c.params = t.params;
  c.weightBytes = t.weightBytes;
  c.weightSparsity = t.weightElems ? static_cast<double>(t.weightZeros) / static_cast<double>(t.weightElems) : 0.0;
  c.precision = graph::precisionName(view.precision());
  c.nodes = view.numNodes();
  return c;
}

// Which combinations to materialize: "none", "all", or a list of ids.
Expected<std::set<std::string>> parseMaterialize(const std::string& spec, const std::vector<zoo::TaskStitch>& tasks,
                                                 bool& all) {
  std::set<std::string> wanted;  // "task/combo"
  all = spec == "all";
  if (spec == "none" || spec.empty() || all) return wanted;
  std::stringstream ss(spec);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) continue;
    bool found = false;
    for (const auto& t : tasks)
      for (const auto& c : t.combinations) {
        if (item != c.id && item != t.name + "/" + c.id) continue;
        if (!c.valid) return makeError("--materialize: '{}' is not a valid combination: {}", item, c.reason);
        wanted.insert(t.name + "/" + c.id);
        found = true;
      }
    if (!found) return makeError("--materialize: no task has a combination '{}'", item);
  }
  return wanted;
}

// One task's partition: the reference variant, the candidate and chosen cuts,
// and the FLOPs share of each position.
struct TaskPartition {
  size_t reference = 0;
  partition::Alignment alignment;
  std::vector<int> cuts;  // indices into alignment.cuts
};

Expected<TaskPartition> partitionTask(const zoo::TaskSpec& task, const std::vector<graph::GraphView>& views,
                                      int subgraphs, const std::vector<std::string>& cuts, zoo::TaskStitch& ts) {
  std::vector<partition::VariantGraph> vg;
  for (size_t i = 0; i < views.size(); ++i) {
    vg.push_back({task.variants[i].id, &views[i]});
    ts.variants[i].cost = costOf(views[i]);
  }
  TaskPartition tp;
  // The reference for FLOPs balance: the first dense variant, else the first.
  for (size_t i = 0; i < task.variants.size(); ++i)
    if (task.variants[i].kind == "dense") { tp.reference = i; break; }
  ts.reference = task.variants[tp.reference].id;
  ZP_ASSIGN_OR_RETURN(tp.alignment, partition::alignVariants(vg, task.name));
  partition::PartitionParams pp{subgraphs, cuts};
  ZP_ASSIGN_OR_RETURN(auto part, partition::choosePartition(tp.alignment, vg, tp.reference, pp, task.name));
  for (const auto& c : tp.alignment.cuts) {
    const auto& cp = c.perVariant[tp.reference];
    ts.candidateCuts.push_back({c.after, signature(views[tp.reference], cp.tensor), cp.producer});
  }
  for (int k : part.cuts) ts.cuts.push_back(ts.candidateCuts[static_cast<size_t>(k)]);
  double total = 0;
  for (double f : part.partFlops) total += f;
  for (double f : part.partFlops) ts.partFlopsShare.push_back(total > 0 ? f / total : 0.0);
  tp.cuts = part.cuts;
  return tp;
}

// The subgraph of variant `v` at every position, each distinct one added to `out` once:
// the file from the model as read (`view`, symbolic dims kept), costs and
// signatures from the bound model (`bound`).
Status extractSubgraphs(const zoo::Zoo& zoo, const zoo::TaskSpec& task, const graph::GraphView& view,
                        const graph::GraphView& bound, size_t v, const TaskPartition& tp, zoo::TaskStitch& ts,
                        StitchResult& out) {
  const size_t positions = tp.cuts.size() + 1;
  std::vector<std::string> boundary;  // crossing tensor of each chosen cut, in this variant
  for (int k : tp.cuts) boundary.push_back(tp.alignment.cuts[static_cast<size_t>(k)].perVariant[v].tensor);
  for (size_t p = 0; p < positions; ++p) {
    std::vector<std::string> ins = p == 0 ? view.graphInputs() : std::vector<std::string>{boundary[p - 1]};
    std::vector<std::string> outs = p + 1 == positions ? view.graphOutputs() : std::vector<std::string>{boundary[p]};
    auto sub = graph::extractSubgraph(view, ins, outs, "zooplan_subgraph");
    const bool symbolic = &view.model() != &bound.model();
    auto boundSub = symbolic ? graph::extractSubgraph(bound, ins, outs, "zooplan_subgraph") : Expected(onnx::ModelProto());
    for (const auto* e : {&sub, &boundSub})
      if (!e->ok())
        return makeError("{}: task '{}', variant '{}', position {}: {}", zoo.file.string(), task.name,
                         task.variants[v].id, p, e->error().message);
    ZP_TRY(graph::checkModel(*sub, fmt::format("subgraph {}/{}/{}", task.name, task.variants[v].id, p)));
    std::string bytes = graph::serializeModel(*sub);
    zoo::SubgraphInfo info;
    info.position = static_cast<int>(p);
    info.variant = task.variants[v].id;
    info.hash = sha256Hex(bytes);
    info.file = "subgraphs/" + info.hash.substr(0, 16) + ".onnx";
    graph::GraphView sv(symbolic ? *boundSub : *sub);
    info.cost = costOf(sv);
    for (const auto& n : ins) info.inputs.push_back(signature(bound, n));
    for (const auto& n : outs) info.outputs.push_back(signature(bound, n));
    if (out.subgraphBytes.emplace(info.file, std::move(bytes)).second)
      out.subgraphModels.emplace(info.file, std::move(*sub));
    ts.subgraphs[p].push_back(std::move(info));
  }
  return {};
}

// Every combination, lexicographic in variant order; valid when each boundary
// agrees in shape and type on both sides.
void enumerateCombinations(zoo::TaskStitch& ts, size_t count) {
  const size_t nv = ts.variants.size();
  const size_t positions = ts.subgraphs.size();
  for (size_t k = 0; k < count; ++k) {
    zoo::Combination c;
    std::vector<size_t> digits(positions);
    size_t rest = k;
    for (size_t p = positions; p-- > 0;) { digits[p] = rest % nv; rest /= nv; }
    for (size_t p = 0; p < positions; ++p) {
      c.variants.push_back(ts.variants[digits[p]].id);
      c.id += (p ? "+" : "") + ts.variants[digits[p]].id;
    }
    for (size_t p = 0; p + 1 < positions && c.valid; ++p) {
      const auto& out = ts.subgraphs[p][digits[p]].outputs;
      const auto& in = ts.subgraphs[p + 1][digits[p + 1]].inputs;
      for (size_t i = 0; i < out.size() && i < in.size(); ++i)
        if (!out[i].sameShapeAndType(in[i])) {
          c.valid = false;
          c.reason = fmt::format("boundary {}->{}: '{}' gives {} but '{}' takes {}", p, p + 1,
                                 c.variants[p], out[i].str(), c.variants[p + 1], in[i].str());
        }
    }
    ts.combinations.push_back(std::move(c));
  }
}

// Each variant's model with its symbolic dims bound and the shapes behind computed
// Reshape targets filled in; empty models where that changes nothing.
Expected<std::vector<onnx::ModelProto>> bindVariants(const zoo::Zoo& zoo, const zoo::TaskSpec& task,
                                                     const std::vector<VariantModel>& variants,
                                                     const graph::DimBinding& dims,
                                                     std::map<std::string, int64_t>& applied) {
  std::vector<onnx::ModelProto> bound;
  for (size_t i = 0; i < variants.size(); ++i) {
    const std::string label = zoo.resolve(task.variants[i].onnx).string();
    onnx::ModelProto b;
    if (graph::hasSymbolicInputs(variants[i].model)) {
      ZP_ASSIGN_OR_RETURN(b, graph::bindDims(variants[i].model, dims, label, &applied));
    } else {
      b = variants[i].model;  // fixed dims: only the Reshape targets may add shapes
      ZP_ASSIGN_OR_RETURN(bool filled, graph::completeReshapeShapes(b, label));
      if (!filled) continue;
    }
    if (bound.empty()) bound.resize(variants.size());
    bound[i] = std::move(b);
  }
  return bound;
}

Expected<zoo::TaskStitch> stitchTask(const zoo::Zoo& zoo, const zoo::TaskSpec& task,
                                     const std::vector<VariantModel>& variants, const StitchParams& params,
                                     int subgraphs, StitchResult& out) {
  zoo::TaskStitch ts;
  ts.name = task.name;
  if (variants.size() != task.variants.size())
    return makeError("{}: task '{}': {} variant models for {} variants", zoo.file.string(), task.name,
                     variants.size(), task.variants.size());
  for (size_t i = 0; i < task.variants.size(); ++i) {
    const auto& v = task.variants[i];
    ts.variants.push_back(zoo::VariantInfo{v.id, v.kind, v.onnx, variants[i].sha256, {}, v.accuracy});
  }
  ZP_ASSIGN_OR_RETURN(auto boundModels, bindVariants(zoo, task, variants, params.dims, out.manifest.dims));
  std::vector<graph::GraphView> views, bound;  // as read; bound (the same model when nothing was symbolic)
  views.reserve(variants.size());
  bound.reserve(variants.size());
  for (size_t i = 0; i < variants.size(); ++i) {
    views.emplace_back(variants[i].model);
    const bool symbolic = !boundModels.empty() && boundModels[i].has_graph();
    bound.emplace_back(symbolic ? boundModels[i] : variants[i].model);
  }
  ZP_ASSIGN_OR_RETURN(auto tp, partitionTask(task, bound, subgraphs, params.cuts, ts));
  const size_t positions = tp.cuts.size() + 1;
  if (positions > static_cast<size_t>(zoo::kMaxPositions))
    return makeError("{}: task '{}': {} positions; a task has 1 to {}", zoo.file.string(), task.name, positions,
                     zoo::kMaxPositions);
  const auto count = zoo::combinationCount(ts.variants.size(), positions);
  if (!count)
    return makeError("{}: task '{}': {} variants at {} positions make more than {} stitched variants, too many "
                     "to list one by one (stitch.json lists them, zoo-profile estimates each); use fewer subgraphs or variants", zoo.file.string(), task.name,
                     ts.variants.size(), positions, zoo::kMaxCombinations);
  ts.subgraphs.resize(positions);
  for (size_t v = 0; v < views.size(); ++v) ZP_TRY(extractSubgraphs(zoo, task, views[v], bound[v], v, tp, ts, out));
  enumerateCombinations(ts, *count);
  return ts;
}

}  // namespace

Expected<onnx::ModelProto> materializeCombination(const zoo::TaskStitch& task, const zoo::Combination& combination,
                                                  const SubgraphModels& subgraphs) {
  std::vector<const onnx::ModelProto*> parts;
  for (size_t p = 0; p < combination.variants.size(); ++p) {
    const auto& sg = task.subgraph(static_cast<int>(p), combination.variants[p]);
    auto it = subgraphs.find(sg.file);
    if (it == subgraphs.end())
      return makeError("stitched {}/{}: subgraph {} was not loaded", task.name, combination.id, sg.file);
    parts.push_back(&it->second);
  }
  ZP_ASSIGN_OR_RETURN(auto stitched, graph::chainModels(parts, task.name + "/" + combination.id));
  ZP_TRY(graph::checkModel(stitched, "stitched " + task.name + "/" + combination.id));
  return stitched;
}

Expected<StitchResult> stitchZoo(const zoo::Zoo& zoo, const std::vector<std::vector<VariantModel>>& variants,
                                 const StitchParams& params, const std::string& zooPathFromOut) {
  StitchResult out;
  zoo::StitchManifest& manifest = out.manifest;
  manifest.tool = params.tool;
  manifest.zooPath = zooPathFromOut;
  manifest.zooSha256 = zoo.sha256;
  manifest.subgraphs = params.subgraphs > 0 ? params.subgraphs : static_cast<int>(zoo.processors.size());
  manifest.requestedCuts = params.cuts;
  manifest.materialize = params.materialize.empty() ? "none" : params.materialize;
  manifest.batch = params.dims.batch;
  if (variants.size() != zoo.tasks.size())
    return makeError("{}: {} tasks of variant models for {} tasks", zoo.file.string(), variants.size(), zoo.tasks.size());
  for (size_t t = 0; t < zoo.tasks.size(); ++t) {
    ZP_ASSIGN_OR_RETURN(auto ts, stitchTask(zoo, zoo.tasks[t], variants[t], params, manifest.subgraphs, out));
    manifest.tasks.push_back(std::move(ts));
  }
  // A bad --materialize list is an error of the run, before anything is written.
  bool all = false;
  ZP_TRY(parseMaterialize(manifest.materialize, manifest.tasks, all));
  return out;
}

Expected<std::vector<std::pair<size_t, size_t>>> materializedCombinations(zoo::StitchManifest& manifest) {
  bool all = false;
  ZP_ASSIGN_OR_RETURN(auto wanted, parseMaterialize(manifest.materialize, manifest.tasks, all));
  std::vector<std::pair<size_t, size_t>> picked;
  for (size_t t = 0; t < manifest.tasks.size(); ++t) {
    auto& task = manifest.tasks[t];
    for (size_t k = 0; k < task.combinations.size(); ++k) {
      auto& c = task.combinations[k];
      if (!c.valid || !(all || wanted.count(task.name + "/" + c.id))) continue;
      c.file = "stitched/" + task.name + "/" + c.id + ".onnx";
      picked.emplace_back(t, k);
    }
  }
  return picked;
}

}  // namespace zp::stitch
