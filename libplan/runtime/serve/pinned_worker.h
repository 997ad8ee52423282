// One thread per processor, pinned to exactly the processor's cores, running the
// jobs posted to it one at a time: of those queued, the one posted with the
// lowest rank first (a query's deadline, for earliest-deadline-first serving),
// equal ranks in the order they were posted (first come first served).
#pragma once
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <utility>
#include <memory>
#include <mutex>
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

  void post(std::function<void()> job, double rank = 0);
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
  uint64_t posts_ = 0;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace zp::runtime::serve
