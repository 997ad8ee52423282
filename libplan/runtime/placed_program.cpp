#include "libplan/runtime/placed_program.h"

#include <algorithm>
#include <cassert>
#include <limits>

#include "libplan/runtime/kernels/parallel.h"
#include "libplan/runtime/session_impl.h"
#include "libplan/util/stats.h"

namespace zp::runtime {
namespace {
using Clock = SteadyClock;
constexpr uint32_t kFailed = std::numeric_limits<uint32_t>::max();

// The steps of two sessions agree: the same nodes reading and writing the same tensors.
Status sameSteps(const Session::Impl& a, const Session::Impl& b, const std::string& label) {
  if (a.steps.size() != b.steps.size())
    return makeError("{}: the sessions run {} and {} steps: not the same model", label, a.steps.size(), b.steps.size());
  auto names = [](const Session::Impl& m, const std::vector<int>& ids) {
    std::vector<std::string> out;
    for (int v : ids) out.push_back(v < 0 ? std::string() : m.values.names[static_cast<size_t>(v)]);
    return out;
  };
  for (size_t s = 0; s < a.steps.size(); ++s) {
    const auto& na = *a.steps[s].node;
    const auto& nb = *b.steps[s].node;
    if (na.name() != nb.name() || na.op_type() != nb.op_type() || names(a, a.flow[s].in) != names(b, b.flow[s].in) ||
        names(a, a.flow[s].out) != names(b, b.flow[s].out))
      return makeError("{}: step {} is '{}' ({}) in one session and '{}' ({}) in another: not the same model", label, s,
                       na.name(), na.op_type(), nb.name(), nb.op_type());
  }
  return {};
}

}  // namespace

// Outputs go to the program's arena slots when they fit (else to the heap, and
// the next plan takes the sizes seen); views share their input's storage.
class PlacedProgram::Context : public ExecContext {
 public:
  explicit Context(PlacedProgram& prog) : prog_(prog) {}
  void setStep(size_t s) { step_ = s; }
  Tensor& alloc(size_t out, DType dtype, Shape shape) override {
    const int v = prog_.plan_[step_].out[out];
    if (v < 0) {  // nobody reads it: this processor's own scratch tensor
      sink_ = Tensor::empty(dtype, std::move(shape));
      return sink_;
    }
    const size_t vi = static_cast<size_t>(v);
    Tensor& t = prog_.vals_[vi];
    const size_t bytes = static_cast<size_t>(numel(shape)) * dtypeSize(dtype);
    prog_.seenBytes_[vi] = std::max(prog_.seenBytes_[vi], bytes);  // each value has one writer: no race
    if (prog_.layout_.inArena[vi] && bytes <= prog_.plannedBytes_[vi]) {
      t.dtype = dtype;
      t.shape = std::move(shape);
      t.data = static_cast<char*>(prog_.arena_.get()) + prog_.layout_.offset[vi];
      t.owner.reset();
    } else {
      t = Tensor::empty(dtype, std::move(shape));
      if (!prog_.kinds_.pinned[vi] && prog_.kinds_.aliasRoot[vi] == v) prog_.planDirty_ = true;
    }
    return t;
  }
  void alias(size_t out, const Tensor& src, Shape shape) override {
    const int v = prog_.plan_[step_].out[out];
    Tensor& t = v < 0 ? sink_ : prog_.vals_[static_cast<size_t>(v)];
    t = src;
    t.shape = std::move(shape);
  }

