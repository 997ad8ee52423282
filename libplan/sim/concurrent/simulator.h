// Discrete-event simulation of a concurrent schedule: the single judge of
// every schedule's latency and throughput (zooplan's and the baselines').
//
// Semantics (the scheduler's Z3 model encodes exactly these):
//  - a DNN's groups run in order; consecutive groups on one accelerator form a
//    segment that holds the accelerator until its last group ends;
//  - between groups on different accelerators the DNN pays the transition
//    tau(L_i, a, OUT) + tau(L_{i+1}, b, IN) (a delay, occupying no accelerator);
//  - a DNN with dependencies becomes ready when all of them have ended (plus
//    the transition if the accelerator changes);
//  - a segment head waits for its accelerator; waiting heads start in the
//    order they became ready (ties: lower DNN index); no idle time is inserted;
//  - contention intervals (HaX-CoNN §3.3): between any two consecutive start /
//    end events the set of running groups is fixed and every running group
//    progresses at rate 1/slowdown, slowdown = model(own demand, sum of the
//    demands of groups running on the other accelerators) (1 when alone).
#pragma once
#include <limits>
#include <vector>

#include "libplan/sim/concurrent/problem.h"

namespace zp::sim {

struct ContentionSpan {
  double start = 0, end = 0, slowdown = 1;
};

struct GroupRun {
  int accelerator = -1;
  double start = 0, end = 0;
  double standaloneMs = 0;
  std::vector<ContentionSpan> slowed;  // sub-intervals with slowdown > 1
};

struct TransitionRun {
  int afterGroup = -1;  // -1: the transition into this DNN from a dependency
  int from = -1, to = -1;
  double start = 0, end = 0;
};

struct DnnRun {
  double release = 0;  // when its input was available
  double end = 0;
  std::vector<GroupRun> groups;
  std::vector<TransitionRun> transitions;
};

struct SimResult {
  std::vector<DnnRun> dnns;
  double latencyMs = 0;   // Eq. 11: max_n end_n
  double throughput = 0;  // Eq. 10: sum_n 1000 / (end_n - release_n), per second
  bool aborted = false;   // stopped early (SimOptions::abortAfterMs)
  double value(Objective o) const { return o == Objective::Latency ? latencyMs : throughput; }
};

struct SimOptions {
  bool recordSpans = true;
  // Branch and bound: stop as soon as the schedule provably cannot beat an
  // incumbent (the result then only proves that, aborted = true):
  // latency: once some DNN cannot end before abortAfterMs even running
  // standalone from now on; throughput: once the sum of rates, with every
  // unfinished DNN running standalone from now on, is at most
  // abortThroughputAtMost (relative 1e-9).
  double abortAfterMs = std::numeric_limits<double>::infinity();
  double abortThroughputAtMost = -1;
};

// Reusable simulator (keeps buffers between calls; not thread-safe).
class Simulator {
 public:
  explicit Simulator(const Problem& problem);
  // The schedule must be valid for the problem (asserted).
  const SimResult& run(const Schedule& schedule, const SimOptions& options = {});

  // Progress of one DNN during a run.
  struct DnnState {
    int next = 0;   // the group running or waiting (phase 1, 2), or the next one
    int phase = 0;  // 0 blocked, 1 pending (readyTime), 2 running, 3 done
    double readyTime = 0;
    double remaining = 0;  // standalone ms left of the running group
    double slow = 1;
  };
  // Step-wise runs, for a search that decides the schedule while the
  // simulation goes: in `partial`, assignments not decided yet are -1.
  // beginSteps() starts a run; advanceToDecision() simulates (run()'s own
  // event loop, without bounding or spans) until every DNN has
  // ended (returns -1), or until some DNN's next needed assignment is
  // undecided (returns that DNN; the group is neededGroup(n)): a blocked DNN
  // needs its first group, any other its current and following group. A
  // decision only ever changes what happens after the pause, so snapshots
  // (saveSteps / restoreSteps) let a search branch there.
  struct StepState {
    std::vector<DnnState> dnns;
    std::vector<int> running;
    std::vector<double> release, end;
    std::vector<size_t> transitions;
    double t = 0;
    int done = 0;
  };
  void beginSteps();
  int advanceToDecision(const Schedule& partial);
  int neededGroup(const Schedule& partial, int n) const;  // -1 if none is undecided
  void saveSteps(StepState& s) const;
  void restoreSteps(const StepState& s);
  double stepTime() const { return t_; }
  const DnnState& dnnState(int n) const { return st_[static_cast<size_t>(n)]; }
  const SimResult& partialResult() const { return result_; }

 private:
  // The steps of run(), one per section of the event loop.
  void reset();
  bool step(const Schedule& sched, const SimOptions& opt, bool bounding);  // one iteration; false when over
  void startGroup(const Schedule& sched, int n, double t);
  void startReadyGroups(const Schedule& sched, double t);
  void computeSuffixes(const Schedule& sched);
  bool boundExceeded(double t, const SimOptions& opt) const;
  double contentionStep(const Schedule& sched, double t);  // sets each running group's slowdown; returns dt
  void advance(double t, double dt, bool recordSpans);
  int completeGroups(const Schedule& sched, double t);      // returns the DNNs that ended
  void releaseDependents(const Schedule& sched, int n);
  void finish();  // latency and throughput from the DNNs' ends

  const Problem& p_;
  SimResult result_;
  std::vector<DnnState> st_;
  double t_ = 0;   // simulated time of the run in progress
  int done_ = 0;   // DNNs that have ended
  std::vector<int> running_;  // per accelerator: DNN index or -1
  std::vector<int> offset_;   // first global group index of each DNN
  size_t numGroups_ = 0;
  std::vector<double> pairSlow_;  // [group][acc][other group] -> slowdown (2 accelerators)
  std::vector<std::vector<double>> suffix_;  // standalone time from group i's start to the DNN's end
};

SimResult simulate(const Problem& problem, const Schedule& schedule, const SimOptions& options = {});

}  // namespace zp::sim
