#include "libplan/zoo/stitch_manifest.h"

#include <algorithm>
#include <cassert>
#include <map>

#include "libplan/util/file.h"

namespace zp::zoo {

std::string TensorSig::str() const {
  std::string s = type + "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + (shape[i] < 0 ? std::string("?") : std::to_string(shape[i]));
  return s + "]";
}

int64_t TensorSig::bytes() const {
  int64_t n = 1;
  for (auto d : shape) n *= std::max<int64_t>(d, 1);
  const int64_t size = type == "float64" || type == "int64" ? 8 : type == "float16" ? 2 : type == "int8" || type == "uint8" ? 1 : 4;
  return n * size;
}

const SubgraphInfo& TaskStitch::subgraph(int position, const std::string& variant) const {
  for (const auto& s : subgraphs[static_cast<size_t>(position)])
    if (s.variant == variant) return s;
  assert(false && "unknown variant");
  return subgraphs[0][0];
}

const TaskStitch* StitchManifest::task(const std::string& name) const {
  for (const auto& t : tasks)
    if (t.name == name) return &t;
  return nullptr;
}

namespace {

Json sigJson(const TensorSig& s) { return Json{{"name", s.name}, {"type", s.type}, {"shape", s.shape}}; }
TensorSig sigFrom(const Json& j) {
  return TensorSig{j.at("name").get<std::string>(), j.at("type").get<std::string>(),
                   j.at("shape").get<std::vector<int64_t>>()};
}
Json costJson(const CostFigures& c) {
  return Json{{"flops", c.flops}, {"params", c.params}, {"weight_bytes", c.weightBytes},
              {"weight_sparsity", c.weightSparsity}, {"precision", c.precision}, {"nodes", c.nodes}};
}
CostFigures costFrom(const Json& j) {
  CostFigures c;
  c.flops = j.at("flops").get<double>();
  c.params = j.at("params").get<int64_t>();
  c.weightBytes = j.at("weight_bytes").get<int64_t>();
  c.weightSparsity = j.at("weight_sparsity").get<double>();
  c.precision = j.at("precision").get<std::string>();
  c.nodes = j.at("nodes").get<int>();
  return c;
}
Json cutJson(const CutInfo& c) { return Json{{"after", c.after}, {"tensor", sigJson(c.tensor)}, {"producer", c.producer}}; }
CutInfo cutFrom(const Json& j) {
  return CutInfo{j.at("after").get<int>(), sigFrom(j.at("tensor")), j.at("producer").get<std::string>()};
}

}  // namespace

Json toJson(const StitchManifest& m) {
  Json j;
  j["schema_version"] = 1;
  j["tool"] = m.tool;
  j["zoo"] = Json{{"path", m.zooPath}, {"sha256", m.zooSha256}};
  j["params"] = Json{{"subgraphs", m.subgraphs}, {"cuts", m.requestedCuts}, {"materialize", m.materialize}};
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
  try {
    if (j.at("schema_version") != 1) return makeError("{}: unsupported schema_version", label);
    StitchManifest m;
    m.tool = j.at("tool").get<std::string>();
    m.zooPath = j.at("zoo").at("path").get<std::string>();
    m.zooSha256 = j.at("zoo").at("sha256").get<std::string>();
    m.subgraphs = j.at("params").at("subgraphs").get<int>();
    m.requestedCuts = j.at("params").at("cuts").get<std::vector<std::string>>();
    m.materialize = j.at("params").at("materialize").get<std::string>();
    for (const auto& tj : j.at("tasks")) {
      TaskStitch t;
      t.name = tj.at("name").get<std::string>();
      t.reference = tj.at("reference_variant").get<std::string>();
      std::vector<std::string> ids;
      for (const auto& vj : tj.at("variants")) {
        VariantInfo v{vj.at("id").get<std::string>(), vj.at("kind").get<std::string>(), vj.at("onnx").get<std::string>(),
                      vj.at("sha256").get<std::string>(), costFrom(vj.at("cost")), std::nullopt};
        if (vj.contains("accuracy")) v.accuracy = vj["accuracy"].get<double>();
        ids.push_back(v.id);
        t.variants.push_back(std::move(v));
      }
      for (const auto& c : tj.at("cut_points").at("candidates")) t.candidateCuts.push_back(cutFrom(c));
      for (const auto& c : tj.at("cut_points").at("chosen")) t.cuts.push_back(cutFrom(c));
      for (const auto& pj : tj.at("positions")) {
        t.partFlopsShare.push_back(pj.at("reference_flops_share").get<double>());
        std::vector<SubgraphInfo> row;
        for (const auto& sj : pj.at("subgraphs")) {
          SubgraphInfo s;
          s.position = pj.at("position").get<int>();
          s.variant = sj.at("variant").get<std::string>();
          s.hash = sj.at("hash").get<std::string>();
          s.file = sj.at("file").get<std::string>();
          s.cost = costFrom(sj.at("cost"));
          for (const auto& i : sj.at("inputs")) s.inputs.push_back(sigFrom(i));
          for (const auto& o : sj.at("outputs")) s.outputs.push_back(sigFrom(o));
          row.push_back(std::move(s));
        }
        t.subgraphs.push_back(std::move(row));
      }
      const auto& cj = tj.at("combinations");
      std::map<std::string, std::string> files;
      for (const auto& f : cj.at("materialized")) files[f.at("id").get<std::string>()] = f.at("file").get<std::string>();
      std::map<std::string, std::string> invalid;
      for (const auto& f : cj.at("invalid")) invalid[f.at("id").get<std::string>()] = f.at("reason").get<std::string>();
      // Rebuild all V^S combinations in their canonical order.
      const size_t s = t.subgraphs.size(), v = ids.size();
      size_t total = 1;
      for (size_t p = 0; p < s; ++p) total *= v;
      for (size_t k = 0; k < total; ++k) {
        Combination c;
        size_t rest = k;
        std::vector<size_t> digits(s);
        for (size_t p = s; p-- > 0;) { digits[p] = rest % v; rest /= v; }
        for (size_t p = 0; p < s; ++p) {
          c.variants.push_back(ids[digits[p]]);
          c.id += (p ? "+" : "") + ids[digits[p]];
        }
        if (auto it = invalid.find(c.id); it != invalid.end()) { c.valid = false; c.reason = it->second; }
        if (auto it = files.find(c.id); it != files.end()) c.file = it->second;
        t.combinations.push_back(std::move(c));
      }
      if (t.combinations.size() != cj.at("total").get<size_t>())
        return makeError("{}: task '{}': combination count does not match its positions and variants", label, t.name);
      m.tasks.push_back(std::move(t));
    }
    return m;
  } catch (const Json::exception& e) {
    return makeError("{}: malformed stitch manifest: {}", label, e.what());
  }
}

Expected<StitchManifest> loadStitchManifest(const std::filesystem::path& dir) {
  auto path = dir / "stitch.json";
  ZP_ASSIGN_OR_RETURN(std::string text, readFile(path));
  Json j;
  try {
    j = Json::parse(text);
  } catch (const Json::parse_error& e) {
    return makeError("{}: not valid JSON: {}", path.string(), e.what());
  }
  return stitchManifestFromJson(j, path.string());
}

}  // namespace zp::zoo
