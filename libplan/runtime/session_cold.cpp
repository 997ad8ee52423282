// The cold execution strategy (session_execution.h): loading from the plan's
// weight cache, the pipeline's tasks (reads, transforms, GEMM start-ups; the warm
// kernels' weights after them), the cold run waiting for each step's tasks, and
// later runs switching node by node to the warm kernels.
#include <fcntl.h>
#include <sys/mman.h>
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>

#include "libplan/graph/model_io.h"
#include "libplan/runtime/cache/crc32c.h"
#include "libplan/runtime/cache/skeleton.h"
#include "libplan/runtime/session_impl.h"

namespace zp::runtime {
namespace fs = std::filesystem;
using Clock = SteadyClock;

const char* coldWeightsName(ColdWeights w) {
  switch (w) {
    case ColdWeights::None: return "none";
    case ColdWeights::Cache: return "cache";
    case ColdWeights::Transform: return "transform";
  }
  return "?";
}

Session::ColdExecution::ColdExecution(const ColdSchedule& schedule) {
  c_.schedule = schedule;
  for (size_t i = 0; i < schedule.steps.size(); ++i) {
    const ColdStep& s = schedule.steps[i];
    c_.stepOf.emplace(s.node, i);
    if (!s.kernel.empty()) c_.coldPolicy.perNode[s.node] = s.kernel;
    if (s.switchesKernel()) c_.warmPolicy.perNode[s.node] = s.warmKernel;
  }
}

Session::ColdExecution::~ColdExecution() { stop(); }

void Session::ColdExecution::stop() {
  if (c_.pipeline) c_.pipeline->stop();
}

void Session::ColdExecution::sizeSteps(size_t n) {  // sized once: the tasks' build contexts point into them
  c_.deferred.resize(n);
  c_.warm.resize(n);
  c_.warnings.resize(n);
  c_.warmWarnings.resize(n);
}

namespace {

// A heavy node a cold schedule transforms on a worker: nothing to run until its
// task has built the real op (the cold run installs it before the step runs).
class PendingOp : public Op {
 public:
  explicit PendingOp(std::string kernel) : kernel_(std::move(kernel)) {}
  Status run(ExecContext&, const std::vector<const Tensor*>&) override {
    return makeError("its weights have not been transformed yet");
  }
  std::string kernel() const override { return kernel_; }

