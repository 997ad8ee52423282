#include "libplan/runtime/serve/executor.h"

#include <map>

#include <time.h>

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <optional>
#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <thread>

#include "libplan/runtime/measure.h"
#include "libplan/runtime/serve/pinned_worker.h"
#include "libplan/runtime/serve/residency.h"
#include "libplan/util/process_memory.h"

namespace zp::runtime::serve {

namespace {
using Clock = std::chrono::steady_clock;

double threadCpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
}

int64_t argmax(const Tensor& t) {
  const auto v = t.toF32();
  if (v.empty()) return -1;
  return static_cast<int64_t>(std::max_element(v.begin(), v.end()) - v.begin());
}

// One serving run: the workers, the residency manager and every query's state.
// Other processors' workers, each waiting in its queue's turn until released (on
// destruction at the latest), so that a run holding them has their cores.
class HeldWorkers {
 public:
  HeldWorkers() = default;
  HeldWorkers(const HeldWorkers&) = delete;
  HeldWorkers& operator=(const HeldWorkers&) = delete;
  ~HeldWorkers() { release(); }
  // Blocks until each of `processors`' workers has taken its hold in its queue's turn.
  void hold(const std::vector<int>& processors, std::vector<std::unique_ptr<PinnedWorker>>& workers, double rank) {
    if (processors.empty()) return;  // most runs hold nothing: no shared state on their path
    release_ = std::make_unique<std::promise<void>>();
    const std::shared_future<void> released = release_->get_future().share();
    std::vector<std::future<void>> taken;
    for (int h : processors) {
      auto gate = std::make_shared<std::promise<void>>();
      taken.push_back(gate->get_future());
      workers[static_cast<size_t>(h)]->post(
          [gate, released] {
            gate->set_value();
            released.wait();
          },
          rank);
    }
    for (auto& f : taken) f.wait();
  }
  void release() {
    if (release_) release_->set_value();
    release_.reset();
  }

 private:
  std::unique_ptr<std::promise<void>> release_;
};

class Server {
 public:
  Server(const ServeSetup& setup, SubgraphLoader& loader, const ArrivalTrace& trace, std::vector<int> taskOf)
      : setup_(setup), loader_(loader), trace_(trace), taskOf_(std::move(taskOf)) {}
  ~Server() { workers_.clear(); }  // joins the workers before the state their jobs use goes

  Status start();
  Status preload(bool warm);
  Expected<ServeResult> run(const ServeParams& params);
  void setAfterRun(std::function<void(const ExecSlice&, LoadedUnit&)> f) { afterRun_ = std::move(f); }
  void keepOutputs() { keepOutputs_ = true; }
  void profileRuns() { profileRuns_ = true; }
  void setOrder(ServingOrder order) { order_ = order; }

 private:
  double nowMs() const { return std::chrono::duration<double, std::milli>(Clock::now() - t0_).count(); }
  Expected<LoadedSubgraph> loadSlot(int slot);
  Clock::time_point dueAt(size_t arrival) const {
    return t0_ + std::chrono::nanoseconds(static_cast<int64_t>(trace_.arrivals[arrival].timeMs * 1e6));
  }
  // Admits or drops arrival i and posts its first position.
  void dispatch(size_t i, const ServeParams& params);
  // On a worker: dispatches the arrivals due by now; returns when the next one is due.
  Clock::time_point dispatchDue(const ServeParams& params);
  size_t dispatchClosedLoop(const ServeParams& params);
  void runPosition(int query, int position);
  Status runPositionOrFail(int query, int position);
  void finish(int query, bool completed);
  ServeResult collect();
  // Where a query's runs queue on a worker: its deadline earliest deadline first, else all alike.
  double rankOf(int query) const {
    if (order_ != ServingOrder::EarliestDeadline) return 0;
    const auto& rec = records_[static_cast<size_t>(query)];
    return rec.arrivalMs + setup_.tasks[static_cast<size_t>(rec.task)].sloMs;
  }

