#include "libplan/util/signals.h"

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <cstdlib>

namespace zp {

namespace {

// The calling thread's alternate stack. Never freed (a signal may arrive until the
// thread ends), and kept in a variable rather than only in the kernel so that a leak
// checker sees it as reachable.
thread_local void* t_alternateStack = nullptr;

// Room for the signal frame with the largest extended register state (AVX-512, AMX
// tiles) and the handler.
void useAlternateStack() {
  if (t_alternateStack) return;
  const long minimum = ::sysconf(_SC_SIGSTKSZ);
  const size_t bytes = std::max<size_t>(minimum > 0 ? static_cast<size_t>(minimum) : 0, size_t{64} << 10);
  stack_t st{};
  st.ss_sp = std::malloc(bytes);
  st.ss_size = bytes;
  st.ss_flags = 0;
  [[maybe_unused]] const int rc = st.ss_sp ? ::sigaltstack(&st, nullptr) : -1;
  assert(rc == 0);
  t_alternateStack = st.ss_sp;
}

sigset_t asynchronousSignals() {
  sigset_t set;
  sigfillset(&set);
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGABRT, SIGSYS}) sigdelset(&set, sig);
  return set;
}

}  // namespace

void installStopHandler(void (*handler)(int)) {
  useAlternateStack();
  struct sigaction sa {};
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_ONSTACK | SA_RESTART;
  for (int sig : {SIGINT, SIGTERM}) ::sigaction(sig, &sa, nullptr);
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  ::pthread_sigmask(SIG_UNBLOCK, &stop, nullptr);
}

AsyncSignalsBlocked::AsyncSignalsBlocked() {
  const sigset_t set = asynchronousSignals();
  ::pthread_sigmask(SIG_BLOCK, &set, &previous_);
}

AsyncSignalsBlocked::~AsyncSignalsBlocked() { ::pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }

bool signalBlocked(int sig) {
  sigset_t now;
  ::pthread_sigmask(SIG_BLOCK, nullptr, &now);
  return sigismember(&now, sig) == 1;
}

}  // namespace zp
