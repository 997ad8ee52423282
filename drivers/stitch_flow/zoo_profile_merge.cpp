// zoo-profile --merge SHARD_DIR... -o PROFILE_DIR: the shards of one run
// checked against each other (every shard of N once, one stitch directory,
// the same inputs and parameters), their measurements handed to the run, and
// the run made as zoo-profile makes it, taking each measurement from the
// shards instead of measuring it.
#include <fmt/format.h>

#include <map>

#include "drivers/stitch_flow/zoo_profile.h"
#include "drivers/stitch_flow/zoo_profile_steps.h"
#include "libplan/artifacts/profile_shard.h"
#include "libplan/util/file.h"

namespace zp::drivers {
namespace fs = std::filesystem;

namespace {

struct ReadShard {
  fs::path file;
  fs::path stitchDir;  // canonical
  artifacts::ProfileShard shard;
};

Expected<ReadShard> readShard(const fs::path& dir) {
  ReadShard r;
  r.file = dir / artifacts::kShardFile;
  ZP_ASSIGN_OR_RETURN(std::string text, readFile(r.file));
  ZP_ASSIGN_OR_RETURN(r.shard, artifacts::parseProfileShard(text, r.file.string()));
  std::error_code ec;
  r.stitchDir = fs::weakly_canonical(fs::absolute(dir) / r.shard.stitchDir, ec);
  if (ec) return makeError("{}: stitch_dir '{}': {}", r.file.string(), r.shard.stitchDir, ec.message());
  return r;
}

// Why shards `a` and `b` cannot be merged, naming both files; none when they can.
std::optional<Error> mismatch(const ReadShard& a, const ReadShard& b) {
  auto differ = [&](const std::string& what) {
    return makeError("{} and {}: shards of different runs: {}", a.file.string(), b.file.string(), what);
  };
  if (a.stitchDir != b.stitchDir)
    return differ(fmt::format("stitch directories {} and {}", a.stitchDir.string(), b.stitchDir.string()));
  if (a.shard.inputs != b.shard.inputs)
    return differ("inputs (" + zoo_profile::firstDifference(a.shard.inputs, b.shard.inputs) + ")");
  if (a.shard.params != b.shard.params)
    return differ("parameters (" + zoo_profile::firstDifference(a.shard.params, b.shard.params) + ")");
  if (a.shard.count != b.shard.count || a.shard.runUnits != b.shard.runUnits)
    return differ(fmt::format("{} and {} shards", a.shard.count, b.shard.count));
  if (a.shard.tool != b.shard.tool) return differ(fmt::format("tools '{}' and '{}'", a.shard.tool, b.shard.tool));
  if (a.shard.index == b.shard.index)
    return makeError("{} and {}: both are shard {} of {}", a.file.string(), b.file.string(), a.shard.index, a.shard.count);
  return std::nullopt;
}

void addMeasurements(const artifacts::ProfileShard& s, zoo_profile::ShardMeasurements& m) {
  for (const auto& o : s.overheads) m.overheadMs[o.config] = o.ms;
  for (const auto& g : s.subgraphs) m.subgraphs[{g.hash, g.config}] = {g.medianMs, g.p90Ms, g.runs, g.memoryBytes};
  for (const auto& t : s.transitions) m.transitionMs[{t.task, t.boundary}] = t.ms;
  for (const auto& n : s.nodes) m.nodes[{n.task, n.variant, n.config}] = n.rows;
  for (const auto& o : s.originals) m.originals[{o.task, o.variant}] = {o.accuracy, o.correct};
  for (const auto& c : s.combinations) m.combinations[{c.task, c.combination}] = c.accuracy;
  for (const auto& w : s.wholes) m.wholeMs[{w.task, w.combination, w.processor}] = w.ms;
}

}  // namespace

std::string zoo_profile::firstDifference(const Json& a, const Json& b, const std::string& path) {
  if (a.type() != b.type()) return path;
  if (a.is_object()) {
    for (const auto& [k, v] : a.items()) {
      if (!b.contains(k)) return path + "." + k;
      if (v != b[k]) return firstDifference(v, b[k], path + "." + k);
    }
    for (const auto& [k, v] : b.items())
      if (!a.contains(k)) return path + "." + k;
  } else if (a.is_array()) {
    for (size_t i = 0; i < std::min(a.size(), b.size()); ++i)
      if (a[i] != b[i]) return firstDifference(a[i], b[i], fmt::format("{}[{}]", path, i));
    if (a.size() != b.size()) return fmt::format("{}[{}]", path, std::min(a.size(), b.size()));
  }
  return path;
}

Expected<ProfileResult> mergeZooProfileShards(const std::vector<fs::path>& shardDirs, const fs::path& outDir,
                                              const ProfileParams& cli) {
  if (shardDirs.empty()) return makeError("--merge: no shard directories");
  std::vector<ReadShard> shards;
  for (const auto& d : shardDirs) {
    ZP_ASSIGN_OR_RETURN(auto r, readShard(d));
    for (const auto& other : shards)
      if (auto e = mismatch(other, r)) return *e;
    shards.push_back(std::move(r));
  }
  const auto& first = shards.front();
  std::map<int, const ReadShard*> byIndex;
  for (const auto& s : shards) byIndex[s.shard.index] = &s;
  for (int k = 0; k < first.shard.count; ++k)
    if (!byIndex.count(k))
      return makeError("{}: shard {} of {} is missing ({} of {} given); merge every shard of the run", first.file.string(),
                       k, first.shard.count, shards.size(), first.shard.count);
  ZP_ASSIGN_OR_RETURN(ProfileParams params, profileParamsFromJson(first.shard.params, first.file.string()));
  params.jobs = cli.jobs;
  params.tool = cli.tool;
  params.stop = cli.stop;
  params.force = true;  // the shards' measurements, not an earlier run's
  zoo_profile::Given given;
  given.inputs = first.shard.inputs;
  given.label = first.file.string();
  for (const auto& s : shards) {
    addMeasurements(s.shard, given.measurements);
    given.guarded.push_back({s.file.parent_path(), "input"});
  }
  ZP_ASSIGN_OR_RETURN(auto result, zoo_profile::runProfile(first.stitchDir, outDir, params, &given));
  if (!result.interrupted)
    result.summary += fmt::format("merged {} shards ({} units of work measured by them)\n", shards.size(),
                                  first.shard.runUnits);
  return result;
}

}  // namespace zp::drivers
