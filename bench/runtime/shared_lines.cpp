// What a cache line another core holds costs this host: per buffer size, the time to
// read and to write a buffer whose lines this core wrote last, whose lines the other
// core wrote last, and whose lines the other core has read since this core wrote them
// (both caches hold them then). Two threads, pinned to the two CPUs given; medians
// over --reps rounds. A parallel loop pays these wherever an op's thread reads what
// another thread wrote, or writes memory both threads read before (the runtime's
// arena reuses a freed value's bytes for the next one).
//
//   build/bin/bench-shared-lines [--cpus 0 1] [--reps 50]
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "bench/runtime/pin_thread.h"

namespace {

using zp::bench::pinTo;

using Clock = std::chrono::steady_clock;

double usSince(Clock::time_point t0) { return std::chrono::duration<double, std::micro>(Clock::now() - t0).count(); }

// Summed with several accumulators so that the loop is bound by the loads, not the adds.
float readAll(const float* p, size_t n) {
  float s[8] = {};
  for (size_t i = 0; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; ++k) s[k] += p[i + static_cast<size_t>(k)];
  float t = 0;
  for (float v : s) t += v;
  return t;
}

void writeAll(float* p, size_t n, float v) {
  for (size_t i = 0; i < n; ++i) p[i] = v;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The other thread's side: a step number it waits for, then an action, then it
// reports the step done. Steps are posted one at a time.
struct Peer {
  std::atomic<int> posted{0}, done{0};
  int action = 0;  // 1: read the buffer, 2: write it
  float* buf = nullptr;
  size_t n = 0;
  std::atomic<bool> quit{false};
  volatile float sink = 0;

  void loop(int cpu) {
    pinTo(cpu);
    int seen = 0;
    while (!quit.load(std::memory_order_acquire)) {
      const int step = posted.load(std::memory_order_acquire);
      if (step == seen) continue;
      if (action == 1) sink = readAll(buf, n);
      else writeAll(buf, n, static_cast<float>(step));
      seen = step;
      done.store(step, std::memory_order_release);
    }
  }
  void run(int what) {
    action = what;
    const int step = posted.load() + 1;
    posted.store(step, std::memory_order_release);
    while (done.load(std::memory_order_acquire) != step) {
    }
  }
};

}  // namespace

int main(int argc, char** argv) {
  int cpus[2] = {0, 1};
  int reps = 50;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--cpus" && i + 2 < argc) {
      cpus[0] = std::atoi(argv[++i]);
      cpus[1] = std::atoi(argv[++i]);
    } else if (a == "--reps" && i + 1 < argc) {
      reps = std::max(1, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr, "bench-shared-lines: unknown argument '%s' (usage: [--cpus A B] [--reps N])\n", argv[i]);
      return 1;
    }
  }
  if (!pinTo(cpus[0])) {
    std::fprintf(stderr, "bench-shared-lines: cannot pin to CPU %d\n", cpus[0]);
    return 1;
  }
  std::printf("CPUs %d (this thread) and %d (the other), median of %d rounds, microseconds\n\n", cpus[0], cpus[1],
              reps);
  std::printf("| KB | read own | read other's | write own | write where both read | write other's |\n");
  std::printf("|---|---|---|---|---|---|\n");
  volatile float sink = 0;
  for (size_t kb : {64, 256, 1024, 2048, 4096}) {
    const size_t n = kb * 256;
    float* buf = static_cast<float*>(std::aligned_alloc(64, n * sizeof(float)));
    std::memset(buf, 0, n * sizeof(float));
    Peer peer;
    peer.buf = buf;
    peer.n = n;
    std::thread other([&] { peer.loop(cpus[1]); });
    std::vector<double> readOwn, readOther, writeOwn, writeShared, writeOther;
    for (int r = 0; r < reps; ++r) {
      writeAll(buf, n, 1.0f);
      auto t0 = Clock::now();
      sink = readAll(buf, n);
      readOwn.push_back(usSince(t0));

      t0 = Clock::now();
      writeAll(buf, n, 2.0f);
      writeOwn.push_back(usSince(t0));

      peer.run(1);  // both caches hold the lines
      t0 = Clock::now();
      writeAll(buf, n, 3.0f);
      writeShared.push_back(usSince(t0));

      peer.run(2);  // the other core wrote them last
      t0 = Clock::now();
      sink = readAll(buf, n);
      readOther.push_back(usSince(t0));

      peer.run(2);
      t0 = Clock::now();
      writeAll(buf, n, 4.0f);
      writeOther.push_back(usSince(t0));
    }
    peer.quit.store(true, std::memory_order_release);
    other.join();
    std::free(buf);
    std::printf("| %zu | %.1f | %.1f | %.1f | %.1f | %.1f |\n", kb, median(readOwn), median(readOther), median(writeOwn),
                median(writeShared), median(writeOther));
  }
  (void)sink;
  return 0;
}
