#include "passes/schedule/exact.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>

#include "libplan/util/stats.h"
#include "passes/schedule/timeline_search.h"
#include "passes/schedule/work_weights.h"

namespace zp::schedule {

using sim::Objective;
using sim::Problem;
using sim::Schedule;

namespace {

struct Candidate {
  std::vector<int> assign;
  double chain = 0;           // standalone time incl. internal transitions
  std::vector<double> load;   // standalone work per accelerator
  double work = 0;            // total standalone work
  // Standalone time of the chain before its first group on each accelerator
  // and after its last one (infinity when the accelerator is unused).
  std::vector<double> head, tail;
  // Weighted work under each contention-aware weighting (work_weights.h).
  std::vector<double> weighted;
  // Maximal runs on one accelerator: (first group, accelerator), in order.
  std::vector<std::pair<int, int>> segments;
};

uint64_t satAdd(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

void enumerate(const sim::Dnn& d, int A, int k, std::vector<int>& cur, int used, std::vector<Candidate>& out) {
  size_t i = cur.size();
  if (i == d.groups.size()) {
    Candidate c;
    c.assign = cur;
    c.load.assign(static_cast<size_t>(A), 0);
    for (size_t g = 0; g < cur.size(); ++g) {
      double t = d.groups[g].timeMs[static_cast<size_t>(cur[g])];
      c.chain += t;
      c.load[static_cast<size_t>(cur[g])] += t;
      c.work += t;
      if (g > 0 && cur[g] != cur[g - 1])
        c.chain += d.groups[g - 1].transitionOutMs[static_cast<size_t>(cur[g - 1])] +
                   d.groups[g].transitionInMs[static_cast<size_t>(cur[g])];
    }
    const double inf = std::numeric_limits<double>::infinity();
    c.head.assign(static_cast<size_t>(A), inf);
    c.tail.assign(static_cast<size_t>(A), inf);
    double t = 0;  // standalone time elapsed before group g (incl. transitions)
    for (size_t g = 0; g < cur.size(); ++g) {
      if (g > 0 && cur[g] != cur[g - 1])
        t += d.groups[g - 1].transitionOutMs[static_cast<size_t>(cur[g - 1])] +
             d.groups[g].transitionInMs[static_cast<size_t>(cur[g])];
      auto a = static_cast<size_t>(cur[g]);
      if (c.head[a] == inf) c.head[a] = t;
      t += d.groups[g].timeMs[a];
      c.tail[a] = c.chain - t;
    }
    for (size_t g = 0; g < cur.size(); ++g)
      if (g == 0 || cur[g] != cur[g - 1]) c.segments.emplace_back(static_cast<int>(g), cur[g]);
    out.push_back(std::move(c));
    return;
  }
  for (int a = 0; a < A; ++a) {
    if (!d.groups[i].allowed(a)) continue;
    bool change = i > 0 && cur.back() != a;
    if (change && k >= 0 && used >= k) continue;
    cur.push_back(a);
    enumerate(d, A, k, cur, used + (change ? 1 : 0), out);
    cur.pop_back();
  }
}

class Search {
 public:
  Search(const Problem& p, const ExactParams& prm) : p_(p), prm_(prm), sim_(p) {}

  Expected<ExactResult> run() {
    start_ = std::chrono::steady_clock::now();
    const int N = p_.numDnns(), A = p_.numAccelerators();
    obj_ = prm_.objective;
    for (int n = 0; n < N; ++n) {
      uint64_t count = countAssignments(p_.dnns[static_cast<size_t>(n)], A, prm_.maxTransitionsPerDnn);
      if (count > prm_.maxCandidatesPerDnn)
        return makeError("exact search: DNN '{}' has {} candidate assignments with at most {} transitions "
                         "(limit {}); lower the transition limit",
                         p_.dnns[static_cast<size_t>(n)].name, count == UINT64_MAX ? std::string("> 2^64") : std::to_string(count),
                         prm_.maxTransitionsPerDnn, prm_.maxCandidatesPerDnn);
    }
    cands_.resize(static_cast<size_t>(N));
    minChain_.assign(static_cast<size_t>(N), 0);
    minWork_.assign(static_cast<size_t>(N), 0);
    for (int n = 0; n < N; ++n) {
      std::vector<int> cur;
      auto& cs = cands_[static_cast<size_t>(n)];
      enumerate(p_.dnns[static_cast<size_t>(n)], A, prm_.maxTransitionsPerDnn, cur, 0, cs);
      std::stable_sort(cs.begin(), cs.end(), [](const Candidate& a, const Candidate& b) {
        if (a.chain != b.chain) return a.chain < b.chain;
        return a.assign < b.assign;
      });
      minChain_[static_cast<size_t>(n)] = cs.front().chain;
      double mw = std::numeric_limits<double>::infinity();
      for (const auto& c : cs) mw = std::min(mw, c.work);
      minWork_[static_cast<size_t>(n)] = mw;
    }
    if (obj_ == Objective::Latency && prm_.contentionBoundSteps > 0 && A == 2) {
      builder_ = std::make_unique<WorkWeightBuilder>(p_);
      weightings_ = builder_->family(prm_.contentionBoundSteps);
    }
    suffixW_.assign(static_cast<size_t>(N) + 1, {});
    pw_.assign(static_cast<size_t>(N) + 1, {});
    addWeightedColumns(0);
    res_.value = sim::worstValue(obj_);
    if (prm_.initial) {
      const auto& r = sim_.run(*prm_.initial, {.recordSpans = false});
      ++res_.simulations;
      improve(*prm_.initial, r.value(obj_), prm_.initialName);
    }
    choice_.assign(static_cast<size_t>(N), 0);
    noDeps_ = true;
    for (const auto& d : p_.dnns) noDeps_ = noDeps_ && d.deps.empty();
    ef_.assign(static_cast<size_t>(N), 0);
    load_.assign(static_cast<size_t>(A), 0);
    bound_ = obj_ == Objective::Latency ? std::numeric_limits<double>::infinity() : 0.0;
    deepen();
    descend();
    if (!weightings_.empty()) {
      if (prm_.targetIncumbent && !res_.best.assign.empty()) addWeighting(builder_->targeted(res_.best, 200));
      strengthenRelaxation();
    }
    if (prm_.timelineTree) {
      timeline();
    } else {
      dfs(0, 0.0, 0.0, 0.0);  // notes the bound of what it leaves unexplored, even on entry after a time-out
    }
    res_.optimal = !timedOut_;
    if (res_.optimal) {
      res_.bound = res_.value;
    } else {
      if (obj_ == Objective::Latency) {
        // Also the relaxations over all assignments: total work spread over
        // the accelerators, and each contention-aware weighting.
        double total = 0;
        for (double w : minWork_) total += w;
        double relaxed = total / A;
        for (double w : suffixW_[0]) relaxed = std::max(relaxed, w);
        res_.bound = std::max(std::min(bound_, res_.value), std::min(res_.value, relaxed));
      } else {
        res_.bound = std::max(bound_, res_.value);
      }
    }
    res_.elapsedMs = elapsedMs();
    return res_;
  }

 private:
  double elapsedMs() const { return msSince(start_); }

  // The proof: branch and bound over the simulated timeline (timeline_search.h)
  // from the incumbent, with the weightings found above.
  void timeline() {
    TimelineParams tp;
    tp.objective = obj_;
    tp.maxTransitionsPerDnn = prm_.maxTransitionsPerDnn;
    tp.deadline = start_ + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                               std::chrono::duration<double>(prm_.timeLimitS));
    tp.weightings = &weightings_;
    // A copy: improve() replaces res_.best while the search still reads the guide.
    const Schedule guide = res_.best;
    if (!guide.assign.empty()) {
      tp.incumbentValue = res_.value;
      tp.guide = &guide;
    }
    tp.onImprove = [&](const Schedule& s, double v) { improve(s, v, "exact-bnb"); };
    TimelineResult r = timelineSearch(p_, tp);
    res_.nodes += r.nodes;
    res_.simulations += r.leaves;
    if (!r.complete) {
      timedOut_ = true;
      noteUnexplored(r.unexploredBound);
    }
  }

  // Weighted work of every candidate under weightings from..weightings_.size()-1
  // (one pass over the candidates, from prefix sums over each DNN's groups),
  // and per level the least the remaining DNNs can add (the relaxation of
  // the rest).
  void addWeightedColumns(size_t from) {
    const size_t N = static_cast<size_t>(p_.numDnns()), K = weightings_.size();
    for (auto& v : pw_) v.resize(K, 0.0);
    suffixW_[N].resize(K, 0.0);
    size_t off = 0;
    std::vector<size_t> offsets(N);
    for (size_t n = 0; n < N; ++n, off += p_.dnns[n - 1].groups.size()) offsets[n] = off;
    // prefix[(k - from) * 2 + a][i]: weighted work of groups 0..i-1 all on accelerator a.
    std::vector<std::vector<double>> prefix((K - from) * 2);
    for (size_t n = N; n-- > 0;) {
      const auto& d = p_.dnns[n];
      const size_t G = d.groups.size();
      for (size_t k = from; k < K; ++k)
        for (size_t a = 0; a < 2; ++a) {
          auto& pre = prefix[(k - from) * 2 + a];
          pre.assign(G + 1, 0.0);
          for (size_t i = 0; i < G; ++i)
            pre[i + 1] = pre[i] + (d.groups[i].allowed(static_cast<int>(a))
                                       ? weightings_[k][(offsets[n] + i) * 2 + a] * d.groups[i].timeMs[a] : 0.0);
        }
      std::vector<double> mn(K, std::numeric_limits<double>::infinity());
      for (auto& c : cands_[n]) {
        c.weighted.resize(K, 0.0);
        for (size_t j = 0; j < c.segments.size(); ++j) {
          auto [first, a] = c.segments[j];
          size_t end = j + 1 < c.segments.size() ? static_cast<size_t>(c.segments[j + 1].first) : G;
          for (size_t k = from; k < K; ++k) {
            const auto& pre = prefix[(k - from) * 2 + static_cast<size_t>(a)];
            c.weighted[k] += pre[end] - pre[static_cast<size_t>(first)];
          }
        }
        for (size_t k = from; k < K; ++k) mn[k] = std::min(mn[k], c.weighted[k]);
      }
      suffixW_[n].resize(K);
      for (size_t k = from; k < K; ++k) suffixW_[n][k] = suffixW_[n + 1][k] + mn[k];
    }
  }

  void addWeighting(WorkWeighting w) {
    weightings_.push_back(std::move(w));
    addWeightedColumns(weightings_.size() - 1);
  }

  // The Lagrangian relaxation of the whole space, by cutting planes: the
  // convex combination theta of the weightings that maximises the bound
  // sum_n min_c theta . weighted(c) (projected subgradient ascent) is added
  // (raised) as a weighting, and so is a weighting aimed at the assignment
  // that relaxation picks, which the current weightings bound worst.
  void strengthenRelaxation() {
    double combos = 1;
    for (const auto& cs : cands_) combos *= static_cast<double>(cs.size());
    if (combos < prm_.relaxationMinAssignments) return;  // the tree search alone is quicker there
    for (int round = 0; round < prm_.relaxationRounds && !weightings_.empty(); ++round) {
      if (elapsedMs() > prm_.timeLimitS * 1000.0 * 0.75) break;  // leave the tree search its share
      std::vector<double> theta;
      Schedule argmin = bestCombination(theta);
      addWeighting(builder_->combine(weightings_, theta));
      addWeighting(builder_->targeted(argmin, 200));
    }
  }

  // Projected subgradient ascent on theta; returns the relaxation's
  // assignment at the best theta found.
  Schedule bestCombination(std::vector<double>& best) {
    const size_t K = weightings_.size();
    size_t cands = 0;
    for (const auto& cs : cands_) cands += cs.size();
    const int iters = static_cast<int>(std::clamp<size_t>(20'000'000 / std::max<size_t>(1, cands * K), 10, 200));
    std::vector<double> theta(K, 1.0 / static_cast<double>(K)), g(K);
    best = theta;
    Schedule arg, bestArg;
    arg.assign.resize(cands_.size());
    double bestV = -1;
    for (int it = 0; it < iters; ++it) {
      std::fill(g.begin(), g.end(), 0.0);
      double v = 0;
      for (size_t n = 0; n < cands_.size(); ++n) {
        const Candidate* mnC = nullptr;
        double mn = std::numeric_limits<double>::infinity();
        for (const auto& c : cands_[n]) {
          double dot = 0;
          for (size_t k = 0; k < K; ++k) dot += theta[k] * c.weighted[k];
          if (dot < mn) mn = dot, mnC = &c;
        }
        v += mn;
        for (size_t k = 0; k < K; ++k) g[k] += mnC->weighted[k];
        arg.assign[n] = mnC->assign;
      }
      if (v > bestV) bestV = v, best = theta, bestArg = arg;
      double gmax = 0;
      for (double x : g) gmax = std::max(gmax, std::fabs(x));
      if (gmax == 0) break;
      for (size_t k = 0; k < K; ++k) theta[k] += 0.5 / (1.0 + it) * g[k] / gmax;
      projectToSimplex(theta);
    }
    return bestArg;
  }

  static void projectToSimplex(std::vector<double>& v) {
    std::vector<double> u = v;
    std::sort(u.begin(), u.end(), std::greater<>());
    double cum = 0, tau = 0;
    for (size_t i = 0; i < u.size(); ++i) {
      cum += u[i];
      double t = (cum - 1.0) / static_cast<double>(i + 1);
      if (u[i] - t > 0) tau = t;
    }
    for (double& x : v) x = std::max(0.0, x - tau);
  }

  // Contention-aware makespan bound for candidate c at level n: the DNNs
  // above chosen, c, and the least the DNNs below can add, per weighting.
  double weightedBound(int n, const Candidate& c) const {
    double lb = 0;
    const auto& pw = pw_[static_cast<size_t>(n)];
    const auto& suf = suffixW_[static_cast<size_t>(n) + 1];
    for (size_t k = 0; k < c.weighted.size(); ++k) lb = std::max(lb, pw[k] + c.weighted[k] + suf[k]);
    return lb;
  }

  // A good incumbent first: the optimum with one transition fewer per DNN
  // (a subspace, usually much faster to prove), within a quarter of the time.
  void deepen() {
    const int k = prm_.maxTransitionsPerDnn;
    if (!prm_.deepenTransitions || k < 2) return;
    ExactParams sub = prm_;
    sub.maxTransitionsPerDnn = k - 1;
    sub.timeLimitS = prm_.timeLimitS / 4;
    sub.initial = res_.best.assign.empty() ? std::nullopt : std::optional<Schedule>(res_.best);
    sub.initialName = res_.bestBy;
    sub.onImprove = nullptr;
    Search inner(p_, sub);
    auto r = inner.run();
    if (!r.ok()) return;
    res_.simulations += r->simulations;
    res_.nodes += r->nodes;
    improve(r->best, r->value, r->bestBy);
  }

  void improve(const Schedule& s, double v, const std::string& by) {
    if (!sim::better(obj_, v, res_.value) && !res_.best.assign.empty()) return;
    res_.best = s;
    res_.value = v;
    res_.bestBy = by;
    if (prm_.onImprove) prm_.onImprove(elapsedMs(), v, by);
  }

  // Contention-free lower bound on the latency of DNN n's completion given the
  // chain time of its candidate and the completion bounds of its dependencies.
  double efOf(int n, double chain) const {
    double r = 0;
    for (int d : p_.dnns[static_cast<size_t>(n)].deps) r = std::max(r, ef_[static_cast<size_t>(d)]);
    return r + chain;
  }

  // Bound from DNN n's chain term alone (monotone in the sorted candidate order):
  // latency: lower bound on max_n end_n; throughput: upper bound on sum 1000/T_n.
  double chainBound(int n, double chain, double maxEf, double invSum) {
    const int N = p_.numDnns();
    if (obj_ == Objective::Latency) {
      double saved = ef_[static_cast<size_t>(n)];
      ef_[static_cast<size_t>(n)] = efOf(n, chain);
      double lb = std::max(maxEf, ef_[static_cast<size_t>(n)]);
      for (int m = n + 1; m < N; ++m) {
        ef_[static_cast<size_t>(m)] = efOf(m, minChain_[static_cast<size_t>(m)]);
        lb = std::max(lb, ef_[static_cast<size_t>(m)]);
      }
      ef_[static_cast<size_t>(n)] = saved;
      return lb;
    }
    double ub = invSum + 1000.0 / chain;
    for (int m = n + 1; m < N; ++m) ub += 1000.0 / minChain_[static_cast<size_t>(m)];
    return ub;
  }

  bool pruned(double boundValue) const {
    // Nothing under this bound can be strictly better than the incumbent.
    return !res_.best.assign.empty() && !sim::better(obj_, boundValue, res_.value);
  }

  void noteUnexplored(double b) {
    bound_ = obj_ == Objective::Latency ? std::min(bound_, b) : std::max(bound_, b);
  }

  bool checkTime() {
    if ((++res_.nodes & 255) == 0 && elapsedMs() > prm_.timeLimitS * 1000.0) timedOut_ = true;
    return timedOut_;
  }

  // The incumbent's candidate per DNN when it lies in the space; otherwise
  // every DNN's fastest standalone candidate (index 0).
  std::vector<size_t> incumbentIndices() const {
    const int N = p_.numDnns();
    std::vector<size_t> idx(static_cast<size_t>(N), 0);
    if (res_.best.assign.empty()) return idx;
    for (int n = 0; n < N; ++n) {
      const auto& cs = cands_[static_cast<size_t>(n)];
      auto it = std::find_if(cs.begin(), cs.end(),
                             [&](const Candidate& c) { return c.assign == res_.best.assign[static_cast<size_t>(n)]; });
      if (it == cs.end()) return std::vector<size_t>(static_cast<size_t>(N), 0);
      idx[static_cast<size_t>(n)] = static_cast<size_t>(it - cs.begin());
    }
    return idx;
  }

  // Anytime start: coordinate descent inside the space. From the incumbent
  // (or every DNN's fastest standalone candidate), repeatedly replace one
  // DNN's candidate by its best response (all its candidates simulated with
  // the others fixed) until no DNN improves. Cheap, and its incumbent makes
  // the exact search below prune much more. Limited to a quarter of the time
  // limit from its start.
  void descend() {
    std::vector<size_t> cur = incumbentIndices();
    double curV = simulateIndices(cur);
    improve(scratch_, curV, "exact-bnb");
    sweeps(cur, curV, std::min(prm_.timeLimitS * 1000.0, elapsedMs() + prm_.timeLimitS * 1000.0 / 4));
  }

  double simulateIndices(const std::vector<size_t>& idx) {
    scratch_.assign.resize(idx.size());
    for (size_t n = 0; n < idx.size(); ++n) scratch_.assign[n] = cands_[n][idx[n]].assign;
    ++res_.simulations;
    return sim_.run(scratch_, {.recordSpans = false}).value(obj_);
  }

  // Best-response sweeps from cur until no DNN improves or the budget ends.
  void sweeps(std::vector<size_t>& cur, double& curV, double budgetMs) {
    const int N = p_.numDnns();
    Schedule s;
    auto build = [&] {
      s.assign.resize(static_cast<size_t>(N));
      for (int n = 0; n < N; ++n) s.assign[static_cast<size_t>(n)] = cands_[static_cast<size_t>(n)][cur[static_cast<size_t>(n)]].assign;
    };
    for (bool moved = true; moved;) {
      moved = false;
      for (int n = 0; n < N; ++n) {
        size_t keep = cur[static_cast<size_t>(n)];
        for (size_t ci = 0; ci < cands_[static_cast<size_t>(n)].size(); ++ci) {
          if ((++res_.nodes & 63) == 0 && elapsedMs() > budgetMs) {
            if (elapsedMs() > prm_.timeLimitS * 1000.0) timedOut_ = true;
            cur[static_cast<size_t>(n)] = keep;
            return;
          }
          if (ci == keep) continue;
          cur[static_cast<size_t>(n)] = ci;
          build();
          sim::SimOptions o;
          o.recordSpans = false;
          if (obj_ == Objective::Latency) o.abortAfterMs = curV;
          else o.abortThroughputAtMost = curV;
          const auto& r = sim_.run(s, o);
          ++res_.simulations;
          if (!r.aborted && sim::better(obj_, r.value(obj_), curV)) {
            curV = r.value(obj_);
            keep = ci;
            moved = true;
            improve(s, curV, "exact-bnb");
          }
        }
        cur[static_cast<size_t>(n)] = keep;
      }
    }
  }

  // Bound over candidates ci.. of level n (the part of the tree not yet
  // searched at this level), computed when the time limit stops the search.
  double frontierBound(int n, size_t ci, double maxEf, double invSum, double work, double restWork) {
    const auto& cs = cands_[static_cast<size_t>(n)];
    const int A = p_.numAccelerators();
    if (obj_ == Objective::Throughput) return chainBound(n, cs[ci].chain, maxEf, invSum);  // sorted: the max
    double best = std::numeric_limits<double>::infinity();
    for (size_t j = ci; j < cs.size(); ++j) {
      const Candidate& c = cs[j];
      double lb = chainBound(n, c.chain, maxEf, invSum);
      if (lb >= best) break;  // sorted by chain: later ones are no lower
      for (int a = 0; a < A; ++a) lb = std::max(lb, load_[static_cast<size_t>(a)] + c.load[static_cast<size_t>(a)]);
      lb = std::max(lb, (work + c.work + restWork) / A);
      lb = std::max(lb, weightedBound(n, c));
      best = std::min(best, lb);
    }
    return best;
  }

  void dfs(int n, double maxEf, double invSum, double work) {
    const int N = p_.numDnns(), A = p_.numAccelerators();
    const auto& cs = cands_[static_cast<size_t>(n)];
    double restWork = 0;
    for (int m = n + 1; m < N; ++m) restWork += minWork_[static_cast<size_t>(m)];
    for (size_t ci = 0; ci < cs.size(); ++ci) {
      const Candidate& c = cs[ci];
      double cb = chainBound(n, c.chain, maxEf, invSum);
      if (timedOut_ || checkTime()) {
        noteUnexplored(frontierBound(n, ci, maxEf, invSum, work, restWork));
        return;
      }
      if (pruned(cb)) break;  // sorted by chain: every later candidate is bounded too
      if (obj_ == Objective::Latency) {
        double lb = cb;
        for (int a = 0; a < A; ++a) lb = std::max(lb, load_[static_cast<size_t>(a)] + c.load[static_cast<size_t>(a)]);
        lb = std::max(lb, (work + c.work + restWork) / A);
        if (pruned(lb)) continue;
        if (pruned(weightedBound(n, c))) continue;
      }
      choice_[static_cast<size_t>(n)] = static_cast<int>(ci);
      for (size_t k = 0; k < c.weighted.size(); ++k)
        pw_[static_cast<size_t>(n) + 1][k] = pw_[static_cast<size_t>(n)][k] + c.weighted[k];
      double ef = efOf(n, c.chain);
      double savedEf = ef_[static_cast<size_t>(n)];
      ef_[static_cast<size_t>(n)] = ef;
      for (int a = 0; a < A; ++a) load_[static_cast<size_t>(a)] += c.load[static_cast<size_t>(a)];
      if (n + 1 < N) {
        dfs(n + 1, std::max(maxEf, ef), invSum + 1000.0 / c.chain, work + c.work);
      } else {
        leaf();
      }
      for (int a = 0; a < A; ++a) load_[static_cast<size_t>(a)] -= c.load[static_cast<size_t>(a)];
      ef_[static_cast<size_t>(n)] = savedEf;
      if (timedOut_) {
        noteUnexplored(frontierBound(n, ci, maxEf, invSum, work, restWork));
        return;
      }
    }
  }

  // Contention-free bounds that need every DNN's candidate: per accelerator,
  // nothing runs on it before the earliest head, it then serves its whole
  // load one group at a time, and the DNN that ran last on it still has its
  // tail to go (head-body-tail, as in job-shop lower bounds).
  double leafMakespanBound() const {
    const int N = p_.numDnns(), A = p_.numAccelerators();
    double lb = 0;
    for (int n = 0; n < N; ++n) lb = std::max(lb, ef_[static_cast<size_t>(n)]);
    for (int a = 0; a < A; ++a) {
      double head = std::numeric_limits<double>::infinity(), tail = head, load = 0;
      for (int n = 0; n < N; ++n) {
        const Candidate& c = cands_[static_cast<size_t>(n)][static_cast<size_t>(choice_[static_cast<size_t>(n)])];
        if (c.load[static_cast<size_t>(a)] == 0 && c.head[static_cast<size_t>(a)] == std::numeric_limits<double>::infinity()) continue;
        double release = ef_[static_cast<size_t>(n)] - c.chain;
        head = std::min(head, release + c.head[static_cast<size_t>(a)]);
        tail = std::min(tail, c.tail[static_cast<size_t>(a)]);
        load += c.load[static_cast<size_t>(a)];
      }
      if (load > 0) lb = std::max(lb, head + load + tail);
    }
    return lb;
  }

  void leaf() {
    const int N = p_.numDnns();
    if (!res_.best.assign.empty()) {
      double mk = leafMakespanBound();
      if (obj_ == Objective::Latency) {
        if (pruned(mk)) return;
      } else if (noDeps_) {
        // Some DNN ends no earlier than the makespan bound: the best case
        // for the sum of rates gives that to a single DNN.
        double sum = 0;
        for (int n = 0; n < N; ++n)
          sum += 1000.0 / cands_[static_cast<size_t>(n)][static_cast<size_t>(choice_[static_cast<size_t>(n)])].chain;
        double ub = 0;
        for (int n = 0; n < N; ++n) {
          double ch = cands_[static_cast<size_t>(n)][static_cast<size_t>(choice_[static_cast<size_t>(n)])].chain;
          ub = std::max(ub, sum - 1000.0 / ch + 1000.0 / std::max(ch, mk));
        }
        if (pruned(ub)) return;
      }
    }
    Schedule& s = scratch_;
    s.assign.resize(static_cast<size_t>(N));
    for (int n = 0; n < N; ++n)
      s.assign[static_cast<size_t>(n)] = cands_[static_cast<size_t>(n)][static_cast<size_t>(choice_[static_cast<size_t>(n)])].assign;
    sim::SimOptions o;
    o.recordSpans = false;
    if (!res_.best.assign.empty()) {
      if (obj_ == Objective::Latency) o.abortAfterMs = res_.value;
      else o.abortThroughputAtMost = res_.value;
    }
    const auto& r = sim_.run(s, o);
    ++res_.simulations;
    if (r.aborted) return;
    improve(s, r.value(obj_), "exact-bnb");
  }

  const Problem& p_;
  const ExactParams& prm_;
  sim::Simulator sim_;
  Objective obj_ = Objective::Latency;
  std::chrono::steady_clock::time_point start_;
  std::vector<std::vector<Candidate>> cands_;
  std::vector<double> minChain_, minWork_, ef_, load_;
  std::unique_ptr<WorkWeightBuilder> builder_;  // latency with two accelerators only
  std::vector<WorkWeighting> weightings_;
  // suffixW_[n][k]: least weighted work of DNNs n.. under weighting k;
  // pw_[n][k]: weighted work of the candidates chosen for DNNs 0..n-1.
  std::vector<std::vector<double>> suffixW_, pw_;
  std::vector<int> choice_;
  Schedule scratch_;
  ExactResult res_;
  double bound_ = 0;
  bool timedOut_ = false;
  bool noDeps_ = true;
};

}  // namespace

uint64_t countAssignments(const sim::Dnn& d, int A, int k) {
  // ways[a][t]: assignments of groups 0..i ending on a with t transitions.
  int K = k < 0 ? static_cast<int>(d.groups.size()) : k;
  std::vector<std::vector<uint64_t>> ways(static_cast<size_t>(A), std::vector<uint64_t>(static_cast<size_t>(K + 1), 0));
  for (int a = 0; a < A; ++a)
    if (d.groups[0].allowed(a)) ways[static_cast<size_t>(a)][0] = 1;
  for (size_t i = 1; i < d.groups.size(); ++i) {
    std::vector<std::vector<uint64_t>> nw(static_cast<size_t>(A), std::vector<uint64_t>(static_cast<size_t>(K + 1), 0));
    for (int a = 0; a < A; ++a) {
      if (!d.groups[i].allowed(a)) continue;
      for (int b = 0; b < A; ++b)
        for (int t = 0; t <= K; ++t) {
          int nt = t + (a != b ? 1 : 0);
          if (nt > K) continue;
          nw[static_cast<size_t>(a)][static_cast<size_t>(nt)] =
              satAdd(nw[static_cast<size_t>(a)][static_cast<size_t>(nt)], ways[static_cast<size_t>(b)][static_cast<size_t>(t)]);
        }
    }
    ways = std::move(nw);
  }
  uint64_t total = 0;
  for (const auto& row : ways)
    for (uint64_t w : row) total = satAdd(total, w);
  return total;
}

Expected<ExactResult> exactSearch(const Problem& problem, const ExactParams& params) {
  Search s(problem, params);
  return s.run();
}

}  // namespace zp::schedule
