#include "libplan/artifacts/zoo_json.h"

#include <algorithm>
#include <cstdint>
#include <set>

#include "libplan/util/file.h"
#include "libplan/util/hash.h"
#include "libplan/util/json_reader.h"
#include "libplan/util/validate.h"

namespace zp::artifacts {
namespace fs = std::filesystem;
using namespace zoo;

namespace {

// Walks a JSON document keeping the JSON path for messages.
class Reader {
 public:
  Reader(std::string file) : file_(std::move(file)) {}

  Error error(const std::string& path, const std::string& problem) const {
    return makeError("{}: {}: {}", file_, path, problem);
  }

  Status object(const Json& j, const std::string& path, const std::set<std::string>& required,
                const std::set<std::string>& optional) const {
    if (!j.is_object()) return error(path, "expected an object");
    for (const auto& r : required)
      if (!j.contains(r)) return error(path, fmt::format("missing field '{}'", r));
    for (auto it = j.begin(); it != j.end(); ++it)
      if (!required.count(it.key()) && !optional.count(it.key()))
        return error(path + "." + it.key(), "unknown field");
    return {};
  }

  Expected<std::string> string(const Json& j, const std::string& path, const std::string& key) const {
    const Json& v = j.at(key);
    if (!v.is_string()) return error(path + "." + key, "expected a string");
    std::string s = v.get<std::string>();
    if (s.empty()) return error(path + "." + key, "must not be empty");
    return s;
  }

  // Names become parts of file names: safe ids only.
  Expected<std::string> id(const Json& j, const std::string& path, const std::string& key) const {
    ZP_ASSIGN_OR_RETURN(std::string s, string(j, path, key));
    if (auto p = idProblem(s)) return error(path + "." + key, *p);
    return s;
  }

  Expected<std::string> oneOf(const Json& j, const std::string& path, const std::string& key,
                              const std::set<std::string>& allowed) const {
    ZP_ASSIGN_OR_RETURN(std::string s, string(j, path, key));
    if (!allowed.count(s)) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      return error(path + "." + key, fmt::format("'{}' is not one of {}", s, list));
    }
    return s;
  }

  Expected<double> fraction(const Json& j, const std::string& path, const std::string& key) const {
    const Json& v = j.at(key);
    if (!v.is_number()) return error(path + "." + key, "expected a number");
    double d = v.get<double>();
    if (!(d >= 0.0 && d <= 1.0)) return error(path + "." + key, fmt::format("{} is not in [0, 1]", d));
    return d;
  }

 private:
  std::string file_;
};

// $.processors of a zoo.json (or of a file holding only that list); profile
// files resolve against `zoo`'s folder.
Expected<std::vector<Processor>> parseProcessors(const Reader& r, const Json& j, const Zoo& zoo, bool checkFiles) {
  std::vector<Processor> out;
  if (!j["processors"].is_array() || j["processors"].empty())
    return r.error("$.processors", "expected a non-empty array");
  std::set<std::string> procNames;
  for (size_t i = 0; i < j["processors"].size(); ++i) {
    const Json& pj = j["processors"][i];
    std::string p = fmt::format("$.processors[{}]", i);
    ZP_TRY(r.object(pj, p, {"name", "kind"}, {"cores", "profile"}));
    Processor proc;
    ZP_ASSIGN_OR_RETURN(proc.name, r.id(pj, p, "name"));
    ZP_ASSIGN_OR_RETURN(proc.kind, r.oneOf(pj, p, "kind", {"cpu", "gpu", "npu", "dla", "dsp"}));
    if (!procNames.insert(proc.name).second) return r.error(p + ".name", fmt::format("duplicate processor '{}'", proc.name));
    if (pj.contains("cores")) {
      const Json& cj = pj["cores"];
      if (!cj.is_array() || cj.empty()) return r.error(p + ".cores", "expected a non-empty array of core ids");
      std::set<int64_t> seen;
      for (size_t c = 0; c < cj.size(); ++c) {
        const std::string cp = fmt::format("{}.cores[{}]", p, c);
        if (!cj[c].is_number_integer() || cj[c].get<int64_t>() < 0 || cj[c].get<int64_t>() > 4095)
          return r.error(cp, "expected a core id in [0, 4095]");
        if (!seen.insert(cj[c].get<int64_t>()).second) return r.error(cp, fmt::format("core {} is listed twice", cj[c].get<int64_t>()));
        proc.cores.push_back(static_cast<int>(cj[c].get<int64_t>()));
      }
    }
    if (pj.contains("profile")) {
      const Json& sj = pj["profile"];
      std::string sp = p + ".profile";
      ZP_TRY(r.object(sj, sp, {"source"}, {"file", "threads", "policy", "gemm"}));
      ZP_ASSIGN_OR_RETURN(proc.source, r.oneOf(sj, sp, "source", {"host", "ort-json", "trtexec", "openvino-csv", "csv"}));
      if (sj.contains("file")) { ZP_ASSIGN_OR_RETURN(proc.profileFile, r.string(sj, sp, "file")); }
      if (sj.contains("policy")) { ZP_ASSIGN_OR_RETURN(proc.policy, r.string(sj, sp, "policy")); }
      if (sj.contains("gemm")) { ZP_ASSIGN_OR_RETURN(proc.gemm, r.oneOf(sj, sp, "gemm", {"onednn", "blis"})); }
      if (proc.source != "host" && proc.profileFile.empty())
        return r.error(sp, fmt::format("source '{}' needs a 'file'", proc.source));
      if (sj.contains("threads")) {
        if (!sj["threads"].is_number_integer()) return r.error(sp + ".threads", "expected an integer >= 1");
        const Json& n = sj["threads"];
        const int64_t threads = n.is_number_unsigned() ? static_cast<int64_t>(std::min<uint64_t>(n.get<uint64_t>(), INT64_MAX))
                                                       : n.get<int64_t>();
        if (auto p = threadCountProblem(threads)) return r.error(sp + ".threads", *p);
        proc.threads = static_cast<int>(threads);
      }
      if (checkFiles && !proc.profileFile.empty() && !fs::exists(zoo.resolve(proc.profileFile)))
        return r.error(sp + ".file", fmt::format("file not found: {}", zoo.resolve(proc.profileFile).string()));
    }
    out.push_back(std::move(proc));
  }
  return out;
}

}  // namespace

