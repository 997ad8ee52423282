#include "libplan/runtime/session.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>
#include <cstring>
#include <random>
#include <set>
#include <system_error>
#include <thread>

#include "libplan/graph/analysis.h"
#include "libplan/graph/model_io.h"
#include "libplan/runtime/cache/crc32c.h"
#include "libplan/runtime/cache/weight_cache.h"
#include "libplan/runtime/ops/attributes.h"

namespace zp::runtime {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {
double msSince(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }
size_t align64(size_t v) { return (v + 63) / 64 * 64; }

// A GEMM library starts up on the first product of a process: oneDNN generates
// its GEMM kernels (JIT), which takes tens of milliseconds; BLIS sets up its
// contexts. The first session of a process that uses a library starts it on a
// helper thread as load begins, so it overlaps reading the model or the cache; a
// product that needs it sooner waits for it (each library initializes once).
struct GemmWarmup {
  std::thread thread;
  std::atomic<bool> done{false};
  double ms = 0;  // how long the start-up took (valid once done)
  ~GemmWarmup() {
    if (thread.joinable()) thread.join();
  }
};

std::shared_ptr<GemmWarmup> startGemmWarmup(GemmLibrary gemm) {
  static std::atomic<bool> started[std::size(kAllGemmLibraries)];
  if (started[static_cast<size_t>(gemm)].exchange(true)) return nullptr;
  auto w = std::make_shared<GemmWarmup>();
  GemmWarmup* raw = w.get();
  try {
    w->thread = std::thread([raw, gemm] {
      const auto t0 = Clock::now();
      omp_set_num_threads(1);
      startGemmLibrary(gemm);
      raw->ms = msSince(t0);
      raw->done = true;
    });
  } catch (const std::system_error&) {
    return nullptr;  // no thread: the first product starts the library itself
  }
  return w;
}
}  // namespace

struct Step {
  std::unique_ptr<Op> op;
  const onnx::NodeProto* node = nullptr;
  std::vector<int> in, out;  // value ids; -1 for an absent optional input
};

struct Session::Impl {
  onnx::ModelProto model;
  std::vector<std::string> names;      // value id -> tensor name
  std::map<std::string, int> ids;
  std::deque<Tensor> vals;  // a deque: fusion keeps pointers to constants while ids are still being added
  std::vector<bool> isConst, isInput, isOutput;
  std::vector<int> aliasRoot;          // value id -> id whose storage it shares
  std::vector<int> inputIds, outputIds;
  std::vector<Step> steps;
  std::vector<int> lastUse;            // per value: last step reading it (or an alias)
  std::vector<std::vector<int>> releaseAfter;  // per step: heap values to drop afterwards
  std::vector<size_t> staticBytes, seenBytes, offset;
  std::vector<bool> inArena;
  std::shared_ptr<void> arena;
  bool planDirty = false;
  Scratch scratch;
  std::unique_ptr<WeightCache> cache;
  std::vector<bool> stripped;          // value id -> initializer the skeleton left to the cache (no data)
  std::vector<char> pendingVerify;     // per step: payloads not yet checked (sessions from the cache)
  size_t pending = 0;
  std::shared_ptr<GemmWarmup> warmup;  // held by the session that started it

  int id(const std::string& name) {
    auto it = ids.find(name);
    if (it != ids.end()) return it->second;
    int i = static_cast<int>(names.size());
    ids[name] = i;
    names.push_back(name);
    vals.emplace_back();
    isConst.push_back(false);
    isInput.push_back(false);
    isOutput.push_back(false);
    aliasRoot.push_back(i);
    stripped.push_back(false);
    return i;
  }
  int root(int v) const {
    while (aliasRoot[static_cast<size_t>(v)] != v) v = aliasRoot[static_cast<size_t>(v)];
    return v;
  }
  // Values that live in the arena when planned: produced by a step, not constant,
  // not a graph output, not an alias.
  bool plannable(int v) const {
    const size_t i = static_cast<size_t>(v);
    return !isConst[i] && !isInput[i] && !isOutput[i] && aliasRoot[i] == v;
  }
  size_t plan(const std::vector<size_t>& bytes);
};

// Greedy by size: each buffer takes the lowest offset that does not overlap a
// buffer alive at the same time. Returns the arena size.
size_t Session::Impl::plan(const std::vector<size_t>& bytes) {
  const size_t n = names.size();
  std::vector<int> def(n, -1);
  for (size_t s = 0; s < steps.size(); ++s)
    for (int o : steps[s].out) def[static_cast<size_t>(o)] = static_cast<int>(s);
  std::vector<int> order;
  for (size_t v = 0; v < n; ++v)
    if (def[v] >= 0 && plannable(static_cast<int>(v)) && bytes[v] > 0) order.push_back(static_cast<int>(v));
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return bytes[static_cast<size_t>(a)] > bytes[static_cast<size_t>(b)]; });
  struct Placed { int first, last; size_t off, size; };
  std::vector<Placed> placed;
  offset.assign(n, 0);
  inArena.assign(n, false);
  size_t total = 0;
  for (int v : order) {
    const size_t vi = static_cast<size_t>(v);
    const int first = def[vi], last = std::max(lastUse[vi], first);
    const size_t size = align64(bytes[vi]);
    std::vector<std::pair<size_t, size_t>> busy;
    for (const auto& p : placed)
      if (!(p.last < first || last < p.first)) busy.push_back({p.off, p.off + p.size});
    std::sort(busy.begin(), busy.end());
    size_t off = 0;
    for (const auto& [b, e] : busy) {
      if (off + size <= b) break;
      off = std::max(off, e);
    }
    placed.push_back({first, last, off, size});
    offset[vi] = off;
    inArena[vi] = true;
    total = std::max(total, off + size);
  }
  arena = total ? allocAligned(total) : nullptr;
  return total;
}

