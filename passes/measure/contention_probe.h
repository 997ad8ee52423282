// Shared-memory contention on this host, measured PCCS-style (HaX-CoNN §3.3,
// what libplan/sim/concurrent/contention_fit.h turns into a surface): a
// STREAM-triad co-runner pinned to another processor's cores that streams for
// a share (`duty`) of every millisecond and computes without touching memory
// for the rest, its achieved bandwidth measured; and probes timed on their own
// processor alone and beside it.
#pragma once
#include <atomic>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "libplan/util/error.h"

namespace zp::measure {

// Triad (a = b + s c) bandwidth on `cores` alone for `seconds`, in GB/s
// (24 bytes per element: two reads and a write), arrays of `arrayBytes` each.
Expected<double> streamBandwidth(const std::vector<int>& cores, double seconds, size_t arrayBytes = 32u << 20);

class StreamCoRunner {
 public:
  static Expected<std::unique_ptr<StreamCoRunner>> start(const std::vector<int>& cores, double duty,
                                                         size_t arrayBytes = 32u << 20);
  ~StreamCoRunner();
  // Stops it; the GB/s it streamed over its whole run (idle shares included).
  double stop();

 private:
  StreamCoRunner() = default;
  std::thread thread_;
  std::atomic<bool> stop_{false}, started_{false};
  double gbs_ = 0;
  bool stopped_ = false;
};

// Median wall milliseconds of `repeat` calls of `probe` on the calling thread
// pinned to `cores`, after `warmup` calls.
Expected<double> timeProbe(const std::function<Status()>& probe, const std::vector<int>& cores, int warmup, int repeat);

// One triad pass over arrays of `arrayBytes` each, as a probe of high own demand.
std::function<Status()> triadProbe(size_t arrayBytes = 16u << 20);

}  // namespace zp::measure
