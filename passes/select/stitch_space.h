// What plan-solve chooses from: per task every valid stitched variant with its
// accuracy (estimated, and measured where zoo-profile measured it), the
// latency model zoo-profile calibrated (so latency is known for any placement
// of positions onto processors) and each subgraph's memory. The stitch flow's
// driver reads it from a profile directory (drivers/stitch_flow/stitch_space_read.h).
#pragma once
#include <filesystem>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "libplan/estimate/latency_model.h"
#include "libplan/plan/stitch_plan.h"
#include "libplan/util/error.h"
#include "libplan/zoo/stitch_manifest.h"

namespace zp::select {

struct Candidate {
  std::string id;
  std::vector<std::string> variants;  // per position
  double predictedAccuracy = 0;
  double measuredAccuracy = -1;       // < 0: not measured
  bool original = false;              // all positions from one variant
  double accuracy(bool preferMeasured) const {
    return preferMeasured && measuredAccuracy >= 0 ? measuredAccuracy : predictedAccuracy;
  }
};

struct TaskSpace {
  std::string name;
  int positions = 0;
  std::vector<Candidate> candidates;  // valid stitched variants, manifest order
  estimate::LatencyModel latency;
  std::vector<double> boundaryBytes;
  const zoo::TaskStitch* stitch = nullptr;
  // Latency of `c` with position j on processor placement[j].
  double latencyMs(const Candidate& c, const std::vector<std::string>& placement) const;

  // The same latency from dense tables (built by buildDense): the optimizer
  // evaluates candidates x orders, and string-keyed lookups dominate otherwise.
  void buildDense(const std::vector<std::string>& processors);
  double latencyMs(size_t candidate, const std::vector<int>& placement) const;

  // Memory of the subgraph (position, variant) on `processor`, as profiled;
  // the subgraph's weights when the profile has no figure (imported rows).
  std::map<std::tuple<int, std::string, std::string>, int64_t> memory;
  int64_t memoryBytes(int position, const std::string& variant, const std::string& processor) const;

 private:
  std::vector<std::vector<int>> candidateVariants_;  // per candidate, per position: variant index
  std::vector<double> work_;                         // [position][variant][processor]: ms minus overhead (inf: unknown)
  std::vector<double> overhead_;                     // per processor
  std::vector<double> transfer_;                     // [position][from][to]
  size_t variants_ = 0, processors_ = 0;
};

struct StitchSpace {
  std::filesystem::path profileDir, stitchDir;
  zoo::StitchManifest manifest;
  std::vector<plan::PlanProcessor> processors;
  std::vector<TaskSpace> tasks;
  std::map<std::string, std::string> inputHashes;  // file -> sha256 (for the plan header)
  int64_t batch = 1;  // the batch the profile measured latency at (report.json; else stitch.json's)
};

// Plans on the named processors only (e.g. the best plan confined to one
// processor, to compare with one that uses every processor); the rest of the
// profile is left as it was. Unknown or repeated names are errors.
Status restrictProcessors(StitchSpace& space, const std::vector<std::string>& names);


}  // namespace zp::select
