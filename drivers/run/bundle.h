// A plan-emit bundle as every run of plan-run reads it: the manifest, the plan
// (plan.pb, checked against plan.json and the manifest), its units' files (each
// model checked against its unit's hash, once per content), their weight caches
// by kernel policy, the plan's processors as this machine runs them, and the
// zoo's datasets. Run and serve paths read a bundle only through this.
#pragma once
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "drivers/run/bundle_inputs.h"
#include "libplan/artifacts/bundle_manifest.h"
#include "libplan/plan/plan.h"
#include "libplan/runtime/serve/model_file_loader.h"
#include "libplan/zoo/zoo.h"

namespace zp::drivers {

class Bundle {
 public:
  // manifest.json, then plan.pb and plan.json (each as the manifest records it, equal to each other).
  static Expected<Bundle> open(const std::filesystem::path& dir);

  const std::filesystem::path& dir() const { return dir_; }
  const plan::Plan& plan() const { return plan_; }
  const artifacts::BundleManifest& manifest() const { return manifest_; }
  // "<dir>/plan.pb": names the plan in errors.
  std::string planFile() const { return (dir_ / "plan.pb").string(); }

  // The unit the plan lists under `id`; an error naming plan.pb otherwise.
  Expected<const plan::Unit*> unit(const plan::UnitId& id) const;
  // The unit's ONNX file in the bundle, present and of the unit's hash (read once per content).
  Expected<std::filesystem::path> model(const plan::Unit& unit);
  // The unit's weight cache for a kernel policy: its path when the bundle holds it
  // (a note when it differs from manifest.json: the runtime checks its payloads).
  std::optional<std::filesystem::path> cache(const plan::Unit& unit, const std::string& policy);
  // Where that cache would be (for errors naming a missing one).
  std::filesystem::path cachePath(const plan::Unit& unit, const std::string& policy) const;

  // The processors, each checked to name cores of this machine, a known kernel
  // policy and GEMM library and sane threads; errors name plan.pb.
  Expected<std::vector<Processor>> processors(const std::vector<Processor>& processors) const;
  // The plan's processors with these names, checked so.
  Expected<std::vector<Processor>> processors(const std::vector<std::string>& names) const;

  // The zoo the bundle was made from (through its stitch.json or mts.json),
  // read on first use; nothing (and a note) when it cannot be read.
  const std::optional<zoo::Zoo>& zoo();
  // The first `limit` samples of the task's dataset shaped to `input`; when
  // there is none, `randomCount` seeded random ones (seed, seed + 1, ...) and a
  // note saying why.
  Expected<Dataset> samples(const std::string& task, const runtime::IoInfo& input, int limit, int randomCount,
                            uint64_t seed);

  // The unit's inputs as the runtime sees them (read from its graph once, unchecked).
  Expected<std::vector<runtime::IoInfo>> inputs(const plan::Unit& unit);

  // What reading the bundle found worth telling (each once, in order).
  const std::vector<std::string>& notes() const { return notes_; }
  void note(const std::string& text);

 private:
  std::filesystem::path dir_;
  artifacts::BundleManifest manifest_;
  plan::Plan plan_;
  std::map<std::string, std::string> artifactSha_;  // manifest: path -> sha256
  std::set<std::filesystem::path> verified_;        // models whose hash was checked, caches compared
  std::map<std::filesystem::path, std::vector<runtime::IoInfo>> inputs_;
  bool zooRead_ = false;
  std::optional<zoo::Zoo> zoo_;
  std::vector<std::string> notes_;
};

// A unit the plan gives a cold section (NNV12) as the runtime loads it: its
// model, the cold cache plan-emit wrote for it and the schedule to follow;
// nothing when the plan has no cold section for it.
Expected<std::optional<runtime::serve::SubgraphFiles>> coldUnitFiles(Bundle& bundle, const plan::Unit& unit);

// The plan's operator placement of `unit` as the runtime loads it: the
// processors (checked), each one's weight cache in the bundle (a warning when
// there is none: the raw weights are transformed), each node's processor.
Expected<runtime::serve::OperatorPlacement> operatorPlacement(Bundle& bundle, const plan::Unit& unit,
                                                              const plan::OpPlacement& placement,
                                                              std::vector<std::string>& warnings);

}  // namespace zp::drivers
