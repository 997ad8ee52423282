// plan-emit: a plan -> a self-describing bundle directory, and the staleness
// check CI runs on a committed bundle.
//
// BUNDLE/
//   plan.json                 canonical JSON rendering of the plan
//   plan.pb                   schemas/plan.proto, deterministic serialization
//   subgraphs/<hash16>.onnx   every subgraph the stitch section names (copied, hash-checked)
//   caches/<hash16>.<policy>.zwc
//                             post-transformed weights for the kernel policy of the
//                             processor the subgraph is placed on (runtime weight cache)
//   models/<sha16>.onnx       concurrent plans: ONNX models the workload names, when found
//   manifest.json             every artifact (path, size, sha256), the tool, the inputs
//   .zooplan-output           the output marker: a later plan-emit may replace this
//                             directory, no other tool may
//
// Input paths in the manifest are relative to the bundle directory (no absolute
// paths: a bundle moved together with its inputs still finds them), so two runs
// with the same arguments write byte-identical bundles.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "libplan/plan/plan.h"
#include "libplan/util/error.h"
#include "libplan/util/json.h"

namespace zp::emit {

inline constexpr int kBundleFormatVersion = 1;

struct EmitParams {
  std::filesystem::path plan;    // PLAN.json
  std::filesystem::path out;     // BUNDLE_DIR: absent, empty or an earlier bundle (replaced atomically)
  std::string toolVersion;       // recorded in the manifest ("plan-emit <version>")
  bool writeCaches = true;       // weight caches for every stitch subgraph
};

struct BundleArtifact {
  std::string path;  // relative to the bundle, '/'-separated
  int64_t size = 0;
  std::string sha256;
};

struct BundleInput {
  std::string role;  // plan | stitch-manifest | subgraph | workload | model
  std::string key;   // identity across runs: "plan", "stitch.json", "workload", the subgraph
                     // file relative to the stitch directory, the model as the workload names it
  std::string path;  // relative to the bundle directory (see above)
  std::string sha256;
};

struct BundleManifest {
  int format = kBundleFormatVersion;
  std::string tool;
  std::vector<BundleInput> inputs;        // sorted by (role, key)
  std::vector<BundleArtifact> artifacts;  // sorted by path; manifest.json itself excluded
};

// "caches/<hash16>.<policy>.zwc": the weight cache of a subgraph for a kernel policy.
std::string cacheFileName(const std::string& hash, const std::string& policy);

// Where a recorded input path points (relative to `bundle`, resolved against its
// real location: the recorded path was computed between real paths).
std::filesystem::path inputPath(const std::filesystem::path& bundle, const BundleInput& input);

Json toJson(const BundleManifest& m);
Expected<BundleManifest> manifestFromJson(const Json& j, const std::string& label);
Expected<BundleManifest> readBundleManifest(const std::filesystem::path& bundle);

struct EmitResult {
  BundleManifest manifest;
  int subgraphs = 0, caches = 0, models = 0;
  std::vector<std::string> notes;  // e.g. a workload that was not found
};

// Reads the plan, checks every input, builds the bundle in a staging
// directory and moves it into place; nothing is left behind on failure.
Expected<EmitResult> emitBundle(const EmitParams& params);
std::string emitSummary(const EmitParams& params, const EmitResult& result);

struct CheckParams {
  std::filesystem::path bundle;
  std::filesystem::path plan;  // empty: the plan path recorded in the manifest
  std::string toolVersion;     // this tool's; a different one in the manifest is a change
};

struct CheckResult {
  std::vector<std::string> changes;  // one line each; empty: up to date
  bool upToDate() const { return changes.empty(); }
  std::string text() const;          // summary line + one line per change
};

// Compares the bundle with its inputs as they are now and with its manifest.
// Errors only when the bundle cannot be checked at all (no manifest).
Expected<CheckResult> checkBundle(const CheckParams& params);

}  // namespace zp::emit
