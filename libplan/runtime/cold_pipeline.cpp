#include "libplan/runtime/cold_pipeline.h"

#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <chrono>
#include <system_error>

#include "libplan/util/signals.h"

namespace zp::runtime {

const char* coldTaskKindName(ColdTask::Kind k) {
  switch (k) {
    case ColdTask::Kind::Read: return "read";
    case ColdTask::Kind::Transform: return "transform";
    case ColdTask::Kind::GemmStart: return "gemm-start";
    case ColdTask::Kind::Prefault: return "prefault";
    case ColdTask::Kind::WarmRead: return "warm-read";
    case ColdTask::Kind::WarmTransform: return "warm-transform";
    case ColdTask::Kind::WarmGemmStart: return "warm-gemm-start";
  }
  return "?";
}

namespace {

// Lowers the calling thread's priority (Linux: nice is per thread); best effort.
void beNicer(int nice) {
  if (nice > 0) ::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), nice);
}

// SCHED_IDLE: the thread runs only on a CPU nothing else wants. Best effort.
void setIdlePolicy(pthread_t thread, bool idle) {
  sched_param p{};
  pthread_setschedparam(thread, idle ? SCHED_IDLE : SCHED_OTHER, &p);
}

}  // namespace

ColdPipeline::ColdPipeline(std::vector<ColdTask> tasks, const ColdPipelineParams& params, Work work,
                           SteadyClock::time_point t0)
    : tasks_(std::move(tasks)), params_(params), work_(std::move(work)), t0_(t0) {
  params_.cores = std::max(1, params_.cores);
  // Without worker threads the warm tasks go to the one started after the cold run.
  queues_.resize(static_cast<size_t>(std::max(2, params_.cores)));
  for (size_t t = 0; t < tasks_.size(); ++t) {
    const ColdTask& k = tasks_[t];
    assert(std::all_of(k.deps.begin(), k.deps.end(), [&](int d) { return d >= 0 && static_cast<size_t>(d) < t; }));
    if (k.read()) {
      readQueue_.push_back(static_cast<int>(t));
    } else {
      const int core = std::clamp(k.plannedCore, 0, static_cast<int>(queues_.size()) - 1);
      queues_[static_cast<size_t>(core)].push_back(static_cast<int>(t));
    }
  }
  // Cold tasks before warm ones in every queue (the list keeps each class in order).
  auto coldFirst = [&](std::vector<int>& q) {
    std::stable_partition(q.begin(), q.end(), [&](int t) { return !tasks_[static_cast<size_t>(t)].warm(); });
  };
  coldFirst(readQueue_);
  for (auto& q : queues_) coldFirst(q);
  claimed_.assign(tasks_.size(), 0);
  done_.resize(tasks_.size());
  for (auto& d : done_) d.store(false);
  records_.resize(tasks_.size());
  remaining_ = static_cast<int>(tasks_.size());
  coldCoreTasks_ = static_cast<int>(
      std::count_if(tasks_.begin(), tasks_.end(), [](const ColdTask& k) { return !k.warm() && !k.read(); }));
}

ColdPipeline::~ColdPipeline() { stop(); }

void ColdPipeline::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (auto& th : threads_)
    if (th.joinable()) th.join();
}

void ColdPipeline::start() {
  if (!params_.pipelined) return;
  const AsyncSignalsBlocked quiet;  // helper threads leave the process's signals to the main thread
  try {
    threads_.emplace_back([this] { readerLoop(); });  // waits on the storage mostly: the executor's peer
    for (int c = 1; c < params_.cores; ++c)
      threads_.emplace_back([this, c] {
        beNicer(params_.helperNice);
        workerLoop(c);
      });
  } catch (const std::system_error&) {
    // Fewer threads: the executor steals what they would have done.
  }
}

bool ColdPipeline::runnable(int t) const {
  if (claimed_[static_cast<size_t>(t)]) return false;
  for (int d : tasks_[static_cast<size_t>(t)].deps)
    if (!done_[static_cast<size_t>(d)].load(std::memory_order_relaxed)) return false;
  return true;
}

// Cold work first: the worker's own queue, then the first runnable task of another
// core's queue. Warm work (§3.5) once no cold task planned on a core is left
// untaken, as the plan has it (reads are the storage's, not a core's) — for the
// background thread of a single-core plan, after the cold run. Then the next
// pending cold read, then the warm reads.
int ColdPipeline::pickForWorker(int core) {
  auto fromQueues = [&](bool warm) {
    auto inClass = [&](int t) { return tasks_[static_cast<size_t>(t)].warm() == warm; };
    for (int t : queues_[static_cast<size_t>(core)])
      if (inClass(t) && runnable(t)) return t;
    for (size_t c = 0; c < queues_.size(); ++c) {
      if (static_cast<int>(c) == core) continue;
      for (int t : queues_[c])
        if (inClass(t) && runnable(t)) return t;
    }
    return -1;
  };
  auto fromReads = [&](bool warm) {
    for (int t : readQueue_)
      if (tasks_[static_cast<size_t>(t)].warm() == warm && runnable(t)) return t;
    return -1;
  };
  const bool warmAllowed = coldCoreTasks_ == 0 && (params_.cores > 1 || coldOver_);
  for (int t : {fromQueues(false), warmAllowed ? fromQueues(true) : -1, fromReads(false),
                warmAllowed ? fromReads(true) : -1})
    if (t >= 0) return t;
  return -1;
}

