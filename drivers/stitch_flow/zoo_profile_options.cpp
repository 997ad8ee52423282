// zoo-profile's option forms: --import NAME=FORMAT:FILE[@TASK/VARIANT] and
// --processor NAME=host[:POLICY[@THREADS]].
#include <charconv>
#include <set>

#include "drivers/stitch_flow/zoo_profile.h"
#include "libplan/runtime/kernel_policy.h"
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
