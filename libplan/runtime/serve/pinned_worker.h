// One thread per processor, pinned to exactly the processor's cores, running the
// jobs posted to it one at a time in the order they were posted (FIFO).
#pragma once
#include <condition_variable>
#include <deque>
#include <functional>
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

  void post(std::function<void()> job);
  // Posts `job` and blocks until the worker has run it (and what was queued before).
  void runAndWait(const std::function<void()>& job);
  const Processor& processor() const { return processor_; }

 private:
  explicit PinnedWorker(Processor processor) : processor_(std::move(processor)) {}
  void loop();
  Processor processor_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace zp::runtime::serve