  const ServeSetup& setup_;
  SubgraphLoader& loader_;
  const ArrivalTrace& trace_;
  std::vector<int> taskOf_;  // trace task -> setup task
  std::vector<std::unique_ptr<PinnedWorker>> workers_;
  std::unique_ptr<ResidencyManager> residency_;
  // Per query, apart so that the records move into the result: what a query
  // measured, and its tensors while it is in flight (its sample's inputs and
  // every output so far; empty before and after).
  std::vector<QueryRecord> records_;
  std::vector<TensorMap> values_;
  bool keepOutputs_ = false, profileRuns_ = false;
  ServingOrder order_ = ServingOrder::FirstCome;
  std::vector<TensorMap> outputs_;                // with keepOutputs_: per query, its last position's outputs
  std::function<void(const ExecSlice&, LoadedUnit&)> afterRun_;
  std::vector<int> queueOf_;                      // setup task -> admission queue
  std::unique_ptr<std::atomic<int>[]> inFlight_;  // per queue: queries queued or running
  std::vector<std::vector<ExecSlice>> slices_;  // per processor, appended by its worker only
  Clock::time_point t0_;
  double preloadMs_ = 0;
  std::mutex doneMutex_;
  std::condition_variable doneCv_;
  size_t done_ = 0;
  std::optional<Error> error_;  // the first failure (under doneMutex_)
  std::atomic<bool> failed_{false};
  // Arrivals the workers have dispatched: those below nextArrival_. Dispatching
  // holds dispatchMutex_; once stopDispatch_ is set (under it) none follows.
  std::mutex dispatchMutex_;
  std::atomic<size_t> nextArrival_{0};
  bool stopDispatch_ = false;
};

Status Server::start() {
  ZP_ASSIGN_OR_RETURN(residency_, ResidencyManager::create(setup_.slots, setup_.memoryBudgetBytes));
  for (const auto& p : setup_.processors) {
    ZP_ASSIGN_OR_RETURN(auto worker, PinnedWorker::start(p));
    workers_.push_back(std::move(worker));
  }
  slices_.resize(setup_.processors.size());
  return {};
}

Expected<LoadedSubgraph> Server::loadSlot(int slot) {
  const auto& info = setup_.slots[static_cast<size_t>(slot)];
  auto loaded = loader_.load(slot, info, sessionOptions(setup_.processors[static_cast<size_t>(info.processor)]));
  if (!loaded.ok()) return makeError("subgraph '{}': {}", info.name, loaded.error().message);
  if (!loaded->unit) return makeError("subgraph '{}': the loader returned no unit", info.name);
  return loaded;
}

// Each processor loads its own preloaded slots on its pinned worker.
Status Server::preload(bool warm) {
  const auto t = Clock::now();
  std::vector<std::future<Status>> done;
  for (size_t p = 0; p < workers_.size(); ++p) {
    auto promise = std::make_shared<std::promise<Status>>();
    done.push_back(promise->get_future());
    workers_[p]->post([this, p, warm, promise] {
      for (size_t s = 0; s < setup_.slots.size(); ++s) {
        if (!setup_.slots[s].preload || setup_.slots[s].processor != static_cast<int>(p)) continue;
        auto loaded = loadSlot(static_cast<int>(s));
        if (!loaded.ok()) return promise->set_value(loaded.error());
        if (warm) {
          auto out = loaded->unit.run(randomInputs(loaded->unit.session(), 0));
          if (!out.ok()) return promise->set_value(makeError("subgraph '{}': {}", setup_.slots[s].name,
                                                             out.error().message));
        }
        residency_->installPreloaded(static_cast<int>(s), std::move(loaded).value());
      }
      promise->set_value(Status{});
    });
  }
  Status first;
  for (auto& f : done) {
    Status s = f.get();
    if (!s.ok() && first.ok()) first = s;
  }
  preloadMs_ = std::chrono::duration<double, std::milli>(Clock::now() - t).count();
  return first;
}

void Server::runPosition(int query, int position) {
  if (failed_) return finish(query, false);
  Status s = runPositionOrFail(query, position);
  if (s.ok()) return;
  {
    std::lock_guard lock(doneMutex_);
    if (!error_) error_ = s.error();
    failed_ = true;
  }
  finish(query, false);
}

Status Server::runPositionOrFail(int query, int position) {
  auto& rec = records_[static_cast<size_t>(query)];
  auto& values = values_[static_cast<size_t>(query)];
  const auto& task = setup_.tasks[static_cast<size_t>(rec.task)];
  const int slot = task.slots[static_cast<size_t>(position)];
  const int proc = setup_.slots[static_cast<size_t>(slot)].processor;
  auto& slices = slices_[static_cast<size_t>(proc)];
  const double picked = nowMs(), pickedCpu = threadCpuMs();
  if (position == 0) rec.startMs = picked;
  ZP_ASSIGN_OR_RETURN(auto lease, residency_->acquire(slot, [&] { return loadSlot(slot); }));
  if (lease.loaded) {
    const double end = nowMs();
    slices.push_back({ExecSlice::Kind::Load, proc, query, rec.task, position, slot, end - lease.loadMs, end,
                      threadCpuMs() - pickedCpu});
    rec.loadMs += lease.loadMs;
  }
  for (const auto& stage : task.stages)
    if (stage.position == position) {
      const auto sample = static_cast<size_t>(trace_.arrivals[static_cast<size_t>(query)].sample);
      for (const auto& [name, t] : stage.samples[sample % stage.samples.size()]) values[name] = t;
    }
  TensorMap inputs;
  for (const auto& io : lease.unit->inputs()) {
    auto it = values.find(io.name);
    if (it == values.end()) {
      residency_->release(slot);
      return makeError("subgraph '{}': input '{}' is not produced by an earlier position",
                       setup_.slots[static_cast<size_t>(slot)].name, io.name);
    }
    inputs.emplace(io.name, it->second);
  }
  HeldWorkers held;
  held.hold(setup_.slots[static_cast<size_t>(slot)].holds, workers_, rankOf(query));
  const double runStart = nowMs(), runStartCpu = threadCpuMs();
  auto outputs = lease.unit->run(inputs, profileRuns_);
  const double runEnd = nowMs(), runCpu = threadCpuMs() - runStartCpu;
  held.release();
  const std::string firstOutput = !task.answerOutput.empty() ? task.answerOutput
                                  : lease.unit->outputs().empty() ? ""
                                                                  : lease.unit->outputs()[0].name;
  const ExecSlice run{ExecSlice::Kind::Run, proc, query, rec.task, position, slot, runStart, runEnd, runCpu};
  if (outputs.ok() && afterRun_) afterRun_(run, *lease.unit);
  residency_->release(slot);
  if (!outputs.ok()) return makeError("subgraph '{}': {}", setup_.slots[static_cast<size_t>(slot)].name,
                                      outputs.error().message);
  slices.push_back(run);
  const bool last = position + 1 == static_cast<int>(task.slots.size());
  if (last && keepOutputs_) outputs_[static_cast<size_t>(query)] = *outputs;  // tensors share storage
  for (auto& [name, t] : *outputs) values[name] = std::move(t);
  if (!last) {
    const int next = setup_.slots[static_cast<size_t>(task.slots[static_cast<size_t>(position + 1)])].processor;
    workers_[static_cast<size_t>(next)]->post([this, query, position] { runPosition(query, position + 1); },
                                              rankOf(query));
    return {};
  }
  rec.finishMs = runEnd;
  const auto answer = firstOutput.empty() ? values.end() : values.find(firstOutput);
  if (!firstOutput.empty() && answer == values.end())
    return makeError("subgraph '{}': has no output '{}' to answer task '{}' with", setup_.slots[static_cast<size_t>(slot)].name,
                     firstOutput, task.name);
  rec.predicted = answer == values.end() ? -1 : argmax(answer->second);
  finish(query, true);
  return {};
}

void Server::finish(int query, bool completed) {
  auto& rec = records_[static_cast<size_t>(query)];
  rec.completed = completed;
  values_[static_cast<size_t>(query)] = TensorMap();  // its tensors go now: memory follows the queries in flight
  if (!rec.dropped) --inFlight_[static_cast<size_t>(queueOf_[static_cast<size_t>(rec.task)])];
  std::lock_guard lock(doneMutex_);
  ++done_;
  doneCv_.notify_all();
}

Expected<ServeResult> Server::run(const ServeParams& params) {
  records_.resize(trace_.arrivals.size());
  values_.resize(trace_.arrivals.size());
  if (keepOutputs_) outputs_.resize(trace_.arrivals.size());
  for (size_t i = 0; i < trace_.arrivals.size(); ++i) {
    const auto& a = trace_.arrivals[i];
    auto& rec = records_[i];
    rec.query = static_cast<int>(i);
    rec.task = taskOf_[static_cast<size_t>(a.task)];
    rec.sample = a.sample;
    rec.arrivalMs = a.timeMs;
    const auto& task = setup_.tasks[static_cast<size_t>(rec.task)];
    if (!task.labels.empty()) rec.label = task.labels[static_cast<size_t>(a.sample)];
  }
  std::map<std::string, int> queues;
  for (const auto& t : setup_.tasks)
    queueOf_.push_back(queues.emplace(t.queue.empty() ? t.name : t.queue, static_cast<int>(queues.size())).first->second);
  inFlight_ = std::make_unique<std::atomic<int>[]>(queues.size());
  t0_ = Clock::now() + std::chrono::microseconds(static_cast<int64_t>(params.startLeadMs * 1000));
  if (order_ == ServingOrder::EarliestDeadline)
    for (auto& w : workers_) w->takeLateLast(t0_);
  size_t dispatched = 0;
  if (params.closedLoop) {
    dispatched = dispatchClosedLoop(params);
  } else {
    for (auto& w : workers_) w->takeArrivals([this, &params] { return dispatchDue(params); });
    std::unique_lock lock(doneMutex_);
    doneCv_.wait(lock, [&] { return done_ == records_.size() || failed_; });
    lock.unlock();
    {
      std::lock_guard stop(dispatchMutex_);
      stopDispatch_ = true;
      dispatched = nextArrival_;
    }
    for (auto& w : workers_) w->takeArrivals({});
  }
  {
    // After a failure the queries not dispatched never finish; every dispatched one does.
    std::unique_lock lock(doneMutex_);
    doneCv_.wait(lock, [&] { return done_ == dispatched; });
    if (error_) return *error_;
  }
  return collect();
}

void Server::dispatch(size_t i, const ServeParams& params) {
  auto& rec = records_[i];
  const auto& task = setup_.tasks[static_cast<size_t>(rec.task)];
  auto& inFlight = inFlight_[static_cast<size_t>(queueOf_[static_cast<size_t>(rec.task)])];
  if (inFlight >= params.maxQueuedPerTask) {
    rec.dropped = true;
    return finish(static_cast<int>(i), false);
  }
  ++inFlight;
  values_[i] = task.samples[static_cast<size_t>(trace_.arrivals[i].sample)];
  const int proc = setup_.slots[static_cast<size_t>(task.slots[0])].processor;
  rec.postedMs = nowMs();
  workers_[static_cast<size_t>(proc)]->post([this, i] { runPosition(static_cast<int>(i), 0); },
                                            rankOf(static_cast<int>(i)));
}

Clock::time_point Server::dispatchDue(const ServeParams& params) {
  const size_t n = trace_.arrivals.size();  // not records_: they move into the result while a call may end
  size_t i = nextArrival_.load();
  if (i >= n) return Clock::time_point::max();
  if (dueAt(i) > Clock::now()) return dueAt(i);  // the common case between jobs: nothing due, no lock
  std::lock_guard lock(dispatchMutex_);
  if (stopDispatch_) return Clock::time_point::max();
  const auto now = Clock::now();
  for (i = nextArrival_; i < n && dueAt(i) <= now && !failed_; ++i) dispatch(i, params);
  nextArrival_ = i;
  return i < n && !failed_ ? dueAt(i) : Clock::time_point::max();
}

// A run rather than a workload: this thread dispatches each query once the one before it has ended.
size_t Server::dispatchClosedLoop(const ServeParams& params) {
  size_t dispatched = 0;
  for (; dispatched < records_.size() && !failed_; ++dispatched) {
    std::this_thread::sleep_until(dueAt(dispatched));
    {
      std::unique_lock lock(doneMutex_);
      doneCv_.wait(lock, [&] { return done_ == dispatched || failed_; });
      if (failed_) break;
    }
    records_[dispatched].arrivalMs = nowMs();
    dispatch(dispatched, params);
  }
  return dispatched;
}

ServeResult Server::collect() {
  ServeResult r;
  for (const auto& p : setup_.processors) r.processors.push_back(p.name);
  for (const auto& t : setup_.tasks) r.tasks.push_back(t.name);
  for (const auto& s : setup_.slots) r.slots.push_back(s.name);
  std::vector<double> sloMs;
  std::vector<bool> accuracyMet;
  for (const auto& t : setup_.tasks) {
    sloMs.push_back(t.sloMs);
    accuracyMet.push_back(t.accuracySloMet);
  }
  values_ = {};
  for (auto& rec : records_) {
    rec.latencyMs = rec.completed ? rec.finishMs - rec.arrivalMs : 0;
    rec.sloMet = sloMet({rec.arrivalMs, rec.finishMs, rec.completed, sloMs[static_cast<size_t>(rec.task)],
                         accuracyMet[static_cast<size_t>(rec.task)]});
    rec.correct = rec.label >= 0 && rec.predicted == rec.label;
    if (rec.label >= 0) ++r.labelled;
    if (rec.correct) ++r.correct;
    r.dropped += rec.dropped;
  }
  r.queries = std::move(records_);
  for (const auto& per : slices_) r.slices.insert(r.slices.end(), per.begin(), per.end());
  std::stable_sort(r.slices.begin(), r.slices.end(), [](const ExecSlice& a, const ExecSlice& b) {
    return a.startMs != b.startMs ? a.startMs < b.startMs : a.processor < b.processor;
  });
  r.summary = summarize(r.queries, sloMs, accuracyMet);
  r.peakRssBytes = peakRssBytes();
  r.peakResidentBytes = residency_->peakResidentBytes();
  r.loads = residency_->loads();
  r.evictions = residency_->evictions();
  r.overBudgetLoads = residency_->overBudgetLoads();
  r.preloadMs = preloadMs_;
  r.outputs = std::move(outputs_);
  return r;
}

}  // namespace