void ColdPipeline::run(std::unique_lock<std::mutex>& lock, int t, int core) {
  const size_t i = static_cast<size_t>(t);
  claimed_[i] = 1;
  if (!tasks_[i].warm() && !tasks_[i].read()) --coldCoreTasks_;
  ColdTaskRecord& r = records_[i];
  r.core = core;
  r.stolen = core != tasks_[i].plannedCore;
  r.startMs = msSince(t0_);
  std::string failedDep;  // a task whose input failed does not run: it fails too
  for (int d : tasks_[i].deps)
    if (!records_[static_cast<size_t>(d)].error.empty()) failedDep = records_[static_cast<size_t>(d)].error;
  lock.unlock();
  Status s = failedDep.empty() ? work_(t, core) : Status(makeError("{}", failedDep));
  const double end = msSince(t0_);
  lock.lock();
  r.endMs = end;
  r.done = true;
  if (!s.ok()) r.error = s.error().message;
  done_[i].store(true, std::memory_order_release);
  --remaining_;
  cv_.notify_all();
}

void ColdPipeline::workerLoop(int core) {
  std::unique_lock<std::mutex> lock(mu_);
  if (params_.workerDelayMs > 0)
    cv_.wait_for(lock, std::chrono::duration<double, std::milli>(params_.workerDelayMs), [&] { return stopping_; });
  while (!stopping_ && remaining_ > 0) {
    const int t = pickForWorker(core);
    if (t < 0) {
      cv_.wait(lock);
      continue;
    }
    // Warm work during the cold run takes idle CPU time only (NNV12 §3.5: the little
    // cores' idle time); coldRunDone() lifts that for a warm task still running.
    const bool idle = tasks_[static_cast<size_t>(t)].warm() && !coldOver_;
    if (idle) setIdlePolicy(pthread_self(), true);
    run(lock, t, core);
    if (idle) {
      setIdlePolicy(pthread_self(), false);
      beNicer(params_.helperNice);
    }
  }
}

// The cold run's reads only: the warm kernels' reads are the workers' (they check
// payloads on a core the cold run does not need).
void ColdPipeline::readerLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (int t : readQueue_) {
    if (stopping_ || tasks_[static_cast<size_t>(t)].warm()) return;
    if (!claimed_[static_cast<size_t>(t)]) run(lock, t, -1);
  }
}

Status ColdPipeline::await(const std::vector<int>& needs) {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    bool all = true;
    int mine = -1;
    for (int t : needs) {
      if (done_[static_cast<size_t>(t)].load(std::memory_order_relaxed)) continue;
      all = false;
      if (mine < 0 && runnable(t)) mine = t;
    }
    if (all) break;
    if (mine >= 0) run(lock, mine, 0);
    else cv_.wait(lock);
  }
  for (int t : needs)
    if (!records_[static_cast<size_t>(t)].error.empty()) return makeError("{}", records_[static_cast<size_t>(t)].error);
  return {};
}

void ColdPipeline::coldRunDone() {
  std::lock_guard<std::mutex> lock(mu_);
  coldOver_ = true;
  for (size_t k = 1; k < threads_.size(); ++k) setIdlePolicy(threads_[k].native_handle(), false);  // workers
  cv_.notify_all();
  if (params_.pipelined && params_.cores > 1) return;
  bool warmLeft = false;
  for (size_t t = 0; t < tasks_.size(); ++t) warmLeft = warmLeft || (tasks_[t].warm() && !claimed_[t]);
  if (!warmLeft) return;
  const AsyncSignalsBlocked quiet;
  try {
    threads_.emplace_back([this] {
      beNicer(params_.helperNice);
      workerLoop(1);
    });
  } catch (const std::system_error&) {
    // No background thread: the warm kernels are never switched to.
  }
}

void ColdPipeline::waitAll() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return remaining_ == 0 || (threads_.empty() && !coldOver_); });
}

std::vector<ColdTaskRecord> ColdPipeline::records() const {
  std::lock_guard<std::mutex> lock(mu_);
  return records_;
}

int ColdPipeline::steals() const {
  std::lock_guard<std::mutex> lock(mu_);
  int n = 0;
  for (const auto& r : records_) n += r.done && r.stolen;
  return n;
}

}  // namespace zp::runtime
