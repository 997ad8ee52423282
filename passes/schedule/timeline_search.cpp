#include "passes/schedule/timeline_search.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

namespace zp::schedule {

using sim::Objective;
using sim::Schedule;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Cheapest completions of every DNN from the end of each group: standalone
// time (with transitions) and weighted work per weighting, indexed by group,
// accelerator and transitions left.
struct CompletionTables {
  int A = 0, L = 1;  // L: transition budgets 0..k (1 when unrestricted)
  bool unlimited = false;
  // per DNN: [(i * A + a) * L + l]
  std::vector<std::vector<double>> after;
  // per weighting, per DNN: same layout
  std::vector<std::vector<std::vector<double>>> wafter;
  // per weighting, per DNN: [i * A + a] = w * t
  std::vector<std::vector<std::vector<double>>> wwork;

  size_t at(int i, int a, int l) const {
    return (static_cast<size_t>(i) * static_cast<size_t>(A) + static_cast<size_t>(a)) * static_cast<size_t>(L) +
           static_cast<size_t>(l);
  }
};

double transitionMs(const sim::Dnn& d, int i, int a, int b) {
  return d.groups[static_cast<size_t>(i)].transitionOutMs[static_cast<size_t>(a)] +
         d.groups[static_cast<size_t>(i) + 1].transitionInMs[static_cast<size_t>(b)];
}

// One table: cost(i, a) of running group i on a, trans(i, a, b) of moving
// from group i on a to group i + 1 on b.
template <class Cost, class Trans>
std::vector<double> completionTable(const sim::Dnn& d, const CompletionTables& t, Cost cost, Trans trans) {
  const int G = static_cast<int>(d.groups.size());
  std::vector<double> out(static_cast<size_t>(G * t.A * t.L), kInf);
  for (int a = 0; a < t.A; ++a)
    for (int l = 0; l < t.L; ++l) out[t.at(G - 1, a, l)] = 0;
  for (int i = G - 2; i >= 0; --i)
    for (int a = 0; a < t.A; ++a)
      for (int l = 0; l < t.L; ++l) {
        double best = kInf;
        for (int b = 0; b < t.A; ++b) {
          if (!d.groups[static_cast<size_t>(i) + 1].allowed(b)) continue;
          if (b == a) {
            best = std::min(best, cost(i + 1, b) + out[t.at(i + 1, b, l)]);
          } else if (t.unlimited || l > 0) {
            int nl = t.unlimited ? 0 : l - 1;
            best = std::min(best, trans(i, a, b) + cost(i + 1, b) + out[t.at(i + 1, b, nl)]);
          }
        }
        out[t.at(i, a, l)] = best;
      }
  return out;
}

CompletionTables buildTables(const sim::Problem& p, int k, const std::vector<WorkWeighting>& ws) {
  CompletionTables t;
  t.A = p.numAccelerators();
  t.unlimited = k < 0;
  t.L = k < 0 ? 1 : k + 1;
  for (const auto& d : p.dnns)
    t.after.push_back(completionTable(
        d, t, [&](int i, int a) { return d.groups[static_cast<size_t>(i)].timeMs[static_cast<size_t>(a)]; },
        [&](int i, int a, int b) { return transitionMs(d, i, a, b); }));
  for (const auto& w : ws) {
    std::vector<std::vector<double>> perDnn, work;
    size_t off = 0;
    for (const auto& d : p.dnns) {
      std::vector<double> ww(d.groups.size() * static_cast<size_t>(t.A), 0.0);
      for (size_t i = 0; i < d.groups.size(); ++i)
        for (size_t a = 0; a < static_cast<size_t>(t.A); ++a)
          if (d.groups[i].allowed(static_cast<int>(a))) ww[i * static_cast<size_t>(t.A) + a] = w[(off + i) * 2 + a] * d.groups[i].timeMs[a];
      perDnn.push_back(completionTable(
          d, t, [&](int i, int a) { return ww[static_cast<size_t>(i * t.A + a)]; }, [](int, int, int) { return 0.0; }));
      work.push_back(std::move(ww));
      off += d.groups.size();
    }
    t.wafter.push_back(std::move(perDnn));
    t.wwork.push_back(std::move(work));
  }
  return t;
}

class Timeline {
 public:
  Timeline(const sim::Problem& p, const TimelineParams& prm)
      : p_(p), prm_(prm), sim_(p), check_(p),
        tab_(buildTables(p, prm.maxTransitionsPerDnn, prm.weightings ? *prm.weightings : std::vector<WorkWeighting>{})) {
    const size_t N = static_cast<size_t>(p.numDnns());
    partial_.assign.resize(N);
    for (size_t n = 0; n < N; ++n) partial_.assign[n].assign(p.dnns[n].groups.size(), -1);
    used_.assign(N, 0);
    endLb_.assign(N, 0);
    wsum_.assign(tab_.wafter.size(), 0);
    res_.unexploredBound = p_objLatency() ? kInf : -kInf;
    if (prm.incumbentValue) incumbent_ = *prm.incumbentValue;
  }

