#include "passes/coldstart/exact.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

namespace zp::coldstart {

namespace {

struct State {
  double disk = 0, exec = 0;
  std::vector<double> others;  // cores 1..C-1, sorted ascending
  int parent = -1;
  StepChoice choice;
};

bool noLater(const State& a, const State& b) {
  if (a.disk > b.disk || a.exec > b.exec) return false;
  for (size_t k = 0; k < a.others.size(); ++k)
    if (a.others[k] > b.others[k]) return false;
  return true;
}

// The successors of `s` at step `i` (core indices: 0 = execute core, 1.. = sorted others).
void expand(const Problem& p, size_t i, const State& s, int parent, const std::vector<double>& libraryReady,
            std::vector<State>& out) {
  const Step& step = p.steps[i];
  for (size_t o = 0; o < step.options.size(); ++o) {
    const Option& opt = step.options[o];
    const double readEnd = s.disk + opt.readMs;
    auto finish = [&](State n, double ready) {
      n.exec = std::max({n.exec, ready, opt.usesGemm() ? libraryReady[opt.gemm] : 0.0}) + opt.execMs;
      n.parent = parent;
      out.push_back(std::move(n));
    };
    State base = s;
    base.disk = readEnd;
    if (!needsCore(opt)) {
      base.choice = {static_cast<int>(o), -1};
      finish(base, readEnd);
      continue;
    }
    for (int k = 0; k < p.cores; ++k) {
      if (k >= 2 && s.others[k - 1] == s.others[k - 2]) continue;  // same as the core before
      State n = base;
      n.choice = {static_cast<int>(o), k};
      if (k == 0) {
        n.exec = std::max(readEnd, s.exec) + opt.transformMs;
        finish(n, n.exec);
      } else {
        double end = std::max(readEnd, s.others[k - 1]) + opt.transformMs;
        n.others[k - 1] = end;
        std::sort(n.others.begin(), n.others.end());
        finish(n, end);
      }
    }
  }
}

// Keeps the states no other state beats everywhere (the first of equal ones).
// Stops once the front holds more than `limit` states: the DP gives up then, and
// finishing the quadratic filter would be thrown away.
std::vector<State> paretoFront(std::vector<State> all, size_t limit) {
  std::stable_sort(all.begin(), all.end(), [](const State& a, const State& b) {
    return a.exec != b.exec ? a.exec < b.exec : a.disk < b.disk;
  });
  std::vector<State> front;
  for (auto& s : all) {
    bool dominated = false;
    for (const auto& f : front)
      if (noLater(f, s)) { dominated = true; break; }
    if (dominated) continue;
    front.push_back(std::move(s));
    if (front.size() > limit) break;
  }
  return front;
}

unsigned librariesPresent(const Problem& p) {
  unsigned present = 0;
  for (const auto& s : p.steps)
    for (const auto& o : s.options)
      if (o.usesGemm()) present |= 1u << o.gemm;
  return present;
}

// The DP with the start-up of every library some option may use paid.
std::optional<ExactResult> solvePaid(const Problem& p, const ExactParams& params) {
  const unsigned present = librariesPresent(p);
  State start;
  start.disk = start.exec = p.setupMs;
  start.others.assign(p.cores - 1, p.setupMs);
  std::vector<double> ready(p.libraries.size(), p.setupMs);
  double startupsEnd = p.setupMs;
  for (size_t l = 0; l < p.libraries.size(); ++l)
    if (present >> l & 1u) ready[l] = startupsEnd += p.libraries[l].startupMs;
  if (present) {
    if (p.cores == 1) start.exec = startupsEnd;
    else start.others.back() = startupsEnd;
  }
  std::vector<std::vector<State>> fronts{{start}};
  ExactResult r;
  for (size_t i = 0; i < p.steps.size(); ++i) {
    std::vector<State> next;
    for (size_t j = 0; j < fronts.back().size(); ++j) expand(p, i, fronts.back()[j], static_cast<int>(j), ready, next);
    fronts.push_back(paretoFront(std::move(next), params.maxFrontStates));
    r.states += fronts.back().size();
    if (fronts.back().size() > params.maxFrontStates) return std::nullopt;
  }
  const auto& last = fronts.back();
  size_t best = 0;
  for (size_t j = 1; j < last.size(); ++j)
    if (last[j].exec < last[best].exec) best = j;
  r.latencyMs = last[best].exec;
  // Walk back; the sorted core indices become real cores by replaying the choices.
  std::vector<StepChoice> sorted(p.steps.size());
  for (int i = static_cast<int>(p.steps.size()), j = static_cast<int>(best); i > 0; --i) {
    sorted[i - 1] = fronts[i][j].choice;
    j = fronts[i][j].parent;
  }
  std::vector<double> free(p.cores, p.setupMs);  // real cores' free times
  if (present) free[p.cores - 1] = startupsEnd;
  r.choice.resize(p.steps.size());
  double disk = p.setupMs;
  for (size_t i = 0; i < p.steps.size(); ++i) {
    const Option& o = p.steps[i].options[sorted[i].option];
    r.choice[i] = {sorted[i].option, -1};
    disk += o.readMs;
    if (sorted[i].core > 0) {
      // The k-th earliest of cores 1..C-1 (ties: the lowest index).
      std::vector<int> order;
      for (int k = 1; k < p.cores; ++k) order.push_back(k);
      std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return free[a] < free[b]; });
      int core = order[sorted[i].core - 1];
      r.choice[i].core = core;
      free[core] = std::max(disk, free[core]) + o.transformMs;
    } else if (sorted[i].core == 0) {
      r.choice[i].core = 0;
    }
  }
  // The replay reproduces the state's latency, or less when the choice uses fewer
  // libraries than the problem offers (fewer start-ups: nothing later).
  assert(simulate(p, r.choice).latencyMs <= r.latencyMs + 1e-6);
  r.latencyMs = simulate(p, r.choice).latencyMs;
  return r;
}

}  // namespace

