#include "libplan/runtime/serve/pinned_worker.h"

#include <future>
#include <latch>

namespace zp::runtime::serve {

Expected<std::unique_ptr<PinnedWorker>> PinnedWorker::start(const Processor& processor) {
  ZP_TRY(checkProcessor(processor));
  std::unique_ptr<PinnedWorker> w(new PinnedWorker(processor));
  std::promise<Status> pinned;
  auto pinnedResult = pinned.get_future();
  PinnedWorker* raw = w.get();
  w->thread_ = std::thread([raw, &pinned] {
    Status s = pinCurrentThread(raw->processor_);
    const bool ok = s.ok();
    pinned.set_value(std::move(s));
    if (ok) raw->loop();
  });
  Status s = pinnedResult.get();
  if (!s.ok()) {
    w->thread_.join();
    return s.error();
  }
  return w;
}

PinnedWorker::~PinnedWorker() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void PinnedWorker::post(std::function<void()> job, double rank) {
  {
    std::lock_guard lock(mutex_);
    queue_.emplace(std::make_pair(rank, posts_++), std::move(job));
  }
  wake_.notify_one();
}

void PinnedWorker::takeArrivals(DispatchDue dispatch) {
  {
    std::lock_guard lock(mutex_);
    dispatch_ = dispatch ? std::make_shared<const DispatchDue>(std::move(dispatch)) : nullptr;
    ++dispatchSets_;
  }
  wake_.notify_one();
}

void PinnedWorker::takeLateLast(Clock::time_point origin) {
  std::lock_guard lock(mutex_);
  deadlineOrigin_ = origin;
}

void PinnedWorker::runAndWait(const std::function<void()>& job) {
  std::latch done(1);
  post([&] {
    job();
    done.count_down();
  });
  done.wait();
}

void PinnedWorker::loop() {
  while (true) {
    std::function<void()> job;
    {
      std::unique_lock lock(mutex_);
      while (true) {
        auto nextDue = Clock::time_point::max();
        const uint64_t asked = dispatchSets_;
        if (auto dispatch = dispatch_) {
          lock.unlock();  // dispatching posts, to this worker too
          nextDue = (*dispatch)();
          lock.lock();
        }
        if (!queue_.empty()) break;
        if (stopping_) return;  // and nothing left
        // Idle until a post, a stop or a new dispatch, or until the next arrival falls due.
        const auto woken = [&] { return stopping_ || !queue_.empty() || dispatchSets_ != asked; };
        if (nextDue == Clock::time_point::max()) wake_.wait(lock, woken);
        else wake_.wait_until(lock, nextDue, woken);
      }
      auto next = queue_.begin();
      if (deadlineOrigin_) {
        const double nowMs = std::chrono::duration<double, std::milli>(Clock::now() - *deadlineOrigin_).count();
        if (auto onTime = queue_.lower_bound({nowMs, 0}); onTime != queue_.end()) next = onTime;
      }
      job = std::move(next->second);
      queue_.erase(next);
    }
    job();
  }
}

}  // namespace zp::runtime::serve
