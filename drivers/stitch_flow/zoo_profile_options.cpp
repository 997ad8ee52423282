// zoo-profile's option forms: --import NAME=FORMAT:FILE[@TASK/VARIANT] and
// --processor NAME=host[:POLICY[@THREADS]]; the parameters a shard records, as JSON.
#include <charconv>
#include <set>

#include "drivers/stitch_flow/zoo_profile.h"
#include "libplan/runtime/kernel_policy.h"
#include "libplan/util/dim_limits.h"
#include "libplan/util/json_reader.h"
#include "libplan/util/validate.h"

namespace zp::drivers {

Expected<ImportSpec> parseImportSpec(const std::string& arg) {
  ImportSpec s;
  auto eq = arg.find('='), colon = arg.find(':', eq == std::string::npos ? 0 : eq);
  if (eq == std::string::npos || colon == std::string::npos)
    return makeError("--import '{}': expected NAME=FORMAT:FILE[@TASK/VARIANT]", arg);
  s.processor = arg.substr(0, eq);
  s.format = arg.substr(eq + 1, colon - eq - 1);
  std::string rest = arg.substr(colon + 1);
  if (auto at = rest.rfind('@'); at != std::string::npos) {
    std::string tv = rest.substr(at + 1);
    rest = rest.substr(0, at);
    auto slash = tv.find('/');
    if (slash == std::string::npos) return makeError("--import '{}': expected @TASK/VARIANT after the file", arg);
    s.task = tv.substr(0, slash);
    s.variant = tv.substr(slash + 1);
  }
  if (s.format == "trtexec") {  // FILE may be PROFILE.json,LAYERINFO.json
    if (auto comma = rest.find(','); comma != std::string::npos) {
      s.layerInfo = rest.substr(comma + 1);
      rest = rest.substr(0, comma);
    }
  }
  s.file = rest;
  static const std::set<std::string> kFormats = {"ort-json", "trtexec", "openvino-csv", "csv"};
  if (!kFormats.count(s.format))
    return makeError("--import '{}': unknown format '{}' (ort-json, trtexec, openvino-csv, csv)", arg, s.format);
  if (s.file.empty()) return makeError("--import '{}': no file", arg);
  if (s.format != "csv" && s.task.empty())
    return makeError("--import '{}': say which variant the profile is of: @TASK/VARIANT", arg);
  return s;
}

Expected<HostOverride> parseHostOverride(const std::string& arg) {
  HostOverride h;
  auto eq = arg.find('=');
  if (eq == std::string::npos) return makeError("--processor '{}': expected NAME=host[:POLICY[@THREADS]]", arg);
  h.processor = arg.substr(0, eq);
  std::string rest = arg.substr(eq + 1);
  if (rest.rfind("host", 0) != 0) return makeError("--processor '{}': only 'host' can be measured here", arg);
  rest = rest.substr(4);
  if (!rest.empty()) {
    if (rest[0] != ':') return makeError("--processor '{}': expected host[:POLICY[@THREADS]]", arg);
    rest = rest.substr(1);
    if (auto at = rest.find('@'); at != std::string::npos) {
      const std::string n = rest.substr(at + 1);
      int64_t threads = 0;
      auto r = std::from_chars(n.data(), n.data() + n.size(), threads);
      if (r.ec != std::errc() || r.ptr != n.data() + n.size())
        return makeError("--processor '{}': threads must be a number", arg);
      if (auto p = threadCountProblem(threads)) return makeError("--processor '{}': {}", arg, *p);
      h.threads = static_cast<int>(threads);
      rest = rest.substr(0, at);
    }
    if (!rest.empty()) h.policy = rest;
  }
  if (!runtime::isKnownPolicy(h.policy)) return makeError("--processor '{}': unknown kernel policy '{}'", arg, h.policy);
  if (h.threads < 1) return makeError("--processor '{}': threads must be >= 1", arg);
  return h;
}

}  // namespace zp::drivers

