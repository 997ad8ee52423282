// Ctrl-C during matrix products: the stop handler (libplan/util/signals.h) runs on its
// own stack, so a signal that lands while oneDNN's JIT GEMM kernels hold the stack
// pointer inside a heap buffer leaves the heap intact; the runtime's helper threads
// block the process's signals, so they reach the thread with that stack.
#include <pthread.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <random>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "libplan/runtime/kernels/gemm.h"
#include "libplan/runtime/kernels/parallel.h"
#include "libplan/util/signals.h"

namespace zp::runtime {
namespace {

std::atomic<int> g_signals{0};
void countSignal(int) { g_signals.fetch_add(1, std::memory_order_relaxed); }

// Products of the shapes a small CNN's im2col convolutions give, on the calling
// thread, while another thread sends it SIGINT every few microseconds. A signal frame
// written into the heap makes a later free() abort the process (the test crashes).
TEST(StopSignals, ManySignalsDuringOneDnnProductsLeaveTheHeapIntact) {
  zp::installStopHandler(countSignal);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1, 1);
  const int64_t M = 64, N = 64, K = 288;
  std::vector<float> a(M * K), b(K * N), c(M * N);
  for (auto& v : a) v = u(rng);
  for (auto& v : b) v = u(rng);
  useSingleThreadedGemm();
  std::atomic<bool> done{false};
  const pthread_t target = pthread_self();
  std::thread sender;
  {
    const zp::AsyncSignalsBlocked quiet;
    sender = std::thread([&] {
      while (!done.load()) {
        pthread_kill(target, SIGINT);
        std::this_thread::sleep_for(std::chrono::microseconds(20));
      }
    });
  }
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  int64_t products = 0;
  while (std::chrono::steady_clock::now() < until) {
    sgemmRowMajor(false, false, M, N, K, 1.0f, a.data(), K, b.data(), N, 0.0f, c.data(), N, 1, GemmLibrary::OneDnn);
    std::vector<float> churn(static_cast<size_t>(1 + products % 4096));  // frees next to the GEMM's workspace
    churn[0] = c[0];
    ++products;
  }
  done = true;
  sender.join();
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  EXPECT_GT(g_signals.load(), 100) << products << " products";
}

TEST(StopSignals, HandlerRunsOnTheAlternateStack) {
  static std::atomic<const char*> where{nullptr};
  // The handler's frame address, not a local's: with AddressSanitizer's
  // use-after-return detection a local whose address escapes lives on a heap
  // "fake stack", wherever the frame itself is.
  zp::installStopHandler([](int) { where = static_cast<const char*>(__builtin_frame_address(0)); });
  pthread_kill(pthread_self(), SIGTERM);  // delivered before pthread_kill returns
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  stack_t st{};
  ASSERT_EQ(sigaltstack(nullptr, &st), 0);
  ASSERT_NE(where.load(), nullptr);
  const char* lo = static_cast<const char*>(st.ss_sp);
  EXPECT_TRUE(where.load() >= lo && where.load() < lo + st.ss_size);
}

TEST(StopSignals, ThreadsStartedUnderTheGuardBlockThem) {
  bool inThread = false, faultInThread = true;
  {
    const zp::AsyncSignalsBlocked quiet;
    std::thread t([&] {
      inThread = zp::signalBlocked(SIGINT) && zp::signalBlocked(SIGTERM);
      faultInThread = zp::signalBlocked(SIGSEGV);
    });
    t.join();
  }
  EXPECT_TRUE(inThread);
  EXPECT_FALSE(faultInThread);  // faults still reach their handlers
  EXPECT_FALSE(zp::signalBlocked(SIGINT));  // the guard restored the caller's mask
}

// Helpers of the runtime's pool join a loop only when they get a core (a new one from
// the next loop on): loops of chunks that spin until one has joined, or 50 loops.
TEST(StopSignals, PoolHelpersBlockThem) {
  std::atomic<int> helperChunks{0}, unblocked{0};
  for (int round = 0; round < 50 && helperChunks.load() == 0; ++round)
    parallelFor(2, 16, 1, [&](int64_t, int64_t, int worker) {
      const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(1);
      while (std::chrono::steady_clock::now() < until) {}
      if (worker == 0) return;
      helperChunks.fetch_add(1);
      if (!zp::signalBlocked(SIGINT) || !zp::signalBlocked(SIGTERM)) unblocked.fetch_add(1);
    });
  if (helperChunks.load() == 0) GTEST_SKIP() << "no helper thread ran a chunk";
  EXPECT_EQ(unblocked.load(), 0);
}

}  // namespace
}  // namespace zp::runtime
