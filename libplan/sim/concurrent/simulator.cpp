#include "libplan/sim/concurrent/simulator.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

namespace zp::sim {

namespace {
constexpr double kTimeTol = 1e-9;  // ms: ready times this close count as a tie
}

Simulator::Simulator(const Problem& problem) : p_(problem) {
  int total = 0;
  for (const auto& d : problem.dnns) {
    offset_.push_back(total);
    total += static_cast<int>(d.groups.size());
  }
  numGroups_ = static_cast<size_t>(total);
  // Slowdown memo for two accelerators (0 = not computed yet; slowdowns are >= 1).
  if (problem.numAccelerators() == 2 && numGroups_ <= 1024) pairSlow_.assign(numGroups_ * 2 * numGroups_, 0.0);
}

SimResult simulate(const Problem& problem, const Schedule& schedule, const SimOptions& options) {
  Simulator s(problem);
  return s.run(schedule, options);
}

namespace {
inline int accOf(const Schedule& sched, int n, int i) {
  return sched.assign[static_cast<size_t>(n)][static_cast<size_t>(i)];
}
}  // namespace

void Simulator::reset() {
  const int N = p_.numDnns();
  result_.aborted = false;
  result_.dnns.resize(static_cast<size_t>(N));
  st_.assign(static_cast<size_t>(N), DnnState{});
  running_.assign(static_cast<size_t>(p_.numAccelerators()), -1);
  for (int n = 0; n < N; ++n) {
    auto& run = result_.dnns[static_cast<size_t>(n)];
    run.groups.resize(p_.dnns[static_cast<size_t>(n)].groups.size());
    for (auto& g : run.groups) g.slowed.clear();
    run.transitions.clear();
    run.release = run.end = 0;
    if (p_.dnns[static_cast<size_t>(n)].deps.empty()) st_[static_cast<size_t>(n)].phase = 1;
  }
}

void Simulator::startGroup(const Schedule& sched, int n, double t) {
  auto& s = st_[static_cast<size_t>(n)];
  int a = accOf(sched, n, s.next);
  s.phase = 2;
  s.remaining = p_.dnns[static_cast<size_t>(n)].groups[static_cast<size_t>(s.next)].timeMs[static_cast<size_t>(a)];
  auto& g = result_.dnns[static_cast<size_t>(n)].groups[static_cast<size_t>(s.next)];
  g.accelerator = a;
  g.start = t;
  g.standaloneMs = s.remaining;
  running_[static_cast<size_t>(a)] = n;
}

// Segment heads whose ready time has come wait for their accelerator; an idle
// accelerator takes the one that became ready first.
void Simulator::startReadyGroups(const Schedule& sched, double t) {
  const int N = p_.numDnns();
  for (int a = 0; a < p_.numAccelerators(); ++a) {
    if (running_[static_cast<size_t>(a)] >= 0) continue;
    int pick = -1;
    for (int n = 0; n < N; ++n) {
      const auto& s = st_[static_cast<size_t>(n)];
      if (s.phase != 1 || s.readyTime > t + kTimeTol || accOf(sched, n, s.next) != a) continue;
      if (pick < 0 || s.readyTime < st_[static_cast<size_t>(pick)].readyTime - kTimeTol) pick = n;
    }
    if (pick >= 0) startGroup(sched, pick, t);
  }
}

// Standalone time from each group's start to its DNN's end (the bounds' lower bound).
void Simulator::computeSuffixes(const Schedule& sched) {
  const int N = p_.numDnns();
  suffix_.resize(static_cast<size_t>(N));
  for (int n = 0; n < N; ++n) {
    const auto& d = p_.dnns[static_cast<size_t>(n)];
    auto cost = [&](int i) -> const GroupCost& { return d.groups[static_cast<size_t>(i)]; };
    auto& suf = suffix_[static_cast<size_t>(n)];
    suf.assign(d.groups.size() + 1, 0.0);
    for (int i = static_cast<int>(d.groups.size()) - 1; i >= 0; --i) {
      const int a = accOf(sched, n, i);
      double tr = 0;
      if (i + 1 < static_cast<int>(d.groups.size()) && a != accOf(sched, n, i + 1))
        tr = cost(i).transitionOutMs[static_cast<size_t>(a)] +
             cost(i + 1).transitionInMs[static_cast<size_t>(accOf(sched, n, i + 1))];
      suf[static_cast<size_t>(i)] = suf[static_cast<size_t>(i) + 1] + tr + cost(i).timeMs[static_cast<size_t>(a)];
    }
  }
}

// Whether even the lower bounds at time t exceed the latency bound or fall
// short of the throughput bound.
bool Simulator::boundExceeded(double t, const SimOptions& opt) const {
  double lat = 0, rate = 0;
  for (int n = 0; n < p_.numDnns(); ++n) {
    const auto& s = st_[static_cast<size_t>(n)];
    const auto& suf = suffix_[static_cast<size_t>(n)];
    const auto& run = result_.dnns[static_cast<size_t>(n)];
    double endLb, release;
    switch (s.phase) {
      case 0: endLb = t + suf[0]; release = -1; break;
      case 1: endLb = std::max(t, s.readyTime) + suf[static_cast<size_t>(s.next)]; release = s.next == 0 ? s.readyTime : run.release; break;
      case 2: endLb = t + s.remaining + suf[static_cast<size_t>(s.next) + 1]; release = run.release; break;
      default: endLb = run.end; release = run.release; break;
    }
    lat = std::max(lat, endLb);
    rate += release < 0 ? 1000.0 / suf[0] : 1000.0 / (endLb - release);
  }
  if (lat > opt.abortAfterMs) return true;
  return opt.abortThroughputAtMost >= 0 && !better(Objective::Throughput, rate, opt.abortThroughputAtMost);
}

// Rates in this contention interval: each running group's slowdown, and the
// time to the next event (a completion or a ready time).
double Simulator::contentionStep(const Schedule& sched, double t) {
  const int N = p_.numDnns(), A = p_.numAccelerators();
  auto cost = [&](int n, int i) -> const GroupCost& {
    return p_.dnns[static_cast<size_t>(n)].groups[static_cast<size_t>(i)];
  };
  double dt = std::numeric_limits<double>::infinity();
  for (int n = 0; n < N; ++n) {
    auto& s = st_[static_cast<size_t>(n)];
    if (s.phase == 2) {
      int a = accOf(sched, n, s.next);
      if (A == 2 && !pairSlow_.empty()) {
        // Two accelerators: at most one other group; memoised per pair.
        int b = 1 - a;
        int m = running_[static_cast<size_t>(b)];
        if (m < 0) {
          s.slow = 1.0;
        } else {
          size_t gi = static_cast<size_t>(offset_[static_cast<size_t>(n)] + s.next);
          size_t gj = static_cast<size_t>(offset_[static_cast<size_t>(m)] + st_[static_cast<size_t>(m)].next);
          double& slot = pairSlow_[(gi * 2 + static_cast<size_t>(a)) * numGroups_ + gj];
          if (slot == 0)
            slot = p_.contention.slowdown(a, cost(n, s.next).demand[static_cast<size_t>(a)],
                                          cost(m, st_[static_cast<size_t>(m)].next).demand[static_cast<size_t>(b)]);
          s.slow = slot;
        }
      } else {
        double own = cost(n, s.next).demand[static_cast<size_t>(a)];
        double ext = 0;
        bool other = false;
        for (int b = 0; b < A; ++b) {
          int m = running_[static_cast<size_t>(b)];
          if (b == a || m < 0) continue;
          other = true;
          ext += cost(m, st_[static_cast<size_t>(m)].next).demand[static_cast<size_t>(b)];
        }
        s.slow = other ? p_.contention.slowdown(a, own, ext) : 1.0;
      }
      dt = std::min(dt, s.remaining * s.slow);
    } else if (s.phase == 1 && s.readyTime > t + kTimeTol) {
      dt = std::min(dt, s.readyTime - t);
    }
  }
  return dt;
}

void Simulator::advance(double t, double dt, bool recordSpans) {
  for (int n = 0; n < p_.numDnns(); ++n) {
    auto& s = st_[static_cast<size_t>(n)];
    if (s.phase != 2) continue;
    s.remaining -= dt / s.slow;
    if (recordSpans && s.slow > 1.0 + 1e-12 && dt > 0) {
      auto& spans = result_.dnns[static_cast<size_t>(n)].groups[static_cast<size_t>(s.next)].slowed;
      if (!spans.empty() && spans.back().end == t && spans.back().slowdown == s.slow)
        spans.back().end = t + dt;
      else
        spans.push_back({t, t + dt, s.slow});
    }
  }
}

// Completions at t, in DNN order.
int Simulator::completeGroups(const Schedule& sched, double t) {
  int ended = 0;
  for (int n = 0; n < p_.numDnns(); ++n) {
    auto& s = st_[static_cast<size_t>(n)];
    if (s.phase != 2) continue;
    const auto& dnn = p_.dnns[static_cast<size_t>(n)];
    int a = accOf(sched, n, s.next);
    double total = dnn.groups[static_cast<size_t>(s.next)].timeMs[static_cast<size_t>(a)];
    if (s.remaining > 1e-9 * std::max(1.0, total)) continue;
    auto& run = result_.dnns[static_cast<size_t>(n)];
    run.groups[static_cast<size_t>(s.next)].end = t;
    int last = s.next;
    ++s.next;
    if (s.next < static_cast<int>(dnn.groups.size())) {
      int b = accOf(sched, n, s.next);
      if (b == a) {
        startGroup(sched, n, t);  // same segment: keeps the accelerator
        continue;
      }
      running_[static_cast<size_t>(a)] = -1;
      double tr = dnn.groups[static_cast<size_t>(last)].transitionOutMs[static_cast<size_t>(a)] +
                  dnn.groups[static_cast<size_t>(s.next)].transitionInMs[static_cast<size_t>(b)];
      run.transitions.push_back({last, a, b, t, t + tr});
      s.phase = 1;
      s.readyTime = t + tr;
      continue;
    }
    running_[static_cast<size_t>(a)] = -1;
    s.phase = 3;
    run.end = t;
    ++ended;
    releaseDependents(sched, n);
  }
  return ended;
}

// Releases the DNNs after `n` whose dependencies have all ended.
void Simulator::releaseDependents(const Schedule& sched, int n) {
  const int N = p_.numDnns();
  for (int m = n + 1; m < N; ++m) {
    const auto& dm = p_.dnns[static_cast<size_t>(m)];
    if (st_[static_cast<size_t>(m)].phase != 0 || std::find(dm.deps.begin(), dm.deps.end(), n) == dm.deps.end())
      continue;
    bool all = true;
    for (int d : dm.deps) all = all && st_[static_cast<size_t>(d)].phase == 3;
    if (!all) continue;
    double ready = 0;
    int b = accOf(sched, m, 0);
    auto& rm = result_.dnns[static_cast<size_t>(m)];
    for (int d : dm.deps) {
      const auto& dd = p_.dnns[static_cast<size_t>(d)];
      int li = static_cast<int>(dd.groups.size()) - 1;
      int la = accOf(sched, d, li);
      double e = result_.dnns[static_cast<size_t>(d)].end;
      double tr = la == b ? 0.0
                          : dd.groups[static_cast<size_t>(li)].transitionOutMs[static_cast<size_t>(la)] +
                                dm.groups[0].transitionInMs[static_cast<size_t>(b)];
      if (tr > 0 || la != b) rm.transitions.push_back({-1, la, b, e, e + tr});
      ready = std::max(ready, e + tr);
    }
    st_[static_cast<size_t>(m)].phase = 1;
    st_[static_cast<size_t>(m)].readyTime = ready;
    rm.release = ready;
  }
}

const SimResult& Simulator::run(const Schedule& sched, const SimOptions& opt) {
  assert(isValidSchedule(p_, sched));
  beginSteps();
  const bool bounding = std::isfinite(opt.abortAfterMs) || opt.abortThroughputAtMost >= 0;
  if (bounding) computeSuffixes(sched);
  while (step(sched, opt, bounding)) {
  }
  if (result_.aborted) {
    result_.latencyMs = std::numeric_limits<double>::infinity();
    result_.throughput = 0;
  } else {
    finish();
  }
  return result_;
}

// One iteration of the event loop (shared by run() and the step-wise runs):
// start the groups that are ready, then simulate up to the next event. False
// once every DNN has ended, or when bounding, once the bound is exceeded
// (result_.aborted).
bool Simulator::step(const Schedule& sched, const SimOptions& opt, bool bounding) {
  startReadyGroups(sched, t_);
  if (done_ == p_.numDnns()) return false;
  const double dt = contentionStep(sched, t_);
  assert(std::isfinite(dt) && "simulation deadlock");
  if (bounding && boundExceeded(t_, opt)) {
    result_.aborted = true;
    return false;
  }
  advance(t_, dt, opt.recordSpans);
  t_ += dt;
  done_ += completeGroups(sched, t_);
  return true;
}

void Simulator::finish() {
  const int N = p_.numDnns();
  result_.latencyMs = 0;
  result_.throughput = 0;
  for (int n = 0; n < N; ++n) {
    auto& run = result_.dnns[static_cast<size_t>(n)];
    result_.latencyMs = std::max(result_.latencyMs, run.end);
    result_.throughput += 1000.0 / (run.end - run.release);
  }
}

void Simulator::beginSteps() {
  reset();
  t_ = 0;
  done_ = 0;
}

int Simulator::neededGroup(const Schedule& partial, int n) const {
  const auto& s = st_[static_cast<size_t>(n)];
  if (s.phase == 3) return -1;
  const auto& a = partial.assign[static_cast<size_t>(n)];
  if (a[static_cast<size_t>(s.next)] < 0) return s.next;
  if (s.phase == 0) return -1;
  if (static_cast<size_t>(s.next) + 1 < a.size() && a[static_cast<size_t>(s.next) + 1] < 0) return s.next + 1;
  return -1;
}

// run()'s event loop (without bounding or spans), pausing at the top of an
// iteration when a decision is due: every read of the schedule in an
// iteration is of a DNN's current or following group (a blocked DNN's first
// group).
int Simulator::advanceToDecision(const Schedule& partial) {
  const int N = p_.numDnns();
  for (;;) {
    for (int n = 0; n < N; ++n)
      if (neededGroup(partial, n) >= 0) return n;
    if (!step(partial, {.recordSpans = false}, false)) break;
  }
  finish();
  return -1;
}

void Simulator::saveSteps(StepState& s) const {
  s.dnns = st_;
  s.running = running_;
  s.t = t_;
  s.done = done_;
  const size_t N = result_.dnns.size();
  s.release.resize(N);
  s.end.resize(N);
  s.transitions.resize(N);
  for (size_t n = 0; n < N; ++n) {
    s.release[n] = result_.dnns[n].release;
    s.end[n] = result_.dnns[n].end;
    s.transitions[n] = result_.dnns[n].transitions.size();
  }
}

void Simulator::restoreSteps(const StepState& s) {
  st_ = s.dnns;
  running_ = s.running;
  t_ = s.t;
  done_ = s.done;
  for (size_t n = 0; n < result_.dnns.size(); ++n) {
    result_.dnns[n].release = s.release[n];
    result_.dnns[n].end = s.end[n];
    result_.dnns[n].transitions.resize(s.transitions[n]);
  }
}

}  // namespace zp::sim
