#include "libplan/runtime/session.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cassert>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <random>
#include <system_error>
#include <thread>

#include "libplan/graph/model_io.h"
#include "libplan/runtime/kernels/parallel.h"
#include "libplan/runtime/session_impl.h"
#include "libplan/util/signals.h"
#include "libplan/util/stats.h"

namespace zp::runtime {
namespace fs = std::filesystem;
using Clock = SteadyClock;

namespace {

// Per library: whether some thread of the process has claimed its start-up, and
// whether that start-up has ended.
struct GemmStartState {
  std::atomic<bool> claimed{false};
  std::mutex mu;
  std::condition_variable cv;
  bool ready = false;
};
GemmStartState& startState(GemmLibrary gemm) {
  static GemmStartState states[std::size(kAllGemmLibraries)];
  return states[static_cast<size_t>(gemm)];
}

}  // namespace

bool claimGemmStartup(GemmLibrary gemm) { return !startState(gemm).claimed.exchange(true); }

void markGemmReady(GemmLibrary gemm) {
  GemmStartState& s = startState(gemm);
  {
    std::lock_guard<std::mutex> lock(s.mu);
    s.ready = true;
  }
  s.cv.notify_all();
}

void awaitGemmReady(GemmLibrary gemm) {
  GemmStartState& s = startState(gemm);
  std::unique_lock<std::mutex> lock(s.mu);
  s.cv.wait(lock, [&] { return s.ready; });
}

bool gemmReady(GemmLibrary gemm) {
  GemmStartState& s = startState(gemm);
  std::lock_guard<std::mutex> lock(s.mu);
  return s.ready;
}

namespace {

std::shared_ptr<GemmWarmup> startGemmWarmup(GemmLibrary gemm) {
  if (!claimGemmStartup(gemm)) return nullptr;
  if (!runtimeMayStartThreads()) {
    markGemmReady(gemm);  // the first product starts the library itself
    return nullptr;
  }
  auto w = std::make_shared<GemmWarmup>();
  GemmWarmup* raw = w.get();
  try {
    const AsyncSignalsBlocked quiet;  // its JIT code must not take the process's signals
    w->thread = std::thread([raw, gemm] {
      const auto t0 = Clock::now();
      omp_set_num_threads(1);
      startGemmLibrary(gemm);
      raw->ms = msSince(t0);
      raw->done = true;
      markGemmReady(gemm);
    });
  } catch (const std::system_error&) {
    markGemmReady(gemm);  // no thread: the first product starts the library itself
    return nullptr;
  }
  return w;
}
}  // namespace

ValueKinds Session::Impl::valueKinds() const {
  ValueKinds k;
  k.aliasRoot = values.aliasRoot;
  k.graphOutputs = outputIds;
  k.pinned.resize(values.size());
  for (size_t v = 0; v < values.size(); ++v) k.pinned[v] = values.pinned(static_cast<int>(v));
  return k;
}

size_t Session::Impl::plan(const std::vector<size_t>& bytes) {
  layout = layoutArena(flow, valueKinds(), liveness.lastUse, bytes);
  arena = layout.bytes ? allocAligned(layout.bytes) : nullptr;
  return layout.bytes;
}

// Outputs go to planned arena slots when they fit (else to the heap, and the
// next plan takes the sizes seen); views share their input's storage.
class SessionExecContext : public ExecContext {
 public:
  SessionExecContext(Session::Impl& impl) : impl_(impl) {}
  void setStep(size_t s) { step_ = s; }
  Tensor& alloc(size_t out, DType dtype, Shape shape) override {
    const int v = impl_.flow[step_].out[out];
    const size_t vi = static_cast<size_t>(v);
    Tensor& t = impl_.values.vals[vi];
    const size_t bytes = static_cast<size_t>(numel(shape)) * dtypeSize(dtype);
    impl_.seenBytes[vi] = std::max(impl_.seenBytes[vi], bytes);
    if (impl_.layout.inArena[vi] && bytes <= impl_.staticBytes[vi]) {
      t.dtype = dtype;
      t.shape = std::move(shape);
      t.data = static_cast<char*>(impl_.arena.get()) + impl_.layout.offset[vi];
      t.owner.reset();
    } else {
      t = Tensor::empty(dtype, std::move(shape));
      if (impl_.values.plannable(v)) impl_.planDirty = true;
    }
    return t;
  }
  void alias(size_t out, const Tensor& src, Shape shape) override {
    Tensor& t = impl_.values.vals[static_cast<size_t>(impl_.flow[step_].out[out])];
    t = src;
    t.shape = std::move(shape);
  }

