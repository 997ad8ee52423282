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

TensorMap randomInputs(const Session& session, uint64_t seed) {
  TensorMap m;
  uint64_t k = 0;
  for (const auto& io : session.inputs()) m[io.name] = randomInput(io, seed + k++);
  return m;
}

Expected<WarmStats> measureWarm(Session& session, const TensorMap& inputs, int repeat, bool warmup) {
  if (warmup) { ZP_TRY(session.run(inputs)); }
  std::vector<double> t;
  for (int i = 0; i < std::max(1, repeat); ++i) {
    auto t0 = Clock::now();
    ZP_TRY(session.run(inputs));
    t.push_back(msSince(t0));
  }
  WarmStats w;
  w.runs = static_cast<int>(t.size());
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
  // Random inputs are made outside the timed span (a caller's inputs exist before load).
  TensorMap in = inputs.empty() ? randomInputs(*session, 0) : inputs;
  const auto tRun = Clock::now();
  ZP_ASSIGN_OR_RETURN(TensorMap out, session->run(in, run));
  ColdStats c;
  c.executeMs = msSince(tRun);
  c.totalMs = loadMs + c.executeMs;
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

namespace {

// Each --input against the model's inputs: a mismatch names the .npy file it came from.
Status checkInputFiles(const Session& s, const TensorMap& inputs, const PlanRunOptions& o) {
  for (const auto& [name, file] : o.inputs) {
    const std::string where = fmt::format("{}: --input {}", file.string(), name);
    auto io = std::find_if(s.inputs().begin(), s.inputs().end(), [&](const IoInfo& i) { return i.name == name; });
    if (io == s.inputs().end()) return makeError("{}: {} has no input '{}'", where, o.model.string(), name);
    const Tensor& t = inputs.at(name);
    if (t.dtype != io->dtype)
      return makeError("{}: holds {}, the model's input is {}", where, dtypeName(t.dtype), dtypeName(io->dtype));
    bool match = t.shape.size() == io->shape.size();
    for (size_t d = 0; match && d < io->shape.size(); ++d) match = io->shape[d] < 0 || io->shape[d] == t.shape[d];
    if (!match)
      return makeError("{}: shape {}, the model's input is {}", where, shapeString(t.shape), shapeString(io->shape));
  }
  return {};
}

}  // namespace

Expected<PlanRunResult> planRun(const PlanRunOptions& o) {
  PlanRunResult res;
  SessionOptions so;
  if (auto p = threadCountProblem(o.threads)) return makeError("--threads: {}", *p);
  so.threads = o.threads;
  ZP_ASSIGN_OR_RETURN(so.kernels, parseKernelPolicy(o.kernels));
  if (!parseGemmLibrary(o.gemm, &so.gemm))
    return makeError("--gemm: unknown GEMM library '{}' (onednn, blis)", o.gemm);
  so.cache = o.cache;
  so.computeSourceChecksums = !o.writeCache.empty();
  // Outputs keep clear of the inputs and of each other; checked before any work.
  std::vector<GuardedPath> read{{o.model, "input"}, {o.cache, "input"}};
  for (const auto& in : o.inputs) read.push_back({in.second, "input"});
  if (fs::is_regular_file(o.kernels)) read.push_back({o.kernels, "input"});
  ZP_TRY(checkOutputFiles({o.writeCache, o.trace}, read));
  std::optional<OutputDir> saved;  // --save-outputs: staged, moved into place at the end
  if (!o.saveOutputs.empty()) {
    read.push_back({o.writeCache, "output"});
    read.push_back({o.trace, "output"});
    ZP_ASSIGN_OR_RETURN(OutputDir d, OutputDir::open(o.saveOutputs, OutputDirOptions{"plan-run", read, nullptr}));
    saved.emplace(std::move(d));
  }

  TensorMap inputs;
  for (const auto& [name, file] : o.inputs) {
    ZP_ASSIGN_OR_RETURN(Tensor t, readNpy(file));
    inputs[name] = std::move(t);
  }

  Json report;
  report["model"] = o.model.string();
  report["threads"] = so.threads;
  report["kernels"] = o.kernels;
  std::unique_ptr<Session> session;
  TensorMap outputs;
  std::string text;
  std::vector<NodeTiming> coldProfile;
  if (o.cold) {
    // With --trace the cold run itself is traced: where a cold start spends its time.
    RunOptions coldRun;
    coldRun.profile = !o.trace.empty();
    ZP_ASSIGN_OR_RETURN(auto cs, measureCold(o.model, so, inputs, &outputs, coldRun,
                                             [&](const Session& s) { return checkInputFiles(s, inputs, o); }));
    auto& [c, s] = cs;
    session = std::move(s);
    coldProfile = session->lastProfile();
    report["cold"] = {{"read_ms", c.readMs},     {"transform_ms", c.transformMs}, {"execute_ms", c.executeMs},
                      {"verify_ms", c.verifyMs}, {"total_ms", c.totalMs},         {"from_cache", c.load.fromCache},
                      {"gemm_init_ms", c.load.gemmInitMs}};
    text += fmt::format("cold{}: read {:.2f} ms, transform {:.2f} ms, execute {:.2f} ms (of which payload checks {:.2f} ms), "
                        "total {:.2f} ms; {} start-up {:.2f} ms on a helper thread\n",
                        c.load.fromCache ? " (from the weight cache alone)" : "", c.readMs, c.transformMs, c.executeMs,
                        c.verifyMs, c.totalMs, so.gemm == GemmLibrary::Blis ? "BLIS" : "oneDNN", c.load.gemmInitMs);
  } else {
    ZP_ASSIGN_OR_RETURN(session, Session::load(o.model, so));
    ZP_TRY(checkInputFiles(*session, inputs, o));
  }
  if (inputs.empty()) inputs = randomInputs(*session, o.seed);
  if (!o.cold) {
    const LoadStats& ls = session->loadStats();
    text += fmt::format("load{}: read {:.2f} ms, fold {:.2f} ms, transform {:.2f} ms, cache {:.2f} ms, total {:.2f} ms\n",
                        ls.fromCache ? " (from the weight cache alone)" : "", ls.readMs, ls.foldMs, ls.transformMs,
                        ls.cacheReadMs, ls.totalMs);
  }
  if (!o.writeCache.empty()) {
    ZP_TRY(session->writeCache(o.writeCache, /*identifyModelFile=*/true));
    report["cache_written"] = {{"path", o.writeCache.string()}, {"bytes", fs::file_size(o.writeCache)}};
    text += fmt::format("wrote weight cache {} ({} bytes)\n", o.writeCache.string(), fs::file_size(o.writeCache));
  }
  if (o.repeat > 0) {
    ZP_ASSIGN_OR_RETURN(WarmStats w, measureWarm(*session, inputs, o.repeat, !o.cold));
    report["warm"] = {{"runs", w.runs}, {"median_ms", w.medianMs}, {"p90_ms", w.p90Ms}, {"min_ms", w.minMs},
                      {"mean_ms", w.meanMs}};
    text += fmt::format("warm: median {:.3f} ms, p90 {:.3f} ms over {} runs ({} thread{})\n", w.medianMs, w.p90Ms,
                        w.runs, so.threads, so.threads == 1 ? "" : "s");
  }
  if (o.cold && !o.trace.empty()) {
    ZP_TRY(writeFileAtomic(o.trace, canonicalJson(chromeTrace(coldProfile, o.model.filename().string() + " (cold run)"))));
    text += fmt::format("trace of the cold run: {}\n", o.trace.string());
  } else if (outputs.empty() || !o.trace.empty()) {
    RunOptions ro;
    ro.profile = !o.trace.empty();
    ZP_ASSIGN_OR_RETURN(outputs, session->run(inputs, ro));
    if (!o.trace.empty()) {
      ZP_TRY(writeFileAtomic(o.trace, canonicalJson(chromeTrace(session->lastProfile(), o.model.filename().string()))));
      text += fmt::format("trace: {}\n", o.trace.string());
    }
  }
  // Named only now: asking BLIS for its kernels starts it up, which belongs to the
  // cold run's timing.
  report["gemm_library"] = gemmLibraryName(so.gemm);
  // After the first run: a session built from the cache alone rebuilds itself
  // from the model when a payload turns out corrupt, and then reports that load.
  const LoadStats& ls = session->loadStats();
  report["load"] = {{"read_ms", ls.readMs},           {"cache_read_ms", ls.cacheReadMs}, {"fold_ms", ls.foldMs},
                    {"transform_ms", ls.transformMs}, {"total_ms", ls.totalMs},          {"cache_hits", ls.cacheHits},
                    {"cache_fallbacks", ls.cacheFallbacks}, {"from_cache", ls.fromCache}, {"verify_ms", ls.verifyMs}};
  Json nodes = Json::array();
  for (const auto& n : session->nodes()) {
    if (!n.hasWeights) continue;
    nodes.push_back({{"name", n.name}, {"op", n.opType}, {"kernel", n.kernel}, {"transform", n.transform},
                     {"transform_ms", n.transformMs}, {"from_cache", n.fromCache}, {"packed_bytes", n.packedBytes},
                     {"weight_zero_fraction", n.weightZeroFraction}});
  }
  report["heavy_nodes"] = nodes;
  report["memory"] = {{"arena_bytes", session->arenaBytes()}, {"weight_bytes", session->weightBytes()},
                      {"scratch_bytes", session->scratchBytes()}};
  Json outs = Json::object();
  for (const auto& [name, t] : outputs) {
    outs[name] = {{"dtype", dtypeName(t.dtype)}, {"shape", t.shape}};
    text += fmt::format("output {}: {} {}\n", name, dtypeName(t.dtype), shapeString(t.shape));
  }
  report["outputs"] = outs;
  if (saved) {
    for (const auto& [name, t] : outputs) {
      std::string file = name;
      std::replace_if(file.begin(), file.end(), [](char c) { return c == '/' || c == '\\' || c == ':'; }, '_');
      ZP_TRY(writeNpy(saved->path() / (file + ".npy"), t));
    }
    ZP_TRY(saved->commit());
  }
  res.warnings = session->warnings();
  report["warnings"] = res.warnings;
  res.report = std::move(report);
  res.text = std::move(text);
  return res;
}

}  // namespace zp::runtime