namespace {

// Allocation for constant folding: every output on the heap.
class FoldContext : public ExecContext {
 public:
  explicit FoldContext(size_t outputs) : outs(outputs) {}
  Tensor& alloc(size_t out, DType dtype, Shape shape) override {
    outs[out] = Tensor::empty(dtype, std::move(shape));
    return outs[out];
  }
  void alias(size_t out, const Tensor& src, Shape shape) override {
    outs[out] = src;
    outs[out].shape = std::move(shape);
    if (!outs[out].owner) outs[out] = outs[out].clone();
  }
  std::vector<Tensor> outs;
};

}  // namespace

class SessionExecContext : public ExecContext {
 public:
  SessionExecContext(Session::Impl& impl) : impl_(impl) {}
  void setStep(const Step* s) { step_ = s; }
  Tensor& alloc(size_t out, DType dtype, Shape shape) override {
    const int v = step_->out[out];
    const size_t vi = static_cast<size_t>(v);
    Tensor& t = impl_.vals[vi];
    const size_t bytes = static_cast<size_t>(numel(shape)) * dtypeSize(dtype);
    impl_.seenBytes[vi] = std::max(impl_.seenBytes[vi], bytes);
    if (impl_.inArena[vi] && bytes <= impl_.staticBytes[vi]) {
      t.dtype = dtype;
      t.shape = std::move(shape);
      t.data = static_cast<char*>(impl_.arena.get()) + impl_.offset[vi];
      t.owner.reset();
    } else {
      t = Tensor::empty(dtype, std::move(shape));
      if (impl_.plannable(v)) impl_.planDirty = true;
    }
    return t;
  }
  void alias(size_t out, const Tensor& src, Shape shape) override {
    Tensor& t = impl_.vals[static_cast<size_t>(step_->out[out])];
    t = src;
    t.shape = std::move(shape);
  }

 private:
  Session::Impl& impl_;
  const Step* step_ = nullptr;
};

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Session::~Session() = default;

struct Session::Build {
  std::unique_ptr<WeightCache> cache;
  std::string cacheRejected;   // the cache file was rejected, why
  double cacheOpenMs = 0;
  bool fromCacheOnly = false;  // building from the cache's model skeleton
  const std::map<std::string, std::string>* corruptNodes = nullptr;
};

namespace {

bool isStripped(const onnx::TensorProto& t) {
  if (t.data_location() != onnx::TensorProto::EXTERNAL) return false;
  for (const auto& kv : t.external_data())
    if (kv.key() == "location" && kv.value() == kSkeletonStrippedLocation) return true;
  return false;
}

}  // namespace

Expected<std::unique_ptr<Session>> Session::loadModelFile(const fs::path& path, const SessionOptions& options,
                                                          Build& how) {
  auto t0 = Clock::now();
  graph::LoadOptions lo;
  lo.check = options.checkModel;
  ZP_ASSIGN_OR_RETURN(onnx::ModelProto model, graph::loadModel(path, lo));
  const double parseMs = msSince(t0);
  ZP_ASSIGN_OR_RETURN(auto s, build(std::move(model), path.string(), options, how));
  s->stats_.readMs += parseMs;
  s->stats_.totalMs = msSince(t0) + how.cacheOpenMs;
  return s;
}

