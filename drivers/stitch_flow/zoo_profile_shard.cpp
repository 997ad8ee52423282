// zoo-profile --shard K/N: the measurements of one deterministic share of a
// profiling run. The run's units of work are listed in a fixed order — each
// host configuration's one-node probe, each distinct subgraph under each
// configuration, each hand-over, each variant's per-node profile under each
// configuration, each original variant's accuracy, each stitched variant timed
// whole (overhead calibration and latency validation) — and unit i goes to
// shard i mod N. The stitched variants whose accuracy every run measures
// (all of them when affordable, else the estimator's first, random, training
// round) are split into N contiguous runs of the list instead, so that each
// shard's walk still shares the prefixes of its combinations. What depends on
// measured values (the training sample's second round, the stitching
// signals, the estimator, the calibrated model) is left to the merge.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <set>

#include "drivers/stitch_flow/zoo_profile.h"
#include "drivers/stitch_flow/zoo_profile_steps.h"
#include "libplan/artifacts/profile_shard.h"
#include "libplan/util/file.h"

namespace zp::drivers {
namespace fs = std::filesystem;
using zoo_profile::Run;

namespace {

// Which units are this shard's, and how many there are in all.
class Share {
 public:
  explicit Share(ShardSpec spec) : spec_(spec) {}
  bool next() {
    ++total_;
    const bool mine = (total_ - 1) % static_cast<uint64_t>(spec_.count) == static_cast<uint64_t>(spec_.index);
    mine_ += mine;
    return mine;
  }
  // This shard's contiguous part of `items`; all of them count as units.
  std::vector<size_t> slice(const std::vector<size_t>& items) {
    const size_t n = items.size(), k = static_cast<size_t>(spec_.index), N = static_cast<size_t>(spec_.count);
    total_ += n;
    std::vector<size_t> out(items.begin() + static_cast<std::ptrdiff_t>(k * n / N),
                            items.begin() + static_cast<std::ptrdiff_t>((k + 1) * n / N));
    mine_ += out.size();
    return out;
  }
  uint64_t total() const { return total_; }
  uint64_t mine() const { return mine_; }

