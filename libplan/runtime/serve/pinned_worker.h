// One thread per processor, pinned to exactly the processor's cores, running the
// jobs posted to it one at a time: of those queued, the one posted with the
// lowest rank first (a query's deadline, for earliest-deadline-first serving),
// equal ranks in the order they were posted (first come first served).
// A worker can also take arrivals on (takeArrivals): before each job, and when
// the next one falls due while it is idle, it calls the server's dispatch, so
// that no thread beside the workers needs a core to hand a query on.
#pragma once
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <utility>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "libplan/runtime/serve/processor.h"

namespace zp::runtime::serve {

class PinnedWorker {
 public:
  // Checks the processor, starts its thread and pins it; an error (cores not on
  // this machine, pinning refused) leaves no thread behind.
  static Expected<std::unique_ptr<PinnedWorker>> start(const Processor& processor);
  ~PinnedWorker();  // runs what is queued, then joins
  PinnedWorker(const PinnedWorker&) = delete;
  PinnedWorker& operator=(const PinnedWorker&) = delete;

  using Clock = std::chrono::steady_clock;
  // Posts the arrivals due by now (to any worker, this one included) and returns
  // when the next one falls due (Clock::time_point::max(): none is left).
  using DispatchDue = std::function<Clock::time_point()>;

  void post(std::function<void()> job, double rank = 0);
  // From now on the ranks are deadlines, in ms since `origin`: a job whose
  // deadline has passed when the worker takes its next job waits behind every
  // queued one whose deadline has not (serving_order.h: late ones last).
  void takeLateLast(Clock::time_point origin);
  // From now on the worker calls `dispatch` before it takes each job and, idle,
  // wakes when the next arrival falls due; an empty function stops that. A call
  // under way may end after this returns: what `dispatch` uses must outlive the worker.
  void takeArrivals(DispatchDue dispatch);
  // Posts `job` and blocks until the worker has run it (and what was queued before).
  void runAndWait(const std::function<void()>& job);
  const Processor& processor() const { return processor_; }

 private:
  explicit PinnedWorker(Processor processor) : processor_(std::move(processor)) {}
  void loop();
  Processor processor_;
  std::mutex mutex_;
  std::condition_variable wake_;
  // (rank, post number) -> job: the first entry runs next.
  std::map<std::pair<double, uint64_t>, std::function<void()>> queue_;
  std::shared_ptr<const DispatchDue> dispatch_;  // shared: called outside mutex_ while it may be replaced
  std::optional<Clock::time_point> deadlineOrigin_;  // set: ranks are deadlines, late ones taken last
  uint64_t dispatchSets_ = 0;                    // takeArrivals calls: an idle worker asks a new dispatch
  uint64_t posts_ = 0;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace zp::runtime::serve
