// What plan-solve chooses from: per task every valid stitched variant — not as
// a list but as combination numbers (combinations.h) with an accuracy model
// that gives each one's accuracy (estimated, and measured where zoo-profile
// measured it) and bounds over prefixes (accuracy_model.h) — the latency
// model zoo-profile calibrated (so latency is known for any placement of
// positions onto processors) and each subgraph's memory. The stitch flow's
// driver reads it from a profile directory (drivers/stitch_flow/stitch_space_read.h).
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "libplan/estimate/latency_model.h"
#include "libplan/plan/plan.h"
#include "libplan/plan/stitch_plan.h"
#include "libplan/util/error.h"
#include "libplan/zoo/stitch_manifest.h"
#include "passes/select/accuracy_model.h"

namespace zp::select {

// One combination spelled out (for what is written or drawn).
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
  std::vector<std::string> variants;              // a combination's digits index these (stitch.json's order)
  std::shared_ptr<const AccuracyModel> accuracy;  // which combinations are valid, and their accuracy
  estimate::LatencyModel latency;
  std::vector<double> boundaryBytes;
  const zoo::TaskStitch* stitch = nullptr;

  const Combinations& combinations() const { return accuracy->combinations(); }
  bool valid(uint64_t k) const { return accuracy->valid(k); }
  std::vector<std::string> variantsOf(uint64_t k) const;
  std::string idOf(uint64_t k) const;  // variant ids joined by '+'
  Candidate candidate(uint64_t k) const;
  // Every valid combination in order: a scan, for what needs them all (plots).
  std::vector<uint64_t> validCombinations() const;

  // Latency of `c` with position j on processor placement[j].
  double latencyMs(const Candidate& c, const std::vector<std::string>& placement) const;

  // The same latency from dense tables (built by buildDense): the searches
  // evaluate combinations under many placements, and string-keyed lookups
  // dominate otherwise. Processors are indices into `processors`.
  void buildDense(const std::vector<std::string>& processors);
  double latencyMs(uint64_t k, const std::vector<int>& placement) const;
  int processorCount() const { return static_cast<int>(processors_); }
  // Per processor: the subgraph (position, variant)'s latency less the
  // per-run overhead (infinite: not profiled there).
  const double* works(int position, int variant) const {
    return work_.data() + (static_cast<size_t>(position) * variants_ + static_cast<size_t>(variant)) * processors_;
  }
  double runOverhead(int processor) const { return overhead_[static_cast<size_t>(processor)]; }
  double transfer(int boundary, int from, int to) const {
    return transfer_[(static_cast<size_t>(boundary) * processors_ + static_cast<size_t>(from)) * processors_ +
                     static_cast<size_t>(to)];
  }

  // Memory of the subgraph (position, variant) on `processor`, as profiled;
  // the subgraph's weights when the profile has no figure (imported rows).
  std::map<std::tuple<int, std::string, std::string>, int64_t> memory;
  int64_t memoryBytes(int position, const std::string& variant, const std::string& processor) const;

 private:
  std::vector<double> work_;      // [position][variant][processor]: ms minus overhead (inf: unknown)
  std::vector<double> overhead_;  // per processor
  std::vector<double> transfer_;  // [boundary][from][to]
  size_t variants_ = 0, processors_ = 0;
};

// A weight-shared group (MTS, zoo.json's multitask_groups): one stitched unit
// that runs its members' models at once over their shared weights. A member's
// query may be answered by it, run whole on one processor; the answer is the
// member's own model's (the stitched graph computes the same outputs), so its
// accuracy is that model's.
struct SharedGroup {
  std::string name;
  std::string file, sha256;                // the stitched graph (relative to the stitch directory)
  std::vector<int> members;                // task indices
  std::vector<plan::GroupMember> io;       // per member: its input and outputs in the stitched graph
  bool sharedInput = false;                // members of one input shape read one stitched input
  std::vector<double> accuracy;            // per member: its answers' top-1 accuracy
  std::map<std::string, double> runMs;     // per processor it runs on: one run of the whole unit
  std::map<std::string, int64_t> bytes;    // per processor: its resident size
  bool operator==(const SharedGroup&) const = default;
};

// A task's variant run whole with its operators placed across processors: a
// candidate unit where the placement beats the variant whole on its best single
// processor by the minimum gain. SparOA's places operator by operator
// (passes/opplace); HaX-CoNN's, layer group by layer group as the contention-aware
// schedule of a frame's DNNs maps them (passes/schedule). A run of it is
// dispatched on the first of its processors and holds the others (they run
// nothing else meanwhile); its answers are the variant's own.
enum class PlacedBy { SparOA, HaxConn };

struct PlacedModel {
  PlacedBy by = PlacedBy::SparOA;
  int task = 0;
  std::string variant;
  uint64_t original = 0;        // the task's combination of that variant at every position
  std::string file, sha256;     // the variant's ONNX (relative to the stitch directory)
  plan::OpPlacement placement;  // its unit (model:KEY), processors in the space's order, nodes, latency
  int64_t bytes = 0;            // resident size: its subgraphs' on its first processor (placement.memoryBytes)
  bool operator==(const PlacedModel&) const = default;
};

struct StitchSpace {
  std::filesystem::path profileDir, stitchDir;
  zoo::StitchManifest manifest;
  std::vector<Processor> processors;
  std::vector<TaskSpace> tasks;
  std::map<std::string, std::string> inputHashes;  // file -> sha256 (for the plan header)
  int64_t batch = 1;  // the batch the profile measured latency at (report.json; else stitch.json's)
  // The run-to-run spread of the profile's latencies: the median over its
  // subgraph rows of (p90 - median) / median; 0 when no row has a p90.
  double latencySpread = 0;
  std::vector<SharedGroup> groups;  // weight-shared groups whose units may answer their members
  std::vector<PlacedModel> placed;  // variants whose operator placement may answer their task
  // A frame's DNNs its concurrent schedule (HaX-CoNN) keeps whole on one
  // processor: task index -> that processor (HaX-CoNN alone runs them there).
  std::map<int, std::string> scheduledWhole;
};

// Plans on the named processors only (e.g. the best plan confined to one
// processor, to compare with one that uses every processor); the rest of the
// profile is left as it was. Unknown or repeated names are errors.
Status restrictProcessors(StitchSpace& space, const std::vector<std::string>& names);


}  // namespace zp::select