 private:
  std::string kernel_;
};

}  // namespace

// A node the schedule transforms at load gets its real op from a task (the
// build context kept for it), and a node that switches kernel for later runs
// keeps the build context of its warm op. A node the plan gives no library (no
// heavy weights, or a kernel without products) may still multiply activations:
// on BLIS, which has no kernels to generate, so that no node starts oneDNN
// inside a run.
Expected<Session::Execution::StepSetup> Session::ColdExecution::setupStep(size_t index, const onnx::NodeProto& n,
                                                                          const ContextFor& context) {
  auto it = c_.stepOf.find(n.name());
  if (it == c_.stepOf.end()) return makeError("node '{}' is not in the cold plan (a plan of another model?)", n.name());
  const ColdStep& cs = c_.schedule.steps[it->second];
  StepSetup setup;
  setup.gemm = cs.gemm.value_or(GemmLibrary::Blis);
  if (cs.switchesKernel())
    c_.warm[index] = context(c_.warmPolicy, cs.warmWeights == ColdWeights::Cache, c_.warmWarnings[index]);
  if (cs.weights == ColdWeights::Transform) {
    c_.deferred[index] = context(c_.coldPolicy, false, c_.warnings[index]);
    setup.deferredOp = std::make_unique<PendingOp>(cs.kernel);
  }
  return setup;
}

Status Session::Impl::readModelRef(size_t i, std::string* why) {
  ModelRead& r = modelReads[i];
  std::lock_guard<std::mutex> lock(r.mu);
  if (r.read) return {};
  const std::string& name = values.names[static_cast<size_t>(r.value)];
  auto fail = [&](std::string w) {
    *why = std::move(w);
    return makeError("{}", *why);
  };
  std::shared_ptr<void> buf = allocAligned(std::max<uint64_t>(r.where.bytes, 1));
  const int fd = ::open(modelPath.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail(fmt::format("{}: cannot open: {}", modelPath.string(), std::strerror(errno)));
  uint64_t got = 0;
  while (got < r.where.bytes) {
    const ssize_t n = ::pread(fd, static_cast<char*>(buf.get()) + got, r.where.bytes - got,
                              static_cast<off_t>(r.where.offset + got));
    if (n <= 0) break;
    got += static_cast<uint64_t>(n);
  }
  ::close(fd);
  if (got != r.where.bytes || crc32c(buf.get(), r.where.bytes) != r.where.crc)
    return fail(fmt::format("{}: initializer '{}' ({} bytes at offset {}) is not what the weight cache's skeleton "
                            "refers to (model file changed since the cache was written?)",
                            modelPath.string(), name, r.where.bytes, r.where.offset));
  Tensor& t = values.vals[static_cast<size_t>(r.value)];
  t.data = buf.get();
  t.owner = std::move(buf);
  r.read = true;
  return {};
}

namespace {

// How far ahead of the read being done the storage is asked for the next ones (in
// execution order): enough to keep its queue busy, little enough not to delay the
// read the executor waits for behind data it needs later.
constexpr uint64_t kColdReadAheadBytes = uint64_t{4} << 20;
// Payloads this large are left to the kernel's read-around (a window streamed in
// order, ahead of the faults); the small ones are asked for exactly.
constexpr uint64_t kLargeReadBytes = uint64_t{1} << 20;

// Asks the storage for [offset, offset + bytes) of a file, asynchronously.
void requestFileRange(const fs::path& path, uint64_t offset, uint64_t bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;  // the read itself reports it
  ::posix_fadvise(fd, static_cast<off_t>(offset), static_cast<off_t>(bytes), POSIX_FADV_WILLNEED);
  ::close(fd);
}

}  // namespace

// Asks for the cold reads from step `from` on, up to kColdReadAheadBytes, each once.
void Session::ColdExecution::requestReadsAhead(size_t from) {
  Impl& m = *impl_;
  ColdState& c = c_;
  std::lock_guard<std::mutex> lock(c.requestMu);
  uint64_t bytes = 0;
  for (size_t j = from; j < c.schedule.steps.size() && bytes < kColdReadAheadBytes; ++j) {
    const ColdStep& s = c.schedule.steps[j];
    if (s.weights == ColdWeights::Cache) {
      const auto extents = m.cache->payloadExtents(s.node, s.kernel);
      uint64_t own = 0;
      for (const auto& [offset, n] : extents) own += n;
      if (own >= kLargeReadBytes) break;  // its own read streams it (and what follows)
      bytes += own;
      if (j >= c.requestedUpTo)
        for (const auto& [offset, n] : extents) m.cache->requestExtent(offset, n);
    } else if (s.weights == ColdWeights::Transform) {
      for (int r : c.stepRefs[j]) {
        const auto& where = m.modelReads[static_cast<size_t>(r)].where;
        bytes += where.bytes;
        if (j >= c.requestedUpTo) requestFileRange(m.modelPath, where.offset, where.bytes);
      }
    }
    c.requestedUpTo = std::max(c.requestedUpTo, j + 1);
  }
}

Expected<std::unique_ptr<Session>> Session::loadCold(const fs::path& path, const SessionOptions& options) {
  const auto t0 = Clock::now();
  const std::string cp = options.cache.string();
  if (options.cache.empty())
    return makeError("{}: a cold schedule runs from the weight cache written for it; none was given", path.string());
  if (options.kernels.policy == "tune") return makeError("{}: a cold schedule names every kernel; not with tune", cp);
  SessionOptions o = options;
  o.kernels.perNode.clear();
  for (const auto& s : options.coldSchedule->steps)
    if (!s.kernel.empty()) o.kernels.perNode[s.node] = s.kernel;
  ZP_ASSIGN_OR_RETURN(ModelIdentity identity, modelIdentity(path));
  // Without open's read-ahead: the reader reads in file order itself (madvise WILLNEED
  // ahead of it halved the bandwidth on this host, and a thread populating ahead
  // made cold starts slower, see README.md).
  ZP_ASSIGN_OR_RETURN(auto cache, WeightCache::open(options.cache));
  if (!cache->hasSkeleton()) return makeError("{}: holds no model skeleton: not a cache for a cold schedule", cp);
  // The first payloads (the first steps') while the session is built: the reader starts after.
  cache->requestPayloadHead(kColdReadAheadBytes);
  const bool forModel = cache->modelIdentity().known() ? cache->modelIdentity() == identity : options.cacheIsForModel;
  if (!forModel)
    return makeError("{}: was not written for {} as it is now (size and mtime differ, or the cache names no model file)",
                     cp, path.string());
  WeightSource fast;
  fast.cacheOpenMs = msSince(t0);
  fast.cache = std::move(cache);
  fast.fromCacheOnly = true;
  fast.modelPath = path;
  const auto tRead = Clock::now();
  ZP_ASSIGN_OR_RETURN(onnx::ModelProto model, graph::parseModelBytes(fast.cache->skeleton(), cp + " (model skeleton)"));
  const double parseMs = msSince(tRead);
  auto execution = std::make_unique<ColdExecution>(*options.coldSchedule);
  ColdExecution& cold = *execution;
  ZP_ASSIGN_OR_RETURN(auto s, build(std::move(model), path.string(), o, fast, std::move(execution)));
  // The scratch the cold run needs, allocated now (its pages are faulted in by a task).
  constexpr size_t kMaxScratchBytes = size_t{1} << 36;
  auto scratch = skeletonScratchBytes(s->impl_->model, kMaxScratchBytes);
  if (!scratch.ok()) return makeError("{} (model skeleton): {}", cp, scratch.error().message);
  s->impl_->scratch.reserve(*scratch);
  s->stats_.readMs += fast.cacheOpenMs + parseMs;
  s->stats_.fromCache = true;
  s->modelPath_ = path;
  s->options_ = o;
  s->identity_ = identity;
  ZP_TRY(cold.start(*s, t0));
  s->stats_.totalMs = msSince(t0);
  return s;
}

// The schedule names the session's steps, in order, with the kernels they were built with.
Status checkScheduleMatches(const ColdSchedule& sc, const std::vector<Step>& steps,
                            const std::vector<NodeInfo>& infos, const std::string& label) {
  if (sc.steps.size() != steps.size())
    return makeError("{}: the cold plan has {} steps, the model {} (a plan of another model?)", label, sc.steps.size(),
                     steps.size());
  for (size_t i = 0; i < steps.size(); ++i) {
    const ColdStep& cs = sc.steps[i];
    const std::string& node = steps[i].node->name();
    if (cs.node != node) return makeError("{}: step {} runs '{}', the cold plan '{}'", label, i, node, cs.node);
    if (cs.kernel.empty() != !infos[i].hasWeights || (cs.weights == ColdWeights::None) != cs.kernel.empty())
      return makeError("{}: node '{}': the cold plan {} heavy weights", label, node,
                       cs.kernel.empty() ? "gives it no" : "gives it kernel " + cs.kernel + " and");
    if (cs.kernel != infos[i].kernel && infos[i].hasWeights)
      return makeError("{}: node '{}' runs kernel {}, the cold plan {}", label, node, infos[i].kernel, cs.kernel);
  }
  if (sc.cores < 1) return makeError("{}: the cold plan has {} cores", label, sc.cores);
  return {};
}

// The tasks, in the order the pipeline queues them: the GEMM start-ups, then per
// step its read and transform, then the warm kernels' start-ups, reads and transforms.
Status Session::ColdExecution::start(Session& s, SteadyClock::time_point t0) {
  impl_ = s.impl_.get();
  arenaBytes_ = s.arenaBytes_;
  Impl& m = *impl_;
  ColdState& c = c_;
  const ColdSchedule& sc = c.schedule;
  const std::string& label_ = s.label_;
  c.t0 = t0;
  ZP_TRY(checkScheduleMatches(sc, m.steps, s.nodeInfos_, label_));
  const size_t n = m.steps.size();
  std::map<int, int> refOfValue;
  for (size_t r = 0; r < m.modelReads.size(); ++r) refOfValue[m.modelReads[r].value] = static_cast<int>(r);
  c.stepRefs.assign(n, {});
  for (size_t i = 0; i < n; ++i) {
    for (int v : m.flow[i].in) {
      if (v < 0) continue;
      if (auto it = refOfValue.find(v); it != refOfValue.end()) c.stepRefs[i].push_back(it->second);
      else if ((c.deferred[i] || (c.warm[i] && !c.warm[i]->fromCacheOnly)) && m.values.stripped[static_cast<size_t>(v)] &&
               !m.values.vals[static_cast<size_t>(v)].data)
        return makeError("{}: node '{}' reads '{}', which the weight cache neither holds nor points at in the model file "
                         "(a cache written for another cold plan?)", label_, sc.steps[i].node, m.values.names[static_cast<size_t>(v)]);
    }
  }
  std::vector<ColdTask> tasks;
  auto add = [&](ColdTask t) {
    tasks.push_back(std::move(t));
    return static_cast<int>(tasks.size()) - 1;
  };
  const int last = sc.cores - 1;
  std::map<GemmLibrary, int> startTask;
  for (GemmLibrary g : sc.startups)
    if (!startTask.count(g)) startTask[g] = add({ColdTask::Kind::GemmStart, -1, g, last, {}});
  // Memory the executor writes first in the cold run, faulted in on a worker (no step waits for it).
  if (sc.pipelined && sc.cores > 1) add({ColdTask::Kind::Prefault, -1, GemmLibrary::OneDnn, last, {}});
  c.needs.assign(n, {});
  std::vector<int> readTask(n, -1);
  for (size_t i = 0; i < n; ++i) {
    const ColdStep& cs = sc.steps[i];
    const int step = static_cast<int>(i);
    if (cs.weights != ColdWeights::None) {
      readTask[i] = add({ColdTask::Kind::Read, step, GemmLibrary::OneDnn, -1, {}});
      c.needs[i].push_back(readTask[i]);
    }
    if (cs.weights == ColdWeights::Transform)
      c.needs[i].push_back(add({ColdTask::Kind::Transform, step, GemmLibrary::OneDnn,
                                std::clamp(cs.transformCore, 0, last), {readTask[i]}}));
    if (cs.gemm && startTask.count(*cs.gemm)) c.needs[i].push_back(startTask[*cs.gemm]);
  }
  // Warm work goes to the workers (the executor is the caller's after the cold run).
  const int warmLast = std::max(1, last);
  std::map<GemmLibrary, int> warmStart = startTask;
  c.warmOpTask.assign(n, -1);
  c.warmGemmTask.assign(n, -1);
  for (size_t i = 0; i < n; ++i) {
    const ColdStep& cs = sc.steps[i];
    if (cs.warmGemm && !warmStart.count(*cs.warmGemm) && !gemmReady(*cs.warmGemm))
      warmStart[*cs.warmGemm] = add({ColdTask::Kind::WarmGemmStart, -1, *cs.warmGemm, warmLast, {}});
    if (cs.warmGemm && warmStart.count(*cs.warmGemm)) c.warmGemmTask[i] = warmStart[*cs.warmGemm];
    if (!cs.switchesKernel()) continue;
    const int step = static_cast<int>(i);
    int ready = readTask[i];
    const bool needsRead = cs.warmWeights == ColdWeights::Cache || cs.weights != ColdWeights::Transform;
    if (needsRead) ready = add({ColdTask::Kind::WarmRead, step, GemmLibrary::OneDnn, -1, {}});
    c.warmOpTask[i] = add({ColdTask::Kind::WarmTransform, step, GemmLibrary::OneDnn,
                           std::clamp(cs.warmCore, 1, warmLast), {ready}});
  }
  c.builtOps.resize(n);
  c.warmOps.resize(n);
  c.warmWarnings.resize(n);
  c.switched.assign(n, 0);
  c.corrupt.assign(n, {});
  c.executeMs.assign(n, {0.0, 0.0});
  ColdPipelineParams params{sc.cores, sc.pipelined, sc.workerDelayMs};
  c.pipeline = std::make_unique<ColdPipeline>(std::move(tasks), params, [this](int t, int) { return runTask(t); }, t0);
  c.setupMs = msSince(t0);
  c.pipeline->start();
  return {};
}

// What each task does. Reads fault in (and check) the weights: the cache's payload
// of the kernel, or the model file's bytes of the initializers the node transforms.
Status Session::ColdExecution::runTask(int t) {
  Impl& m = *impl_;
  ColdState& c = c_;
  const ColdTask& k = c.pipeline->tasks()[static_cast<size_t>(t)];
  if (k.kind == ColdTask::Kind::Prefault) {
    // MADV_POPULATE_WRITE maps the pages without writing them: the executor may be
    // writing some of them already. Without it (older kernels) nothing happens.
    std::vector<std::pair<void*, size_t>> extents = m.scratch.blocks();
    if (m.arena) extents.push_back({m.arena.get(), arenaBytes_});  // as planned at load
    static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    for (const auto& [p, bytes] : extents) {
      const uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + page - 1) / page * page;
      const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + bytes) / page * page;
      if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE);
    }
    return {};
  }
  if (k.kind == ColdTask::Kind::GemmStart || k.kind == ColdTask::Kind::WarmGemmStart) {
    if (claimGemmStartup(k.gemm)) {
      omp_set_num_threads(1);
      startGemmLibrary(k.gemm);
      markGemmReady(k.gemm);
    } else {
      awaitGemmReady(k.gemm);  // another session of the process is starting it
    }
    return {};
  }
  const size_t i = static_cast<size_t>(k.step);
  const ColdStep& cs = c.schedule.steps[i];
  std::string why;
  auto readWeights = [&](ColdWeights w, const std::string& kernel) -> Status {
    if (w == ColdWeights::Cache) {
      if (m.cache->verify(cs.node, kernel, &why)) return {};
      why = fmt::format("{}: node '{}': {}", m.cache->path().string(), cs.node, why);
      c.corrupt[i] = why;
      return makeError("{}", why);
    }
    for (int r : c.stepRefs[i]) {
      if (m.readModelRef(static_cast<size_t>(r), &why).ok()) continue;
      c.corrupt[i] = why;
      return makeError("{}", why);
    }
    return {};
  };
  switch (k.kind) {
    case ColdTask::Kind::GemmStart:
    case ColdTask::Kind::Prefault:
    case ColdTask::Kind::WarmGemmStart: return {};
    case ColdTask::Kind::Read:
      requestReadsAhead(i);
      return readWeights(cs.weights, cs.kernel);
    case ColdTask::Kind::WarmRead: return readWeights(cs.warmWeights, cs.warmKernel);
    case ColdTask::Kind::Transform:
    case ColdTask::Kind::WarmTransform: {
      const bool warm = k.kind == ColdTask::Kind::WarmTransform;
      auto op = createOp(warm ? *c.warm[i] : *c.deferred[i]);
      if (!op.ok()) return makeError("node '{}' ({} kernel {}): {}", cs.node, warm ? "warm" : "cold",
                                     warm ? cs.warmKernel : cs.kernel, op.error().message);
      (warm ? c.warmOps : c.builtOps)[i] = std::move(*op);
      return {};
    }
  }
  return {};
}

