#include "passes/opplace/solve.h"
#include "libplan/util/infinity.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <numeric>

namespace zp::opplace {
namespace {


double gapOf(double value, double bound) { return value > 0 ? std::max(0.0, (value - bound) / value) : 0.0; }

class BranchAndBound {
 public:
  BranchAndBound(const Problem& p, const SolveParams& params)
      : p_(p), params_(params), in_(inEdges(p)), n_(p.nodes.size()), k_(p.processors.size()), cores_(coreMap(p)) {
    // Least core time each node takes (an operator on q keeps all of q's cores busy).
    suffixMinWork_.assign(n_ + 1, 0);
    for (size_t v = n_; v-- > 0;) {
      double w = kInf;
      for (size_t q = 0; q < k_; ++q) w = std::min(w, p.ms[v][q] * static_cast<double>(cores_.of[q].size()));
      suffixMinWork_[v] = suffixMinWork_[v + 1] + w;
    }
    assign_.assign(n_, -1);
    finish_.assign(n_, 0);
    free_.assign(static_cast<size_t>(cores_.count), 0);
    lb_.assign(n_, 0);
    start_ = std::chrono::steady_clock::now();
  }

  void setIncumbent(const Assignment& a) {
    if (a.size() != n_) return;
    double l = latencyOf(p_, a);
    if (l < best_) best_ = l, bestAssign_ = a;
  }

  Solution run() {
    openBound_ = kInf;
    if (n_ == 0) {
      best_ = 0;
      bestAssign_.clear();
    } else {
      search(0, 0.0);
    }
    Solution s;
    s.assignment = bestAssign_;
    s.latencyMs = best_;
    s.solver = "branch-and-bound";
    s.optimal = !stopped_;
    s.bound = stopped_ ? std::min(best_, openBound_) : best_;
    s.gap = gapOf(best_, s.bound);
    s.nodes = visited_;
    return s;
  }

 private:
  // Lower bound on the latency of any completion of the first `depth` nodes.
  double lowerBound(size_t depth, double makespan) {
    double lb = makespan;
    double freeSum = std::accumulate(free_.begin(), free_.end(), 0.0);
    lb = std::max(lb, (freeSum + suffixMinWork_[depth]) / static_cast<double>(cores_.count));
    for (size_t v = depth; v < n_; ++v) {
      double best = kInf;
      for (size_t q = 0; q < k_; ++q) {
        double ready = 0;
        for (int ei : in_[v]) {
          const auto& e = p_.edges[static_cast<size_t>(ei)];
          const auto u = static_cast<size_t>(e.from);
          double r = u < depth ? finish_[u] + (assign_[u] != static_cast<int>(q)
                                                   ? p_.handoff[static_cast<size_t>(assign_[u])][q].ms(e.bytes)
                                                   : 0.0)
                               : lb_[u];
          ready = std::max(ready, r);
        }
        best = std::min(best, std::max(ready, freeOf(q)) + p_.ms[v][q]);
      }
      lb_[v] = best;
      lb = std::max(lb, best);
    }
    return lb;
  }

  bool outOfBudget() {
    if (stopped_) return true;
    if (params_.maxNodes && visited_ >= params_.maxNodes) stopped_ = true;
    if ((visited_ & 1023) == 0 && params_.timeLimitS > 0 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count() > params_.timeLimitS)
      stopped_ = true;
    return stopped_;
  }

  void search(size_t depth, double makespan) {
    ++visited_;
    if (depth == n_) {
      if (makespan < best_) best_ = makespan, bestAssign_ = assign_;
      return;
    }
    const double lb = lowerBound(depth, makespan);
    if (lb >= best_ * (1 - 1e-12)) return;
    if (outOfBudget()) {
      openBound_ = std::min(openBound_, lb);
      return;
    }
    // Children: this node on each processor, earliest finish first.
    std::vector<std::pair<double, size_t>> order;
    for (size_t q = 0; q < k_; ++q) order.emplace_back(finishOn(depth, q), q);
    std::stable_sort(order.begin(), order.end());
    for (const auto& [fin, q] : order) {
      if (stopped_) {
        openBound_ = std::min(openBound_, lb);
        return;
      }
      const std::vector<double> savedFree = free_;
      assign_[depth] = static_cast<int>(q);
      finish_[depth] = fin;
      for (int c : cores_.of[q]) free_[static_cast<size_t>(c)] = fin;
      search(depth + 1, std::max(makespan, fin));
      free_ = savedFree;
      assign_[depth] = -1;
    }
  }

  // When all of q's cores are free.
  double freeOf(size_t q) const {
    double f = 0;
    for (int c : cores_.of[q]) f = std::max(f, free_[static_cast<size_t>(c)]);
    return f;
  }

  double finishOn(size_t v, size_t q) const {
    double ready = freeOf(q);
    for (int ei : in_[v]) {
      const auto& e = p_.edges[static_cast<size_t>(ei)];
      const auto u = static_cast<size_t>(e.from);
      double r = finish_[u];
      if (assign_[u] != static_cast<int>(q)) r += p_.handoff[static_cast<size_t>(assign_[u])][q].ms(e.bytes);
      ready = std::max(ready, r);
    }
    return ready + p_.ms[v][q];
  }

  const Problem& p_;
  SolveParams params_;
  std::vector<std::vector<int>> in_;
  size_t n_, k_;
  CoreMap cores_;
  std::vector<double> suffixMinWork_, finish_, free_, lb_;  // free_: per core
  Assignment assign_, bestAssign_;
  double best_ = kInf, openBound_ = kInf;
  uint64_t visited_ = 0;
  bool stopped_ = false;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace

Solution solveChainDp(const Problem& p) {
  assert(isChain(p));
  const size_t n = p.nodes.size(), k = p.processors.size();
  Solution s;
  s.solver = "chain-dp";
  s.optimal = true;
  if (n == 0) return s;
  // cost[v][q]: least latency of nodes 0..v with v on q; from[v][q]: v-1's processor.
  std::vector<std::vector<double>> cost(n, std::vector<double>(k, kInf));
  std::vector<std::vector<int>> from(n, std::vector<int>(k, -1));
  for (size_t q = 0; q < k; ++q) cost[0][q] = p.ms[0][q];
  for (size_t v = 1; v < n; ++v) {
    const double bytes = p.edges[v - 1].bytes;
    for (size_t q = 0; q < k; ++q)
      for (size_t r = 0; r < k; ++r) {
        double c = cost[v - 1][r] + (r == q ? 0.0 : p.handoff[r][q].ms(bytes)) + p.ms[v][q];
        if (c < cost[v][q]) cost[v][q] = c, from[v][q] = static_cast<int>(r);
      }
    s.nodes += k * k;
  }
  int q = static_cast<int>(std::min_element(cost[n - 1].begin(), cost[n - 1].end()) - cost[n - 1].begin());
  s.assignment.assign(n, 0);
  for (size_t v = n; v-- > 0;) {
    s.assignment[v] = q;
    if (v) q = from[v][static_cast<size_t>(q)];
  }
  // The DP value and the list schedule agree on a chain; report the latter.
  s.latencyMs = latencyOf(p, s.assignment);
  s.bound = s.latencyMs;
  return s;
}

Solution solveBranchAndBound(const Problem& p, const Assignment& incumbent, const SolveParams& params) {
  BranchAndBound bb(p, params);
  bb.setIncumbent(incumbent);
  return bb.run();
}

Solution solvePlacement(const Problem& p, const Assignment& incumbent, const SolveParams& params) {
  if (isChain(p)) return solveChainDp(p);
  return solveBranchAndBound(p, incumbent, params);
}

}  // namespace zp::opplace
