// The cold pipeline's threads on synthetic tasks: every task runs once, after its
// dependencies; the executor runs what its step needs when nobody has taken it;
// idle workers steal other cores' transforms and pending reads; warm tasks wait
// for the cold run when there is no worker thread.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <random>
#include <thread>

#include "libplan/runtime/cold_pipeline.h"

namespace zp::runtime {
namespace {

using Kind = ColdTask::Kind;

// Per step: a read, and every other step a transform after it on core step % cores.
std::vector<ColdTask> chain(int steps, int cores, bool warm) {
  std::vector<ColdTask> t;
  t.push_back({Kind::GemmStart, -1, GemmLibrary::Blis, cores - 1, {}});
  for (int s = 0; s < steps; ++s) {
    t.push_back({Kind::Read, s, GemmLibrary::OneDnn, -1, {}});
    if (s % 2 == 0) t.push_back({Kind::Transform, s, GemmLibrary::OneDnn, s % cores, {static_cast<int>(t.size()) - 1}});
  }
  if (warm)
    for (int s = 0; s < steps; s += 3) {
      t.push_back({Kind::WarmRead, s, GemmLibrary::OneDnn, -1, {}});
      t.push_back({Kind::WarmTransform, s, GemmLibrary::OneDnn, std::max(1, cores - 1), {static_cast<int>(t.size()) - 1}});
    }
  return t;
}

// The tasks the executor needs before step s.
std::vector<int> needsOf(const std::vector<ColdTask>& t, int s) {
  std::vector<int> n{0};
  for (size_t i = 0; i < t.size(); ++i)
    if (t[i].step == s && !t[i].warm()) n.push_back(static_cast<int>(i));
  return n;
}

struct Counter {
  std::mutex mu;
  std::vector<int> runs;
};

ColdPipeline::Work sleeper(Counter& c, std::mt19937& rng) {
  std::vector<int> us;
  for (int i = 0; i < 200; ++i) us.push_back(static_cast<int>(rng() % 400));
  return [&c, us](int t, int) {
    std::this_thread::sleep_for(std::chrono::microseconds(us[static_cast<size_t>(t) % us.size()]));
    std::lock_guard<std::mutex> lock(c.mu);
    ++c.runs[static_cast<size_t>(t)];
    return Status{};
  };
}

TEST(ColdPipeline, EveryTaskRunsOnceAfterItsDependenciesWhateverTheCores) {
  std::mt19937 rng(3);
  for (int cores : {1, 2, 3})
    for (bool pipelined : {true, false}) {
      auto tasks = chain(12, cores, true);
      Counter c;
      c.runs.assign(tasks.size(), 0);
      ColdPipeline p(tasks, ColdPipelineParams{cores, pipelined, 0}, sleeper(c, rng), SteadyClock::now());
      p.start();
      for (int s = 0; s < 12; ++s) {
        ASSERT_TRUE(p.await(needsOf(tasks, s)).ok());
        for (int n : needsOf(tasks, s)) EXPECT_TRUE(p.isDone(n));
      }
      p.coldRunDone();
      p.waitAll();
      const auto rec = p.records();
      double lastColdStart = 0;
      for (size_t t = 0; t < tasks.size(); ++t)
        if (!tasks[t].warm() && !tasks[t].read()) lastColdStart = std::max(lastColdStart, rec[t].startMs);
      for (size_t t = 0; t < tasks.size(); ++t) {
        EXPECT_EQ(c.runs[t], 1) << t;
        if (tasks[t].warm()) {
          EXPECT_GE(rec[t].startMs, lastColdStart) << "warm work waits until every cold task of a core is taken";
        }
        EXPECT_TRUE(rec[t].done);
        for (int d : tasks[t].deps) EXPECT_LE(rec[static_cast<size_t>(d)].endMs, rec[t].startMs);
        if (!pipelined && !tasks[t].warm()) {
          EXPECT_EQ(rec[t].core, 0) << "not pipelined: the executor runs the cold tasks";
        }
        if (tasks[t].warm()) {
          EXPECT_GE(rec[t].core, 1) << "warm tasks run on workers only (not the executor, not the reader)";
        }
      }
    }
}

TEST(ColdPipeline, TheExecutorStealsWhatABusyWorkerWasGiven) {
  auto tasks = chain(6, 2, false);
  Counter c;
  c.runs.assign(tasks.size(), 0);
  std::mt19937 rng(1);
  ColdPipeline p(tasks, ColdPipelineParams{2, true, 5000}, sleeper(c, rng), SteadyClock::now());
  p.start();
  const auto t0 = SteadyClock::now();
  for (int s = 0; s < 6; ++s) ASSERT_TRUE(p.await(needsOf(tasks, s)).ok());
  EXPECT_LT(msSince(t0), 2000.0);
  const auto rec = p.records();
  for (size_t t = 0; t < tasks.size(); ++t) {
    if (tasks[t].plannedCore != 1) continue;
    EXPECT_EQ(rec[t].core, 0) << coldTaskKindName(tasks[t].kind) << " " << tasks[t].step;
    EXPECT_TRUE(rec[t].stolen);
  }
  EXPECT_GT(p.steals(), 0);
}

TEST(ColdPipeline, AnIdleWorkerStealsOtherCoresTransformsAndPendingReads) {
  // Transforms planned on the executor's core, which is not waiting for them: the
  // worker, with nothing of its own, takes them; one slow read holds whichever
  // thread took it first, so the other reads go to the reader or the worker.
  std::vector<ColdTask> t;
  t.push_back({Kind::Read, 0, GemmLibrary::OneDnn, -1, {}});
  for (int s = 1; s < 5; ++s) {
    t.push_back({Kind::Read, s, GemmLibrary::OneDnn, -1, {}});
    t.push_back({Kind::Transform, s, GemmLibrary::OneDnn, 0, {static_cast<int>(t.size()) - 1}});
  }
  std::atomic<bool> release{false};
  ColdPipeline p(t, ColdPipelineParams{2, true, 0}, [&](int task, int) {
    if (task == 0)
      while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return Status{};
  }, SteadyClock::now());
  p.start();
  auto readsDone = [&] {
    for (size_t i = 1; i < t.size(); i += 2)
      if (!p.isDone(static_cast<int>(i))) return false;
    return true;
  };
  for (int i = 0; i < 5000 && !readsDone(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_TRUE(readsDone()) << "one thread is held by the slow read; the other does the rest";
  release = true;
  p.waitAll();
  const auto rec = p.records();
  int stolenReads = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i].kind == Kind::Transform) {
      EXPECT_EQ(rec[i].core, 1) << "planned on core 0, which never asked: the worker stole it";
      EXPECT_TRUE(rec[i].stolen);
    } else {
      EXPECT_EQ(rec[i].stolen, rec[i].core != -1);
      stolenReads += rec[i].stolen;
    }
  }
  EXPECT_GE(stolenReads, 1) << "the worker took the slow read or some behind it";
}

TEST(ColdPipeline, AFailedTaskFailsTheStepsThatNeedIt) {
  auto tasks = chain(4, 2, false);
  ColdPipeline p(tasks, ColdPipelineParams{2, true, 0}, [&](int t, int) -> Status {
    if (tasks[static_cast<size_t>(t)].kind == Kind::Read && tasks[static_cast<size_t>(t)].step == 2)
      return makeError("payload checksum mismatch");
    return {};
  }, SteadyClock::now());
  p.start();
  EXPECT_TRUE(p.await(needsOf(tasks, 1)).ok());
  auto s = p.await(needsOf(tasks, 2));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, "payload checksum mismatch");
}

}  // namespace
}  // namespace zp::runtime