Expected<std::unique_ptr<Session>> Session::load(const fs::path& path, const SessionOptions& options) {
  const auto t0 = Clock::now();
  auto warmup = startGemmWarmup(options.gemm);
  auto identity = modelIdentity(path);
  Build how;
  std::string notFromCache;  // why a usable cache could not stand in for the model file
  if (!options.cache.empty()) {
    const std::string cp = options.cache.string();
    const bool mayUseAlone = options.kernels.policy != "tune" && identity.ok();
    auto c = WeightCache::open(options.cache, mayUseAlone ? &*identity : nullptr);
    how.cacheOpenMs = msSince(t0);
    if (!c.ok()) {
      how.cacheRejected = c.error().message;
    } else if (!(*c)->hasSkeleton()) {
      notFromCache = fmt::format("weight cache {} (version {}) holds no model skeleton", cp, (*c)->version());
      how.cache = std::move(*c);
    } else if (options.kernels.policy == "tune") {
      notFromCache = fmt::format("the tune policy times kernels on raw weights, which weight cache {} does not hold", cp);
      how.cache = std::move(*c);
    } else if (!(*c)->modelIdentity().known()) {
      how.cache = std::move(*c);  // written for no particular file (a bundle's): entries are checked
    } else if (!identity.ok() || !(*identity == (*c)->modelIdentity())) {
      notFromCache = fmt::format("weight cache {} was written for a different version of {}", cp, path.string());
      how.cache = std::move(*c);
    } else {
      // The fast path: the session from the skeleton and the mapped payloads alone.
      Build fast;
      fast.cache = std::move(*c);
      fast.fromCacheOnly = true;
      fast.cacheOpenMs = how.cacheOpenMs;
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
      if (again.ok()) how.cache = std::move(*again);
      else how.cacheRejected = again.error().message;
    }
  }
  ZP_ASSIGN_OR_RETURN(auto s, loadModelFile(path, options, how));
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
  Build how;
  if (!options.cache.empty()) {
    auto tc = Clock::now();
    auto c = WeightCache::open(options.cache);
    if (c.ok()) how.cache = std::move(*c);
    else how.cacheRejected = c.error().message;
    how.cacheOpenMs = msSince(tc);
  }
  ZP_ASSIGN_OR_RETURN(auto s, build(std::move(model), label, options, how));
  s->impl_->warmup = std::move(warmup);
  s->options_ = options;
  return s;
}