namespace zp::drivers {

std::string formatHostOverride(const HostOverride& o) {
  return fmt::format("{}=host:{}@{}", o.processor, o.policy, o.threads);
}

std::string formatImportSpec(const ImportSpec& s) {
  std::string out = s.processor + "=" + s.format + ":" + s.file;
  if (!s.layerInfo.empty()) out += "," + s.layerInfo;
  if (!s.task.empty()) out += "@" + s.task + "/" + s.variant;
  return out;
}

Json profileParamsJson(const ProfileParams& p) {
  Json j{{"repeat", p.repeat}, {"warmup", p.warmup}, {"seed", p.seed}, {"batch", p.batch},
         {"training_fraction", p.trainingFraction}, {"exhaustive_limit", p.exhaustiveLimit},
         {"latency_validation", p.latencyValidation}, {"calibration_samples", p.calibrationSamples},
         {"accuracy_estimator", p.accuracyEstimator}, {"audit_fraction", p.auditFraction},
         {"active_top", p.activeTop}, {"accuracy_budget", p.accuracyBudget},
         {"xgboost", Json{{"rounds", p.xgb.rounds}, {"max_depth", p.xgb.maxDepth}, {"eta", p.xgb.eta},
                          {"subsample", p.xgb.subsample}, {"lambda", p.xgb.lambda},
                          {"min_child_weight", p.xgb.minChildWeight}, {"seed", p.xgb.seed},
                          {"objective", p.xgb.objective}}},
         {"processors", Json::array()}, {"imports", Json::array()}};
  for (const auto& o : p.hostOverrides) j["processors"].push_back(formatHostOverride(o));
  for (const auto& i : p.imports) j["imports"].push_back(formatImportSpec(i));
  return j;
}

Expected<ProfileParams> profileParamsFromJson(const Json& j, const std::string& label) {
  JsonAt root(j, label, "$.params");
  ZP_TRY(root.onlyKeys({"repeat", "warmup", "seed", "batch", "training_fraction", "exhaustive_limit",
                        "latency_validation", "calibration_samples", "accuracy_estimator", "audit_fraction",
                        "active_top", "accuracy_budget", "xgboost", "processors", "imports"}));
  ProfileParams p;
  ZP_ASSIGN_OR_RETURN(int64_t repeat, root.integer("repeat", 1, 1000000));
  ZP_ASSIGN_OR_RETURN(int64_t warmup, root.integer("warmup", 0, 1000000));
  ZP_ASSIGN_OR_RETURN(int64_t seed, root.integer("seed", 0, INT64_MAX));
  ZP_ASSIGN_OR_RETURN(p.batch, root.integer("batch", 0, kMaxDimValue));
  ZP_ASSIGN_OR_RETURN(p.trainingFraction, root.number("training_fraction", 0.0, 1.0));
  ZP_ASSIGN_OR_RETURN(int64_t exhaustive, root.integer("exhaustive_limit", 0, INT64_MAX));
  ZP_ASSIGN_OR_RETURN(int64_t validation, root.integer("latency_validation", 0, 1000000));
  ZP_ASSIGN_OR_RETURN(int64_t calibration, root.integer("calibration_samples", 0, 1000000));
  ZP_ASSIGN_OR_RETURN(p.accuracyEstimator, root.string("accuracy_estimator"));
  if (p.accuracyEstimator != "features" && p.accuracyEstimator != "contested")
    return makeError("{}: $.params.accuracy_estimator: '{}' is not 'features' or 'contested'", label, p.accuracyEstimator);
  ZP_ASSIGN_OR_RETURN(p.auditFraction, root.number("audit_fraction", 0.0, 1.0));
  ZP_ASSIGN_OR_RETURN(int64_t activeTop, root.integer("active_top", 0, 1000000));
  p.activeTop = static_cast<size_t>(activeTop);
  ZP_ASSIGN_OR_RETURN(p.accuracyBudget, root.number("accuracy_budget", 0.0, 1.0));
  p.repeat = static_cast<int>(repeat);
  p.warmup = static_cast<int>(warmup);
  p.seed = static_cast<uint64_t>(seed);
  p.exhaustiveLimit = static_cast<size_t>(exhaustive);
  p.latencyValidation = static_cast<size_t>(validation);
  p.calibrationSamples = static_cast<size_t>(calibration);
  ZP_ASSIGN_OR_RETURN(JsonAt x, root.at("xgboost"));
  ZP_TRY(x.onlyKeys({"rounds", "max_depth", "eta", "subsample", "lambda", "min_child_weight", "seed", "objective"}));
  ZP_ASSIGN_OR_RETURN(int64_t rounds, x.integer("rounds", 1, 100000));
  ZP_ASSIGN_OR_RETURN(int64_t depth, x.integer("max_depth", 1, 64));
  ZP_ASSIGN_OR_RETURN(int64_t xseed, x.integer("seed", 0, INT64_MAX));
  p.xgb.rounds = static_cast<int>(rounds);
  p.xgb.maxDepth = static_cast<int>(depth);
  p.xgb.seed = static_cast<uint64_t>(xseed);
  ZP_ASSIGN_OR_RETURN(p.xgb.eta, x.number("eta", 1e-6, 1.0));
  ZP_ASSIGN_OR_RETURN(p.xgb.subsample, x.number("subsample", 1e-6, 1.0));
  ZP_ASSIGN_OR_RETURN(p.xgb.lambda, x.number("lambda", 0.0, 1e6));
  ZP_ASSIGN_OR_RETURN(p.xgb.minChildWeight, x.number("min_child_weight", 0.0, 1e6));
  ZP_ASSIGN_OR_RETURN(p.xgb.objective, x.string("objective"));
  ZP_ASSIGN_OR_RETURN(auto processors, root.strings("processors"));
  for (const auto& s : processors) {
    auto o = parseHostOverride(s);
    if (!o.ok()) return root.error("processors: " + o.error().message);
    p.hostOverrides.push_back(*o);
  }
  ZP_ASSIGN_OR_RETURN(auto imports, root.strings("imports"));
  for (const auto& s : imports) {
    auto i = parseImportSpec(s);
    if (!i.ok()) return root.error("imports: " + i.error().message);
    p.imports.push_back(*i);
  }
  return p;
}

}  // namespace zp::drivers