// The cold run, before step i: its weights read (and transformed) and its GEMM
// library started, running what no thread has taken yet; then its op installed.
Status Session::ColdExecution::beforeColdStep(Session& s, size_t i, std::string* corruptNode, std::string* why) {
  Impl& m = *impl_;
  ColdState& c = c_;
  Status st;
  if (!c.schedule.pipelined && i == 0) {
    // Not pipelined: every read and transform first (in order), then the execution.
    std::vector<int> all;
    for (size_t t = 0; t < c.pipeline->tasks().size(); ++t)
      if (!c.pipeline->tasks()[t].warm()) all.push_back(static_cast<int>(t));
    st = c.pipeline->await(all);
  }
  if (st.ok()) st = c.pipeline->await(c.needs[i]);
  if (!st.ok()) {
    for (size_t s = 0; s < c.corrupt.size(); ++s)
      if (!c.corrupt[s].empty()) {
        *corruptNode = c.schedule.steps[s].node;
        *why = c.corrupt[s];
        break;
      }
    return makeError("{}: node '{}': {}", s.label_, c.schedule.steps[i].node, st.error().message);
  }
  for (auto& w : c.warnings[i]) s.warnings_.push_back(std::move(w));
  c.warnings[i].clear();
  if (c.builtOps[i]) {
    m.steps[i].op = std::move(c.builtOps[i]);
    s.nodeInfos_[i] = nodeInfoOf(*m.steps[i].node, *m.steps[i].op);
    s.stats_.transformMs += s.nodeInfos_[i].transformMs;
  }
  return {};
}