Expected<Zoo> parseZoo(const std::string& text, const fs::path& path, bool checkFiles) {
  Reader r(path.string());
  ZP_ASSIGN_OR_RETURN(Json j, parseJson(text, path.string()));
  Zoo zoo;
  zoo.file = path;
  zoo.sha256 = sha256Hex(text);
  ZP_TRY(r.object(j, "$", {"schema_version", "name", "processors", "tasks"},
                  {"description", "multitask_groups"}));  // multitask_groups: multitask_group_json.h
  if (j["schema_version"] != 1) return r.error("$.schema_version", "unsupported version (expected 1)");
  ZP_ASSIGN_OR_RETURN(zoo.name, r.id(j, "$", "name"));
  if (j.contains("description")) { ZP_ASSIGN_OR_RETURN(zoo.description, r.string(j, "$", "description")); }

  ZP_ASSIGN_OR_RETURN(zoo.processors, parseProcessors(r, j, zoo, checkFiles));

  if (!j["tasks"].is_array() || j["tasks"].empty()) return r.error("$.tasks", "expected a non-empty array");
  std::set<std::string> taskNames;
  for (size_t t = 0; t < j["tasks"].size(); ++t) {
    const Json& tj = j["tasks"][t];
    std::string tp = fmt::format("$.tasks[{}]", t);
    ZP_TRY(r.object(tj, tp, {"name", "variants"}, {"description", "dataset"}));
    TaskSpec task;
    ZP_ASSIGN_OR_RETURN(task.name, r.id(tj, tp, "name"));
    if (!taskNames.insert(task.name).second) return r.error(tp + ".name", fmt::format("duplicate task '{}'", task.name));
    if (tj.contains("description")) { ZP_ASSIGN_OR_RETURN(task.description, r.string(tj, tp, "description")); }
    if (!tj["variants"].is_array() || tj["variants"].empty())
      return r.error(tp + ".variants", "expected a non-empty array");
    std::set<std::string> ids;
    for (size_t v = 0; v < tj["variants"].size(); ++v) {
      const Json& vj = tj["variants"][v];
      std::string vp = fmt::format("{}.variants[{}]", tp, v);
      ZP_TRY(r.object(vj, vp, {"id", "onnx", "kind"}, {"sparsity", "precision", "accuracy"}));
      VariantSpec var;
      ZP_ASSIGN_OR_RETURN(var.id, r.id(vj, vp, "id"));
      if (!ids.insert(var.id).second) return r.error(vp + ".id", fmt::format("duplicate variant id '{}'", var.id));
      ZP_ASSIGN_OR_RETURN(var.onnx, r.string(vj, vp, "onnx"));
      ZP_ASSIGN_OR_RETURN(var.kind, r.oneOf(vj, vp, "kind", {"dense", "unstructured", "structured", "quantized"}));
      if (vj.contains("sparsity")) { ZP_ASSIGN_OR_RETURN(var.sparsity, r.fraction(vj, vp, "sparsity")); }
      if (vj.contains("precision")) { ZP_ASSIGN_OR_RETURN(var.precision, r.oneOf(vj, vp, "precision", {"fp32", "fp16", "int8"})); }
      if (vj.contains("accuracy")) { ZP_ASSIGN_OR_RETURN(var.accuracy, r.fraction(vj, vp, "accuracy")); }
      if (checkFiles && !fs::is_regular_file(zoo.resolve(var.onnx)))
        return r.error(vp + ".onnx", fmt::format("file not found: {}", zoo.resolve(var.onnx).string()));
      task.variants.push_back(std::move(var));
    }
    if (tj.contains("dataset")) {
      const Json& dj = tj["dataset"];
      std::string dp = tp + ".dataset";
      ZP_TRY(r.object(dj, dp, {"inputs", "labels", "metric"}, {"calibration"}));
      DatasetSpec ds;
      ZP_ASSIGN_OR_RETURN(ds.inputs, r.string(dj, dp, "inputs"));
      ZP_ASSIGN_OR_RETURN(ds.labels, r.string(dj, dp, "labels"));
      if (dj.contains("calibration")) { ZP_ASSIGN_OR_RETURN(ds.calibration, r.string(dj, dp, "calibration")); }
      ZP_ASSIGN_OR_RETURN(ds.metric, r.oneOf(dj, dp, "metric", {"top1"}));
      if (checkFiles) {
        for (const auto& [key, file] : {std::pair<const char*, std::string>{"inputs", ds.inputs},
                                        {"labels", ds.labels}, {"calibration", ds.calibration}})
          if (!file.empty() && !fs::is_regular_file(zoo.resolve(file)))
            return r.error(dp + "." + key, fmt::format("file not found: {}", zoo.resolve(file).string()));
      }
      task.dataset = ds;
    }
    zoo.tasks.push_back(std::move(task));
  }
  return zoo;
}