 private:
  Session::Impl& impl_;
  size_t step_ = 0;
};

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
// A cold session's pipeline threads run tasks on the session's members: they
// stop before any member goes.
Session::~Session() {
  if (impl_ && impl_->execution) impl_->execution->stop();
}

std::optional<ColdRunReport> Session::coldReport() const { return impl_->execution->coldReport(); }

void Session::waitForWarmSwitch() { impl_->execution->waitForWarmSwitch(); }

// Until the GEMM library has started nothing can run: fault in the activation
// arena and check payloads ahead meanwhile (waiting for the pages being read ahead).
Status Session::WarmExecution::beginRun(Session& s, std::string* corruptNode, std::string* why) {
  Impl& m = *s.impl_;
  if (!m.pending || !m.warmup || m.warmup->done) return {};
  if (m.arena) {
    char* a = static_cast<char*>(m.arena.get());
    for (size_t off = 0; off < s.arenaBytes_; off += 4096) a[off] = 0;
  }
  for (size_t i = 0; i < m.steps.size() && !m.warmup->done; ++i) ZP_TRY(s.verifyPayloads(i, corruptNode, why));
  return {};
}

Status Session::WarmExecution::beforeStep(Session& s, size_t i, std::string* corruptNode, std::string* why) {
  return s.verifyPayloads(i, corruptNode, why);
}

Expected<std::unique_ptr<Session>> Session::loadModelFile(const fs::path& path, const SessionOptions& options,
                                                          WeightSource& weights) {
  auto t0 = Clock::now();
  graph::LoadOptions lo;
  lo.check = options.checkModel;
  ZP_ASSIGN_OR_RETURN(onnx::ModelProto model, graph::loadModel(path, lo));
  const double parseMs = msSince(t0);
  ZP_ASSIGN_OR_RETURN(auto s, build(std::move(model), path.string(), options, weights));
  s->stats_.readMs += parseMs;
  s->stats_.totalMs = msSince(t0) + weights.cacheOpenMs;
  return s;
}

Expected<std::unique_ptr<Session>> Session::load(const fs::path& path, const SessionOptions& options) {
  if (options.coldSchedule) return loadCold(path, options);
  const auto t0 = Clock::now();
  auto warmup = startGemmWarmup(options.gemm);
  auto identity = modelIdentity(path);
  WeightSource weights;
  std::string notFromCache;  // why a usable cache could not stand in for the model file
  if (!options.cache.empty()) {
    const std::string cp = options.cache.string();
    const bool mayUseAlone = options.kernels.policy != "tune" && identity.ok();
    auto c = WeightCache::open(options.cache, mayUseAlone ? &*identity : nullptr);
    weights.cacheOpenMs = msSince(t0);
    if (!c.ok()) {
      weights.cacheRejected = c.error().message;
    } else if (!(*c)->hasSkeleton()) {
      notFromCache = fmt::format("weight cache {} (version {}) holds no model skeleton", cp, (*c)->version());
      weights.cache = std::move(*c);
    } else if (options.kernels.policy == "tune") {
      notFromCache = fmt::format("the tune policy times kernels on raw weights, which weight cache {} does not hold", cp);
      weights.cache = std::move(*c);
    } else if (!(*c)->modelIdentity().known()) {
      weights.cache = std::move(*c);  // written for no particular file (a bundle's): entries are checked
    } else if (!identity.ok() || !(*identity == (*c)->modelIdentity())) {
      notFromCache = fmt::format("weight cache {} was written for a different version of {}", cp, path.string());
      weights.cache = std::move(*c);
    } else {
      // The fast path: the session from the skeleton and the mapped payloads alone.
      WeightSource fast;
      fast.cache = std::move(*c);
      fast.fromCacheOnly = true;
      fast.cacheOpenMs = weights.cacheOpenMs;
      fast.modelPath = path;
      const auto tRead = Clock::now();
      auto model = graph::parseModelBytes(fast.cache->skeleton(), cp + " (model skeleton)");
      const double parseMs = msSince(tRead);
      Expected<std::unique_ptr<Session>> s = model.ok() ? build(std::move(*model), path.string(), options, fast)
                                                        : Expected<std::unique_ptr<Session>>(model.error());
      if (s.ok()) {
        (*s)->stats_.readMs += fast.cacheOpenMs + parseMs;
        (*s)->stats_.fromCache = true;
        (*s)->stats_.totalMs = msSince(t0);
        (*s)->impl_->warmup = std::move(warmup);
        (*s)->modelPath_ = path;
        (*s)->options_ = options;
        (*s)->identity_ = *identity;
        return s;
      }
      notFromCache = fmt::format("weight cache {}: cannot build the session from it alone ({})", cp, s.error().message);
      auto again = WeightCache::open(options.cache);
      if (again.ok()) weights.cache = std::move(*again);
      else weights.cacheRejected = again.error().message;
    }
  }
  ZP_ASSIGN_OR_RETURN(auto s, loadModelFile(path, options, weights));
  if (!notFromCache.empty()) s->warnings_.insert(s->warnings_.begin(), notFromCache + ": loading the model");
  s->impl_->warmup = std::move(warmup);
  s->modelPath_ = path;
  s->options_ = options;
  if (identity.ok()) s->identity_ = *identity;
  s->stats_.totalMs = msSince(t0);
  return s;
}

Expected<std::unique_ptr<Session>> Session::fromModel(onnx::ModelProto model, const std::string& label,
                                                      const SessionOptions& options) {
  auto warmup = startGemmWarmup(options.gemm);
  WeightSource weights;
  if (!options.cache.empty()) {
    auto tc = Clock::now();
    auto c = WeightCache::open(options.cache);
    if (c.ok()) weights.cache = std::move(*c);
    else weights.cacheRejected = c.error().message;
    weights.cacheOpenMs = msSince(tc);
  }
  ZP_ASSIGN_OR_RETURN(auto s, build(std::move(model), label, options, weights));
  s->impl_->warmup = std::move(warmup);
  s->options_ = options;
  return s;
}

Expected<TensorMap> Session::run(const TensorMap& inputs, const RunOptions& options) {
  std::string node, why;
  auto r = runOnce(inputs, options, &node, &why);
  if (node.empty()) return r;
  // A payload of the cache this session was built from is corrupt: rebuild from
  // the model file (that node on its raw weights) and run again from the start.
  corruptNodes_[node] = why;
  ZP_TRY(rebuildFromModel());
  return runOnce(inputs, options, &node, &why);  // the full path checked its payloads at load
}

Status Session::rebuildFromModel() {
  assert(!modelPath_.empty());
  WeightSource weights;
  weights.corruptNodes = &corruptNodes_;
  auto c = WeightCache::open(options_.cache);
  if (c.ok()) weights.cache = std::move(*c);
  else weights.cacheRejected = c.error().message;
  auto fresh = loadModelFile(modelPath_, options_, weights);
  if (!fresh.ok())
    return makeError("{} (while rebuilding the session after a corrupt weight cache payload)", fresh.error().message);
  Session& f = **fresh;
  const double verifyMs = stats_.verifyMs;
  f.impl_->warmup = std::move(impl_->warmup);
  impl_ = std::move(f.impl_);
  inputs_ = std::move(f.inputs_);
  outputs_ = std::move(f.outputs_);
  nodeInfos_ = std::move(f.nodeInfos_);
  profile_.clear();
  for (auto& w : f.warnings_) warnings_.push_back(std::move(w));
  stats_ = f.stats_;
  stats_.verifyMs = verifyMs;
  arenaBytes_ = f.arenaBytes_;
  planned_ = f.planned_;
  if (auto id = modelIdentity(modelPath_); id.ok()) identity_ = *id;
  return {};
}

Status checkRunInputs(const std::string& label, const std::vector<IoInfo>& expected, const TensorMap& inputs) {
  for (const IoInfo& io : expected) {
    auto it = inputs.find(io.name);
    if (it == inputs.end()) return makeError("{}: input '{}' was not given", label, io.name);
    const Tensor& t = it->second;
    if (t.dtype != io.dtype)
      return makeError("{}: input '{}' is {}, the model expects {}", label, io.name, dtypeName(t.dtype), dtypeName(io.dtype));
    bool match = t.shape.size() == io.shape.size();
    for (size_t d = 0; match && d < io.shape.size(); ++d) match = io.shape[d] < 0 || io.shape[d] == t.shape[d];
    if (!match)
      return makeError("{}: input '{}' has shape {}, the model expects {}", label, io.name, shapeString(t.shape),
                       shapeString(io.shape));
  }
  for (const auto& input : inputs) {
    const auto& name = input.first;  // clang 14 cannot capture a structured binding
    if (std::none_of(expected.begin(), expected.end(), [&](const IoInfo& io) { return io.name == name; }))
      return makeError("{}: the model has no input '{}'", label, name);
  }
  return {};
}

Status Session::bindInputs(const TensorMap& inputs) {
  ZP_TRY(checkRunInputs(label_, inputs_, inputs));
  Impl& m = *impl_;
  for (size_t i = 0; i < inputs_.size(); ++i)
    m.values.vals[static_cast<size_t>(m.inputIds[i])] = inputs.at(inputs_[i].name);
  return {};
}

// Checks step i's payloads if still pending (sessions from the cache, first run).
Status Session::verifyPayloads(size_t i, std::string* corruptNode, std::string* why) {
  Impl& m = *impl_;
  if (!m.pending || !m.pendingVerify[i]) return {};
  const auto tv = Clock::now();
  const bool good = m.cache->verify(m.steps[i].node->name(), m.steps[i].op->weights()->kernel, why);
  stats_.verifyMs += msSince(tv);
  if (!good) {
    *corruptNode = m.steps[i].node->name();
    return makeError("{}: node '{}': {}", m.cache->path().string(), *corruptNode, *why);
  }
  m.pendingVerify[i] = 0;
  --m.pending;
  return {};
}

// The graph outputs (owned copies where the storage is not theirs alone), then
// every reference to inputs and intermediate values dropped.
TensorMap Session::takeOutputs(bool failed) {
  Impl& m = *impl_;
  TensorMap result;
  if (!failed) {
    for (int v : m.outputIds) {
      Tensor& t = m.values.vals[static_cast<size_t>(v)];
      const bool borrowed = !t.owner || m.values.isConst[static_cast<size_t>(v)] ||
                            m.values.isInput[static_cast<size_t>(v)] || m.values.root(v) != v;
      result[m.values.names[static_cast<size_t>(v)]] = borrowed ? t.clone() : std::move(t);
    }
  }
  for (size_t v = 0; v < m.values.size(); ++v)
    if (!m.values.isConst[v]) m.values.vals[v] = Tensor{};
  return result;
}

Expected<TensorMap> Session::runOnce(const TensorMap& inputs, const RunOptions& options, std::string* corruptNode,
                                     std::string* why) {
  Impl& m = *impl_;
  useSingleThreadedGemm();
  ZP_TRY(bindInputs(inputs));
  SessionExecContext ctx(m);
  ctx.threads = threads_;
  ctx.scratch = &m.scratch;
  const bool timing = options.profile || static_cast<bool>(options.onNode);
  if (options.profile) profile_.clear();
  const auto tRun = Clock::now();
  Execution& ex = *m.execution;
  std::vector<const Tensor*> ins, outs;
  Status failure = ex.beginRun(*this, corruptNode, why);
  for (size_t sIdx = 0; sIdx < m.steps.size() && failure.ok(); ++sIdx) {
    const Step& step = m.steps[sIdx];
    ins.clear();
    for (int v : m.flow[sIdx].in) ins.push_back(v >= 0 ? &m.values.vals[static_cast<size_t>(v)] : nullptr);
    failure = ex.beforeStep(*this, sIdx, corruptNode, why);
    if (!failure.ok()) break;
    ctx.setStep(sIdx);
    ctx.gemm = step.gemm;
    const bool exTimes = ex.timesSteps();
    const auto t0 = timing || exTimes ? Clock::now() : Clock::time_point{};
    Status r = step.op->run(ctx, ins);
    if (exTimes) ex.stepRan(sIdx, t0);
    if (!r.ok()) {
      failure = makeError("{}: node '{}' ({}): {}", label_, step.node->name(), step.node->op_type(), r.error().message);
      break;
    }
    if (timing) {
      const double dur = msSince(t0);
      if (options.profile)
        profile_.push_back({nodeInfos_[sIdx].name, nodeInfos_[sIdx].opType, nodeInfos_[sIdx].kernel,
                            std::chrono::duration<double, std::milli>(t0 - tRun).count(), dur});
      if (options.onNode) {
        outs.clear();
        for (int v : m.flow[sIdx].out) outs.push_back(&m.values.vals[static_cast<size_t>(v)]);
        options.onNode(NodeEvent{static_cast<int>(sIdx), nodeInfos_[sIdx], dur, outs});
      }
    }
    for (int v : m.liveness.releaseAfter[sIdx]) m.values.vals[static_cast<size_t>(v)] = Tensor{};
  }
  TensorMap result = takeOutputs(!failure.ok());
  if (!failure.ok()) return failure.error();
  ex.endRun();
  if (m.warmup && m.warmup->done) stats_.gemmInitMs = m.warmup->ms;
  if (m.planDirty) {
    // Sizes seen in this run become the plan.
    m.staticBytes = m.seenBytes;
    arenaBytes_ = m.plan(m.staticBytes);
    planned_ = true;
    m.planDirty = false;
  }
  return result;
}

size_t Session::weightBytes() const {
  size_t s = 0;
  for (size_t v = 0; v < impl_->values.size(); ++v)
    if (impl_->values.isConst[v] && !impl_->values.stripped[v]) s += impl_->values.vals[v].bytes();
  for (const auto& n : nodeInfos_) s += n.packedBytes;
  return s;
}

size_t Session::scratchBytes() const { return impl_->scratch.bytes(); }

Tensor randomInput(const IoInfo& info, uint64_t seed) {
  Shape s = info.shape;
  for (auto& d : s)
    if (d < 0) d = 1;
  Tensor t = Tensor::empty(info.dtype, s);
  std::mt19937_64 rng(seed);
  const int64_t n = t.size();
  switch (info.dtype) {
    case DType::F32: {
      std::uniform_real_distribution<float> d(-1.0f, 1.0f);
      for (int64_t i = 0; i < n; ++i) t.ptr<float>()[i] = d(rng);
      break;
    }
    case DType::I64: for (int64_t i = 0; i < n; ++i) t.ptr<int64_t>()[i] = static_cast<int64_t>(rng() % 10); break;
    case DType::I32: for (int64_t i = 0; i < n; ++i) t.ptr<int32_t>()[i] = static_cast<int32_t>(rng() % 10); break;
    case DType::I8: for (int64_t i = 0; i < n; ++i) t.ptr<int8_t>()[i] = static_cast<int8_t>(rng() % 10); break;
    case DType::U8: for (int64_t i = 0; i < n; ++i) t.ptr<uint8_t>()[i] = static_cast<uint8_t>(rng() % 10); break;
    case DType::Bool: for (int64_t i = 0; i < n; ++i) t.ptr<uint8_t>()[i] = static_cast<uint8_t>(rng() & 1); break;
    case DType::F64: {
      std::uniform_real_distribution<double> d(-1.0, 1.0);
      for (int64_t i = 0; i < n; ++i) t.ptr<double>()[i] = d(rng);
      break;
    }
    case DType::F16: case DType::BF16: {
      std::uniform_real_distribution<float> d(-1.0f, 1.0f);
      for (int64_t i = 0; i < n; ++i)
        t.ptr<uint16_t>()[i] = info.dtype == DType::F16 ? floatToHalf(d(rng)) : floatToBf16(d(rng));
      break;
    }
    case DType::I16: for (int64_t i = 0; i < n; ++i) t.ptr<int16_t>()[i] = static_cast<int16_t>(rng() % 10); break;
    case DType::U16: for (int64_t i = 0; i < n; ++i) t.ptr<uint16_t>()[i] = static_cast<uint16_t>(rng() % 10); break;
    case DType::U32: for (int64_t i = 0; i < n; ++i) t.ptr<uint32_t>()[i] = static_cast<uint32_t>(rng() % 10); break;
    case DType::U64: for (int64_t i = 0; i < n; ++i) t.ptr<uint64_t>()[i] = rng() % 10; break;
  }
  return t;
}

}  // namespace zp::runtime
