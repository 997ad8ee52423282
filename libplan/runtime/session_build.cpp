// Building a session, one section at a time (Session::build reads as their list).
#include <algorithm>
#include <cassert>
#include <chrono>
#include <set>

#include "libplan/runtime/constant_fold.h"
#include "libplan/runtime/ops/attributes.h"
#include "libplan/runtime/session_impl.h"
#include "libplan/util/stats.h"

namespace zp::runtime {
namespace {
using Clock = SteadyClock;

int defaultDomainOpset(const onnx::ModelProto& model) {
  int opset = 13;
  for (const auto& o : model.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") opset = static_cast<int>(o.version());
  return opset;
}

// "a sequence" etc. for values that are not tensors; "" for tensors.
std::string nonTensorKind(const onnx::TypeProto& t) {
  if (t.has_tensor_type()) return "";
  if (t.has_sequence_type()) return "a sequence";
  if (t.has_optional_type()) return "an optional";
  if (t.has_map_type()) return "a map";
  if (t.has_sparse_tensor_type()) return "a sparse tensor";
  return "of no tensor type";
}

IoInfo ioInfoOf(const onnx::ValueInfoProto& vi) {
  IoInfo io;
  io.name = vi.name();
  for (const auto& d : vi.type().tensor_type().shape().dim())
    io.shape.push_back(d.has_dim_value() ? d.dim_value() : -1);
  return io;
}

// A graph input a run is given: a tensor of a dtype the runtime has.
Expected<IoInfo> runInputOf(const onnx::ValueInfoProto& vi, const std::string& label) {
  IoInfo io = ioInfoOf(vi);
  if (const std::string kind = nonTensorKind(vi.type()); !kind.empty())
    return makeError("{}: input '{}' is {}, not a tensor: the runtime runs tensors only", label, vi.name(), kind);
  auto dt = dtypeFromOnnx(vi.type().tensor_type().elem_type());
  if (!dt.ok()) return makeError("{}: input '{}': {}", label, vi.name(), dt.error().message);
  io.dtype = *dt;
  return io;
}

// A depthwise conv of the program: a Conv whose constant weight is [M, 1, kh, kw] in M groups.
bool isDepthwiseConv(const onnx::NodeProto& n, const ValueTable& values) {
  if (n.op_type() != "Conv" || n.input_size() < 2) return false;
  const Tensor* w = values.constant(n.input(1));
  const int64_t group = attrInt(n, "group", 1);
  return w && w->rank() == 4 && w->shape[1] == 1 && w->shape[0] == group && group > 1;
}

}  // namespace

Expected<std::vector<IoInfo>> modelInputs(const onnx::ModelProto& model, const std::string& label) {
  std::set<std::string> initializers;
  for (const auto& t : model.graph().initializer()) initializers.insert(t.name());
  std::vector<IoInfo> out;
  for (const auto& vi : model.graph().input()) {
    if (initializers.count(vi.name())) continue;
    ZP_ASSIGN_OR_RETURN(auto io, runInputOf(vi, label));
    out.push_back(std::move(io));
  }
  return out;
}

NodeInfo nodeInfoOf(const onnx::NodeProto& n, const Op& op) {
  NodeInfo info;
  info.name = n.name();
  info.opType = n.op_type();
  info.kernel = op.kernel();
  for (const auto& a : n.attribute())
    if (a.name() == graph::kFusedActivation) info.activation = a.s();
  if (const WeightInfo* w = op.weights()) {
    info.hasWeights = true;
    info.transform = w->transform;
    info.transformMs = w->transformMs;
    info.fromCache = w->fromCache;
    info.packedBytes = (w->packed ? w->packed->bytes() : 0) + w->libraryBytes;
    info.weightZeroFraction = w->zeroFraction;
  }
  return info;
}

class Session::Builder {
 public:
  Builder(Session& s, const SessionOptions& options, WeightSource& weights)
      : s_(s), m_(*s.impl_), options_(options), weights_(weights), view_(m_.model), shapes_(view_, m_.values, false) {}