  TimelineResult run() {
    sim_.beginSteps();
    node(0);
    res_.complete = !timedOut_;
    return res_;
  }

 private:
  bool p_objLatency() const { return prm_.objective == Objective::Latency; }

  bool pruned(double b) const { return incumbent_ && !sim::better(prm_.objective, b, *incumbent_); }

  void noteUnexplored(double b) {
    res_.unexploredBound = p_objLatency() ? std::min(res_.unexploredBound, b) : std::max(res_.unexploredBound, b);
  }

  bool timeUp() {
    if ((++res_.nodes & 255) == 0 && std::chrono::steady_clock::now() > prm_.deadline) timedOut_ = true;
    return timedOut_;
  }

  // Lower bound on DNN n's standalone time from `from` (the end of its first
  // unfinished group) to its end, and its weighted remaining work per
  // weighting added into wsum_, given the decided prefix of its assignment.
  // i0 is its first unfinished group; `own` that group's remaining standalone
  // ms (its whole time when not started).
  double restOf(int n, int i0, double own) {
    const auto& d = p_.dnns[static_cast<size_t>(n)];
    const auto& as = partial_.assign[static_cast<size_t>(n)];
    const int G = static_cast<int>(d.groups.size());
    const int left = tab_.unlimited ? 0 : prm_.maxTransitionsPerDnn - used_[static_cast<size_t>(n)];
    const size_t K = tab_.wafter.size();
    if (as[static_cast<size_t>(i0)] < 0) {
      // Not started and not decided (only a DNN's first group): its cheapest start.
      double best = kInf;
      for (int a = 0; a < tab_.A; ++a)
        if (d.groups[static_cast<size_t>(i0)].allowed(a))
          best = std::min(best, d.groups[static_cast<size_t>(i0)].timeMs[static_cast<size_t>(a)] +
                                    tab_.after[static_cast<size_t>(n)][tab_.at(i0, a, left)]);
      for (size_t k = 0; k < K; ++k) {
        double wb = kInf;
        for (int a = 0; a < tab_.A; ++a)
          if (d.groups[static_cast<size_t>(i0)].allowed(a))
            wb = std::min(wb, tab_.wwork[k][static_cast<size_t>(n)][static_cast<size_t>(i0 * tab_.A + a)] +
                                  tab_.wafter[k][static_cast<size_t>(n)][tab_.at(i0, a, left)]);
        wsum_[k] += wb;
      }
      return best;
    }
    int a = as[static_cast<size_t>(i0)];
    double time = own;
    const double full = d.groups[static_cast<size_t>(i0)].timeMs[static_cast<size_t>(a)];
    const double frac = full > 0 ? own / full : 0.0;
    for (size_t k = 0; k < K; ++k) wsum_[k] += frac * tab_.wwork[k][static_cast<size_t>(n)][static_cast<size_t>(i0 * tab_.A + a)];
    int j = i0;
    while (j + 1 < G && as[static_cast<size_t>(j) + 1] >= 0) {
      int b = as[static_cast<size_t>(j) + 1];
      if (b != a) time += transitionMs(d, j, a, b);
      time += d.groups[static_cast<size_t>(j) + 1].timeMs[static_cast<size_t>(b)];
      for (size_t k = 0; k < K; ++k) wsum_[k] += tab_.wwork[k][static_cast<size_t>(n)][static_cast<size_t>((j + 1) * tab_.A + b)];
      ++j;
      a = b;
    }
    for (size_t k = 0; k < K; ++k) wsum_[k] += tab_.wafter[k][static_cast<size_t>(n)][tab_.at(j, a, left)];
    return time + tab_.after[static_cast<size_t>(n)][tab_.at(j, a, left)];
  }

  // Bound on the objective of every completion of the current partial
  // schedule from the current pause (latency: lower; throughput: upper).
  double bound() {
    const int N = p_.numDnns();
    const double t = sim_.stepTime();
    std::fill(wsum_.begin(), wsum_.end(), 0.0);
    double lat = 0, rate = 0;
    const auto& res = sim_.partialResult();
    for (int n = 0; n < N; ++n) {
      const auto& s = sim_.dnnState(n);
      const auto& d = p_.dnns[static_cast<size_t>(n)];
      double start = t, release = 0;
      switch (s.phase) {
        case 3:
          endLb_[static_cast<size_t>(n)] = res.dnns[static_cast<size_t>(n)].end;
          lat = std::max(lat, endLb_[static_cast<size_t>(n)]);
          rate += 1000.0 / (res.dnns[static_cast<size_t>(n)].end - res.dnns[static_cast<size_t>(n)].release);
          continue;
        case 0:
          start = 0;
          for (int dep : d.deps) start = std::max(start, endLb_[static_cast<size_t>(dep)]);
          release = start;
          break;
        case 1:
          start = std::max(t, s.readyTime);
          release = s.next == 0 ? s.readyTime : res.dnns[static_cast<size_t>(n)].release;
          break;
        default:
          release = res.dnns[static_cast<size_t>(n)].release;
          break;
      }
      const auto& g = d.groups[static_cast<size_t>(s.next)];
      double own = s.phase == 2 ? s.remaining
                   : partial_.assign[static_cast<size_t>(n)][static_cast<size_t>(s.next)] >= 0
                       ? g.timeMs[static_cast<size_t>(partial_.assign[static_cast<size_t>(n)][static_cast<size_t>(s.next)])]
                       : 0.0;
      double end = start + restOf(n, s.next, own);
      endLb_[static_cast<size_t>(n)] = end;
      lat = std::max(lat, end);
      rate += 1000.0 / (end - release);
    }
    if (!p_objLatency()) return rate;
    for (double w : wsum_) lat = std::max(lat, t + w);
    return lat;
  }

