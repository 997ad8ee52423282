// The runtime's parallel loops: every index runs exactly once, on a worker index
// below the thread count, nested loops run serially, and the pool survives many
// back-to-back loops of varying thread counts; one OpenMP runtime in the process.
#include <link.h>

#include <atomic>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "libplan/runtime/kernels/gemm.h"
#include "libplan/runtime/kernels/parallel.h"

namespace zp::runtime {
namespace {

TEST(ParallelFor, EveryIndexOnceOnAValidWorker) {
  for (int threads : {1, 2, 3, 8})
    for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{7}, int64_t{1000}})
      for (int64_t grain : {int64_t{0}, int64_t{1}, int64_t{3}, int64_t{5000}}) {
        std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
        std::atomic<bool> badWorker{false}, badChunk{false};
        parallelFor(threads, n, grain, [&](int64_t lo, int64_t hi, int worker) {
          if (worker < 0 || worker >= threads) badWorker = true;
          if (lo >= hi || (grain > 0 && hi - lo > grain)) badChunk = true;
          for (int64_t i = lo; i < hi; ++i) hits[static_cast<size_t>(i)].fetch_add(1);
        });
        for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1) << threads << " " << n << " " << grain;
        EXPECT_FALSE(badWorker);
        EXPECT_FALSE(badChunk);
      }
}

TEST(ParallelFor, NestedLoopsRunSeriallyAsWorkerZero) {
  std::atomic<int> total{0}, nonZeroInner{0};
  parallelForEach(2, 16, [&](int64_t, int) {
    parallelForEach(2, 10, [&](int64_t, int worker) {
      if (worker != 0) nonZeroInner.fetch_add(1);
      total.fetch_add(1);
    });
  }, 1);
  EXPECT_EQ(total.load(), 160);
  EXPECT_EQ(nonZeroInner.load(), 0);
}

TEST(ParallelFor, ManyBackToBackLoops) {
  int64_t sum = 0;
  for (int round = 0; round < 20000; ++round) {
    std::atomic<int64_t> s{0};
    const int threads = 1 + round % 3;
    parallelForEach(threads, 4, [&](int64_t i, int) { s.fetch_add(i + 1); }, 1);
    sum += s.load();
  }
  EXPECT_EQ(sum, 20000 * 10);
}

// The thread count the runtime sets must reach the OpenMP runtime oneDNN runs on;
// with a second one loaded (LLVM's libomp next to GNU's libgomp) it goes to the
// wrong one, and libomp aborts at exit over the threads that called it.
TEST(ParallelFor, OneOpenMpRuntimeIsLoaded) {
  useSingleThreadedGemm();
  std::set<std::string> runtimes;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) {
        const std::string path = info->dlpi_name ? info->dlpi_name : "";
        const std::string file = path.substr(path.find_last_of('/') + 1);
        for (const char* lib : {"libgomp.so", "libomp.so", "libiomp5.so"})
          if (file.rfind(lib, 0) == 0) static_cast<std::set<std::string>*>(out)->insert(lib);
        return 0;
      },
      &runtimes);
  EXPECT_EQ(runtimes.size(), 1u) << "OpenMP runtimes: " << testing::PrintToString(runtimes);
}

}  // namespace
}  // namespace zp::runtime
