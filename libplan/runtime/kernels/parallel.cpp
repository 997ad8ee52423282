#include "libplan/runtime/kernels/parallel.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include <omp.h>

#include "libplan/util/signals.h"

namespace zp::runtime {
namespace {

thread_local int tlsDepth = 0;  // > 0 inside a chunk: nested loops run serially
std::atomic<int> gMaxHelpers{1 << 30};

// A loop's chunks are split into one contiguous range per thread. Each thread runs
// its own range first and then takes what is left of the others': the chunk a thread
// runs is then mostly the one it ran in the loop before (same n and grain, as in
// back-to-back elementwise ops or convs split by pixels), so its operands are still
// in its own core's cache, where taking chunks from one shared counter hands about
// half of them to the other core (bench-shared-lines on a 2-core EPYC: reading lines
// the other core wrote takes 1.6x the time of one's own, writing lines both cores
// read 6.5x).
struct Job {
  static constexpr int kMaxRanges = 16;
  struct alignas(64) Range {
    std::atomic<int64_t> next{0};  // chunk index
    int64_t end = 0;
  };

  const std::function<void(int64_t, int64_t, int)>* fn = nullptr;
  int64_t n = 0, grain = 1;
  int threads = 1;
  int ranges = 1;
  std::atomic<int> inside{0};  // helpers working on this job
  Range range[kMaxRanges];

  void split() {
    const int64_t chunks = (n + grain - 1) / grain;
    ranges = static_cast<int>(std::min<int64_t>({threads, chunks, kMaxRanges}));
    for (int r = 0; r < ranges; ++r) {
      range[r].next.store(chunks * r / ranges, std::memory_order_relaxed);
      range[r].end = chunks * (r + 1) / ranges;
    }
  }

  void drain(int r, int worker) {
    for (;;) {
      const int64_t c = range[r].next.fetch_add(1, std::memory_order_relaxed);
      if (c >= range[r].end) break;
      const int64_t lo = c * grain;
      (*fn)(lo, std::min(n, lo + grain), worker);
    }
  }

  void work(int worker) {
    ++tlsDepth;
    const int own = worker % ranges;
    for (int k = 0; k < ranges; ++k) drain((own + k) % ranges, worker);
    --tlsDepth;
  }
};

class Pool {
 public:
  static Pool& instance() {
    static Pool* pool = new Pool();  // never destroyed: helpers may outlive static destructors
    return *pool;
  }

  void run(Job& job) {
    ensureHelpers(job.threads - 1);
    {
      std::lock_guard<std::mutex> lock(mu_);
      job_ = &job;
      gen_.fetch_add(1, std::memory_order_release);
      if (sleepers_ > 0) cv_.notify_all();
    }
    job.work(0);
    {
      // Helpers join under the mutex: once the job is withdrawn none can join.
      std::lock_guard<std::mutex> lock(mu_);
      job_ = nullptr;
    }
    for (int spins = 0; job.inside.load(std::memory_order_acquire) > 0; ++spins) {
      if (spins < 4096) cpuRelax();
      else std::this_thread::yield();
    }
  }

 private:
  // Spinning keeps back-to-back loops (one per operator) off the futex; after
  // about this many polls (tens of microseconds) a helper sleeps.
  static constexpr int kSpinPolls = 20000;

  void ensureHelpers(int count) {
    // Every loop asks; only a missing helper costs the lock and the signal mask (two
    // system calls, which on a paravirtualised guest cost microseconds per loop).
    if (spawned_.load(std::memory_order_acquire) >= count) return;
    std::lock_guard<std::mutex> lock(spawnMu_);
    const AsyncSignalsBlocked quiet;  // the helpers never take the process's signals
    // The generation before the caller publishes its job: a new helper joins that job.
    const uint64_t before = gen_.load(std::memory_order_acquire);
    while (static_cast<int>(helpers_.size()) < count) {
      const int worker = static_cast<int>(helpers_.size()) + 1;
      helpers_.emplace_back([this, worker, before] { helperLoop(worker, before); });
      helpers_.back().detach();
    }
    spawned_.store(static_cast<int>(helpers_.size()), std::memory_order_release);
  }

  void helperLoop(int worker, uint64_t seen) {
    omp_set_num_threads(1);  // GEMM libraries called from here stay on this thread
    for (;;) {
      for (int i = 0; i < kSpinPolls && gen_.load(std::memory_order_acquire) == seen; ++i) cpuRelax();
      Job* job = nullptr;
      {
        std::unique_lock<std::mutex> lock(mu_);
        if (gen_.load(std::memory_order_relaxed) == seen) {
          ++sleepers_;
          cv_.wait(lock, [&] { return gen_.load(std::memory_order_relaxed) != seen; });
          --sleepers_;
        }
        seen = gen_.load(std::memory_order_relaxed);
        if (job_ && worker < job_->threads) {
          job = job_;
          job->inside.fetch_add(1, std::memory_order_acq_rel);
        }
      }
      if (!job) continue;
      job->work(worker);
      job->inside.fetch_sub(1, std::memory_order_release);
    }
  }

  std::mutex mu_, spawnMu_;
  std::condition_variable cv_;
  Job* job_ = nullptr;  // guarded by mu_
  int sleepers_ = 0;    // guarded by mu_
  std::atomic<uint64_t> gen_{0};
  std::vector<std::thread> helpers_;  // guarded by spawnMu_
  std::atomic<int> spawned_{0};       // helpers_.size(), read without the lock
};

}  // namespace

void parallelFor(int threads, int64_t n, int64_t grain, const std::function<void(int64_t, int64_t, int)>& fn) {
  if (n <= 0) return;
  if (grain <= 0) grain = std::max<int64_t>(1, (n + 4 * threads - 1) / (4 * std::max(threads, 1)));
  if (threads <= 1 || n <= grain || tlsDepth > 0 || gMaxHelpers.load(std::memory_order_relaxed) == 0) {
    ++tlsDepth;
    for (int64_t lo = 0; lo < n; lo += grain) fn(lo, std::min(n, lo + grain), 0);
    --tlsDepth;
    return;
  }
  Job job;
  job.fn = &fn;
  job.n = n;
  job.grain = grain;
  job.threads = std::min(threads, gMaxHelpers.load(std::memory_order_relaxed) + 1);
  job.split();
  Pool::instance().run(job);
}

void capHelperThreads(int helpers) { gMaxHelpers.store(std::max(0, helpers), std::memory_order_relaxed); }

bool runtimeMayStartThreads() { return gMaxHelpers.load(std::memory_order_relaxed) > 0; }

}  // namespace zp::runtime