Expected<std::unique_ptr<Session>> Session::build(onnx::ModelProto modelIn, const std::string& label,
                                                  const SessionOptions& options, Build& how) {
  const auto tStart = Clock::now();
  auto impl = std::make_unique<Impl>();
  Impl& m = *impl;
  m.model = std::move(modelIn);
  std::unique_ptr<Session> s(new Session(std::move(impl)));
  s->label_ = label;
  s->threads_ = std::max(1, options.threads);
  LoadStats& st = s->stats_;
  m.cache = std::move(how.cache);
  const std::string cacheRejected = how.cacheRejected;
  if (how.fromCacheOnly) assert(m.cache);
  else st.cacheReadMs += how.cacheOpenMs;

  int opset = 13;
  for (const auto& o : m.model.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") opset = static_cast<int>(o.version());
  const auto& g = m.model.graph();
  graph::GraphView view(m.model);

  // Initializers -> constant tensors.
  auto tRead = Clock::now();
  for (const auto& init : g.initializer()) {
    int v = m.id(init.name());
    m.isConst[static_cast<size_t>(v)] = true;
    auto dt = dtypeFromOnnx(init.data_type());
    if (isStripped(init)) {
      // The skeleton left these weights to the cache: shape and type only.
      if (!how.fromCacheOnly)
        return makeError("{}: initializer '{}' has no data (the model is a weight cache's skeleton)", label, init.name());
      if (!dt.ok()) return makeError("{}: initializer '{}': {}", label, init.name(), dt.error().message);
      Tensor t;
      t.dtype = *dt;
      t.shape.assign(init.dims().begin(), init.dims().end());
      m.vals[static_cast<size_t>(v)] = std::move(t);
      m.stripped[static_cast<size_t>(v)] = true;
      continue;
    }
    if (dt.ok() && init.has_raw_data()) {
      // Weights stay where protobuf put them (the session keeps the model alive): no copy.
      Tensor t;
      t.dtype = *dt;
      t.shape.assign(init.dims().begin(), init.dims().end());
      if (init.raw_data().size() != t.bytes())
        return makeError("{}: initializer '{}' holds {} bytes, expected {}", label, init.name(), init.raw_data().size(),
                         t.bytes());
      t.data = const_cast<char*>(init.raw_data().data());
      t.owner = std::shared_ptr<void>(t.data, [](void*) {});
      m.vals[static_cast<size_t>(v)] = std::move(t);
      continue;
    }
    auto t = tensorFromProto(init);
    if (!t.ok()) return makeError("{}: {}", label, t.error().message);
    m.vals[static_cast<size_t>(v)] = std::move(*t);
  }
  st.readMs = msSince(tRead);

  // Graph inputs and outputs.
  std::set<std::string> initNames;
  for (const auto& init : g.initializer()) initNames.insert(init.name());
  bool staticInputs = true;
  for (const auto& vi : g.input()) {
    if (initNames.count(vi.name())) continue;
    IoInfo io;
    io.name = vi.name();
    auto dt = dtypeFromOnnx(vi.type().tensor_type().elem_type());
    if (!dt.ok()) return makeError("{}: input '{}': {}", label, vi.name(), dt.error().message);
    io.dtype = *dt;
    for (const auto& d : vi.type().tensor_type().shape().dim()) {
      io.shape.push_back(d.has_dim_value() ? d.dim_value() : -1);
      if (!d.has_dim_value()) staticInputs = false;
    }
    if (!vi.type().tensor_type().has_shape()) staticInputs = false;
    int v = m.id(io.name);
    m.isInput[static_cast<size_t>(v)] = true;
    m.inputIds.push_back(v);
    s->inputs_.push_back(io);
  }
  for (const auto& vi : g.output()) {
    IoInfo io;
    io.name = vi.name();
    auto dt = dtypeFromOnnx(vi.type().tensor_type().elem_type());
    io.dtype = dt.ok() ? *dt : DType::F32;
    for (const auto& d : vi.type().tensor_type().shape().dim()) io.shape.push_back(d.has_dim_value() ? d.dim_value() : -1);
    int v = m.id(io.name);
    m.isOutput[static_cast<size_t>(v)] = true;
    m.outputIds.push_back(v);
    s->outputs_.push_back(io);
  }

  auto staticShape = [&](const std::string& name) -> std::optional<Shape> {
    if (!staticInputs) {
      // Only constants have trustworthy shapes when inputs are dynamic.
      auto it = m.ids.find(name);
      if (it != m.ids.end() && m.isConst[static_cast<size_t>(it->second)]) return m.vals[static_cast<size_t>(it->second)].shape;
      return std::nullopt;
    }
    auto info = view.tensorInfo(name);
    if (!info || !info->hasShape || info->numElements() < 0) return std::nullopt;
    return info->shape;
  };
  auto constOf = [&](const std::string& name) -> const Tensor* {
    if (name.empty()) return nullptr;
    auto it = m.ids.find(name);
    if (it == m.ids.end() || !m.isConst[static_cast<size_t>(it->second)]) return nullptr;
    return &m.vals[static_cast<size_t>(it->second)];
  };

  // Unsupported operators are reported before any work.
  for (int i : view.topoOrder()) {
    const auto& n = g.node(i);
    if (!isSupportedOp(n.op_type()) || (!n.domain().empty() && n.domain() != "ai.onnx"))
      return makeError("{}: node '{}': operator '{}{}' is not supported", label, n.name(),
                       n.domain().empty() ? "" : n.domain() + "::", n.op_type());
  }

  // Constant folding in topological order.
  KernelPolicy foldPolicy;
  auto tFold = Clock::now();
  std::vector<int> live;
  for (int i : view.topoOrder()) {
    const auto& n = g.node(i);
    bool allConst = true;
    for (const auto& in : n.input())
      if (!in.empty() && !constOf(in)) { allConst = false; break; }
    bool foldShape = n.op_type() == "Shape" && staticShape(n.input(0)).has_value();
    bool isGraphOut = false;
    for (const auto& o : n.output()) isGraphOut |= view.isGraphOutput(o);
    if ((!allConst && !foldShape) || isGraphOut) {
      live.push_back(i);
      continue;
    }
    for (const auto& in : n.input()) {
      auto it = in.empty() ? m.ids.end() : m.ids.find(in);
      if (it != m.ids.end() && m.stripped[static_cast<size_t>(it->second)] && !foldShape)
        return makeError("{}: node '{}' would fold initializer '{}', which the skeleton leaves to the cache", label,
                         n.name(), in);
    }
    BuildContext bc;
    bc.node = &n;
    bc.opset = opset;
    bc.policy = &foldPolicy;
    std::vector<const Tensor*> ins;
    Tensor shapeHolder;
    for (const auto& in : n.input()) {
      bc.constInputs.push_back(constOf(in));
      ins.push_back(constOf(in));
    }
    if (foldShape) {
      // Shape only needs the input's shape: hand it a zero-size stand-in with that shape.
      shapeHolder.shape = *staticShape(n.input(0));
      ins[0] = &shapeHolder;
    }
    auto op = createOp(bc);
    if (!op.ok()) return makeError("{}: {}", label, op.error().message);
    FoldContext fc(static_cast<size_t>(n.output_size()));
    fc.scratch = &m.scratch;
    fc.gemm = options.gemm;
    Status r = (*op)->run(fc, ins);
    if (!r.ok()) return makeError("{}: node '{}' ({}): {}", label, n.name(), n.op_type(), r.error().message);
    for (int k = 0; k < n.output_size(); ++k) {
      if (n.output(k).empty()) continue;
      int v = m.id(n.output(k));
      m.vals[static_cast<size_t>(v)] = std::move(fc.outs[static_cast<size_t>(k)]);
      m.isConst[static_cast<size_t>(v)] = true;
    }
  }
  st.foldMs = msSince(tFold);

  // Consumer counts among live nodes (graph outputs count as a consumer).
  std::map<std::string, int> uses;
  std::map<std::string, int> producerOf;
  for (int i : live) {
    for (const auto& in : g.node(i).input())
      if (!in.empty()) ++uses[in];
    for (const auto& o : g.node(i).output()) producerOf[o] = i;
  }
  for (const auto& o : g.output()) ++uses[o.name()];

  // Fusions: BN into Conv, Relu/Clip into Conv/Gemm/MatMul.
  struct Fused {
    std::vector<const Tensor*> bn;
    std::vector<std::string> bnNames;
    float eps = 1e-5f;
    Epilogue ep;
    std::string out;
  };
  std::map<int, Fused> fused;
  std::set<int> removed;
  auto singleConsumer = [&](const std::string& t) -> int {
    if (uses[t] != 1) return -1;
    for (int j : live)
      if (!removed.count(j))
        for (const auto& in : g.node(j).input())
          if (in == t) return j;
    return -1;
  };
  for (int i : live) {
    const auto& n = g.node(i);
    const bool conv = n.op_type() == "Conv" && n.input_size() > 1 && constOf(n.input(1));
    const bool gemm = (n.op_type() == "Gemm" || n.op_type() == "MatMul") && n.input_size() > 1 &&
                      constOf(n.input(1)) && constOf(n.input(1))->rank() == 2;
    if (!conv && !gemm) continue;
    Fused f;
    f.out = n.output(0);
    if (conv && options.foldBatchNorm) {
      int j = singleConsumer(f.out);
      if (j >= 0 && g.node(j).op_type() == "BatchNormalization" && g.node(j).output_size() == 1) {
        const auto& bn = g.node(j);
        bool ok = bn.input_size() == 5;
        std::vector<const Tensor*> p;
        for (int k = 1; ok && k < 5; ++k) {
          const Tensor* t = constOf(bn.input(k));
          ok = t && t->dtype == DType::F32 && t->size() == constOf(n.input(1))->shape[0];
          p.push_back(t);
        }
        if (ok) {
          f.bn = p;
          f.bnNames.assign(bn.input().begin() + 1, bn.input().end());
          f.eps = attrFloat(bn, "epsilon", 1e-5f);
          removed.insert(j);
          f.out = bn.output(0);
        }
      }
    }
    if (options.fuseActivations) {
      bool cOk = true;
      if (n.op_type() == "Gemm" && n.input_size() > 2 && !n.input(2).empty()) {
        const Tensor* c = constOf(n.input(2));
        const Tensor* b = constOf(n.input(1));
        const int64_t N = attrInt(n, "transB", 0) ? b->shape[0] : b->shape[1];
        cOk = c && c->size() == N;
      }
      int j = cOk ? singleConsumer(f.out) : -1;
      if (j >= 0) {
        std::vector<const Tensor*> ci;
        for (const auto& in : g.node(j).input()) ci.push_back(constOf(in));
        Epilogue ep;
        if (isFusableActivation(g.node(j), ci, &ep)) {
          f.ep = ep;
          removed.insert(j);
          f.out = g.node(j).output(0);
        }
      }
    }
    if (f.out != n.output(0) || !f.bn.empty()) fused[i] = f;
  }

  // Build the ops.
  auto tBuild = Clock::now();
  double weightOpMs = 0;
  for (int i : live) {
    if (removed.count(i)) continue;
    const auto& n = g.node(i);
    BuildContext bc;
    bc.node = &n;
    bc.opset = opset;
    bc.policy = &options.kernels;
    bc.cache = m.cache.get();
    bc.fromCacheOnly = how.fromCacheOnly;
    bc.cacheRejected = cacheRejected;
    bc.corruptNodes = how.corruptNodes;
    bc.warnings = &s->warnings_;
    bc.threads = s->threads_;
    bc.gemm = options.gemm;
    for (const auto& in : n.input()) {
      bc.constInputs.push_back(constOf(in));
      bc.inputShapes.push_back(in.empty() ? std::nullopt : staticShape(in));
    }
    Step step;
    step.node = &n;
    std::vector<std::string> outs(n.output().begin(), n.output().end());
    if (auto it = fused.find(i); it != fused.end()) {
      bc.bnFold = it->second.bn;
      bc.bnFoldNames = it->second.bnNames;
      bc.bnEpsilon = it->second.eps;
      bc.epilogue = it->second.ep;
      outs[0] = it->second.out;
    }
    auto tOp = Clock::now();
    auto op = createOp(bc);
    const double opMs = msSince(tOp);
    if (!op.ok()) return makeError("{}: {}", label, op.error().message);
    step.op = std::move(*op);
    NodeInfo info;
    info.name = n.name();
    info.opType = n.op_type();
    info.kernel = step.op->kernel();
    if (const WeightInfo* w = step.op->weights()) {
      info.hasWeights = true;
      info.transform = w->transform;
      info.transformMs = w->transformMs;
      info.fromCache = w->fromCache;
      info.packedBytes = w->packed ? w->packed->bytes() : 0;
      info.weightZeroFraction = w->zeroFraction;
      weightOpMs += opMs;
      if (w->fromCache) { st.cacheReadMs += opMs; ++st.cacheHits; }
      else {
        st.transformMs += opMs;
        if (w->cacheCorrupt || ((m.cache || !cacheRejected.empty()) && w->transform != "none")) ++st.cacheFallbacks;
      }
    }
    if (how.fromCacheOnly) {
      // Only heavy nodes built from the cache may read weights the skeleton left out.
      const WeightInfo* w = step.op->weights();
      for (const auto& in : n.input()) {
        auto it = in.empty() ? m.ids.end() : m.ids.find(in);
        if (it == m.ids.end() || !m.stripped[static_cast<size_t>(it->second)]) continue;
        if (!w || !w->fromCache || std::find(w->sources.begin(), w->sources.end(), in) == w->sources.end())
          return makeError("{}: node '{}' reads initializer '{}', which the skeleton leaves to the cache", label,
                           n.name(), in);
      }
    }
    for (const auto& in : n.input()) step.in.push_back(in.empty() ? -1 : m.id(in));
    for (const auto& o : outs) step.out.push_back(o.empty() ? -1 : m.id(o));
    if (step.op->isView() && step.in[0] >= 0 && step.out[0] >= 0)
      m.aliasRoot[static_cast<size_t>(step.out[0])] = m.root(step.in[0]);
    s->nodeInfos_.push_back(std::move(info));
    m.steps.push_back(std::move(step));
  }
  // Payload checksums of sessions from the cache are checked as each node first runs.
  m.pendingVerify.assign(m.steps.size(), 0);
  if (how.fromCacheOnly)
    for (size_t i = 0; i < m.steps.size(); ++i) {
      const WeightInfo* w = m.steps[i].op->weights();
      if (w && w->fromCache) { m.pendingVerify[i] = 1; ++m.pending; }
    }
  for (int v : m.outputIds)
    if (m.stripped[static_cast<size_t>(v)])
      return makeError("{}: graph output '{}' is an initializer the skeleton leaves to the cache", label,
                       m.names[static_cast<size_t>(v)]);
  // Outputs of steps that no one reads still need a slot.
  for (auto& step : m.steps)
    for (auto& o : step.out)
      if (o < 0) o = m.id("");  // shared sink for unnamed outputs (never read)
  // A Misses count only when the cache had no entry for a node it could have held.
  (void)weightOpMs;

  // Graph outputs that are constants or inputs are returned as copies.
  for (int v : m.outputIds) {
    const bool produced = std::any_of(m.steps.begin(), m.steps.end(), [&](const Step& stp) {
      return std::find(stp.out.begin(), stp.out.end(), v) != stp.out.end();
    });
    if (!produced && !m.isConst[static_cast<size_t>(v)] && !m.isInput[static_cast<size_t>(v)])
      return makeError("{}: graph output '{}' is not produced by any node", label, m.names[static_cast<size_t>(v)]);
  }

  // Lifetimes (through aliases) and release points.
  const size_t nv = m.names.size();
  m.lastUse.assign(nv, -1);
  for (size_t sIdx = 0; sIdx < m.steps.size(); ++sIdx) {
    for (int v : m.steps[sIdx].in)
      if (v >= 0) m.lastUse[static_cast<size_t>(m.root(v))] = static_cast<int>(sIdx);
    for (int v : m.steps[sIdx].out) {
      auto& lu = m.lastUse[static_cast<size_t>(m.root(v))];
      lu = std::max(lu, static_cast<int>(sIdx));
    }
  }
  for (int v : m.outputIds) m.lastUse[static_cast<size_t>(m.root(v))] = static_cast<int>(m.steps.size());
  m.releaseAfter.assign(m.steps.size(), {});
  for (size_t v = 0; v < nv; ++v) {
    if (m.isConst[v] || m.isInput[v] || m.isOutput[v]) continue;
    const int r = m.root(static_cast<int>(v));
    const int lu = m.lastUse[static_cast<size_t>(r)];
    if (lu >= 0 && lu < static_cast<int>(m.steps.size())) m.releaseAfter[static_cast<size_t>(lu)].push_back(static_cast<int>(v));
  }

  // Static memory plan when every planned buffer has a known size.
  m.staticBytes.assign(nv, 0);
  m.seenBytes.assign(nv, 0);
  m.inArena.assign(nv, false);
  m.offset.assign(nv, 0);
  bool allKnown = staticInputs;
  for (const auto& step : m.steps)
    for (int v : step.out) {
      if (!m.plannable(v) || !allKnown) continue;
      auto info = view.tensorInfo(m.names[static_cast<size_t>(v)]);
      auto dt = info ? dtypeFromOnnx(info->elemType) : Expected<DType>(makeError("unknown"));
      if (!info || !info->hasShape || info->numElements() < 0 || !dt.ok()) { allKnown = false; break; }
      m.staticBytes[static_cast<size_t>(v)] = static_cast<size_t>(info->numElements()) * dtypeSize(*dt);
    }
  if (allKnown) {
    s->arenaBytes_ = m.plan(m.staticBytes);
    s->planned_ = true;
  } else {
    m.staticBytes.assign(nv, 0);
  }
  st.planMs = msSince(tBuild) - st.transformMs - (st.cacheReadMs > 0 ? 0 : 0);
  st.totalMs = msSince(tStart);
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
  Build how;
  how.corruptNodes = &corruptNodes_;
  auto c = WeightCache::open(options_.cache);
  if (c.ok()) how.cache = std::move(*c);
  else how.cacheRejected = c.error().message;
  auto fresh = loadModelFile(modelPath_, options_, how);
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

Expected<TensorMap> Session::runOnce(const TensorMap& inputs, const RunOptions& options, std::string* corruptNode,
                                     std::string* why) {
  Impl& m = *impl_;
  useSingleThreadedGemm();
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const IoInfo& io = inputs_[i];
    auto it = inputs.find(io.name);
    if (it == inputs.end()) return makeError("{}: input '{}' was not given", label_, io.name);
    const Tensor& t = it->second;
    if (t.dtype != io.dtype)
      return makeError("{}: input '{}' is {}, the model expects {}", label_, io.name, dtypeName(t.dtype), dtypeName(io.dtype));
    bool match = t.shape.size() == io.shape.size();
    for (size_t d = 0; match && d < io.shape.size(); ++d) match = io.shape[d] < 0 || io.shape[d] == t.shape[d];
    if (!match)
      return makeError("{}: input '{}' has shape {}, the model expects {}", label_, io.name, shapeString(t.shape),
                       shapeString(io.shape));
    m.vals[static_cast<size_t>(m.inputIds[i])] = t;
  }
  for (const auto& [name, t] : inputs)
    if (std::none_of(inputs_.begin(), inputs_.end(), [&](const IoInfo& io) { return io.name == name; }))
      return makeError("{}: the model has no input '{}'", label_, name);

  SessionExecContext ctx(m);
  ctx.threads = threads_;
  ctx.gemm = options_.gemm;
  ctx.scratch = &m.scratch;
  const bool timing = options.profile || static_cast<bool>(options.onNode);
  if (options.profile) profile_.clear();
  const auto tRun = Clock::now();
  std::vector<const Tensor*> ins, outs;
  Status failure;
  // Checks step i's payloads if still pending (sessions from the cache, first run).
  auto verifyPending = [&](size_t i) {
    if (!m.pending || !m.pendingVerify[i]) return true;
    const auto tv = Clock::now();
    const bool good = m.cache->verify(m.steps[i].node->name(), why);
    stats_.verifyMs += msSince(tv);
    if (!good) {
      *corruptNode = m.steps[i].node->name();
      failure = makeError("{}: node '{}': {}", m.cache->path().string(), *corruptNode, *why);
      return false;
    }
    m.pendingVerify[i] = 0;
    --m.pending;
    return true;
  };
  if (m.pending && m.warmup && !m.warmup->done) {
    // Until the GEMM library has started nothing can run: fault in the activation
    // arena and check payloads ahead meanwhile (waiting for the pages being read ahead).
    if (m.arena) {
      char* a = static_cast<char*>(m.arena.get());
      for (size_t off = 0; off < arenaBytes_; off += 4096) a[off] = 0;
    }
    for (size_t i = 0; i < m.steps.size() && !m.warmup->done; ++i)
      if (!verifyPending(i)) break;
  }
  for (size_t sIdx = 0; sIdx < m.steps.size() && failure.ok(); ++sIdx) {
    const Step& step = m.steps[sIdx];
    ins.clear();
    for (int v : step.in) ins.push_back(v >= 0 ? &m.vals[static_cast<size_t>(v)] : nullptr);
    if (!verifyPending(sIdx)) break;
    ctx.setStep(&step);
    const auto t0 = timing ? Clock::now() : Clock::time_point{};
    Status r = step.op->run(ctx, ins);
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
        for (int v : step.out) outs.push_back(&m.vals[static_cast<size_t>(v)]);
        options.onNode(NodeEvent{static_cast<int>(sIdx), nodeInfos_[sIdx], dur, outs});
      }
    }
    for (int v : m.releaseAfter[sIdx]) m.vals[static_cast<size_t>(v)] = Tensor{};
  }

  TensorMap result;
  if (failure.ok()) {
    for (int v : m.outputIds) {
      Tensor& t = m.vals[static_cast<size_t>(v)];
      const bool borrowed = !t.owner || m.isConst[static_cast<size_t>(v)] || m.isInput[static_cast<size_t>(v)] ||
                            m.root(v) != v;
      result[m.names[static_cast<size_t>(v)]] = borrowed ? t.clone() : std::move(t);
    }
  }
  // Drop every reference to inputs and intermediate values.
  for (size_t v = 0; v < m.vals.size(); ++v)
    if (!m.isConst[v]) m.vals[v] = Tensor{};
  if (!failure.ok()) return failure.error();
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
  for (size_t v = 0; v < impl_->vals.size(); ++v)
    if (impl_->isConst[v] && !impl_->stripped[v]) s += impl_->vals[v].bytes();
  for (const auto& n : nodeInfos_) s += n.packedBytes;
  return s;
}