// Later runs, before step i: the warm op once its task is done and its library
// has started (NNV12 §3.5); until then the cold one, so no run waits for it.
void Session::ColdExecution::switchToWarm(Session& s, size_t i) {
  Impl& m = *impl_;
  ColdState& c = c_;
  if (c.switched[i]) return;
  const ColdStep& cs = c.schedule.steps[i];
  const bool libraryReady = c.warmGemmTask[i] < 0 || c.pipeline->isDone(c.warmGemmTask[i]);
  if (cs.switchesKernel()) {
    if (!c.pipeline->isDone(c.warmOpTask[i]) || (cs.warmGemm && !libraryReady)) return;
    c.switched[i] = 1;
    for (auto& w : c.warmWarnings[i]) s.warnings_.push_back(std::move(w));
    if (!c.warmOps[i]) {
      const auto records = c.pipeline->records();
      s.warnings_.push_back(fmt::format("{}: node '{}' keeps its cold kernel {}: {}", s.label_, cs.node, cs.kernel,
                                        records[static_cast<size_t>(c.warmOpTask[i])].error));
      return;
    }
    m.steps[i].op = std::move(c.warmOps[i]);
    s.nodeInfos_[i] = nodeInfoOf(*m.steps[i].node, *m.steps[i].op);
    if (cs.warmGemm) m.steps[i].gemm = *cs.warmGemm;
    ++c.warmSwitched;
  } else if (cs.warmGemm && cs.warmGemm != cs.gemm) {
    if (!libraryReady) return;
    c.switched[i] = 1;
    m.steps[i].gemm = *cs.warmGemm;
    ++c.warmSwitched;
  } else {
    c.switched[i] = 1;
  }
}