Status checkSetup(const ServeSetup& setup) {
  if (setup.processors.empty()) return makeError("serve: no processors");
  for (size_t p = 0; p < setup.processors.size(); ++p) {
    ZP_TRY(checkProcessor(setup.processors[p]));
    for (size_t o = 0; o < p; ++o)
      if (setup.processors[o].name == setup.processors[p].name)
        return makeError("serve: processor '{}' is named twice", setup.processors[p].name);
  }
  const int P = static_cast<int>(setup.processors.size()), S = static_cast<int>(setup.slots.size());
  for (const auto& s : setup.slots) {
    if (s.processor < 0 || s.processor >= P)
      return makeError("serve: subgraph '{}' is on processor {}, of {}", s.name, s.processor, P);
    if (s.bytes < 0) return makeError("serve: subgraph '{}' has negative size {}", s.name, s.bytes);
    // Held processors above the runner's, in order: two runs holding each other's workers never wait on each other.
    for (size_t h = 0; h < s.holds.size(); ++h)
      if (s.holds[h] <= s.processor || s.holds[h] >= P || (h > 0 && s.holds[h] <= s.holds[h - 1]))
        return makeError("serve: subgraph '{}' on processor {} holds processor {}: held processors must be above its "
                         "own, ascending, of {}", s.name, s.processor, s.holds[h], P);
  }
  if (setup.memoryBudgetBytes < 0) return makeError("serve: negative memory budget {}", setup.memoryBudgetBytes);
  for (const auto& t : setup.tasks) {
    if (t.slots.empty()) return makeError("serve: task '{}' has no positions", t.name);
    for (int s : t.slots)
      if (s < 0 || s >= S) return makeError("serve: task '{}' names subgraph {}, of {}", t.name, s, S);
    if (t.samples.empty()) return makeError("serve: task '{}' has no dataset samples", t.name);
    for (const auto& stage : t.stages)
      if (stage.position <= 0 || stage.position >= static_cast<int>(t.slots.size()) || stage.samples.empty())
        return makeError("serve: task '{}': a stage at position {} of {}, with {} samples", t.name, stage.position,
                         t.slots.size(), stage.samples.size());
    if (!t.labels.empty() && t.labels.size() != t.samples.size())
      return makeError("serve: task '{}' has {} labels for {} samples", t.name, t.labels.size(), t.samples.size());
    if (!(t.sloMs > 0) || !std::isfinite(t.sloMs))
      return makeError("serve: task '{}': latency SLO {} ms is not a positive finite number", t.name, t.sloMs);
  }
  return {};
}

