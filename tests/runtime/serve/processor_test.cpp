#include <gtest/gtest.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>

#include "libplan/runtime/serve/pinned_worker.h"
#include "libplan/runtime/serve/processor.h"
#include "tests/common/processors.h"

namespace zp::runtime::serve {
namespace {

std::vector<int> threadCores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cores;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return cores;  // 0: the calling thread
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cores.push_back(c);
  return cores;
}

TEST(Processor, WorkerRunsOnExactlyItsCoresInPostOrder) {
  const auto available = availableCores();
  ASSERT_FALSE(available.empty());
  for (int core : available) {
    auto w = PinnedWorker::start(zp::testing::pinned("p", {core}));
    ASSERT_TRUE(w.ok()) << w.error().message;
    std::vector<int> order;
    std::promise<std::vector<int>> seen;
    for (int i = 0; i < 5; ++i) (*w)->post([&order, i] { order.push_back(i); });
    (*w)->post([&seen] { seen.set_value(threadCores()); });
    EXPECT_EQ(seen.get_future().get(), std::vector<int>{core});
    EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4}));
  }
}

TEST(Processor, QueuedJobsRunByRankThenInPostOrder) {
  auto w = PinnedWorker::start(zp::testing::pinned("p", {availableCores().front()}));
  ASSERT_TRUE(w.ok()) << w.error().message;
  // The worker waits in the first job until every other one is queued.
  std::promise<void> queued;
  std::shared_future<void> go = queued.get_future().share();
  (*w)->post([go] { go.wait(); });
  std::vector<int> order;
  const std::vector<double> ranks = {5, 1, 3, 1, 0};
  for (size_t i = 0; i < ranks.size(); ++i) (*w)->post([&order, i] { order.push_back(static_cast<int>(i)); }, ranks[i]);
  std::promise<void> last;
  (*w)->post([&last] { last.set_value(); }, 10);
  queued.set_value();
  last.get_future().wait();
  EXPECT_EQ(order, (std::vector<int>{4, 1, 3, 2, 0}));
}

// The executor's arrivals: an idle worker asks its dispatch when the next one is
// due, sleeps until then, and dispatches it itself; a job posted meanwhile runs
// first, the dispatch asked again before it; a cleared dispatch is not asked again.
TEST(Processor, AnIdleWorkerWakesWhenTheNextArrivalFallsDueAndDispatchesIt) {
  using Clock = PinnedWorker::Clock;
  auto w = PinnedWorker::start(zp::testing::pinned("p", {availableCores().front()}));
  ASSERT_TRUE(w.ok()) << w.error().message;
  struct State {
    Clock::time_point due;
    std::atomic<int> asked{0};
    std::atomic<bool> posted{false};
    std::promise<Clock::time_point> ran;
  };
  auto st = std::make_shared<State>();
  st->due = Clock::now() + std::chrono::milliseconds(30);
  PinnedWorker& worker = **w;
  worker.takeArrivals([st, &worker]() -> Clock::time_point {
    ++st->asked;
    if (Clock::now() < st->due) return st->due;
    if (!st->posted.exchange(true)) worker.post([st] { st->ran.set_value(Clock::now()); });
    return Clock::time_point::max();
  });
  std::promise<int> askedBefore;
  worker.post([&] { askedBefore.set_value(st->asked.load()); });  // before the arrival is due
  EXPECT_GE(askedBefore.get_future().get(), 1);  // asked before this job was taken
  auto ran = st->ran.get_future();
  ASSERT_EQ(ran.wait_for(std::chrono::seconds(10)), std::future_status::ready) << "the arrival was never dispatched";
  EXPECT_GE(ran.get(), st->due);
  worker.takeArrivals({});
  worker.runAndWait([] {});
  const int asked = st->asked.load();
  worker.runAndWait([] {});
  EXPECT_EQ(st->asked.load(), asked);
}

TEST(Processor, CoresNotOnThisMachineAreRefused) {
  const auto available = availableCores();
  const int missing = available.back() + 1;
  auto w = PinnedWorker::start(zp::testing::pinned("npu", {available.front(), missing}));
  ASSERT_FALSE(w.ok());
  const std::string& m = w.error().message;
  EXPECT_EQ(m.rfind("processor 'npu': core " + std::to_string(missing) + " is not on this machine", 0), 0u) << m;
  EXPECT_EQ(m.find('\n'), std::string::npos);
  EXPECT_FALSE(checkProcessor(zp::testing::pinned("x", {100000})).ok());
  EXPECT_FALSE(checkProcessor(zp::testing::pinned("x", {-1})).ok());
  EXPECT_FALSE(checkProcessor(zp::testing::pinned("x", {})).ok());
  EXPECT_FALSE(checkProcessor(zp::testing::pinned("x", {available.front(), available.front()})).ok());
}

TEST(Processor, EngineOptionsAreChecked) {
  const int core = availableCores().front();
  Processor p{"gpu", "gpu", "host", "im2col", 2, {core}, "blis"};
  ASSERT_TRUE(checkProcessor(p).ok());
  const auto o = sessionOptions(p);
  EXPECT_EQ(o.kernels.policy, "im2col");
  EXPECT_EQ(o.gemm, GemmLibrary::Blis);
  EXPECT_EQ(o.threads, 2);
  p.policy = "fastest";
  auto s = checkProcessor(p);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("unknown kernel policy 'fastest'"), std::string::npos);
  p.policy = "default";
  p.threads = 0;
  EXPECT_FALSE(checkProcessor(p).ok());
  p.threads = 1;
  p.gemm = "mkl";
  s = checkProcessor(p);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("unknown GEMM library 'mkl'"), std::string::npos);
}

}  // namespace
}  // namespace zp::runtime::serve
