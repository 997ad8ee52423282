// The runtime's parallel loops. The calling thread works through a loop's chunks
// itself; helper threads (one process-wide pool) join when they get a core, each
// starting on its own share of the chunks and then taking what is left of the
// others', and the caller waits only for chunks a helper has started.
// On a machine shared with other processes a helper that is not running costs a
// loop nothing, where a fork-join team (OpenMP's static schedule, or any barrier
// at a region's end) waits for every member to be scheduled, once per loop.
//
// Chunks are fixed by (n, grain), not by which thread runs them, so results do not
// depend on the thread count as long as each index's work does not.
#pragma once
#include <cstdint>
#include <functional>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace zp::runtime {

// In a spin-wait loop: tells the core (and a hyperthread sibling) that this one waits.
inline void cpuRelax() {
#if defined(__x86_64__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

// fn(begin, end, worker) over [0, n) in chunks of `grain` indices (0: about four
// chunks per thread); worker in [0, threads) names the thread running the chunk
// (for per-thread scratch). Called from inside a chunk, the loop runs serially on
// the calling thread as worker 0.
void parallelFor(int threads, int64_t n, int64_t grain, const std::function<void(int64_t, int64_t, int)>& fn);

// At most this many helper threads for the whole process from now on (0: every loop
// runs on its caller, in the same chunks, and the runtime starts no thread of its own,
// such as a session's GEMM warm-up). For an emulator that cannot start threads
// (qemu-user 7.2 hangs in the first thread start on some hosts); results do not change.
void capHelperThreads(int helpers);
// False after capHelperThreads(0).
bool runtimeMayStartThreads();

// body(i, worker) for every i in [0, n), in chunks of `grain` indices (0: about four per thread).
template <typename F>
void parallelForEach(int threads, int64_t n, F&& body, int64_t grain = 0) {
  if (threads <= 1 || n <= 1) {
    for (int64_t i = 0; i < n; ++i) body(i, 0);
    return;
  }
  parallelFor(threads, n, grain, [&](int64_t lo, int64_t hi, int worker) {
    for (int64_t i = lo; i < hi; ++i) body(i, worker);
  });
}

}  // namespace zp::runtime