Status checkTraceSize(const ArrivalTrace& trace) {
  if (trace.arrivals.size() > kMaxServedArrivals)
    return makeError("arrivals: {} queries; one serving run takes at most {} (split the trace, or fewer --count)",
                     trace.arrivals.size(), kMaxServedArrivals);
  return {};
}

Expected<ServeResult> serve(const ServeSetup& setup, SubgraphLoader& loader, const ArrivalTrace& trace,
                            const ServeParams& params) {
  ZP_TRY(checkSetup(setup));
  ZP_TRY(checkTraceSize(trace));
  if (params.maxQueuedPerTask < 1) return makeError("serve: the queue per task holds {} queries, below 1", params.maxQueuedPerTask);
  std::vector<int> taskOf;
  for (const auto& name : trace.tasks) {
    auto it = std::find_if(setup.tasks.begin(), setup.tasks.end(), [&](const ServeTask& t) { return t.name == name; });
    if (it == setup.tasks.end()) return makeError("arrivals: task '{}' is not served", name);
    taskOf.push_back(static_cast<int>(it - setup.tasks.begin()));
  }
  for (const auto& a : trace.arrivals) {
    if (a.task < 0 || a.task >= static_cast<int>(taskOf.size()))
      return makeError("arrivals: task index {} is out of range", a.task);
    const auto& t = setup.tasks[static_cast<size_t>(taskOf[static_cast<size_t>(a.task)])];
    if (a.sample < 0 || a.sample >= static_cast<int>(t.samples.size()))
      return makeError("arrivals: sample {} is outside the {} samples of task '{}'", a.sample, t.samples.size(),
                       t.name);
    if (!(a.timeMs >= 0) || !std::isfinite(a.timeMs)) return makeError("arrivals: time {} is not valid", a.timeMs);
  }
  resetPeakRss();
  Server server(setup, loader, trace, std::move(taskOf));
  if (params.afterRun) server.setAfterRun(params.afterRun);
  if (params.keepOutputs) server.keepOutputs();
  if (params.profileRuns) server.profileRuns();
  server.setOrder(params.order);
  ZP_TRY(server.start());
  ZP_TRY(server.preload(params.warmPreloaded));
  return server.run(params);
}

}  // namespace zp::runtime::serve
