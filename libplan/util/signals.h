// Signals and the threads that must not take them.
//
// A tool that finishes cleanly on Ctrl-C or SIGTERM sets a flag in its handler and
// polls it. Two things make that safe next to JIT-compiled GEMM code: oneDNN's f32
// GEMM kernels (up to at least 3.11, the Debian 12 build among them) point the stack
// pointer into a heap buffer while they run, and a signal frame pushed there
// overwrites the heap ("corrupted size vs. prev_size" at a later free). So the
// handler runs on an alternate stack of its own, and every thread the project starts
// blocks the asynchronous signals, so that they reach the thread that installed the
// handler (the alternate stack is per thread).
#pragma once
#include <csignal>

namespace zp {

// Installs `handler` for SIGINT and SIGTERM on an alternate signal stack of the
// calling thread (allocated once per thread, never freed). Call from the main thread.
void installStopHandler(void (*handler)(int));

// While alive, the calling thread blocks the asynchronous signals (all but the ones a
// fault raises); a thread created meanwhile inherits that mask and keeps it. Create
// every helper thread under one.
class AsyncSignalsBlocked {
 public:
  AsyncSignalsBlocked();
  ~AsyncSignalsBlocked();
  AsyncSignalsBlocked(const AsyncSignalsBlocked&) = delete;
  AsyncSignalsBlocked& operator=(const AsyncSignalsBlocked&) = delete;

 private:
  sigset_t previous_;
};

// True when the calling thread blocks `sig`.
bool signalBlocked(int sig);

}  // namespace zp
