#include "libplan/runtime/measure.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <optional>

#include "libplan/runtime/npy.h"
#include "libplan/util/file.h"
#include "libplan/util/output_dir.h"
#include "libplan/util/validate.h"
#include "libplan/util/stats.h"
#include "libplan/util/trace.h"

namespace zp::runtime {
namespace fs = std::filesystem;
using Clock = SteadyClock;

Status evictFromPageCache(const fs::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return makeError("{}: cannot open to evict from the page cache: {}", path.string(), std::strerror(errno));
  ::fdatasync(fd);
  int rc = ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
  if (rc != 0) return makeError("{}: posix_fadvise(DONTNEED) failed: {}", path.string(), std::strerror(rc));
  return {};
}

TensorMap randomInputs(const std::vector<IoInfo>& inputs, uint64_t seed) {
  TensorMap m;
  uint64_t k = 0;
  for (const auto& io : inputs) m[io.name] = randomInput(io, seed + k++);
  return m;
}

TensorMap randomInputs(const Session& session, uint64_t seed) { return randomInputs(session.inputs(), seed); }

Expected<WarmStats> measureWarm(Session& session, const TensorMap& inputs, int repeat, bool warmup) {
  if (warmup) { ZP_TRY(session.run(inputs)); }
  std::vector<double> t;
  for (int i = 0; i < std::max(1, repeat); ++i) {
    auto t0 = Clock::now();
    ZP_TRY(session.run(inputs));
    t.push_back(msSince(t0));
  }
  return warmStatsOf(t);
}

WarmStats warmStatsOf(const std::vector<double>& t) {
  WarmStats w;
  w.runs = static_cast<int>(t.size());
  if (t.empty()) return w;
  w.medianMs = median(t);
  w.p90Ms = percentile(t, 0.9);
  w.minMs = *std::min_element(t.begin(), t.end());
  double sum = 0;
  for (double x : t) sum += x;
  w.meanMs = sum / static_cast<double>(t.size());
  return w;
}

Expected<std::pair<ColdStats, std::unique_ptr<Session>>> measureCold(
    const fs::path& model, const SessionOptions& options, const TensorMap& inputs, TensorMap* outputs,
    const RunOptions& run, const std::function<Status(const Session&)>& beforeRun) {
  ZP_TRY(evictFromPageCache(model));
  if (!options.cache.empty() && fs::exists(options.cache)) ZP_TRY(evictFromPageCache(options.cache));
  const auto t0 = Clock::now();
  ZP_ASSIGN_OR_RETURN(auto session, Session::load(model, options));
  const double loadMs = msSince(t0);
  if (beforeRun) ZP_TRY(beforeRun(*session));
  // Random inputs are made outside the timed span (a caller's inputs exist before
  // load) — unless the session follows a cold schedule, whose threads read and
  // transform meanwhile: then the time is counted (give inputs to leave it out).
  const auto tInputs = Clock::now();
  TensorMap in = inputs.empty() ? randomInputs(*session, 0) : inputs;
  const double inputsMs = session->coldReport() ? msSince(tInputs) : 0.0;
  const auto tRun = Clock::now();
  ZP_ASSIGN_OR_RETURN(TensorMap out, session->run(in, run));
  ColdStats c;
  c.executeMs = msSince(tRun);
  c.totalMs = loadMs + inputsMs + c.executeMs;
  c.load = session->loadStats();
  c.readMs = c.load.readMs + c.load.cacheReadMs;
  c.transformMs = c.load.foldMs + c.load.transformMs;
  c.verifyMs = c.load.verifyMs;
  if (outputs) *outputs = std::move(out);
  return std::make_pair(c, std::move(session));
}

Expected<KernelPolicy> parseKernelPolicy(const std::string& arg) {
  KernelPolicy p;
  if (isKnownPolicy(arg)) {
    p.policy = arg;
    return p;
  }
  if (!fs::exists(arg)) {
    std::string names;
    for (const auto& n : policyNames()) names += (names.empty() ? "" : ", ") + n;
    return makeError("--kernels: '{}' is neither a policy ({}) nor an existing file", arg, names);
  }
  ZP_ASSIGN_OR_RETURN(std::string text, readFile(arg));
  try {
    Json j = Json::parse(text);
    if (!j.is_object()) return makeError("{}: expected a JSON object", arg);
    const Json* nodes = &j;
    if (j.contains("policy") || j.contains("nodes")) {
      if (j.contains("policy")) {
        p.policy = j.at("policy").get<std::string>();
        if (!isKnownPolicy(p.policy)) return makeError("{}: unknown policy '{}'", arg, p.policy);
      }
      if (!j.contains("nodes")) return p;
      nodes = &j.at("nodes");
    }
    for (const auto& [k, v] : nodes->items()) {
      if (!v.is_string()) return makeError("{}: kernel of node '{}' must be a string", arg, k);
      p.perNode[k] = v.get<std::string>();
    }
  } catch (const std::exception& e) {
    std::string w = e.what();
    return makeError("{}: malformed kernel file: {}", arg, w.substr(0, w.find('\n')));
  }
  return p;
}

Json chromeTrace(const std::vector<NodeTiming>& timings, const std::string& processName) {
  ChromeTrace trace;
  trace.processName(0, processName, 0);
  for (const auto& t : timings)
    trace.span({t.name, t.opType, 0, 0, t.startMs, t.durMs, Json{{"op", t.opType}, {"kernel", t.kernel}}, ""});
  return trace.json();
}

}  // namespace zp::runtime