  Status readInitializers();
  Status declareInputsAndOutputs();
  Status checkOperatorsSupported() const;
  Status foldConstants();
  void fuse();
  Status buildSteps();
  void blockChannels();
  Status checkSteps();
  void planMemory();

 private:
  Status buildStep(size_t index);
  void findDepthwiseNeighbours();
  BuildContext buildContext(const onnx::NodeProto& n, size_t index) const;
  void accountWeights(const WeightInfo& w, double opMs);
  Status checkSkeletonReads(const onnx::NodeProto& n, const Op& op) const;

  Session& s_;
  Impl& m_;
  const SessionOptions& options_;
  WeightSource& weights_;
  graph::GraphView view_;
  StaticShapes shapes_;    // constants' only, until declareInputsAndOutputs knows whether inputs are fixed
  int opset_ = defaultDomainOpset(m_.model);
  std::vector<int> live_;  // the model's nodes left after constant folding
  std::vector<bool> feedsDepthwise_, fedByDepthwise_;  // per program node (findDepthwiseNeighbours)
};

Status Session::Builder::readInitializers() {
  const auto t0 = Clock::now();
  std::vector<std::pair<int, ModelFileRef>> refs;
  ZP_TRY(loadInitializers(m_.model.graph(), weights_.fromCacheOnly, s_.label_, m_.values, &refs));
  if (!refs.empty() && weights_.modelPath.empty())
    return makeError("{}: the weight cache's skeleton refers to the model file, and there is none", s_.label_);
  m_.modelPath = weights_.modelPath;
  for (const auto& [v, where] : refs) {
    ModelRead& r = m_.modelReads.emplace_back();
    r.value = v;
    r.where = where;
  }
  // A cold schedule reads them in its pipeline; a warm session now.
  if (m_.execution->readsModelFileAtLoad())
    for (size_t i = 0; i < m_.modelReads.size(); ++i) {
      std::string why;
      if (!m_.readModelRef(i, &why).ok()) return makeError("{}: {}", s_.label_, why);
    }
  s_.stats_.readMs = msSince(t0);
  return {};
}

// Graph inputs (initializers aside) and outputs; shapes are static when every input's are.
Status Session::Builder::declareInputsAndOutputs() {
  const auto& g = m_.model.graph();
  bool inputsFixed = true;
  for (const auto& vi : g.input()) {
    if (m_.values.isConst[static_cast<size_t>(m_.values.id(vi.name()))]) continue;
    ZP_ASSIGN_OR_RETURN(IoInfo io, runInputOf(vi, s_.label_));
    inputsFixed = inputsFixed && vi.type().tensor_type().has_shape() &&
                  std::none_of(io.shape.begin(), io.shape.end(), [](int64_t d) { return d < 0; });
    const int v = m_.values.id(io.name);
    m_.values.isInput[static_cast<size_t>(v)] = true;
    m_.inputIds.push_back(v);
    s_.inputs_.push_back(io);
  }
  for (const auto& vi : g.output()) {
    IoInfo io = ioInfoOf(vi);
    auto dt = dtypeFromOnnx(vi.type().tensor_type().elem_type());
    io.dtype = dt.ok() ? *dt : DType::F32;
    const int v = m_.values.id(io.name);
    m_.values.isOutput[static_cast<size_t>(v)] = true;
    m_.outputIds.push_back(v);
    s_.outputs_.push_back(io);
  }
  shapes_ = StaticShapes(view_, m_.values, inputsFixed);
  return {};
}

// Unsupported operators are reported before any work.
Status Session::Builder::checkOperatorsSupported() const {
  for (int i : view_.topoOrder()) {
    const auto& n = view_.node(i);
    if (!isSupportedOp(n))
      return makeError("{}: node '{}': operator '{}{}' is not supported", s_.label_, n.name(),
                       n.domain().empty() ? "" : n.domain() + "::", n.op_type());
  }
  return {};
}

Status Session::Builder::foldConstants() {
  const auto t0 = Clock::now();
  FoldEnvironment env;
  env.opset = opset_;
  env.gemm = options_.gemm;
  env.scratch = &m_.scratch;
  env.label = s_.label_;
  ZP_ASSIGN_OR_RETURN(live_, runtime::foldConstants(view_, shapes_, env, m_.values));
  s_.stats_.foldMs = msSince(t0);
  return {};
}

void Session::Builder::fuse() {
  graph::FuseOptions fo;
  fo.batchNorm = options_.foldBatchNorm;
  fo.activations = options_.fuseActivations;
  fo.residual = options_.fuseActivations;  // an Add is an elementwise tail as the activations are
  m_.program = graph::fuseIntoHeavyNodes(m_.model.graph(), live_, constantLookup(m_.values), fo,
                                         graph::viewShapes(view_));
}

// Per node of the program, the Conv neighbours BuildContext tells a Conv of: whether
// output 0's one reader is a depthwise conv (as its input 0), and whether input 0, read
// by this node alone, is the output of a depthwise conv or of a Mul scaling one's (a
// squeeze-and-excite block).
void Session::Builder::findDepthwiseNeighbours() {
  const auto& g = m_.program.graph;
  const size_t n = static_cast<size_t>(g.node_size());
  feedsDepthwise_.assign(n, false);
  fedByDepthwise_.assign(n, false);
  if (!options_.channelBlocks || !m_.execution->blocksChannels()) return;
  std::map<std::string, std::vector<std::pair<size_t, int>>> readers;  // value -> (node, input index)
  std::map<std::string, size_t> writer;
  for (size_t i = 0; i < n; ++i) {
    const auto& node = g.node(static_cast<int>(i));
    for (int k = 0; k < node.input_size(); ++k)
      if (!node.input(k).empty()) readers[node.input(k)].emplace_back(i, k);
    if (node.output_size() > 0) writer[node.output(0)] = i;
  }
  auto onlyReader = [&](const std::string& v) -> std::optional<size_t> {
    const int id = m_.values.find(v);  // graph outputs have ids by now; other values may not yet
    if (id >= 0 && m_.values.isOutput[static_cast<size_t>(id)]) return std::nullopt;
    auto it = readers.find(v);
    if (it == readers.end() || it->second.size() != 1 || it->second[0].second != 0) return std::nullopt;
    return it->second[0].first;
  };
  for (size_t i = 0; i < n; ++i) {
    const auto& node = g.node(static_cast<int>(i));
    if (node.op_type() != "Conv" || node.output_size() == 0 || node.input_size() == 0) continue;
    if (auto r = onlyReader(node.output(0)); r && isDepthwiseConv(g.node(static_cast<int>(*r)), m_.values))
      feedsDepthwise_[i] = true;
    // Written by a depthwise conv, or by a squeeze-and-excite block's Mul scaling one's output.
    auto writtenByDepthwise = [&](const std::string& v) {
      auto w = writer.find(v);
      return w != writer.end() && isDepthwiseConv(g.node(static_cast<int>(w->second)), m_.values);
    };
    auto w = writer.find(node.input(0));
    if (w == writer.end() || onlyReader(node.input(0)) != i) continue;
    const auto& wn = g.node(static_cast<int>(w->second));
    fedByDepthwise_[i] = writtenByDepthwise(node.input(0)) ||
                         (wn.op_type() == "Mul" && wn.input_size() == 2 &&
                          (writtenByDepthwise(wn.input(0)) || writtenByDepthwise(wn.input(1))));
  }
}

Status Session::Builder::buildSteps() {
  const size_t n = static_cast<size_t>(m_.program.graph.node_size());
  findDepthwiseNeighbours();
  m_.execution->sizeSteps(n);
  for (size_t i = 0; i < n; ++i) ZP_TRY(buildStep(i));
  return {};
}

BuildContext Session::Builder::buildContext(const onnx::NodeProto& n, size_t index) const {
  BuildContext bc;
  bc.node = &n;
  bc.feedsDepthwise = feedsDepthwise_[index];
  bc.fedByDepthwise = fedByDepthwise_[index];
  bc.opset = opset_;
  bc.policy = &options_.kernels;
  bc.cache = m_.cache.get();
  bc.fromCacheOnly = weights_.fromCacheOnly;
  bc.cacheRejected = weights_.cacheRejected;
  bc.corruptNodes = weights_.corruptNodes;
  bc.warnings = &s_.warnings_;
  bc.threads = s_.threads_;
  bc.gemm = options_.gemm;
  bc.reorderForOneDnn = options_.gemm == GemmLibrary::OneDnn && m_.execution->reorderForOneDnn();
  bc.halfInputs = false;
  for (const auto& in : n.input()) {
    bc.constInputs.push_back(m_.values.constant(in));
    bc.inputShapes.push_back(in.empty() ? std::nullopt : shapes_.of(in));
    if (in.empty()) continue;
    const auto info = view_.tensorInfo(in);
    const int32_t t = info ? info->elemType : 0;
    bc.halfInputs = bc.halfInputs || t == 0 || t == onnx::TensorProto::FLOAT16 || t == onnx::TensorProto::BFLOAT16;
  }
  return bc;
}

// Load statistics of a heavy node: a cache hit, or a transform (a fallback when a
// cache could have held the node).
void Session::Builder::accountWeights(const WeightInfo& w, double opMs) {
  LoadStats& st = s_.stats_;
  if (w.fromCache) {
    st.cacheReadMs += opMs;
    ++st.cacheHits;
    return;
  }
  st.transformMs += opMs;
  if (w.cacheCorrupt || ((m_.cache || !weights_.cacheRejected.empty()) && w.transform != "none")) ++st.cacheFallbacks;
}

// Sessions from the skeleton: only heavy nodes built from the cache may read the
// weights the skeleton left out.
Status Session::Builder::checkSkeletonReads(const onnx::NodeProto& n, const Op& op) const {
  const WeightInfo* w = op.weights();
  for (const auto& in : n.input()) {
    const int v = in.empty() ? -1 : m_.values.find(in);
    // Read from the model file (a cold plan's cache points there) or left to the cache.
    if (v < 0 || !m_.values.stripped[static_cast<size_t>(v)] || m_.values.vals[static_cast<size_t>(v)].data) continue;
    if (!w || !w->fromCache || std::find(w->sources.begin(), w->sources.end(), in) == w->sources.end())
      return makeError("{}: node '{}' reads initializer '{}', which the skeleton leaves to the cache", s_.label_,
                       n.name(), in);
  }
  return {};
}

Status Session::Builder::buildStep(size_t index) {
  const auto& n = m_.program.graph.node(static_cast<int>(index));
  // A context for an op the execution builds later (on a worker: one thread).
  auto contextFor = [&](const KernelPolicy& policy, bool fromCache, std::vector<std::string>& warnings) {
    BuildContext bc = buildContext(n, index);
    bc.policy = &policy;
    bc.fromCacheOnly = fromCache;
    bc.cache = fromCache ? m_.cache.get() : nullptr;
    bc.cacheRejected.clear();
    bc.corruptNodes = nullptr;
    bc.warnings = &warnings;
    bc.threads = 1;
    return bc;
  };
  auto setup = m_.execution->setupStep(index, n, contextFor);
  if (!setup.ok()) return makeError("{}: {}", s_.label_, setup.error().message);
  const bool deferred = setup->deferredOp != nullptr;
  const auto t0 = Clock::now();
  auto op = deferred ? Expected<std::unique_ptr<Op>>(std::move(setup->deferredOp)) : createOp(buildContext(n, index));
  const double opMs = msSince(t0);
  if (!op.ok()) return makeError("{}: {}", s_.label_, op.error().message);
  if (const WeightInfo* w = (*op)->weights()) accountWeights(*w, opMs);
  if (weights_.fromCacheOnly && !deferred) ZP_TRY(checkSkeletonReads(n, **op));
  StepValues io;
  for (const auto& in : n.input()) io.in.push_back(in.empty() ? -1 : m_.values.id(in));
  for (const auto& o : n.output()) io.out.push_back(o.empty() ? -1 : m_.values.id(o));
  if ((*op)->isView() && io.in[0] >= 0 && io.out[0] >= 0)
    m_.values.aliasRoot[static_cast<size_t>(io.out[0])] = m_.values.root(io.in[0]);
  NodeInfo info = nodeInfoOf(n, **op);
  if (deferred) {
    info.hasWeights = true;
    info.transform = "pending";
  }
  const GemmLibrary gemm = setup->gemm.value_or(options_.gemm);
  s_.nodeInfos_.push_back(std::move(info));
  m_.steps.push_back(Step{std::move(*op), &n, m_.program.source[index], gemm});
  m_.flow.push_back(std::move(io));
  return {};
}

// A value passes channel-blocked where its writer can write it so (as output 0) and
// every reader can read it so (as its blockable input, once), and nothing else sees it
// (not a graph output, no view of it). An op whose blocked input and output go
// together (blocksTogether) has both blocked or neither: candidates are dropped until
// that holds.
void Session::Builder::blockChannels() {
  if (!options_.channelBlocks || !m_.execution->blocksChannels()) return;
  const size_t nv = m_.values.size(), n = m_.steps.size();
  std::vector<std::vector<std::pair<size_t, size_t>>> readers(nv);  // (step, input index)
  for (size_t s = 0; s < n; ++s)
    for (size_t i = 0; i < m_.flow[s].in.size(); ++i)
      if (const int v = m_.flow[s].in[i]; v >= 0) readers[static_cast<size_t>(v)].emplace_back(s, i);
  std::vector<char> blocked(nv, 0);
  for (size_t s = 0; s < n; ++s) {
    if (m_.flow[s].out.empty() || !m_.steps[s].op->takesBlockedOutput()) continue;
    const int v = m_.flow[s].out[0];
    if (v < 0) continue;
    const size_t vi = static_cast<size_t>(v);
    if (m_.values.isOutput[vi] || m_.values.root(v) != v || readers[vi].empty()) continue;
    blocked[vi] = std::all_of(readers[vi].begin(), readers[vi].end(), [&](const auto& r) {
      const auto in = m_.steps[r.first].op->blockableInput();
      return in == r.second && std::count(m_.flow[r.first].in.begin(), m_.flow[r.first].in.end(), v) == 1;
    });
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t s = 0; s < n; ++s) {
      const Op& op = *m_.steps[s].op;
      if (!op.blocksTogether() || !op.blockableInput() || m_.flow[s].out.empty()) continue;
      const int in = m_.flow[s].in[*op.blockableInput()], out = m_.flow[s].out[0];
      if (in < 0 || out < 0 || blocked[static_cast<size_t>(in)] == blocked[static_cast<size_t>(out)]) continue;
      blocked[static_cast<size_t>(in)] = blocked[static_cast<size_t>(out)] = 0;
      changed = true;
    }
  }
  for (size_t s = 0; s < n; ++s) {
    Op& op = *m_.steps[s].op;
    BlockedLayouts l;
    if (const auto in = op.blockableInput(); in && *in < m_.flow[s].in.size() && m_.flow[s].in[*in] >= 0)
      l.blockedInput = blocked[static_cast<size_t>(m_.flow[s].in[*in])];
    l.blockedOutput = !m_.flow[s].out.empty() && m_.flow[s].out[0] >= 0 && blocked[static_cast<size_t>(m_.flow[s].out[0])];
    if (!l.any()) continue;
    op.setLayouts(l);
    s_.nodeInfos_[s].blockedInput = l.blockedInput;
    s_.nodeInfos_[s].blockedOutput = l.blockedOutput;
  }
}

Status Session::Builder::checkSteps() {
  // Payload checksums of sessions from the cache are checked as each node first runs.
  m_.pendingVerify.assign(m_.steps.size(), 0);
  if (weights_.fromCacheOnly && m_.execution->readsModelFileAtLoad())  // a cold schedule's reads check them
    for (size_t i = 0; i < m_.steps.size(); ++i) {
      const WeightInfo* w = m_.steps[i].op->weights();
      if (w && w->fromCache) { m_.pendingVerify[i] = 1; ++m_.pending; }
    }
  for (int v : m_.outputIds)
    if (m_.values.stripped[static_cast<size_t>(v)])
      return makeError("{}: graph output '{}' is an initializer the skeleton leaves to the cache", s_.label_,
                       m_.values.names[static_cast<size_t>(v)]);
  // Outputs of steps that no one reads still need a slot.
  for (auto& io : m_.flow)
    for (auto& o : io.out)
      if (o < 0) o = m_.values.id("");  // shared sink for unnamed outputs (never read)
  // Graph outputs that are constants or inputs are returned as copies.
  for (int v : m_.outputIds) {
    const bool produced = std::any_of(m_.flow.begin(), m_.flow.end(), [&](const StepValues& io) {
      return std::find(io.out.begin(), io.out.end(), v) != io.out.end();
    });
    if (!produced && !m_.values.isConst[static_cast<size_t>(v)] && !m_.values.isInput[static_cast<size_t>(v)])
      return makeError("{}: graph output '{}' is not produced by any node", s_.label_,
                       m_.values.names[static_cast<size_t>(v)]);
  }
  return {};
}

// Lifetimes, and the arena when every planned value has a static size (else the
// first run's sizes make the plan).
void Session::Builder::planMemory() {
  m_.liveness = computeLiveness(m_.flow, m_.valueKinds());
  const size_t nv = m_.values.size();
  m_.staticBytes.assign(nv, 0);
  m_.seenBytes.assign(nv, 0);
  m_.layout.inArena.assign(nv, false);
  m_.layout.offset.assign(nv, 0);
  bool allKnown = shapes_.inputsFixed();
  for (const auto& io : m_.flow)
    for (int v : io.out) {
      if (!m_.values.plannable(v) || !allKnown) continue;
      auto info = view_.tensorInfo(m_.values.names[static_cast<size_t>(v)]);
      auto dt = info ? dtypeFromOnnx(info->elemType) : Expected<DType>(makeError("unknown"));
      if (!info || !info->hasShape || info->numElements() < 0 || !dt.ok()) { allKnown = false; break; }
      m_.staticBytes[static_cast<size_t>(v)] = static_cast<size_t>(info->numElements()) * dtypeSize(*dt);
    }
  if (allKnown) {
    s_.arenaBytes_ = m_.plan(m_.staticBytes);
    s_.planned_ = true;
  } else {
    m_.staticBytes.assign(nv, 0);
  }
}

// Reading the model (initializers, inputs, outputs), constant folding, fusion of
// BatchNormalization and activations into heavy nodes, one op per remaining node
// (kernel choice, weights transformed or from the cache), and the memory plan.
Expected<std::unique_ptr<Session>> Session::build(onnx::ModelProto model, const std::string& label,
                                                  const SessionOptions& options, WeightSource& weights,
                                                  std::unique_ptr<Execution> execution) {
  const auto tStart = Clock::now();
  std::unique_ptr<Session> s(new Session(std::make_unique<Impl>()));
  s->impl_->model = std::move(model);
  s->label_ = label;
  s->threads_ = std::max(1, options.threads);
  s->impl_->cache = std::move(weights.cache);
  if (weights.fromCacheOnly) assert(s->impl_->cache);
  const bool cold = execution != nullptr;
  s->impl_->execution = cold ? std::move(execution) : std::make_unique<WarmExecution>();
  if (!cold) s->stats_.cacheReadMs += weights.cacheOpenMs;

  Builder b(*s, options, weights);
  ZP_TRY(b.readInitializers());
  ZP_TRY(b.declareInputsAndOutputs());
  ZP_TRY(b.checkOperatorsSupported());
  ZP_TRY(b.foldConstants());
  b.fuse();
  const auto tBuild = Clock::now();
  ZP_TRY(b.buildSteps());
  b.blockChannels();
  ZP_TRY(b.checkSteps());
  b.planMemory();
  s->stats_.planMs = msSince(tBuild) - s->stats_.transformMs;
  s->stats_.totalMs = msSince(tStart);
  return s;
}

}  // namespace zp::runtime
