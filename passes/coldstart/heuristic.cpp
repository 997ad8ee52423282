#include "passes/coldstart/heuristic.h"

#include <algorithm>
#include <numeric>

namespace zp::coldstart {

namespace {

struct Loads {
  std::vector<double> load;  // per core: transforms (+ every execute on core 0)
  size_t maxLittle() const {
    return static_cast<size_t>(std::max_element(load.begin() + 1, load.end()) - load.begin());
  }
  size_t minLittle() const {
    return static_cast<size_t>(std::min_element(load.begin() + 1, load.end()) - load.begin());
  }
};

// Lines 13-20: move transforms from the most to the least loaded little core.
void balanceLittle(const Problem& p, Choice& c, Loads& l, double eps) {
  for (int guard = 0; guard < 10000; ++guard) {
    size_t hi = l.maxLittle(), lo = l.minLittle();
    double gap = l.load[hi] - l.load[lo];
    if (gap <= eps) return;
    std::vector<size_t> onHi;
    for (size_t i = 0; i < c.size(); ++i)
      if (c[i].core == static_cast<int>(hi)) onHi.push_back(i);
    std::stable_sort(onHi.begin(), onHi.end(), [&](size_t a, size_t b) {
      return p.steps[a].options[c[a].option].transformMs > p.steps[b].options[c[b].option].transformMs;
    });
    bool moved = false;
    for (size_t i : onHi) {
      double t = p.steps[i].options[c[i].option].transformMs;
      if (t < gap / 2) {
        c[i].core = static_cast<int>(lo);
        l.load[hi] -= t;
        l.load[lo] += t;
        moved = true;
        break;
      }
    }
    if (!moved) return;
  }
}

}  // namespace

void assignCores(const Problem& p, Choice& c, const HeuristicParams& params) {
  std::vector<size_t> transforms;
  for (size_t i = 0; i < c.size(); ++i) {
    c[i].core = -1;
    if (needsCore(p.steps[i].options[c[i].option])) transforms.push_back(i);
  }
  if (transforms.empty()) return;
  auto t = [&](size_t i) { return p.steps[i].options[c[i].option].transformMs; };
  if (p.cores == 1) {
    for (size_t i : transforms) c[i].core = 0;
    return;
  }
  Loads l;
  l.load.assign(p.cores, 0);
  for (size_t i = 0; i < c.size(); ++i) l.load[0] += p.steps[i].options[c[i].option].execMs;
  // Line 3: the first transform on core 0; line 12: the rest round-robin on the little cores.
  c[transforms[0]].core = 0;
  l.load[0] += t(transforms[0]);
  for (size_t k = 1; k < transforms.size(); ++k) {
    int core = 1 + static_cast<int>((k - 1) % (p.cores - 1));
    c[transforms[k]].core = core;
    l.load[core] += t(transforms[k]);
  }
  balanceLittle(p, c, l, params.epsilonMs);
  // Lines 6-11: while a little core finishes after core 0, move the next transform that fits to core 0.
  size_t s = 1;
  while (s < transforms.size()) {
    double excess = l.load[l.maxLittle()] - l.load[0];
    if (excess <= params.epsilonMs) break;
    bool moved = false;
    for (size_t k = s; k < transforms.size(); ++k) {
      size_t i = transforms[k];
      if (t(i) < excess) {
        l.load[c[i].core] -= t(i);
        l.load[0] += t(i);
        c[i].core = 0;
        s = k + 1;
        moved = true;
        break;
      }
    }
    if (!moved) break;
    balanceLittle(p, c, l, params.epsilonMs);
  }
}

namespace {

HeuristicResult solveWithLibraries(const Problem& p, const HeuristicParams& params) {
  HeuristicResult r;
  auto evaluate = [&](Choice& c) {
    assignCores(p, c, params);
    ++r.evaluations;
    return simulate(p, c).latencyMs;
  };
  // Start: each step at its least read + transform + execute.
  Choice c;
  for (const auto& s : p.steps) {
    auto cost = [](const Option& o) { return o.readMs + o.transformMs + o.execMs; };
    size_t best = 0;
    for (size_t o = 1; o < s.options.size(); ++o)
      if (cost(s.options[o]) < cost(s.options[best])) best = o;
    c.push_back({static_cast<int>(best), -1});
  }
  double best = evaluate(c);
  for (int pass = 0; pass < params.maxPasses; ++pass) {
    bool improved = false;
    for (size_t i = 0; i < p.steps.size(); ++i) {
      for (size_t o = 0; o < p.steps[i].options.size(); ++o) {
        if (static_cast<int>(o) == c[i].option) continue;
        Choice trial = c;
        trial[i].option = static_cast<int>(o);
        double l = evaluate(trial);
        if (l < best - 1e-12) best = l, c = trial, improved = true;
      }
    }
    if (!improved) break;
  }
  r.choice = c;
  r.latencyMs = best;
  return r;
}

}  // namespace

// A local search cannot drop a library that several steps use (each move changes
// one step): the search runs once per subset of the libraries the options use.
HeuristicResult solveHeuristic(const Problem& p, const HeuristicParams& params) {
  unsigned present = 0;
  for (const auto& s : p.steps)
    for (const auto& o : s.options)
      if (o.usesGemm()) present |= 1u << o.gemm;
  HeuristicResult best;
  bool found = false;
  for (unsigned set = present;; set = (set - 1) & present) {
    std::vector<std::vector<int>> index;
    if (auto sub = restrictLibraries(p, set, &index)) {
      HeuristicResult r = solveWithLibraries(*sub, params);
      for (size_t i = 0; i < p.steps.size(); ++i) r.choice[i].option = index[i][r.choice[i].option];
      r.evaluations += best.evaluations;
      if (!found || r.latencyMs < best.latencyMs) {
        best = std::move(r);
        found = true;
      } else {
        best.evaluations = r.evaluations;
      }
    }
    if (set == 0) break;
  }
  return best;
}

}  // namespace zp::coldstart
