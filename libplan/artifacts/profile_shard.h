// shard.json, what `zoo-profile --shard K/N` writes and `zoo-profile --merge`
// reads: the measurements of one deterministic share of a profiling run (the
// subgraph x processor latencies, the hand-overs, the run overheads, the
// per-node profiles, the accuracy of original and stitched variants and the
// stitched variants timed whole), with what the run depends on (the inputs as
// report.json records them, the parameters) so that shards of different runs
// are never merged.
//
// { "schema_version": 1, "tool": "...", "shard": {"index": K, "count": N},
//   "units": {"run": U, "shard": u}, "stitch_dir": "<relative to the shard directory>",
//   "inputs": {...}, "params": {...},
//   "overheads": [{"config", "ms"}],
//   "subgraphs": [{"hash", "config", "median_ms", "p90_ms", "runs", "memory_bytes"}],
//   "transitions": [{"task", "boundary", "ms"}],
//   "nodes": [{"task", "variant", "config", "csv"}],     (node_profile.csv text)
//   "originals": [{"task", "variant", "accuracy", "correct": "0110..."}],
//   "combinations": [{"task", "combination", "accuracy"}],
//   "wholes": [{"task", "combination", "processor", "ms"}] }
// Numbers are printed in full (they read back to the same doubles).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "libplan/artifacts/node_profile_csv.h"
#include "libplan/util/error.h"
#include "libplan/util/json.h"

namespace zp::artifacts {

inline constexpr const char* kShardFile = "shard.json";

struct ShardOverhead {
  std::string config;  // a host configuration's label, "POLICY@THREADS"
  double ms = 0;
  bool operator==(const ShardOverhead&) const = default;
};
struct ShardSubgraph {
  std::string hash, config;  // the subgraph's content hash; the configuration's label
  double medianMs = 0, p90Ms = 0;
  int runs = 0;
  int64_t memoryBytes = 0;
  bool operator==(const ShardSubgraph&) const = default;
};
struct ShardTransition {
  std::string task;
  int boundary = 0;  // after position `boundary`
  double ms = 0;
  bool operator==(const ShardTransition&) const = default;
};
struct ShardNodes {
  std::string task, variant, config;
  std::vector<NodeProfileRow> rows;
  bool operator==(const ShardNodes&) const = default;
};
struct ShardOriginal {
  std::string task, variant;
  double accuracy = 0;
  std::vector<uint8_t> correct;  // per test sample, 1: right
  bool operator==(const ShardOriginal&) const = default;
};
struct ShardCombination {
  std::string task, combination;  // the combination's id, "v0+v1+..."
  double accuracy = 0;
  bool operator==(const ShardCombination&) const = default;
};
struct ShardWhole {
  std::string task, combination, processor;
  double ms = 0;
  bool operator==(const ShardWhole&) const = default;
};

struct ProfileShard {
  std::string tool;
  int index = 0, count = 1;          // shard `index` of `count`
  uint64_t runUnits = 0, units = 0;  // units of work of the whole run, and of this shard
  std::string stitchDir;             // relative to the shard directory
  Json inputs = Json::object();      // as report.json's "inputs"
  Json params = Json::object();      // the run's other parameters
  std::vector<ShardOverhead> overheads;
  std::vector<ShardSubgraph> subgraphs;
  std::vector<ShardTransition> transitions;
  std::vector<ShardNodes> nodes;
  std::vector<ShardOriginal> originals;
  std::vector<ShardCombination> combinations;
  std::vector<ShardWhole> wholes;
  bool operator==(const ProfileShard&) const = default;
};

std::string formatProfileShard(const ProfileShard& shard);
// Every field checked: ids safe, numbers finite and in range (latencies up to
// kMaxLatencyMs, accuracies in [0, 1]), index < count, correctness strings of
// '0' and '1'. Errors: "<label>: $.subgraphs[3].median_ms: ...".
Expected<ProfileShard> parseProfileShard(std::string_view text, const std::string& label);

}  // namespace zp::artifacts
