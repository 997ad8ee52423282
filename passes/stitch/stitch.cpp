#include "passes/stitch/stitch.h"

#include <map>
#include <set>
#include <sstream>

#include "libplan/graph/analysis.h"
#include "libplan/graph/builder.h"
#include "libplan/graph/model_io.h"
#include "libplan/graph/tensor.h"
#include "libplan/util/file.h"
#include "libplan/util/hash.h"
#include "libplan/util/progress.h"
#include "passes/partition/partition.h"

namespace zp::stitch {
namespace fs = std::filesystem;

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

}  // namespace

Expected<onnx::ModelProto> materializeCombination(const zoo::TaskStitch& task, const zoo::Combination& combination,
                                                  const fs::path& stitchDir) {
  std::vector<onnx::ModelProto> parts;
  for (size_t p = 0; p < combination.variants.size(); ++p) {
    const auto& sg = task.subgraph(static_cast<int>(p), combination.variants[p]);
    ZP_ASSIGN_OR_RETURN(auto model, graph::loadModel(stitchDir / sg.file, graph::LoadOptions{false, false}));
    parts.push_back(std::move(model));
  }
  std::vector<const onnx::ModelProto*> ptrs;
  for (const auto& m : parts) ptrs.push_back(&m);
  ZP_ASSIGN_OR_RETURN(auto stitched, graph::chainModels(ptrs, task.name + "/" + combination.id));
  ZP_TRY(graph::checkModel(stitched, "stitched " + task.name + "/" + combination.id));
  return stitched;
}