 private:
  ShardSpec spec_;
  uint64_t total_ = 0, mine_ = 0;
};

Status stopped(const Run& run) {
  if (run.stopRequested()) return makeError("zoo-profile: stopped; the shard is not written");
  return {};
}

// Step 1's units: probes, subgraphs (each content hash once per configuration), hand-overs.
Status latencyUnits(Run& run, Share& share, artifacts::ProfileShard& out) {
  std::set<Processor> configs;
  for (const auto& p : run.src.processors)
    if (p.host()) configs.insert(p.engine());
  for (const auto& c : configs)
    if (share.next()) {
      ZP_TRY(stopped(run));
      ZP_ASSIGN_OR_RETURN(double ms, zoo_profile::measureOverhead(run, c));
      out.overheads.push_back({c.label(), ms});
    }
  std::set<std::pair<std::string, std::string>> seen;
  for (const auto& task : run.src.manifest.tasks)
    for (const auto& row : task.subgraphs)
      for (const auto& sg : row)
        for (const auto& c : configs) {
          if (!seen.insert({sg.hash, c.label()}).second || !share.next()) continue;
          ZP_TRY(stopped(run));
          const auto* proc = &*std::find_if(run.src.processors.begin(), run.src.processors.end(),
                                            [&](const auto& p) { return p.host() && p.engine() == c; });
          ZP_ASSIGN_OR_RETURN(auto m, zoo_profile::measureSubgraphLatency(run, sg, c, proc->name));
          out.subgraphs.push_back({sg.hash, c.label(), m.medianMs, m.p90Ms, m.runs, m.memoryBytes});
        }
  for (const auto& task : run.src.manifest.tasks)
    for (int b = 0; b + 1 < task.positions(); ++b)
      if (share.next()) {
        ZP_ASSIGN_OR_RETURN(double ms, zoo_profile::measureTransitionMs(run, task, b));
        out.transitions.push_back({task.name, b, ms});
      }
  return {};
}

Status nodeUnits(Run& run, Share& share, artifacts::ProfileShard& out) {
  const auto configs = zoo_profile::nodeProfileConfigs(run);
  for (const auto& task : run.src.manifest.tasks)
    for (const auto& v : task.variants)
      for (const auto& c : configs)
        if (share.next()) {
          ZP_TRY(stopped(run));
          ZP_ASSIGN_OR_RETURN(auto rows, zoo_profile::profileVariantNodes(run, task, v, c));
          out.nodes.push_back({task.name, v.id, c.label(), std::move(rows)});
        }
  return {};
}

// Step 4's units of one task: originals' accuracy, variants timed whole, and this shard's slice of the combinations.
Status taskUnits(Run& run, const zoo::TaskStitch& task, Share& share, artifacts::ProfileShard& out) {
  zoo_profile::TaskAccuracy acc;
  ZP_TRY(zoo_profile::prepareTaskAccuracy(run, task, acc));
  const zoo::TaskSpec* spec = nullptr;
  for (const auto& t : run.src.zoo.tasks)
    if (t.name == task.name) spec = &t;
  if (acc.data)
    for (const auto& v : spec->variants)
      if (share.next()) {
        ZP_TRY(stopped(run));
        ZP_ASSIGN_OR_RETURN(auto m, zoo_profile::measureVariantAccuracy(run, acc, v));
        out.originals.push_back({task.name, v.id, m.first, std::move(m.second)});
      }
  zoo_profile::StitchedModels models(run, task, acc);
  auto whole = [&](size_t validIndex, const Processor& p) -> Status {
    if (!share.next()) return {};
    ZP_TRY(stopped(run));
    ZP_ASSIGN_OR_RETURN(double ms, zoo_profile::measureWholeMs(run, models, task, acc, validIndex, p));
    out.wholes.push_back({task.name, task.combinations[acc.valid[validIndex]].id, p.name, ms});
    return {};
  };
  for (const auto& p : run.src.processors) {
    if (!p.host()) continue;
    if (task.positions() > 1)  // the originals calibrate the per-run overhead
      for (size_t u : acc.uniform) ZP_TRY(whole(u, p));
    for (size_t i : zoo_profile::validationSample(run, acc)) ZP_TRY(whole(i, p));
  }
  if (!acc.data) return {};
  std::vector<size_t> combos;
  if (zoo_profile::affordsExhaustive(task, acc, run.params.exhaustiveLimit)) combos = acc.valid;
  else combos = zoo_profile::firstRoundRows(run, acc);
  const auto mine = share.slice(combos);
  ZP_TRY(stopped(run));
  measure::EvalStats stats;
  ZP_ASSIGN_OR_RETURN(auto accuracy, zoo_profile::measureCombinationAccuracy(run, task, acc, mine, &stats));
  for (size_t i = 0; i < mine.size(); ++i) out.combinations.push_back({task.name, task.combinations[mine[i]].id, accuracy[i]});
  return {};
}

}  // namespace

Expected<ShardSpec> parseShardSpec(const std::string& arg) {
  const auto slash = arg.find('/');
  int64_t k = -1, n = 0;
  auto whole = [](const std::string& s, int64_t& v) {
    auto r = std::from_chars(s.data(), s.data() + s.size(), v);
    return !s.empty() && r.ec == std::errc() && r.ptr == s.data() + s.size();
  };
  if (slash == std::string::npos || !whole(arg.substr(0, slash), k) || !whole(arg.substr(slash + 1), n))
    return makeError("--shard '{}': expected K/N (shard K of N, K from 0)", arg);
  if (n < 1 || n > 100000 || k < 0 || k >= n)
    return makeError("--shard '{}': K must be in [0, N) and N in [1, 100000]", arg);
  return ShardSpec{static_cast<int>(k), static_cast<int>(n)};
}

Expected<std::string> runZooProfileShard(const fs::path& stitchDir, const fs::path& outDir, const ProfileParams& params,
                                         ShardSpec spec) {
  if (params.coldProfile) return makeError("--cold-profile: not with --shard (run it in a single zoo-profile)");
  ZP_ASSIGN_OR_RETURN(auto read, zoo_profile::readSources(stitchDir, params));
  const zoo_profile::Sources& src = read.sources;
  ZP_ASSIGN_OR_RETURN(OutputDir out, OutputDir::open(outDir, OutputDirOptions{"zoo-profile", read.inputs, params.stop}));
  Run run{src, params, measure::MeasureParams{params.repeat, params.warmup}, {}, {}, {}, {}};
  run.batch = zoo_profile::measuredBatch(src, params);
  artifacts::ProfileShard shard;
  shard.tool = params.tool;
  shard.index = spec.index;
  shard.count = spec.count;
  shard.stitchDir =
      fs::weakly_canonical(fs::absolute(stitchDir)).lexically_relative(out.destination()).generic_string();
  ZP_ASSIGN_OR_RETURN(shard.inputs, zoo_profile::runInputs(src, params));
  shard.params = profileParamsJson(params);
  Share share(spec);
  ZP_TRY(latencyUnits(run, share, shard));
  ZP_TRY(nodeUnits(run, share, shard));
  for (const auto& task : src.manifest.tasks) ZP_TRY(taskUnits(run, task, share, shard));
  shard.runUnits = share.total();
  shard.units = share.mine();
  ZP_TRY(writeFileAtomic(out.path() / artifacts::kShardFile, artifacts::formatProfileShard(shard)));
  ZP_TRY(out.commit());
  return fmt::format("shard {} of {}: measured {} of the run's {} units of work\n", spec.index, spec.count, shard.units,
                     shard.runUnits);
}

}  // namespace zp::drivers
