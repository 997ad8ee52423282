#include "passes/schedule/baselines.h"

#include <algorithm>
#include <limits>

#include "libplan/sim/concurrent/simulator.h"

namespace zp::schedule {

using sim::Problem;
using sim::Schedule;

namespace {

int fastestAllowed(const sim::GroupCost& g, int A) {
  int best = -1;
  for (int a = 0; a < A; ++a)
    if (g.allowed(a) && (best < 0 || g.timeMs[static_cast<size_t>(a)] < g.timeMs[static_cast<size_t>(best)])) best = a;
  return best;
}

Schedule singleAccelerator(const Problem& p, int& accOut) {
  const int A = p.numAccelerators();
  double bestTotal = std::numeric_limits<double>::infinity();
  accOut = 0;
  for (int a = 0; a < A; ++a) {
    double total = 0;
    for (const auto& d : p.dnns)
      for (const auto& g : d.groups) total += g.allowed(a) ? g.timeMs[static_cast<size_t>(a)] : 0;
    if (total < bestTotal) {
      bestTotal = total;
      accOut = a;
    }
  }
  Schedule s;
  for (const auto& d : p.dnns) {
    std::vector<int> as;
    for (const auto& g : d.groups) as.push_back(g.allowed(accOut) ? accOut : fastestAllowed(g, A));
    s.assign.push_back(as);
  }
  return s;
}

bool wholeOn(const sim::Dnn& d, int a) {
  for (const auto& g : d.groups)
    if (!g.allowed(a)) return false;
  return true;
}

Schedule wholeDnnSchedule(const Problem& p, const std::vector<int>& pick) {
  Schedule s;
  for (size_t n = 0; n < p.dnns.size(); ++n) s.assign.push_back(std::vector<int>(p.dnns[n].groups.size(), pick[n]));
  return s;
}

// Past kMaxNaivePairings pairings, coordinate descent over the same space: each
// DNN from its fastest whole placement, moved while a move improves the
// simulated objective (bounded rounds, deterministic order).
Schedule naiveConcurrentDescent(const Problem& p, sim::Objective obj) {
  const int N = p.numDnns(), A = p.numAccelerators();
  std::vector<int> pick(static_cast<size_t>(N), -1);
  for (int n = 0; n < N; ++n) {
    const auto& d = p.dnns[static_cast<size_t>(n)];
    double bestT = std::numeric_limits<double>::infinity();
    for (int a = 0; a < A; ++a) {
      if (!wholeOn(d, a)) continue;
      double t = 0;
      for (const auto& g : d.groups) t += g.timeMs[static_cast<size_t>(a)];
      if (t < bestT) {
        bestT = t;
        pick[static_cast<size_t>(n)] = a;
      }
    }
    if (pick[static_cast<size_t>(n)] < 0) {  // no DNN-wide accelerator: fastest per group
      int acc;
      return singleAccelerator(p, acc);
    }
  }
  sim::Simulator simr(p);
  double bestV = simr.run(wholeDnnSchedule(p, pick), {.recordSpans = false}).value(obj);
  constexpr int kMaxRounds = 4;
  for (int round = 0; round < kMaxRounds; ++round) {
    bool improved = false;
    for (int n = 0; n < N; ++n) {
      const int was = pick[static_cast<size_t>(n)];
      for (int a = 0; a < A; ++a) {
        if (a == was || !wholeOn(p.dnns[static_cast<size_t>(n)], a)) continue;
        pick[static_cast<size_t>(n)] = a;
        const double v = simr.run(wholeDnnSchedule(p, pick), {.recordSpans = false}).value(obj);
        if (sim::better(obj, v, bestV)) {
          bestV = v;
          improved = true;
          break;
        }
        pick[static_cast<size_t>(n)] = was;
      }
    }
    if (!improved) break;
  }
  return wholeDnnSchedule(p, pick);
}

Schedule naiveConcurrent(const Problem& p, sim::Objective obj) {
  const int N = p.numDnns(), A = p.numAccelerators();
  double pairings = 1;
  for (int n = 0; n < N; ++n) pairings *= A;
  if (pairings > kMaxNaivePairings) return naiveConcurrentDescent(p, obj);
  std::vector<int> pick(static_cast<size_t>(N), 0);
  Schedule best;
  double bestV = sim::worstValue(obj);
  sim::Simulator simr(p);
  for (;;) {
    bool ok = true;
    for (int n = 0; n < N; ++n) ok = ok && wholeOn(p.dnns[static_cast<size_t>(n)], pick[static_cast<size_t>(n)]);
    if (ok) {
      Schedule s;
      for (int n = 0; n < N; ++n)
        s.assign.push_back(std::vector<int>(p.dnns[static_cast<size_t>(n)].groups.size(), pick[static_cast<size_t>(n)]));
      double v = simr.run(s, {.recordSpans = false}).value(obj);
      if (best.assign.empty() || sim::better(obj, v, bestV)) {
        best = s;
        bestV = v;
      }
    }
    int k = N - 1;
    while (k >= 0 && ++pick[static_cast<size_t>(k)] == A) pick[static_cast<size_t>(k--)] = 0;
    if (k < 0) break;
  }
  if (best.assign.empty()) {  // no DNN fits wholly on one accelerator: fastest per group
    int acc;
    best = singleAccelerator(p, acc);
  }
  return best;
}

Schedule mensaLike(const Problem& p) {
  const int A = p.numAccelerators();
  Schedule s;
  for (const auto& d : p.dnns) {
    std::vector<int> as;
    for (size_t i = 0; i < d.groups.size(); ++i) {
      int best = -1;
      double bestCost = std::numeric_limits<double>::infinity();
      for (int a = 0; a < A; ++a) {
        if (!d.groups[i].allowed(a)) continue;
        double c = d.groups[i].timeMs[static_cast<size_t>(a)];
        if (i > 0 && as.back() != a)
          c += d.groups[i - 1].transitionOutMs[static_cast<size_t>(as.back())] + d.groups[i].transitionInMs[static_cast<size_t>(a)];
        if (c < bestCost) {
          bestCost = c;
          best = a;
        }
      }
      as.push_back(best);
    }
    s.assign.push_back(as);
  }
  return s;
}

// Earliest-finish-time list scheduling on a contention-free timeline.
Schedule listScheduling(const Problem& p, bool transitionAware) {
  const int N = p.numDnns(), A = p.numAccelerators();
  Schedule s;
  s.assign.resize(static_cast<size_t>(N));
  std::vector<size_t> next(static_cast<size_t>(N), 0);
  std::vector<double> ready(static_cast<size_t>(N), 0), end(static_cast<size_t>(N), -1);
  std::vector<double> accFree(static_cast<size_t>(A), 0);
  for (;;) {
    int pick = -1;
    double pickReady = 0;
    for (int n = 0; n < N; ++n) {
      const auto& d = p.dnns[static_cast<size_t>(n)];
      if (next[static_cast<size_t>(n)] >= d.groups.size()) continue;
      double r = ready[static_cast<size_t>(n)];
      if (next[static_cast<size_t>(n)] == 0) {
        bool depsDone = true;
        r = 0;
        for (int dep : d.deps) {
          depsDone = depsDone && end[static_cast<size_t>(dep)] >= 0;
          r = std::max(r, end[static_cast<size_t>(dep)]);
        }
        if (!depsDone) continue;
      }
      if (pick < 0 || r < pickReady) {
        pick = n;
        pickReady = r;
      }
    }
    if (pick < 0) break;
    const auto& d = p.dnns[static_cast<size_t>(pick)];
    size_t i = next[static_cast<size_t>(pick)];
    const auto& g = d.groups[i];
    int best = -1;
    double bestFinish = std::numeric_limits<double>::infinity();
    for (int a = 0; a < A; ++a) {
      if (!g.allowed(a)) continue;
      double tr = 0;
      if (transitionAware && i > 0 && s.assign[static_cast<size_t>(pick)].back() != a)
        tr = d.groups[i - 1].transitionOutMs[static_cast<size_t>(s.assign[static_cast<size_t>(pick)].back())] +
             g.transitionInMs[static_cast<size_t>(a)];
      double start = std::max(pickReady + tr, accFree[static_cast<size_t>(a)]);
      double finish = start + g.timeMs[static_cast<size_t>(a)];
      if (finish < bestFinish) {
        bestFinish = finish;
        best = a;
      }
    }
    s.assign[static_cast<size_t>(pick)].push_back(best);
    accFree[static_cast<size_t>(best)] = bestFinish;
    ready[static_cast<size_t>(pick)] = bestFinish;
    if (++next[static_cast<size_t>(pick)] == d.groups.size()) end[static_cast<size_t>(pick)] = bestFinish;
  }
  return s;
}

}  // namespace

std::vector<Baseline> makeBaselines(const Problem& p, sim::Objective obj) {
  std::vector<Baseline> out;
  int acc = 0;
  Schedule single = singleAccelerator(p, acc);
  out.push_back({p.accelerators[static_cast<size_t>(acc)] + "-only", single});
  out.push_back({"naive-concurrent", naiveConcurrent(p, obj)});
  out.push_back({"mensa-like", mensaLike(p)});
  out.push_back({"herald-like", listScheduling(p, false)});
  out.push_back({"h2h-like", listScheduling(p, true)});
  return out;
}

}  // namespace zp::schedule