Expected<zoo::StitchManifest> stitchZoo(const zoo::Zoo& zoo, const StitchParams& params, const fs::path& outDir,
                                        const std::string& zooPathFromOut) {
  zoo::StitchManifest manifest;
  manifest.tool = params.tool;
  manifest.zooPath = zooPathFromOut;
  manifest.zooSha256 = zoo.sha256;
  manifest.subgraphs = params.subgraphs > 0 ? params.subgraphs : static_cast<int>(zoo.processors.size());
  manifest.requestedCuts = params.cuts;
  manifest.materialize = params.materialize.empty() ? "none" : params.materialize;

  std::error_code ec;
  fs::create_directories(outDir / "subgraphs", ec);
  if (ec) return makeError("{}: cannot create: {}", (outDir / "subgraphs").string(), ec.message());
  std::set<std::string> writtenHashes;

  for (const auto& task : zoo.tasks) {
    zoo::TaskStitch ts;
    ts.name = task.name;
    std::vector<onnx::ModelProto> models;
    models.reserve(task.variants.size());
    for (const auto& v : task.variants) {
      fs::path file = zoo.resolve(v.onnx);
      ZP_ASSIGN_OR_RETURN(auto model, graph::loadModel(file));
      ZP_ASSIGN_OR_RETURN(std::string bytes, readFile(file));
      zoo::VariantInfo info{v.id, v.kind, v.onnx, sha256Hex(bytes), {}, v.accuracy};
      models.push_back(std::move(model));
      ts.variants.push_back(std::move(info));
    }
    std::vector<graph::GraphView> views;
    views.reserve(models.size());
    for (const auto& m : models) views.emplace_back(m);
    std::vector<partition::VariantGraph> vg;
    for (size_t i = 0; i < views.size(); ++i) {
      vg.push_back({task.variants[i].id, &views[i]});
      ts.variants[i].cost = costOf(views[i]);
    }
    // The reference for FLOPs balance: the first dense variant, else the first.
    size_t ref = 0;
    for (size_t i = 0; i < task.variants.size(); ++i)
      if (task.variants[i].kind == "dense") { ref = i; break; }
    ts.reference = task.variants[ref].id;

    ZP_ASSIGN_OR_RETURN(auto alignment, partition::alignVariants(vg, task.name));
    partition::PartitionParams pp{manifest.subgraphs, params.cuts};
    ZP_ASSIGN_OR_RETURN(auto part, partition::choosePartition(alignment, vg, ref, pp, task.name));
    for (const auto& c : alignment.cuts) {
      const auto& cp = c.perVariant[ref];
      ts.candidateCuts.push_back({c.after, signature(views[ref], cp.tensor), cp.producer});
    }
    for (int k : part.cuts) ts.cuts.push_back(ts.candidateCuts[static_cast<size_t>(k)]);
    double total = 0;
    for (double f : part.partFlops) total += f;
    for (double f : part.partFlops) ts.partFlopsShare.push_back(total > 0 ? f / total : 0.0);

    const size_t positions = part.cuts.size() + 1;
    if (positions > static_cast<size_t>(zoo::kMaxPositions))
      return makeError("{}: task '{}': {} positions; a task has 1 to {}", zoo.file.string(), task.name, positions,
                       zoo::kMaxPositions);
    const auto count = zoo::combinationCount(ts.variants.size(), positions);
    if (!count)
      return makeError("{}: task '{}': {} variants at {} positions make more than {} stitched variants, too many "
                       "to enumerate; use fewer subgraphs or variants", zoo.file.string(), task.name,
                       ts.variants.size(), positions, zoo::kMaxCombinations);
    ts.subgraphs.resize(positions);
    for (size_t v = 0; v < views.size(); ++v) {
      const auto& view = views[v];
      std::vector<std::string> boundary;  // crossing tensor of each chosen cut, in this variant
      for (int k : part.cuts) boundary.push_back(alignment.cuts[static_cast<size_t>(k)].perVariant[v].tensor);
      for (size_t p = 0; p < positions; ++p) {
        std::vector<std::string> ins = p == 0 ? view.graphInputs() : std::vector<std::string>{boundary[p - 1]};
        std::vector<std::string> outs = p + 1 == positions ? view.graphOutputs() : std::vector<std::string>{boundary[p]};
        auto sub = graph::extractSubgraph(view, ins, outs, "zooplan_subgraph");
        if (!sub.ok())
          return makeError("{}: task '{}', variant '{}', position {}: {}", zoo.file.string(), task.name,
                           task.variants[v].id, p, sub.error().message);
        ZP_TRY(graph::checkModel(*sub, fmt::format("subgraph {}/{}/{}", task.name, task.variants[v].id, p)));
        std::string bytes = graph::serializeModel(*sub);
        zoo::SubgraphInfo info;
        info.position = static_cast<int>(p);
        info.variant = task.variants[v].id;
        info.hash = sha256Hex(bytes);
        info.file = "subgraphs/" + info.hash.substr(0, 16) + ".onnx";
        graph::GraphView sv(*sub);
        info.cost = costOf(sv);
        for (const auto& n : ins) info.inputs.push_back(signature(view, n));
        for (const auto& n : outs) info.outputs.push_back(signature(view, n));
        if (writtenHashes.insert(info.hash).second) ZP_TRY(writeFileAtomic(outDir / info.file, bytes));
        ts.subgraphs[p].push_back(std::move(info));
      }
    }

    // Every combination, lexicographic in variant order; valid when each
    // boundary agrees in shape and type on both sides.
    const size_t nv = ts.variants.size();
    const size_t total_combos = *count;
    for (size_t k = 0; k < total_combos; ++k) {
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
    manifest.tasks.push_back(std::move(ts));
  }

  bool all = false;
  ZP_ASSIGN_OR_RETURN(auto wanted, parseMaterialize(manifest.materialize, manifest.tasks, all));
  size_t count = 0;
  for (const auto& t : manifest.tasks)
    for (const auto& c : t.combinations) count += c.valid && (all || wanted.count(t.name + "/" + c.id));
  Progress progress("materializing stitched variants", count);
  for (auto& t : manifest.tasks) {
    for (auto& c : t.combinations) {
      if (!c.valid || !(all || wanted.count(t.name + "/" + c.id))) continue;
      ZP_ASSIGN_OR_RETURN(auto model, materializeCombination(t, c, outDir));
      c.file = "stitched/" + t.name + "/" + c.id + ".onnx";
      fs::create_directories((outDir / c.file).parent_path(), ec);
      ZP_TRY(graph::saveModel(model, outDir / c.file));
      progress.advance();
    }
  }
  return manifest;
}

}  // namespace zp::stitch