// A plan starts some subset of the libraries its options use: the best over the
// subsets of the DP with exactly those start-ups paid (options of other libraries dropped).
std::optional<ExactResult> solveExact(const Problem& p, const ExactParams& params) {
  const unsigned present = librariesPresent(p);
  std::optional<ExactResult> best;
  uint64_t states = 0;
  for (unsigned set = present;; set = (set - 1) & present) {  // every subset of `present`, itself first
    std::vector<std::vector<int>> index;
    if (auto sub = restrictLibraries(p, set, &index)) {
      auto r = solvePaid(*sub, params);
      if (!r) return std::nullopt;
      states += r->states;
      for (size_t i = 0; i < p.steps.size(); ++i) r->choice[i].option = index[i][r->choice[i].option];
      if (!best || r->latencyMs < best->latencyMs) best = std::move(r);
    }
    if (set == 0) break;
  }
  assert(best);
  best->states = states;
  return best;
}

ExactResult solveBruteForce(const Problem& p) {
  ExactResult best;
  best.latencyMs = std::numeric_limits<double>::infinity();
  Choice c(p.steps.size());
  auto rec = [&](auto&& self, size_t i) -> void {
    if (i == p.steps.size()) {
      ++best.states;
      double l = simulate(p, c).latencyMs;
      if (l < best.latencyMs) best.latencyMs = l, best.choice = c;
      return;
    }
    for (size_t o = 0; o < p.steps[i].options.size(); ++o) {
      if (!needsCore(p.steps[i].options[o])) {
        c[i] = {static_cast<int>(o), -1};
        self(self, i + 1);
        continue;
      }
      for (int k = 0; k < p.cores; ++k) {
        c[i] = {static_cast<int>(o), k};
        self(self, i + 1);
      }
    }
  };
  rec(rec, 0);
  return best;
}

ExactResult solveSerial(const Problem& p) {
  // Each step at its least read + transform + execute, for every subset of
  // libraries started (their start-ups come first).
  const unsigned present = librariesPresent(p);
  ExactResult best;
  best.latencyMs = std::numeric_limits<double>::infinity();
  for (unsigned set = present;; set = (set - 1) & present) {
    std::vector<std::vector<int>> index;
    if (auto sub = restrictLibraries(p, set, &index)) {
      Choice c;
      for (size_t i = 0; i < sub->steps.size(); ++i) {
        const auto& s = sub->steps[i];
        size_t k = 0;
        auto cost = [](const Option& o) { return o.readMs + (o.transforms() ? o.transformMs : 0) + o.execMs; };
        for (size_t o = 1; o < s.options.size(); ++o)
          if (cost(s.options[o]) < cost(s.options[k])) k = o;
        c.push_back({index[i][k], needsCore(s.options[k]) ? 0 : -1});
      }
      const double l = simulateSerial(p, c).latencyMs;
      if (l < best.latencyMs) best.latencyMs = l, best.choice = c;
      best.states += p.steps.size();
    }
    if (set == 0) break;
  }
  return best;
}

}  // namespace zp::coldstart
