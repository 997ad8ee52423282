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
void expand(const Problem& p, size_t i, const State& s, int parent, double gemmReady, std::vector<State>& out) {
  const Step& step = p.steps[i];
  for (size_t o = 0; o < step.options.size(); ++o) {
    const Option& opt = step.options[o];
    const double readEnd = s.disk + opt.readMs;
    auto finish = [&](State n, double ready) {
      n.exec = std::max({n.exec, ready, opt.usesGemm ? gemmReady : 0.0}) + opt.execMs;
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

bool anyUsesGemm(const Problem& p) {
  for (const auto& s : p.steps)
    for (const auto& o : s.options)
      if (o.usesGemm) return true;
  return false;
}

// The DP with the GEMM library's start-up paid when any option may use it.
std::optional<ExactResult> solvePaid(const Problem& p, const ExactParams& params) {
  const bool anyGemm = anyUsesGemm(p);
  State start;
  start.disk = start.exec = p.setupMs;
  start.others.assign(p.cores - 1, p.setupMs);
  double gemmReady = p.setupMs;
  if (anyGemm) {
    gemmReady += p.gemmStartupMs;
    if (p.cores == 1) start.exec = gemmReady;
    else start.others.back() = gemmReady;
  }
  std::vector<std::vector<State>> fronts{{start}};
  ExactResult r;
  for (size_t i = 0; i < p.steps.size(); ++i) {
    std::vector<State> next;
    for (size_t j = 0; j < fronts.back().size(); ++j) expand(p, i, fronts.back()[j], static_cast<int>(j), gemmReady, next);
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
  if (anyGemm) free[p.cores - 1] = gemmReady;
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
  // The replay must reproduce the state's latency unless no option uses the
  // library after all (then the plan simulates without the start-up: no later).
  assert(!usesGemm(p, r.choice) || std::abs(simulate(p, r.choice).latencyMs - r.latencyMs) < 1e-6);
  r.latencyMs = simulate(p, r.choice).latencyMs;
  return r;
}

}  // namespace

// A plan either uses the GEMM library somewhere (and pays its start-up) or
// not at all: the best of the DP with the start-up paid and the DP over the
// options that use no GEMM library.
std::optional<ExactResult> solveExact(const Problem& p, const ExactParams& params) {
  auto paid = solvePaid(p, params);
  if (!paid || !anyUsesGemm(p)) return paid;  // no library in `p`: the DP without it is the same one
  Problem free = p;
  std::vector<std::vector<int>> index(p.steps.size());
  for (size_t i = 0; i < p.steps.size(); ++i) {
    free.steps[i].options.clear();
    for (size_t o = 0; o < p.steps[i].options.size(); ++o)
      if (!p.steps[i].options[o].usesGemm) {
        free.steps[i].options.push_back(p.steps[i].options[o]);
        index[i].push_back(static_cast<int>(o));
      }
    if (free.steps[i].options.empty()) return paid;
  }
  auto without = solvePaid(free, params);
  if (!without) return std::nullopt;
  without->states += paid->states;
  if (without->latencyMs >= paid->latencyMs) {
    paid->states = without->states;
    return paid;
  }
  for (size_t i = 0; i < p.steps.size(); ++i) without->choice[i].option = index[i][without->choice[i].option];
  return without;
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
  ExactResult r;
  for (const auto& s : p.steps) {
    size_t best = 0;
    auto cost = [](const Option& o) { return o.readMs + (o.transforms() ? o.transformMs : 0) + o.execMs; };
    for (size_t o = 1; o < s.options.size(); ++o)
      if (cost(s.options[o]) < cost(s.options[best])) best = o;
    r.choice.push_back({static_cast<int>(best), needsCore(s.options[best]) ? 0 : -1});
  }
  r.latencyMs = simulateSerial(p, r.choice).latencyMs;
  r.states = p.steps.size();
  return r;
}

}  // namespace zp::coldstart
