#include "passes/schedule/timeline_search.h"
#include "libplan/util/infinity.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

namespace zp::schedule {

using sim::Objective;
using sim::Schedule;

namespace {


// Cheapest completions of every DNN from the end of each group: standalone
// time (with transitions) and weighted work per weighting, indexed by group,
// accelerator and transitions left; and prefix sums over runs of groups on
// one accelerator. Weighting k is innermost, so a node's bound reads
// contiguous rows.
struct CompletionTables {
  int A = 0, L = 1;  // L: transition budgets 0..k (1 when unrestricted)
  size_t K = 0;      // weightings
  bool unlimited = false;
  // per DNN: [(i * A + a) * L + l]
  std::vector<std::vector<double>> after;
  // per DNN: [((i * A + a) * L + l) * K + k]
  std::vector<std::vector<double>> wafter;
  // per DNN: [(i * A + a) * K + k] = w_k(i, a) * t(i, a)
  std::vector<std::vector<double>> wwork;
  // per DNN: [i * A + a] = sum of t(g, a) over g < i; and per weighting
  // [(i * A + a) * K + k] = sum of w_k(g, a) t(g, a) over g < i.
  std::vector<std::vector<double>> cumT, cumW;

  size_t at(int i, int a, int l) const {
    return (static_cast<size_t>(i) * static_cast<size_t>(A) + static_cast<size_t>(a)) * static_cast<size_t>(L) +
           static_cast<size_t>(l);
  }
  size_t ia(int i, int a) const { return static_cast<size_t>(i) * static_cast<size_t>(A) + static_cast<size_t>(a); }
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

// The weighted tables of one DNN (global group numbers from `off`).
void addWeightedTables(const sim::Dnn& d, size_t off, const std::vector<WorkWeighting>& ws, CompletionTables& t) {
  const int G = static_cast<int>(d.groups.size());
  const size_t K = t.K, A = static_cast<size_t>(t.A);
  std::vector<double> work(static_cast<size_t>(G) * A * K, 0.0), after(static_cast<size_t>(G * t.A * t.L) * K, 0.0);
  std::vector<double> cum((static_cast<size_t>(G) + 1) * A * K, 0.0);
  for (size_t k = 0; k < K; ++k) {
    std::vector<double> ww(static_cast<size_t>(G) * A, 0.0);
    for (size_t i = 0; i < static_cast<size_t>(G); ++i)
      for (size_t a = 0; a < A; ++a)
        if (d.groups[i].allowed(static_cast<int>(a))) ww[i * A + a] = ws[k][(off + i) * 2 + a] * d.groups[i].timeMs[a];
    auto table = completionTable(d, t, [&](int i, int a) { return ww[t.ia(i, a)]; }, [](int, int, int) { return 0.0; });
    for (size_t x = 0; x < table.size(); ++x) after[x * K + k] = table[x];
    for (size_t x = 0; x < ww.size(); ++x) work[x * K + k] = ww[x];
    for (size_t i = 0; i < static_cast<size_t>(G); ++i)
      for (size_t a = 0; a < A; ++a) cum[((i + 1) * A + a) * K + k] = cum[(i * A + a) * K + k] + ww[i * A + a];
  }
  t.wwork.push_back(std::move(work));
  t.wafter.push_back(std::move(after));
  t.cumW.push_back(std::move(cum));
}

CompletionTables buildTables(const sim::Problem& p, int k, const std::vector<WorkWeighting>& ws) {
  CompletionTables t;
  t.A = p.numAccelerators();
  t.unlimited = k < 0;
  t.L = k < 0 ? 1 : k + 1;
  t.K = ws.size();
  size_t off = 0;
  for (const auto& d : p.dnns) {
    t.after.push_back(completionTable(
        d, t, [&](int i, int a) { return d.groups[static_cast<size_t>(i)].timeMs[static_cast<size_t>(a)]; },
        [&](int i, int a, int b) { return transitionMs(d, i, a, b); }));
    std::vector<double> cum((d.groups.size() + 1) * static_cast<size_t>(t.A), 0.0);
    for (size_t i = 0; i < d.groups.size(); ++i)
      for (size_t a = 0; a < static_cast<size_t>(t.A); ++a)
        cum[(i + 1) * static_cast<size_t>(t.A) + a] =
            cum[i * static_cast<size_t>(t.A) + a] + (d.groups[i].allowed(static_cast<int>(a)) ? d.groups[i].timeMs[a] : 0.0);
    t.cumT.push_back(std::move(cum));
    addWeightedTables(d, off, ws, t);
    off += d.groups.size();
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
    wsum_.assign(tab_.K, 0);
    wmin_.assign(tab_.K, 0);
    res_.unexploredBound = latency() ? kInf : -kInf;
    for (const auto& d : p.dnns) noDeps_ = noDeps_ && d.deps.empty();
  }

  TimelineResult run() {
    sim_.beginSteps();
    node(0);
    res_.complete = !timedOut_;
    return res_;
  }

 private:
  bool latency() const { return prm_.objective == Objective::Latency; }

  // The value to beat: the best schedule found, else the caller's incumbent.
  std::optional<double> incumbent() const { return res_.best ? std::optional<double>(res_.value) : prm_.incumbentValue; }

  bool pruned(double b) const {
    const auto inc = incumbent();
    return inc && !sim::better(prm_.objective, b, *inc);
  }

  void noteUnexplored(double b) {
    res_.unexploredBound = latency() ? std::min(res_.unexploredBound, b) : std::max(res_.unexploredBound, b);
  }

  bool timeUp() {
    if ((++res_.nodes & 255) == 0 && std::chrono::steady_clock::now() > prm_.deadline) timedOut_ = true;
    return timedOut_;
  }

  // Lower bound on DNN n's standalone time from the start of its first
  // unfinished group i0 to its end, and its weighted remaining work per
  // weighting added into wsum_, given the decided prefix of its assignment;
  // `own` is group i0's remaining standalone ms (its whole time when not started).
  // Rows of the weighting tables through data() + offset: with no weightings
  // (K = 0) the tables are empty and indexing them would bind a null reference.
  double restOf(int n, int i0, double own) {
    const auto& d = p_.dnns[static_cast<size_t>(n)];
    const auto& as = partial_.assign[static_cast<size_t>(n)];
    const int G = static_cast<int>(d.groups.size());
    const int left = tab_.unlimited ? 0 : prm_.maxTransitionsPerDnn - used_[static_cast<size_t>(n)];
    const size_t K = tab_.K, un = static_cast<size_t>(n);
    double* ws = wsum_.data();
    if (as[static_cast<size_t>(i0)] < 0) {
      // Not started and not decided (only a DNN's first group): its cheapest start.
      double best = kInf;
      for (size_t k = 0; k < K; ++k) wmin_[k] = kInf;
      for (int a = 0; a < tab_.A; ++a) {
        if (!d.groups[static_cast<size_t>(i0)].allowed(a)) continue;
        best = std::min(best, d.groups[static_cast<size_t>(i0)].timeMs[static_cast<size_t>(a)] + tab_.after[un][tab_.at(i0, a, left)]);
        const double* w = tab_.wwork[un].data() + tab_.ia(i0, a) * K;
        const double* f = tab_.wafter[un].data() + tab_.at(i0, a, left) * K;
        for (size_t k = 0; k < K; ++k) wmin_[k] = std::min(wmin_[k], w[k] + f[k]);
      }
      for (size_t k = 0; k < K; ++k) ws[k] += wmin_[k];
      return best;
    }
    int a = as[static_cast<size_t>(i0)];
    double time = own;
    const double full = d.groups[static_cast<size_t>(i0)].timeMs[static_cast<size_t>(a)];
    const double frac = full > 0 ? own / full : 0.0;
    {
      const double* w = tab_.wwork[un].data() + tab_.ia(i0, a) * K;
      for (size_t k = 0; k < K; ++k) ws[k] += frac * w[k];
    }
    // The decided groups after i0, run by run (prefix sums per accelerator).
    int j = i0;
    while (j + 1 < G && as[static_cast<size_t>(j) + 1] >= 0) {
      const int b = as[static_cast<size_t>(j) + 1];
      if (b != a) time += transitionMs(d, j, a, b);
      int r = j + 1;
      while (r + 1 < G && as[static_cast<size_t>(r) + 1] == b) ++r;
      time += tab_.cumT[un][tab_.ia(r + 1, b)] - tab_.cumT[un][tab_.ia(j + 1, b)];
      const double* hi = tab_.cumW[un].data() + tab_.ia(r + 1, b) * K;
      const double* lo = tab_.cumW[un].data() + tab_.ia(j + 1, b) * K;
      for (size_t k = 0; k < K; ++k) ws[k] += hi[k] - lo[k];
      j = r;
      a = b;
    }
    const double* f = tab_.wafter[un].data() + tab_.at(j, a, left) * K;
    for (size_t k = 0; k < K; ++k) ws[k] += f[k];
    return time + tab_.after[un][tab_.at(j, a, left)];
  }

  // Adds DNN n's part of the bound at the current pause: its end bound to
  // lat (max), its rate bound to rate, its weighted rest to wsum_.
  void addDnn(int n, double& lat, double& rate) {
    const double t = sim_.stepTime();
    const auto& res = sim_.partialResult().dnns[static_cast<size_t>(n)];
    const auto& s = sim_.dnnState(n);
    const auto& d = p_.dnns[static_cast<size_t>(n)];
    double start = t, release = 0;
    switch (s.phase) {
      case 3:
        endLb_[static_cast<size_t>(n)] = res.end;
        lat = std::max(lat, res.end);
        rate += 1000.0 / (res.end - res.release);
        return;
      case 0:
        start = 0;
        for (int dep : d.deps) start = std::max(start, endLb_[static_cast<size_t>(dep)]);
        release = start;
        break;
      case 1:
        start = std::max(t, s.readyTime);
        release = s.next == 0 ? s.readyTime : res.release;
        break;
      default:
        release = res.release;
        break;
    }
    const int a = partial_.assign[static_cast<size_t>(n)][static_cast<size_t>(s.next)];
    const double own = s.phase == 2 ? s.remaining : a >= 0 ? d.groups[static_cast<size_t>(s.next)].timeMs[static_cast<size_t>(a)] : 0.0;
    const double end = start + restOf(n, s.next, own);
    endLb_[static_cast<size_t>(n)] = end;
    lat = std::max(lat, end);
    rate += 1000.0 / (end - release);
  }

  // Bound on the objective of every completion of the current partial
  // schedule from the current pause (latency: lower; throughput: upper).
  // With `only` >= 0, the other DNNs' parts are taken from `base` (setBase(only)).
  struct Base {
    double lat = 0, rate = 0;
    std::vector<double> w;
  };
  double bound(int only = -1, const Base* base = nullptr) {
    double lat = 0, rate = 0;
    if (only >= 0) {
      lat = base->lat;
      rate = base->rate;
      std::copy(base->w.begin(), base->w.end(), wsum_.begin());
      addDnn(only, lat, rate);
    } else {
      std::fill(wsum_.begin(), wsum_.end(), 0.0);
      for (int n = 0; n < p_.numDnns(); ++n) addDnn(n, lat, rate);
    }
    // A hair towards the weak side: the prefix sums above differ from the
    // simulator's own sums by rounding.
    if (!latency()) return rate * (1 + 1e-12);
    const double t = sim_.stepTime();
    for (double w : wsum_) lat = std::max(lat, t + w);
    return lat * (1 - 1e-12);
  }

  // The parts of every DNN but n, which a decision on n leaves unchanged
  // when no DNN depends on another.
  void setBase(int n, Base& base) {
    base.lat = 0;
    base.rate = 0;
    std::fill(wsum_.begin(), wsum_.end(), 0.0);
    for (int m = 0; m < p_.numDnns(); ++m)
      if (m != n) addDnn(m, base.lat, base.rate);
    base.w = wsum_;
  }

  void leaf() {
    ++res_.leaves;
    double v = sim_.partialResult().value(prm_.objective);
    if (pruned(v)) return;
    // The value is the simulator's own (same event loop); a full run confirms it.
    double full = check_.run(partial_, {.recordSpans = false}).value(prm_.objective);
    assert(std::fabs(full - v) <= 1e-9 * std::max(1.0, std::fabs(v)));
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
    if (saved_.size() <= depth) {
      saved_.resize(depth + 1);
      bases_.resize(depth + 1);
    }
    sim_.saveSteps(saved_[depth]);
    if (noDeps_) setBase(n, bases_[depth]);
    bool first = true;
    for (int o = 0; o < cnt; ++o) {
      const int a = opts[o];
      const int usedBefore = used_[static_cast<size_t>(n)];
      const int last = decide(n, i, a);
      if (last >= 0) {
        if (!first) sim_.restoreSteps(saved_[depth]);
        first = false;
        double b = noDeps_ ? bound(n, &bases_[depth]) : bound();
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
  std::vector<double> endLb_, wsum_, wmin_;
  std::vector<Base> bases_;  // per depth
  bool noDeps_ = true;
  std::vector<sim::Simulator::StepState> saved_;
  TimelineResult res_;
  bool timedOut_ = false;
};

}  // namespace

TimelineResult timelineSearch(const sim::Problem& problem, const TimelineParams& params) {
  Timeline t(problem, params);
  return t.run();
}

}  // namespace zp::schedule