size_t Session::scratchBytes() const { return impl_->scratch.bytes(); }

Status Session::writeCache(const fs::path& path, bool identifyModelFile) const {
  const Impl& m = *impl_;
  // Heavy nodes, in execution order. Names key the entries: a name used twice gets none.
  std::map<std::string, int> nameCount;
  for (const auto& step : m.steps)
    if (step.op->weights() && step.op->weights()->packed) ++nameCount[step.node->name()];
  std::vector<CacheEntry> entries;
  std::map<const onnx::NodeProto*, const WeightInfo*> cached;  // nodes with an entry
  for (size_t i = 0; i < m.steps.size(); ++i) {
    const WeightInfo* w = m.steps[i].op->weights();
    if (!w || !w->packed || nameCount[m.steps[i].node->name()] != 1) continue;
    const std::string& name = m.steps[i].node->name();
    if (m.pending && m.pendingVerify[i]) {
      // Never copy a payload this session has not checked into a new file.
      std::string why;
      if (!m.cache->verify(name, &why))
        return makeError("{}: node '{}': {}; load the model without this cache to write a new one",
                         m.cache->path().string(), name, why);
    }
    CacheEntry e;
    e.node = name;
    e.kernel = w->kernel;
    e.transform = w->transform;
    e.sources = w->sources;
    e.zeroFraction = w->zeroFraction;
    e.packed = w->packed;
    if (w->sourceCrcKnown) {
      e.sourceCrc = w->sourceCrc;
    } else {
      // Weights used in place: chain the CRC over the source tensors now.
      uint32_t crc = 0;
      for (const auto& src : w->sources) {
        const Tensor& t = m.vals[static_cast<size_t>(m.ids.at(src))];
        assert(t.data || t.size() == 0);
        crc = crc32c(t.data, t.bytes(), crc);
      }
      e.sourceCrc = crc;
    }
    entries.push_back(std::move(e));
    cached[m.steps[i].node] = w;
  }

  // The skeleton: large initializers whose every reader is a node with an entry
  // made from them lose their data.
  const auto& g = m.model.graph();
  std::set<std::string> keep;
  for (const auto& n : g.node()) {
    auto it = cached.find(&n);
    for (const auto& in : n.input())
      if (it == cached.end() || std::find(it->second->sources.begin(), it->second->sources.end(), in) ==
                                    it->second->sources.end())
        keep.insert(in);
  }
  for (const auto& o : g.output()) keep.insert(o.name());
  CacheModel cm;
  if (identifyModelFile) cm.identity = identity_;
  {
    onnx::ModelProto skeleton;
    skeleton.CopyFrom(m.model);
    for (auto& init : *skeleton.mutable_graph()->mutable_initializer()) {
      if (isStripped(init) || keep.count(init.name())) continue;
      auto dt = dtypeFromOnnx(init.data_type());
      if (!dt.ok() || init.data_location() == onnx::TensorProto::EXTERNAL) continue;
      int64_t n = 1;
      for (int64_t d : init.dims()) n *= d;
      if (static_cast<size_t>(n) * dtypeSize(*dt) <= kSkeletonStripBytes) continue;
      init.clear_raw_data();
      init.clear_float_data();
      init.clear_int32_data();
      init.clear_int64_data();
      init.clear_double_data();
      init.clear_uint64_data();
      init.set_data_location(onnx::TensorProto::EXTERNAL);
      auto* kv = init.add_external_data();
      kv->set_key("location");
      kv->set_value(kSkeletonStrippedLocation);
    }
    cm.skeleton = graph::serializeModel(skeleton);
  }
  return writeWeightCache(path, entries, cm);
}

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
  }
  return t;
}

}  // namespace zp::runtime
