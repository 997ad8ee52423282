#include "passes/measure/contention_probe.h"

#include <chrono>

#include "libplan/runtime/serve/processor.h"
#include "libplan/util/stats.h"

namespace zp::measure {
namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

struct Arrays {
  std::vector<double> a, b, c;
  explicit Arrays(size_t bytes) : a(bytes / 8, 0.0), b(bytes / 8, 1.0), c(bytes / 8, 2.0) {}
  // Triad over [from, to); returns the elements done.
  size_t triad(size_t from, size_t to) {
    for (size_t i = from; i < to; ++i) a[i] = b[i] + 3.0 * c[i];
    return to - from;
  }
};

// Spins without memory traffic for `ms` milliseconds.
void computeFor(double ms) {
  const auto t = Clock::now();
  volatile double x = 1.0;
  while (msSince(t) < ms)
    for (int k = 0; k < 256; ++k) x = x * 1.0000001 + 1e-9;
}

}  // namespace

Expected<double> streamBandwidth(const std::vector<int>& cores, double seconds, size_t arrayBytes) {
  ZP_ASSIGN_OR_RETURN(auto pin, runtime::serve::ScopedCorePin::pin("stream", cores));
  Arrays x(arrayBytes);
  x.triad(0, x.a.size());  // first touch
  size_t done = 0;
  const auto t = Clock::now();
  while (msSince(t) < seconds * 1000) done += x.triad(0, x.a.size());
  return 24.0 * static_cast<double>(done) / (msSince(t) * 1e6);
}

Expected<std::unique_ptr<StreamCoRunner>> StreamCoRunner::start(const std::vector<int>& cores, double duty,
                                                                size_t arrayBytes) {
  ZP_TRY(runtime::serve::checkCores("stream co-runner", cores));
  std::unique_ptr<StreamCoRunner> r(new StreamCoRunner());
  r->thread_ = std::thread([self = r.get(), cores, duty, arrayBytes] {
    auto pin = runtime::serve::ScopedCorePin::pin("stream co-runner", cores);  // checked above
    Arrays x(arrayBytes);
    x.triad(0, x.a.size());
    self->started_ = true;
    const size_t chunk = 4096;
    size_t done = 0, at = 0;
    const auto t0 = Clock::now();
    while (!self->stop_.load(std::memory_order_relaxed)) {
      const auto period = Clock::now();
      while (msSince(period) < duty) {  // stream for `duty` of each millisecond
        const size_t end = std::min(at + chunk, x.a.size());
        done += x.triad(at, end);
        at = end == x.a.size() ? 0 : end;
      }
      if (duty < 1) computeFor(1.0 - duty);
    }
    self->gbs_ = 24.0 * static_cast<double>(done) / (msSince(t0) * 1e6);
  });
  while (!r->started_) std::this_thread::yield();
  return r;
}

double StreamCoRunner::stop() {
  if (!stopped_) {
    stop_ = true;
    thread_.join();
    stopped_ = true;
  }
  return gbs_;
}

StreamCoRunner::~StreamCoRunner() { stop(); }

Expected<double> timeProbe(const std::function<Status()>& probe, const std::vector<int>& cores, int warmup, int repeat) {
  ZP_ASSIGN_OR_RETURN(auto pin, runtime::serve::ScopedCorePin::pin("probe", cores));
  for (int i = 0; i < warmup; ++i) ZP_TRY(probe());
  std::vector<double> ms;
  for (int i = 0; i < repeat; ++i) {
    const auto t = Clock::now();
    ZP_TRY(probe());
    ms.push_back(msSince(t));
  }
  return median(ms);
}

std::function<Status()> triadProbe(size_t arrayBytes) {
  auto x = std::make_shared<Arrays>(arrayBytes);
  return [x]() -> Status {
    x->triad(0, x->a.size());
    return {};
  };
}

}  // namespace zp::measure
