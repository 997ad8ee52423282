#include "libplan/artifacts/stitch_json.h"

#include <algorithm>
#include <cassert>
#include <limits>
#include <map>
#include <set>

#include "libplan/util/file.h"
#include "libplan/util/json_reader.h"
#include "libplan/util/dim_limits.h"
#include "libplan/util/validate.h"

namespace zp::artifacts {
using namespace zoo;

namespace {

Json sigJson(const TensorSig& s) { return Json{{"name", s.name}, {"type", s.type}, {"shape", s.shape}}; }
Json costJson(const CostFigures& c) {
  return Json{{"flops", c.flops}, {"params", c.params}, {"weight_bytes", c.weightBytes},
              {"weight_sparsity", c.weightSparsity}, {"precision", c.precision}, {"nodes", c.nodes}};
}
Json cutJson(const CutInfo& c) { return Json{{"after", c.after}, {"tensor", sigJson(c.tensor)}, {"producer", c.producer}}; }

constexpr int64_t kMaxInt = std::numeric_limits<int>::max();
// A tensor dimension: -1 (not fixed) up to this; whole tensors stay below kMaxBytes.
constexpr int64_t kMaxDimension = int64_t{1} << 40;

Expected<TensorSig> sigFrom(const JsonAt& j) {
  TensorSig s;
  ZP_ASSIGN_OR_RETURN(s.name, j.string("name"));
  ZP_ASSIGN_OR_RETURN(s.type, j.string("type"));
  ZP_ASSIGN_OR_RETURN(auto dims, j.array("shape"));
  // Unknown dimensions count as 1 (TensorSig::bytes); 8 bytes per element at most.
  const uint64_t maxElements = static_cast<uint64_t>(kMaxBytes) / 8;
  uint64_t elements = 1;
  for (const auto& d : dims) {
    ZP_ASSIGN_OR_RETURN(int64_t n, d.integer(-1, kMaxDimension));
    s.shape.push_back(n);
    auto e = checkedMul(elements, static_cast<uint64_t>(std::max<int64_t>(n, 1)), maxElements);
    if (!e) return j.error(fmt::format("a tensor of more than {} elements", maxElements));
    elements = *e;
  }
  return s;
}

Expected<std::vector<TensorSig>> sigsFrom(const JsonAt& j, std::string_view key) {
  ZP_ASSIGN_OR_RETURN(auto items, j.array(key));
  if (items.empty()) return j.error(fmt::format("'{}' must not be empty", key));
  std::vector<TensorSig> out;
  for (const auto& i : items) {
    ZP_ASSIGN_OR_RETURN(auto sig, sigFrom(i));
    out.push_back(std::move(sig));
  }
  return out;
}

Expected<CostFigures> costFrom(const JsonAt& j) {
  CostFigures c;
  ZP_ASSIGN_OR_RETURN(c.flops, j.number("flops", 0, 1e30));
  ZP_ASSIGN_OR_RETURN(c.params, j.integer("params", 0, kMaxBytes));
  ZP_ASSIGN_OR_RETURN(c.weightBytes, j.integer("weight_bytes", 0, kMaxBytes));
  ZP_ASSIGN_OR_RETURN(c.weightSparsity, j.number("weight_sparsity", 0, 1));
  ZP_ASSIGN_OR_RETURN(c.precision, j.string("precision"));
  ZP_ASSIGN_OR_RETURN(int64_t nodes, j.integer("nodes", 0, kMaxInt));
  c.nodes = static_cast<int>(nodes);
  return c;
}

Expected<CutInfo> cutFrom(const JsonAt& j) {
  CutInfo c;
  ZP_ASSIGN_OR_RETURN(int64_t after, j.integer("after", 0, kMaxInt));
  c.after = static_cast<int>(after);
  ZP_ASSIGN_OR_RETURN(JsonAt tensor, j.at("tensor"));
  ZP_ASSIGN_OR_RETURN(c.tensor, sigFrom(tensor));
  ZP_ASSIGN_OR_RETURN(c.producer, j.string("producer"));
  return c;
}

Expected<std::vector<CutInfo>> cutsFrom(const JsonAt& j, std::string_view key) {
  ZP_ASSIGN_OR_RETURN(auto items, j.array(key));
  std::vector<CutInfo> out;
  for (const auto& i : items) {
    ZP_ASSIGN_OR_RETURN(auto c, cutFrom(i));
    out.push_back(std::move(c));
  }
  return out;
}

Expected<std::string> relativeFile(const JsonAt& j, std::string_view key) {
  ZP_ASSIGN_OR_RETURN(JsonAt f, j.at(key));
  ZP_ASSIGN_OR_RETURN(std::string file, f.string());
  if (!isSafeRelativePath(file)) return f.error(fmt::format("'{}' is not a relative path inside the stitch directory", file));
  return file;
}

Expected<std::vector<VariantInfo>> variantsFrom(const JsonAt& tj) {
  ZP_ASSIGN_OR_RETURN(auto items, tj.array("variants"));
  if (items.empty()) return tj.error("'variants' must not be empty");
  std::vector<VariantInfo> out;
  std::set<std::string> ids;
  for (const auto& vj : items) {
    VariantInfo v;
    ZP_ASSIGN_OR_RETURN(v.id, vj.id("id"));
    if (!ids.insert(v.id).second) return vj.error(fmt::format("duplicate variant id '{}'", v.id));
    ZP_ASSIGN_OR_RETURN(v.kind, vj.string("kind"));
    ZP_ASSIGN_OR_RETURN(v.onnx, vj.string("onnx"));
    ZP_ASSIGN_OR_RETURN(v.sha256, vj.string("sha256"));
    ZP_ASSIGN_OR_RETURN(JsonAt cost, vj.at("cost"));
    ZP_ASSIGN_OR_RETURN(v.cost, costFrom(cost));
    if (vj.has("accuracy")) { ZP_ASSIGN_OR_RETURN(v.accuracy, vj.number("accuracy", 0, 1)); }
    out.push_back(std::move(v));
  }
  return out;
}

// Per position one subgraph of every variant, in the variants' order of first appearance.
Status positionsFrom(const JsonAt& tj, TaskStitch& t) {
  ZP_ASSIGN_OR_RETURN(auto positions, tj.array("positions"));
  if (positions.empty() || positions.size() > static_cast<size_t>(kMaxPositions))
    return tj.error(fmt::format("{} positions; a task has 1 to {}", positions.size(), kMaxPositions));
  for (size_t p = 0; p < positions.size(); ++p) {
    const JsonAt& pj = positions[p];
    ZP_ASSIGN_OR_RETURN(int64_t index, pj.integer("position", 0, kMaxPositions));
    if (index != static_cast<int64_t>(p)) return pj.error(fmt::format("position {} listed at index {}", index, p));
    ZP_ASSIGN_OR_RETURN(double share, pj.number("reference_flops_share", 0, 1));
    t.partFlopsShare.push_back(share);
    ZP_ASSIGN_OR_RETURN(auto subgraphs, pj.array("subgraphs"));
    std::vector<SubgraphInfo> row;
    for (const auto& sj : subgraphs) {
      SubgraphInfo s;
      s.position = static_cast<int>(p);
      ZP_ASSIGN_OR_RETURN(s.variant, sj.id("variant"));
      if (std::none_of(t.variants.begin(), t.variants.end(), [&](const VariantInfo& v) { return v.id == s.variant; }))
        return sj.error(fmt::format("variant '{}' is not among the task's variants", s.variant));
      if (std::any_of(row.begin(), row.end(), [&](const SubgraphInfo& o) { return o.variant == s.variant; }))
        return sj.error(fmt::format("a second subgraph of variant '{}'", s.variant));
      ZP_ASSIGN_OR_RETURN(s.hash, sj.string("hash"));
      ZP_ASSIGN_OR_RETURN(s.file, relativeFile(sj, "file"));
      ZP_ASSIGN_OR_RETURN(JsonAt cost, sj.at("cost"));
      ZP_ASSIGN_OR_RETURN(s.cost, costFrom(cost));
      ZP_ASSIGN_OR_RETURN(s.inputs, sigsFrom(sj, "inputs"));
      ZP_ASSIGN_OR_RETURN(s.outputs, sigsFrom(sj, "outputs"));
      row.push_back(std::move(s));
    }
    if (row.size() != t.variants.size())
      return pj.error(fmt::format("{} subgraphs for {} variants (one per variant)", row.size(), t.variants.size()));
    t.subgraphs.push_back(std::move(row));
  }
  return {};
}

// All V^S combinations in their canonical order, after checking their number.
Status combinationsFrom(const JsonAt& tj, TaskStitch& t) {
  ZP_ASSIGN_OR_RETURN(JsonAt cj, tj.at("combinations"));
  const size_t s = t.subgraphs.size(), v = t.variants.size();
  auto total = combinationCount(v, s);
  if (!total)
    return tj.error(fmt::format("{} variants at {} positions make more than {} combinations, too many to list one by one",
                                v, s, kMaxCombinations));
  ZP_ASSIGN_OR_RETURN(int64_t recorded, cj.integer("total", 0, std::numeric_limits<int64_t>::max()));
  if (static_cast<uint64_t>(recorded) != *total)
    return cj.error(fmt::format("total {} does not match {} variants at {} positions ({})", recorded, v, s, *total));
  std::map<std::string, std::string> files, invalid;
  ZP_ASSIGN_OR_RETURN(auto materialized, cj.array("materialized"));
  for (const auto& f : materialized) {
    ZP_ASSIGN_OR_RETURN(std::string id, f.string("id"));
    ZP_ASSIGN_OR_RETURN(files[id], relativeFile(f, "file"));
  }
  ZP_ASSIGN_OR_RETURN(auto invalidItems, cj.array("invalid"));
  for (const auto& f : invalidItems) {
    ZP_ASSIGN_OR_RETURN(std::string id, f.string("id"));
    ZP_ASSIGN_OR_RETURN(invalid[id], f.string("reason"));
  }
  ZP_TRY(cj.strings("valid"));  // the complement of "invalid": its type is checked, the rest rebuilt
  t.combinations.reserve(*total);
  std::vector<size_t> digits(s);
  for (uint64_t k = 0; k < *total; ++k) {
    Combination c;
    uint64_t rest = k;
    for (size_t p = s; p-- > 0;) { digits[p] = rest % v; rest /= v; }
    for (size_t p = 0; p < s; ++p) {
      c.variants.push_back(t.variants[digits[p]].id);
      c.id += (p ? "+" : "") + t.variants[digits[p]].id;
    }
    if (auto it = invalid.find(c.id); it != invalid.end()) { c.valid = false; c.reason = it->second; }
    if (auto it = files.find(c.id); it != files.end()) c.file = it->second;
    t.combinations.push_back(std::move(c));
  }
  return {};
}

Expected<TaskStitch> taskFrom(const JsonAt& tj) {
  TaskStitch t;
  ZP_ASSIGN_OR_RETURN(t.name, tj.id("name"));
  ZP_ASSIGN_OR_RETURN(t.variants, variantsFrom(tj));
  ZP_ASSIGN_OR_RETURN(JsonAt ref, tj.at("reference_variant"));
  ZP_ASSIGN_OR_RETURN(t.reference, ref.id());
  if (std::none_of(t.variants.begin(), t.variants.end(), [&](const VariantInfo& v) { return v.id == t.reference; }))
    return ref.error(fmt::format("'{}' is not among the task's variants", t.reference));
  ZP_ASSIGN_OR_RETURN(JsonAt cuts, tj.at("cut_points"));
  ZP_ASSIGN_OR_RETURN(t.candidateCuts, cutsFrom(cuts, "candidates"));
  ZP_ASSIGN_OR_RETURN(t.cuts, cutsFrom(cuts, "chosen"));
  ZP_TRY(positionsFrom(tj, t));
  if (t.cuts.size() + 1 != t.subgraphs.size())
    return cuts.error(fmt::format("{} chosen cuts for {} positions", t.cuts.size(), t.subgraphs.size()));
  ZP_TRY(combinationsFrom(tj, t));
  return t;
}

}  // namespace

Json toJson(const StitchManifest& m) {
  Json j;
  j["schema_version"] = 1;
  j["tool"] = m.tool;
  j["zoo"] = Json{{"path", m.zooPath}, {"sha256", m.zooSha256}};
  j["params"] = Json{{"subgraphs", m.subgraphs}, {"cuts", m.requestedCuts}, {"materialize", m.materialize},
                     {"batch", m.batch}, {"dims", Json::object()}};
  for (const auto& [name, value] : m.dims) j["params"]["dims"][name] = value;
  j["tasks"] = Json::array();
  for (const auto& t : m.tasks) {
    Json tj;
    tj["name"] = t.name;
    tj["reference_variant"] = t.reference;
    tj["variants"] = Json::array();
    for (const auto& v : t.variants) {
      Json vj{{"id", v.id}, {"kind", v.kind}, {"onnx", v.onnx}, {"sha256", v.sha256}, {"cost", costJson(v.cost)}};
      if (v.accuracy) vj["accuracy"] = *v.accuracy;
      tj["variants"].push_back(vj);
    }
    tj["cut_points"] = Json{{"candidates", Json::array()}, {"chosen", Json::array()}};
    for (const auto& c : t.candidateCuts) tj["cut_points"]["candidates"].push_back(cutJson(c));
    for (const auto& c : t.cuts) tj["cut_points"]["chosen"].push_back(cutJson(c));
    tj["positions"] = Json::array();
    for (size_t p = 0; p < t.subgraphs.size(); ++p) {
      Json pj{{"position", p}, {"reference_flops_share", t.partFlopsShare[p]}, {"subgraphs", Json::array()}};
      for (const auto& s : t.subgraphs[p]) {
        Json sj{{"variant", s.variant}, {"hash", s.hash}, {"file", s.file}, {"cost", costJson(s.cost)},
                {"inputs", Json::array()}, {"outputs", Json::array()}};
        for (const auto& i : s.inputs) sj["inputs"].push_back(sigJson(i));
        for (const auto& o : s.outputs) sj["outputs"].push_back(sigJson(o));
        pj["subgraphs"].push_back(sj);
      }
      tj["positions"].push_back(pj);
    }
    Json valid = Json::array(), invalid = Json::array(), stitched = Json::array();
    for (const auto& c : t.combinations) {
      if (c.valid) valid.push_back(c.id);
      else invalid.push_back(Json{{"id", c.id}, {"reason", c.reason}});
      if (!c.file.empty()) stitched.push_back(Json{{"id", c.id}, {"file", c.file}});
    }
    tj["combinations"] = Json{{"total", t.combinations.size()}, {"valid", valid}, {"invalid", invalid},
                              {"materialized", stitched}};
    j["tasks"].push_back(tj);
  }
  return j;
}

Expected<StitchManifest> stitchManifestFromJson(const Json& j, const std::string& label) {
  JsonAt root(j, label);
  ZP_ASSIGN_OR_RETURN(int64_t version, root.integer("schema_version"));
  if (version != 1) return root.error(fmt::format("unsupported schema_version {} (expected 1)", version));
  StitchManifest m;
  ZP_ASSIGN_OR_RETURN(m.tool, root.string("tool"));
  ZP_ASSIGN_OR_RETURN(JsonAt zoo, root.at("zoo"));
  ZP_ASSIGN_OR_RETURN(m.zooPath, zoo.string("path"));
  ZP_ASSIGN_OR_RETURN(m.zooSha256, zoo.string("sha256"));
  ZP_ASSIGN_OR_RETURN(JsonAt params, root.at("params"));
  ZP_ASSIGN_OR_RETURN(int64_t subgraphs, params.integer("subgraphs", 0, kMaxInt));
  m.subgraphs = static_cast<int>(subgraphs);
  ZP_ASSIGN_OR_RETURN(m.requestedCuts, params.strings("cuts"));
  ZP_ASSIGN_OR_RETURN(m.materialize, params.string("materialize"));
  // Files written before symbolic dims were bound have neither: batch 1, no dims.
  if (params.has("batch")) { ZP_ASSIGN_OR_RETURN(m.batch, params.integer("batch", 1, kMaxDimValue)); }
  if (params.has("dims")) {
    ZP_ASSIGN_OR_RETURN(JsonAt dims, params.at("dims"));
    ZP_ASSIGN_OR_RETURN(auto members, dims.members());
    for (const auto& [name, value] : members) {
      ZP_ASSIGN_OR_RETURN(m.dims[name], value.integer(1, kMaxDimValue));
    }
  }
  ZP_ASSIGN_OR_RETURN(auto tasks, root.array("tasks"));
  if (tasks.empty()) return root.error("'tasks' must not be empty");
  for (const auto& tj : tasks) {
    ZP_ASSIGN_OR_RETURN(auto t, taskFrom(tj));
    if (m.task(t.name)) return tj.error(fmt::format("duplicate task '{}'", t.name));
    m.tasks.push_back(std::move(t));
  }
  return m;
}

Expected<StitchManifest> loadStitchManifest(const std::filesystem::path& dir) {
  auto path = dir / "stitch.json";
  ZP_ASSIGN_OR_RETURN(Json j, readJsonFile(path));
  return stitchManifestFromJson(j, path.string());
}

Status writeStitchManifest(const StitchManifest& m, const std::filesystem::path& dir) {
  return writeFileAtomic(dir / "stitch.json", canonicalJson(toJson(m)));
}

}  // namespace zp::artifacts
