// The threads of a pipelined cold start (NNV12 §3.3): a reader streams weights
// in execution order, each core runs the transforms the plan gives it, core 0
// (the caller's thread) executes the model node after node, and an idle thread
// steals work planned for another (NNV12's work stealing): a worker with nothing
// runnable takes the first runnable transform of another core's queue, else the
// next pending read; the executor, while its next node waits, runs that node's
// own pending read, transform or GEMM start-up itself. Once every cold task is
// taken the workers go on with the warm tasks (§3.5: reading and transforming the
// weights of the kernels later runs switch to), in the background.
//
// The pipeline knows tasks and their dependencies only; what a task does is the
// caller's (Session's) `Work`.
#pragma once
#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "libplan/runtime/kernels/gemm.h"
#include "libplan/util/error.h"
#include "libplan/util/stats.h"

namespace zp::runtime {

struct ColdTask {
  // Prefault: the pages of the activation arena and scratch, before the executor first writes them.
  enum class Kind { Read, Transform, GemmStart, Prefault, WarmRead, WarmTransform, WarmGemmStart };
  Kind kind = Kind::Read;
  int step = -1;                           // the node's step (-1 for a GEMM start-up)
  GemmLibrary gemm = GemmLibrary::OneDnn;  // the GEMM start-ups' library
  int plannedCore = -1;                    // -1: the reader; 0: the executor; 1..: workers
  std::vector<int> deps;                   // tasks that must be done first (earlier in the list)
  bool warm() const { return kind == Kind::WarmRead || kind == Kind::WarmTransform || kind == Kind::WarmGemmStart; }
  bool read() const { return kind == Kind::Read || kind == Kind::WarmRead; }
};
const char* coldTaskKindName(ColdTask::Kind k);  // "read", "transform", "gemm-start", "warm-read", ...

// What happened to one task: who ran it, when (ms since the load began), whether
// that was a steal (another thread than planned), and its error if it failed.
struct ColdTaskRecord {
  bool done = false;
  int core = -1;  // -1: the reader
  double startMs = 0, endMs = 0;
  bool stolen = false;
  std::string error;
};

struct ColdPipelineParams {
  int cores = 1;          // core 0 is the executor; cores - 1 worker threads
  bool pipelined = true;  // false: no threads, the executor runs every task itself
  // Workers begin this long after start(): a core busy with other work (NNV12 §4.2);
  // what was planned on them is stolen meanwhile. 0 in normal runs.
  double workerDelayMs = 0;
  // The workers run this much nicer than the executor and the reader (setpriority
  // on their thread): where a transform competes with execution for a CPU, execution
  // gets most of the time — NNV12 gives it the big cores — while every thread may
  // still move to an idle CPU (pinning would keep the executor on a CPU other work
  // loads). The reader mostly waits on the storage and is not lowered.
  int helperNice = 5;
};

class ColdPipeline {
 public:
  // `work(task, core)` runs a task on the thread of `core` (-1: the reader).
  using Work = std::function<Status(int task, int core)>;
  ColdPipeline(std::vector<ColdTask> tasks, const ColdPipelineParams& params, Work work, SteadyClock::time_point t0);
  ~ColdPipeline();  // stop()
  // Stops taking tasks and waits for the running ones (again: nothing).
  void stop();
  ColdPipeline(const ColdPipeline&) = delete;
  ColdPipeline& operator=(const ColdPipeline&) = delete;

  // Starts the reader and the workers (nothing when not pipelined).
  void start();
  // For the executor (core 0): returns once every task in `needs` is done, running
  // itself those no thread has taken yet (in order; a transform after its read).
  // The first failed need's error is returned.
  Status await(const std::vector<int>& needs);
  // The cold run is over: with no worker threads, one starts for the warm tasks.
  void coldRunDone();
  bool isDone(int task) const { return done_[static_cast<size_t>(task)].load(std::memory_order_acquire); }
  // Blocks until every task has ended (warm ones included).
  void waitAll();

  const std::vector<ColdTask>& tasks() const { return tasks_; }
  std::vector<ColdTaskRecord> records() const;  // a snapshot, one per task
  int steals() const;

 private:
  int pickForWorker(int core);  // under mu_; -1: nothing runnable
  bool runnable(int t) const;   // under mu_
  void run(std::unique_lock<std::mutex>& lock, int t, int core);
  void workerLoop(int core);
  void readerLoop();

  std::vector<ColdTask> tasks_;
  ColdPipelineParams params_;
  Work work_;
  SteadyClock::time_point t0_;
  std::vector<std::vector<int>> queues_;  // per core: its tasks in order (cold first, then warm)
  std::vector<int> readQueue_;            // reads in order (cold, then warm)
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<char> claimed_;
  std::deque<std::atomic<bool>> done_;
  std::vector<ColdTaskRecord> records_;
  int remaining_ = 0;
  int coldCoreTasks_ = 0;  // cold tasks planned on a core (not reads) no thread has taken yet
  bool stopping_ = false, coldOver_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace zp::runtime
