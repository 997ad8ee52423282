// Cold and warm measurement and Chrome traces of runs (plan-run's driver,
// drivers/run/run_model.h, and zoo-profile's measurements use them).
//
// Cold: the model (and cache) file is evicted from the page cache with
// posix_fadvise(DONTNEED), then load + first run are timed in this process —
// plan-run --cold is the "fresh process". Warm: the median and p90 of N runs
// after one untimed warm-up run.
#pragma once
#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "libplan/runtime/session.h"
#include "libplan/util/json.h"

namespace zp::runtime {

// Writes back dirty pages and drops the file's pages from the page cache.
Status evictFromPageCache(const std::filesystem::path& path);

struct WarmStats {
  int runs = 0;
  double medianMs = 0, p90Ms = 0, minMs = 0, meanMs = 0;
};
Expected<WarmStats> measureWarm(Session& session, const TensorMap& inputs, int repeat, bool warmup = true);
// The statistics of timed runs (ms each).
WarmStats warmStatsOf(const std::vector<double>& ms);

struct ColdStats {
  // Full path: model parse/check/shape inference + initializers + cache map/verify.
  // From the cache (load.fromCache): cache map + skeleton parse + entry look-ups.
  double readMs = 0;
  double transformMs = 0;  // constant folding + weight transforms
  double executeMs = 0;    // first run (from the cache: includes verifyMs)
  double verifyMs = 0;     // from the cache: payload CRC-32C checks done in the first run
  double totalMs = 0;      // load + first run (random inputs, when made, are not timed, but for a cold schedule)
  LoadStats load;
};
// Evicts `model` and options.cache, loads, runs once with `inputs` (random
// inputs with seed 0 when empty) and `run` (e.g. a profile of the cold run). The
// session is returned for further warm runs. `beforeRun` (when given) checks the
// loaded session before the run; its error is returned as it is.
Expected<std::pair<ColdStats, std::unique_ptr<Session>>> measureCold(
    const std::filesystem::path& model, const SessionOptions& options, const TensorMap& inputs, TensorMap* outputs,
    const RunOptions& run = {}, const std::function<Status(const Session&)>& beforeRun = {});

// Random inputs for every model input (seed + input index).
TensorMap randomInputs(const Session& session, uint64_t seed = 0);
TensorMap randomInputs(const std::vector<IoInfo>& inputs, uint64_t seed = 0);

// --kernels argument: a policy name or a JSON file
// ({"policy": "default", "nodes": {"conv1": "winograd"}} or {"conv1": "winograd"}).
Expected<KernelPolicy> parseKernelPolicy(const std::string& arg);

// Chrome-trace / Perfetto JSON of one profiled run.
Json chromeTrace(const std::vector<NodeTiming>& timings, const std::string& processName);

}  // namespace zp::runtime
