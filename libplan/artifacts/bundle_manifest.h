// The bundle plan-emit writes and its manifest.json: every artifact (path,
// size, sha256), the tool, and the inputs it was made from.
//
// BUNDLE/
//   plan.json                 canonical JSON rendering of the plan
//   plan.pb                   schemas/plan.proto, deterministic serialization
//   subgraphs/<hash16>.onnx   every subgraph the stitch section names (copied, hash-checked)
//   caches/<hash16>.<policy>.zwc
//                             post-transformed weights for the kernel policy of the
//                             processor the subgraph (or the placed model) is placed on
//                             (runtime weight cache)
//   models/<sha16>.onnx       concurrent plans: ONNX models the workload names, when found;
//                             operator-placement plans: the model they place
//   manifest.json             every artifact (path, size, sha256), the tool, the inputs
//   .zooplan-output           the output marker: a later plan-emit may replace this
//                             directory, no other tool may
//
// Input paths in the manifest are relative to the bundle directory (no absolute
// paths: a bundle moved together with its inputs still finds them), so two runs
// with the same arguments write byte-identical bundles.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "libplan/util/error.h"
#include "libplan/util/json.h"

namespace zp::artifacts {

inline constexpr int kBundleFormatVersion = 1;

struct BundleArtifact {
  std::string path;  // relative to the bundle, '/'-separated
  int64_t size = 0;
  std::string sha256;
  bool operator==(const BundleArtifact&) const = default;
};

struct BundleInput {
  std::string role;  // plan | stitch-manifest | subgraph | workload | model | mts-manifest
  std::string key;   // identity across runs: "plan", "stitch.json", "workload", the subgraph
                     // file relative to the stitch directory, the model as the workload names it
  std::string path;  // relative to the bundle directory (see above)
  std::string sha256;
  bool operator==(const BundleInput&) const = default;
};

struct BundleManifest {
  int format = kBundleFormatVersion;
  std::string tool;
  std::vector<BundleInput> inputs;        // sorted by (role, key)
  std::vector<BundleArtifact> artifacts;  // sorted by path; manifest.json itself excluded
  bool operator==(const BundleManifest&) const = default;
};

// "caches/<hash16>.<policy>.zwc": the weight cache of a subgraph for a kernel policy.
std::string cacheFileName(const std::string& hash, const std::string& policy);
// "models/<sha16>.onnx": a whole model's copy (a placed model, a workload's DNN, an MTS member).
std::string modelFileName(const std::string& sha256);

// Where a recorded input path points (relative to `bundle`, resolved against its
// real location: the recorded path was computed between real paths).
std::filesystem::path inputPath(const std::filesystem::path& bundle, const BundleInput& input);

Json toJson(const BundleManifest& m);  // the inverse of manifestFromJson
Expected<BundleManifest> manifestFromJson(const Json& j, const std::string& label);
Expected<BundleManifest> readBundleManifest(const std::filesystem::path& bundle);

Status writeBundleManifest(const BundleManifest& m, const std::filesystem::path& bundle);  // BUNDLE/manifest.json

}  // namespace zp::artifacts