Expected<Zoo> loadZoo(const fs::path& path) {
  ZP_ASSIGN_OR_RETURN(std::string text, readFile(path));
  return parseZoo(text, path);
}

Expected<std::vector<Processor>> loadProcessors(const fs::path& path) {
  ZP_ASSIGN_OR_RETURN(std::string text, readFile(path));
  Reader r(path.string());
  ZP_ASSIGN_OR_RETURN(Json j, parseJson(text, path.string()));
  if (!j.is_object() || !j.contains("processors"))
    return r.error("$", "expected an object with 'processors' (a zoo.json, or {\"processors\": [...]} in its form)");
  Zoo from;
  from.file = path;
  return parseProcessors(r, j, from, true);
}

Json zooToJson(const Zoo& zoo) {
  Json j;
  j["schema_version"] = 1;
  j["name"] = zoo.name;
  if (!zoo.description.empty()) j["description"] = zoo.description;
  j["processors"] = Json::array();
  for (const auto& p : zoo.processors) {
    Json pj{{"name", p.name}, {"kind", p.kind}};
    if (!p.cores.empty()) pj["cores"] = p.cores;
    // Only what differs from the defaults: a processor without "profile" is the host, as zoo.json says.
    const Processor defaults;
    if (!p.host() || p.threads != defaults.threads || p.policy != defaults.policy || p.gemm != defaults.gemm) {
      Json sj{{"source", p.source}};
      if (!p.profileFile.empty()) sj["file"] = p.profileFile;
      if (p.threads != defaults.threads) sj["threads"] = p.threads;
      if (p.policy != defaults.policy) sj["policy"] = p.policy;
      if (p.gemm != defaults.gemm) sj["gemm"] = p.gemm;
      pj["profile"] = sj;
    }
    j["processors"].push_back(pj);
  }
  j["tasks"] = Json::array();
  for (const auto& t : zoo.tasks) {
    Json tj{{"name", t.name}, {"variants", Json::array()}};
    if (!t.description.empty()) tj["description"] = t.description;
    for (const auto& v : t.variants) {
      Json vj{{"id", v.id}, {"onnx", v.onnx}, {"kind", v.kind}};
      if (v.sparsity) vj["sparsity"] = *v.sparsity;
      if (v.precision) vj["precision"] = *v.precision;
      if (v.accuracy) vj["accuracy"] = *v.accuracy;
      tj["variants"].push_back(vj);
    }
    if (t.dataset) {
      Json dj{{"inputs", t.dataset->inputs}, {"labels", t.dataset->labels}, {"metric", t.dataset->metric}};
      if (!t.dataset->calibration.empty()) dj["calibration"] = t.dataset->calibration;
      tj["dataset"] = dj;
    }
    j["tasks"].push_back(tj);
  }
  return j;
}

}  // namespace zp::artifacts
