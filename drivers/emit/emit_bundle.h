// plan-emit: a plan -> a self-describing bundle directory, and the staleness
// check CI runs on a committed bundle.
//
// BUNDLE/
//   plan.json                 canonical JSON rendering of the plan
//   plan.pb                   schemas/plan.proto, deterministic serialization
//   subgraphs/<hash16>.onnx   every subgraph the stitch section names (copied, hash-checked)
//   caches/<hash16>.<policy>.zwc
//                             post-transformed weights for the kernel policy of the
//                             processor the subgraph (or the placed model) is placed on
//                             (runtime weight cache)
//   caches/<hash16>.cold.zwc  instead, for a subgraph the plan has a cold section for:
//                             the payloads of the nodes that section caches, and
//                             references into the subgraph file for the weights it
//                             transforms at load (Session::writeColdCache)
//   models/<sha16>.onnx       concurrent plans: ONNX models the workload names, when found;
//                             operator-placement plans: the model they place;
//                             MTS plans: every stitched graph and every member's own model,
//                             each with a weight cache for every processor of the section
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

#include "libplan/artifacts/bundle_manifest.h"
#include "libplan/plan/plan.h"
#include "libplan/util/error.h"
#include "libplan/util/json.h"

namespace zp::drivers {
using artifacts::BundleArtifact;
using artifacts::BundleInput;
using artifacts::BundleManifest;

struct EmitParams {
  std::filesystem::path plan;    // PLAN.json
  std::filesystem::path out;     // BUNDLE_DIR: absent, empty or an earlier bundle (replaced atomically)
  std::string toolVersion;       // recorded in the manifest ("plan-emit <version>")
  bool writeCaches = true;       // weight caches for every stitch subgraph (the cold cache where it has a cold section)
};

// The policy part of a cold section's cache name (no kernel policy is called so).
inline constexpr const char* kColdCachePolicy = "cold";

struct EmitResult {
  BundleManifest manifest;
  int subgraphs = 0, caches = 0, models = 0;
  int coldCaches = 0;  // of `caches`: written for cold sections
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
  std::vector<std::string> notes;    // what could not be checked, and why
  int inputsChecked = 0;             // the bundle's inputs and, for a stitch plan, the plan's down to zoo.json
  bool upToDate() const { return changes.empty(); }
  std::string text() const;          // summary line + one line per change
};

// Compares the bundle with its inputs as they are now and with its manifest;
// for a stitch plan also the plan with its own inputs down the chain (zoo.json,
// the ONNX files, datasets, SLO and workload files: plan_freshness.h).
// Errors only when the bundle cannot be checked at all (no manifest).
Expected<CheckResult> checkBundle(const CheckParams& params);

}  // namespace zp::drivers
