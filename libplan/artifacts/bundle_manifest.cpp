#include "libplan/artifacts/bundle_manifest.h"

#include <set>

#include "libplan/util/file.h"
#include "libplan/util/json_reader.h"
#include "libplan/util/validate.h"

namespace zp::artifacts {
namespace fs = std::filesystem;

std::string cacheFileName(const std::string& hash, const std::string& policy) {
  return "caches/" + hash.substr(0, 16) + "." + policy + ".zwc";
}

std::string modelFileName(const std::string& sha256) { return "models/" + sha256.substr(0, 16) + ".onnx"; }

Json toJson(const BundleManifest& m) {
  Json inputs = Json::array();
  for (const auto& in : m.inputs) inputs.push_back({{"role", in.role}, {"key", in.key}, {"path", in.path}, {"sha256", in.sha256}});
  Json arts = Json::array();
  for (const auto& a : m.artifacts) arts.push_back({{"path", a.path}, {"size", a.size}, {"sha256", a.sha256}});
  return Json{{"format", m.format}, {"tool", m.tool}, {"inputs", inputs}, {"artifacts", arts}};
}

Expected<BundleManifest> manifestFromJson(const Json& j, const std::string& label) {
  JsonAt root(j, label);
  BundleManifest m;
  ZP_ASSIGN_OR_RETURN(int64_t format, root.integer("format"));
  if (format != kBundleFormatVersion)
    return makeError("{}: bundle format {} (this tool reads {})", label, format, kBundleFormatVersion);
  m.format = static_cast<int>(format);
  ZP_ASSIGN_OR_RETURN(m.tool, root.string("tool"));
  ZP_ASSIGN_OR_RETURN(auto inputs, root.array("inputs"));
  for (const auto& in : inputs) {
    BundleInput b;
    ZP_ASSIGN_OR_RETURN(JsonAt role, in.at("role"));
    ZP_ASSIGN_OR_RETURN(b.role, role.string());
    static const std::set<std::string> kRoles = {"plan", "stitch-manifest", "subgraph", "workload", "model", "mts-manifest"};
    if (!kRoles.count(b.role)) return role.error(fmt::format("unknown role '{}'", b.role));
    ZP_ASSIGN_OR_RETURN(b.key, in.string("key"));
    ZP_ASSIGN_OR_RETURN(b.path, in.string("path"));
    ZP_ASSIGN_OR_RETURN(b.sha256, in.string("sha256"));
    m.inputs.push_back(std::move(b));
  }
  ZP_ASSIGN_OR_RETURN(auto artifacts, root.array("artifacts"));
  for (const auto& a : artifacts) {
    BundleArtifact b;
    ZP_ASSIGN_OR_RETURN(JsonAt path, a.at("path"));
    ZP_ASSIGN_OR_RETURN(b.path, path.string());
    // Artifacts are read (and checked) below the bundle, never beside it.
    if (!isSafeRelativePath(b.path)) return path.error(fmt::format("'{}' is not a path inside the bundle", b.path));
    ZP_ASSIGN_OR_RETURN(b.size, a.integer("size", 0));
    ZP_ASSIGN_OR_RETURN(b.sha256, a.string("sha256"));
    m.artifacts.push_back(std::move(b));
  }
  return m;
}

fs::path inputPath(const fs::path& bundle, const BundleInput& input) {
  const fs::path p(input.path);
  if (p.is_absolute()) return p;  // bundles written before paths were made relative
  std::error_code ec;
  fs::path real = fs::weakly_canonical(fs::absolute(bundle), ec);
  if (ec) real = fs::absolute(bundle);
  return (real / p).lexically_normal();
}

Expected<BundleManifest> readBundleManifest(const fs::path& bundle) {
  const fs::path p = bundle / "manifest.json";
  if (!fs::is_directory(bundle)) return makeError("{}: not a bundle directory", bundle.string());
  ZP_ASSIGN_OR_RETURN(std::string text, readFile(p));
  ZP_ASSIGN_OR_RETURN(Json j, parseJson(text, p.string()));
  return manifestFromJson(j, p.string());
}

Status writeBundleManifest(const BundleManifest& m, const fs::path& bundle) {
  return writeFileAtomic(bundle / "manifest.json", canonicalJson(toJson(m)));
}

}  // namespace zp::artifacts