// The first run of the schedule is the cold run, which the pipeline's tasks
// ready step by step; later runs switch to the warm kernels as they are ready.
Status Session::ColdExecution::beginRun(Session&, std::string*, std::string*) {
  inColdRun_ = !c_.ran;
  if (inColdRun_) c_.runStartMs = msSince(c_.t0);
  return {};
}

Status Session::ColdExecution::beforeStep(Session& s, size_t i, std::string* corruptNode, std::string* why) {
  if (inColdRun_) return beforeColdStep(s, i, corruptNode, why);
  switchToWarm(s, i);
  return {};
}

void Session::ColdExecution::stepRan(size_t i, SteadyClock::time_point start) {
  c_.executeMs[i] = {std::chrono::duration<double, std::milli>(start - c_.t0).count(), msSince(c_.t0)};
}

void Session::ColdExecution::endRun() {
  if (!inColdRun_) return;
  inColdRun_ = false;
  c_.ran = true;
  c_.runEndMs = msSince(c_.t0);
  c_.pipeline->coldRunDone();
}

std::optional<ColdRunReport> Session::ColdExecution::coldReport() const {
  const ColdState& c = c_;
  ColdRunReport r;
  r.cores = c.schedule.cores;
  r.pipelined = c.schedule.pipelined;
  r.setupMs = c.setupMs;
  r.runStartMs = c.runStartMs;
  r.runEndMs = c.runEndMs;
  r.tasks = c.pipeline->tasks();
  r.records = c.pipeline->records();
  r.executeMs = c.executeMs;
  for (const auto& rec : r.records) r.steals += rec.done && rec.stolen;
  r.warmSwitched = c.warmSwitched;
  return r;
}

void Session::ColdExecution::waitForWarmSwitch() {
  if (c_.ran) c_.pipeline->waitAll();
}

}  // namespace zp::runtime
