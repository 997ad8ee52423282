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
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and nothing left
      job = std::move(queue_.begin()->second);
      queue_.erase(queue_.begin());
    }
    job();
  }
}

}  // namespace zp::runtime::serve