  void leaf() {
    ++res_.leaves;
    double v = sim_.partialResult().value(prm_.objective);
    if (incumbent_ && !sim::better(prm_.objective, v, *incumbent_)) return;
    // The value is the simulator's own (same event loop); a full run confirms it.
    double full = check_.run(partial_, {.recordSpans = false}).value(prm_.objective);
    assert(std::fabs(full - v) <= 1e-9 * std::max(1.0, std::fabs(v)));
    incumbent_ = full;
    res_.best = partial_;
    res_.value = full;
    if (prm_.onImprove) prm_.onImprove(partial_, full);
  }

  // Accelerators group i of DNN n may take, the guide's first, then staying.
  int options(int n, int i, int out[]) const {
    const auto& d = p_.dnns[static_cast<size_t>(n)];
    const auto& as = partial_.assign[static_cast<size_t>(n)];
    const int prev = i > 0 ? as[static_cast<size_t>(i) - 1] : -1;
    const bool canSwitch = tab_.unlimited || used_[static_cast<size_t>(n)] < prm_.maxTransitionsPerDnn;
    int order[16], m = 0;
    if (prm_.guide) order[m++] = prm_.guide->assign[static_cast<size_t>(n)][static_cast<size_t>(i)];
    if (prev >= 0) order[m++] = prev;
    for (int a = 0; a < tab_.A && m < 16; ++a) order[m++] = a;
    int cnt = 0;
    for (int j = 0; j < m; ++j) {
      int a = order[j];
      if (!d.groups[static_cast<size_t>(i)].allowed(a)) continue;
      if (prev >= 0 && a != prev && !canSwitch) continue;
      if (std::find(out, out + cnt, a) != out + cnt) continue;
      out[cnt++] = a;
    }
    return cnt;
  }

  // Decides group i of DNN n; with no transition left, the rest of the DNN
  // too. Returns the last group set, or -1 when the rest cannot stay on a.
  int decide(int n, int i, int a) {
    auto& as = partial_.assign[static_cast<size_t>(n)];
    const auto& d = p_.dnns[static_cast<size_t>(n)];
    if (i > 0 && as[static_cast<size_t>(i) - 1] != a) ++used_[static_cast<size_t>(n)];
    as[static_cast<size_t>(i)] = a;
    int last = i;
    if (!tab_.unlimited && used_[static_cast<size_t>(n)] == prm_.maxTransitionsPerDnn) {
      for (size_t j = static_cast<size_t>(i) + 1; j < as.size(); ++j) {
        if (!d.groups[j].allowed(a)) return -1;
        as[j] = a;
        last = static_cast<int>(j);
      }
    }
    return last;
  }

  void node(size_t depth) {
    const int n = sim_.advanceToDecision(partial_);
    if (n < 0) {
      leaf();
      return;
    }
    const int i = sim_.neededGroup(partial_, n);
    int opts[16];
    const int cnt = options(n, i, opts);
    if (saved_.size() <= depth) saved_.resize(depth + 1);
    sim_.saveSteps(saved_[depth]);
    bool first = true;
    for (int o = 0; o < cnt; ++o) {
      const int a = opts[o];
      const int usedBefore = used_[static_cast<size_t>(n)];
      const int last = decide(n, i, a);
      if (last >= 0) {
        if (!first) sim_.restoreSteps(saved_[depth]);
        first = false;
        double b = bound();
        if (!pruned(b)) {
          if (timedOut_ || timeUp()) noteUnexplored(b);
          else node(depth + 1);
        }
      }
      // Undo: this group and whatever decide() filled after it.
      auto& as = partial_.assign[static_cast<size_t>(n)];
      for (size_t j = static_cast<size_t>(i); j < as.size(); ++j) as[j] = -1;
      used_[static_cast<size_t>(n)] = usedBefore;
    }
  }

  const sim::Problem& p_;
  const TimelineParams& prm_;
  sim::Simulator sim_, check_;
  CompletionTables tab_;
  Schedule partial_;
  std::vector<int> used_;
  std::vector<double> endLb_, wsum_;
  std::vector<sim::Simulator::StepState> saved_;
  std::optional<double> incumbent_;
  TimelineResult res_;
  bool timedOut_ = false;
};

}  // namespace

TimelineResult timelineSearch(const sim::Problem& problem, const TimelineParams& params) {
  Timeline t(problem, params);
  return t.run();
}

}  // namespace zp::schedule