 private:
  PlacedProgram& prog_;
  size_t step_ = 0;
  Tensor sink_;
};

PlacedProgram::~PlacedProgram() = default;

Expected<std::unique_ptr<PlacedProgram>> PlacedProgram::create(std::vector<std::unique_ptr<Session>> sessions,
                                                               std::vector<int> placement,
                                                               const PlacedProgramParams& params) {
  if (sessions.empty()) return makeError("placed run: no sessions");
  assert(std::all_of(sessions.begin(), sessions.end(), [](const auto& s) { return s != nullptr; }));
  const std::string& label = sessions.front()->label();
  const Session::Impl& ref = *sessions.front()->impl_;
  for (size_t p = 1; p < sessions.size(); ++p) ZP_TRY(sameSteps(ref, *sessions[p]->impl_, label));
  if (placement.size() != ref.steps.size())
    return makeError("{}: the placement names {} steps, the model runs {}", label, placement.size(), ref.steps.size());
  for (const auto& [a, b] : params.exclusive)
    if (a < 0 || b < 0 || a >= static_cast<int>(sessions.size()) || b >= static_cast<int>(sessions.size()) || a == b)
      return makeError("{}: processors {} and {} cannot be exclusive of each other ({} processors)", label, a, b,
                       sessions.size());
  for (const auto& [s, t] : params.orderAfter)
    if (t < 0 || s <= t || s >= static_cast<int>(placement.size()))
      return makeError("{}: step {} cannot wait for step {} ({} steps; only for an earlier one)", label, s, t,
                       placement.size());
  for (size_t s = 0; s < placement.size(); ++s)
    if (placement[s] < 0 || placement[s] >= static_cast<int>(sessions.size()))
      return makeError("{}: step {} ('{}') is placed on processor {}, there are {}", label, s,
                       ref.steps[s].node->name(), placement[s], sessions.size());
  std::unique_ptr<PlacedProgram> prog(new PlacedProgram());
  prog->sessions_ = std::move(sessions);
  prog->placement_ = std::move(placement);
  prog->params_ = params;
  ZP_TRY(prog->build());
  return prog;
}

// Each session passes values channel-blocked between its own ops (Session::Builder::
// blockChannels). Where the ops that write and read a value, taken from the sessions
// of their processors, do not agree on its layout, every op of every session goes back
// to planes.
void PlacedProgram::agreeOnLayouts() {
  const Session::Impl& ref = *sessions_.front()->impl_;
  auto opOf = [&](size_t s) -> Op& { return *sessions_[static_cast<size_t>(placement_[s])]->impl_->steps[s].op; };
  std::vector<int> written(ref.values.size(), -1);  // per value: written blocked (1) or not (0)
  for (size_t s = 0; s < ref.steps.size(); ++s)
    if (!ref.flow[s].out.empty() && ref.flow[s].out[0] >= 0)
      written[static_cast<size_t>(ref.flow[s].out[0])] = opOf(s).layouts().blockedOutput ? 1 : 0;
  bool agree = true;
  for (size_t t = 0; t < ref.steps.size() && agree; ++t)
    for (size_t i = 0; i < ref.flow[t].in.size() && agree; ++i) {
      const int v = ref.flow[t].in[i];
      if (v < 0) continue;
      const bool read = opOf(t).blockableInput() == i && opOf(t).layouts().blockedInput;
      agree = read == (written[static_cast<size_t>(v)] == 1);
    }
  if (agree) return;
  for (auto& session : sessions_)
    for (size_t s = 0; s < session->impl_->steps.size(); ++s) {
      session->impl_->steps[s].op->setLayouts({});
      session->nodeInfos_[s].blockedInput = session->nodeInfos_[s].blockedOutput = false;
    }
}

Status PlacedProgram::build() {
  agreeOnLayouts();
  // Payloads of sessions built from a cache's skeleton are checked now, not while racing.
  for (auto& session : sessions_) {
    Session::Impl& m = *session->impl_;
    for (size_t s = 0; m.pending && s < m.steps.size(); ++s) {
      if (!m.pendingVerify[s]) continue;
      std::string why;
      if (!m.cache->verify(m.steps[s].node->name(), m.steps[s].op->weights()->kernel, &why))
        return makeError("{}: node '{}': {}", m.cache->path().string(), m.steps[s].node->name(), why);
      m.pendingVerify[s] = 0;
      --m.pending;
    }
  }
  const Session::Impl& ref = *sessions_.front()->impl_;
  const size_t n = ref.steps.size(), nv = ref.values.size();
  const int sink = ref.values.find("");
  kinds_ = ref.valueKinds();
  flow_ = ref.flow;
  order_.assign(sessions_.size(), {});
  plan_.assign(n, {});
  std::vector<int> producer(nv, -1);
  std::vector<std::vector<int>> after(n);
  std::vector<std::vector<int>> exclusiveOf(sessions_.size());
  for (const auto& [a, b] : params_.exclusive) {
    exclusiveOf[static_cast<size_t>(a)].push_back(b);
    exclusiveOf[static_cast<size_t>(b)].push_back(a);
  }
  spinUs_.clear();
  for (const auto& others : exclusiveOf) spinUs_.push_back(others.empty() ? params_.spinUs : params_.sharedCoreSpinUs);
  std::vector<std::vector<int>> ordered(n);
  for (const auto& [s, t] : params_.orderAfter) ordered[static_cast<size_t>(s)].push_back(t);
  std::vector<int> lastOn(sessions_.size(), -1);
  for (size_t s = 0; s < n; ++s) {
    const int p = placement_[s];
    const Session::Impl& m = *sessions_[static_cast<size_t>(p)]->impl_;
    StepPlan& sp = plan_[s];
    for (size_t i = 0; i < ref.flow[s].in.size(); ++i) {
      const int v = ref.flow[s].in[i];
      InputRef in;
      if (v >= 0 && ref.values.isConst[static_cast<size_t>(v)]) {
        assert(m.values.isConst[static_cast<size_t>(m.flow[s].in[i])]);
        in.constant = &m.values.vals[static_cast<size_t>(m.flow[s].in[i])];  // its own session's constant
      } else if (v >= 0) {
        in.value = v;
        const int t = producer[static_cast<size_t>(v)];
        if (t >= 0) {
          after[s].push_back(t);
          if (placement_[static_cast<size_t>(t)] != p &&
              std::find(sp.waitFor.begin(), sp.waitFor.end(), t) == sp.waitFor.end()) {
            sp.waitFor.push_back(t);
            plan_[static_cast<size_t>(t)].remoteConsumers = true;
          }
        }
      }
      sp.in.push_back(in);
    }
    handoffs_ += static_cast<int>(sp.waitFor.size());
    for (int t : ordered[s]) {
      after[s].push_back(t);
      if (placement_[static_cast<size_t>(t)] != p &&
          std::find(sp.waitFor.begin(), sp.waitFor.end(), t) == sp.waitFor.end()) {
        sp.waitFor.push_back(t);
        plan_[static_cast<size_t>(t)].remoteConsumers = true;
      }
    }
    for (int v : ref.flow[s].out) {
      sp.out.push_back(v == sink ? -1 : v);
      if (v >= 0 && v != sink) producer[static_cast<size_t>(v)] = static_cast<int>(s);
    }
    if (lastOn[static_cast<size_t>(p)] >= 0) after[s].push_back(lastOn[static_cast<size_t>(p)]);
    for (int q : exclusiveOf[static_cast<size_t>(p)]) {
      const int t = lastOn[static_cast<size_t>(q)];
      if (t < 0) continue;
      after[s].push_back(t);
      std::erase(sp.waitFor, t);  // it runs on these cores: wait without spinning
      sp.waitForCores.push_back(t);
      plan_[static_cast<size_t>(t)].remoteConsumers = true;
    }
    lastOn[static_cast<size_t>(p)] = static_cast<int>(s);
    order_[static_cast<size_t>(p)].push_back(static_cast<int>(s));
  }
  // The sink is written by several steps at once: each writes its own (Context::sink_).
  if (sink >= 0) kinds_.pinned[static_cast<size_t>(sink)] = true;
  lastUse_ = orderedLastUse(flow_, kinds_, after);
  seenBytes_.assign(nv, 0);
  planArena(ref.staticBytes);
  vals_.assign(nv, Tensor{});
  done_.reset(new std::atomic<uint32_t>[n]);
  for (size_t s = 0; s < n; ++s) done_[s].store(0);
  return {};
}

void PlacedProgram::planArena(const std::vector<size_t>& bytes) {
  plannedBytes_ = bytes;
  layout_ = layoutArena(flow_, kinds_, lastUse_, bytes);
  arena_ = layout_.bytes ? allocAligned(layout_.bytes) : nullptr;
}

const NodeInfo& PlacedProgram::node(size_t s) const {
  return sessions_[static_cast<size_t>(placement_[s])]->nodes()[s];
}

Status PlacedProgram::start(const TensorMap& inputs, bool profile) {
  const Session& ref = *sessions_.front();
  ZP_TRY(checkRunInputs(ref.label(), ref.inputs(), inputs));
  const auto& ids = ref.impl_->inputIds;
  for (size_t i = 0; i < ids.size(); ++i) vals_[static_cast<size_t>(ids[i])] = inputs.at(ref.inputs()[i].name);
  epoch_ = epoch_ + 1 == kFailed ? 1 : epoch_ + 1;
  if (failed_.exchange(false)) {
    for (size_t s = 0; s < placement_.size(); ++s) done_[s].store(0);  // kFailed must not read as any epoch
  }
  error_ = {};
  profile_ = profile;
  timings_.assign(profile ? placement_.size() : 0, PlacedStepTiming{});
  t0_ = Clock::now();
  return {};
}

double PlacedProgram::sinceStartMs(Clock::time_point t) const {
  return std::chrono::duration<double, std::milli>(t - t0_).count();
}

bool PlacedProgram::waitDone(int step, double spinUs) const {
  const auto& d = done_[static_cast<size_t>(step)];
  const auto t0 = Clock::now();
  const auto spin = std::chrono::duration<double, std::micro>(spinUs);
  for (;;) {
    const uint32_t v = d.load(std::memory_order_acquire);
    if (v == epoch_) return true;
    if (v == kFailed || failed_.load(std::memory_order_relaxed)) return false;
    if (Clock::now() - t0 < spin) {
      cpuRelax();
      continue;
    }
    d.wait(v, std::memory_order_acquire);
  }
}

void PlacedProgram::fail(Status error) {
  {
    std::lock_guard lock(errorMutex_);
    if (error_.ok()) error_ = std::move(error);
  }
  failed_ = true;
  // Wake every waiter: a step's value changes to kFailed, which none waits for.
  for (size_t s = 0; s < placement_.size(); ++s) {
    done_[s].store(kFailed, std::memory_order_release);
    done_[s].notify_all();
  }
}

void PlacedProgram::runProcessor(int p) {
  useSingleThreadedGemm();
  Session& session = *sessions_[static_cast<size_t>(p)];
  Session::Impl& m = *session.impl_;
  Context ctx(*this);
  ctx.threads = session.threads();
  ctx.gemm = session.options_.gemm;
  ctx.scratch = &m.scratch;
  std::vector<const Tensor*> ins;
  for (int s : order_[static_cast<size_t>(p)]) {
    const size_t si = static_cast<size_t>(s);
    const StepPlan& sp = plan_[si];
    const auto tWait = profile_ ? Clock::now() : Clock::time_point{};
    for (int t : sp.waitForCores)
      if (!waitDone(t, 0.0)) return;
    for (int t : sp.waitFor)
      if (!waitDone(t, spinUs_[static_cast<size_t>(p)])) return;
    if (failed_.load(std::memory_order_relaxed)) return;
    ins.clear();
    for (const auto& in : sp.in)
      ins.push_back(in.constant ? in.constant : in.value >= 0 ? &vals_[static_cast<size_t>(in.value)] : nullptr);
    ctx.setStep(si);
    const auto t0 = profile_ ? Clock::now() : Clock::time_point{};
    Status r = m.steps[si].op->run(ctx, ins);
    if (!r.ok()) {
      const auto& node = *m.steps[si].node;
      fail(makeError("{}: node '{}' ({}): {}", session.label(), node.name(), node.op_type(), r.error().message));
      return;
    }
    if (profile_) timings_[si] = PlacedStepTiming{s, p, sinceStartMs(tWait), sinceStartMs(t0), msSince(t0)};
    if (sp.remoteConsumers) {
      done_[si].store(epoch_, std::memory_order_release);
      done_[si].notify_all();
    }
  }
}

int PlacedProgram::soleProcessor() const {
  if (placement_.empty()) return -1;
  const int p = placement_.front();
  return std::all_of(placement_.begin(), placement_.end(), [p](int q) { return q == p; }) ? p : -1;
}

Expected<TensorMap> PlacedProgram::runSole(const TensorMap& inputs) {
  const int p = soleProcessor();
  assert(p >= 0);
  return sessions_[static_cast<size_t>(p)]->run(inputs);
}

Expected<TensorMap> PlacedProgram::finish() {
  const Session::Impl& ref = *sessions_.front()->impl_;
  TensorMap result;
  const bool failed = failed_.load();
  if (!failed) {
    for (int v : ref.outputIds) {
      const size_t vi = static_cast<size_t>(v);
      const std::string& name = ref.values.names[vi];
      if (ref.values.isConst[vi]) {
        result[name] = ref.values.vals[vi].clone();
        continue;
      }
      Tensor& t = vals_[vi];
      const bool borrowed = !t.owner || ref.values.isInput[vi] || kinds_.root(v) != v;
      result[name] = borrowed ? t.clone() : std::move(t);
    }
  }
  for (auto& t : vals_) t = Tensor{};
  if (failed) {
    std::lock_guard lock(errorMutex_);
    return error_.error();
  }
  if (planDirty_.exchange(false)) planArena(seenBytes_);
  return result;
}

}  // namespace zp::runtime
