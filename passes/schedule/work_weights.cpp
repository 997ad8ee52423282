#include "passes/schedule/work_weights.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace zp::schedule {

// Every group of every DNN, with the pair slowdowns the simulator uses.
struct WorkWeightBuilder::Table {
  struct Group {
    int dnn = 0;
    const sim::GroupCost* cost = nullptr;
  };
  std::vector<Group> groups;
  std::vector<std::vector<bool>> related;
  // slow[a][x * G + y]: slowdown of group x on accelerator a while group y runs
  // on the other one (0 when either placement is not allowed or the two never
  // run together).
  std::vector<double> slow[2];

  explicit Table(const sim::Problem& p) : related(sim::dependencyRelated(p)) {
    for (size_t n = 0; n < p.dnns.size(); ++n)
      for (const auto& g : p.dnns[n].groups) groups.push_back({static_cast<int>(n), &g});
    const size_t G = groups.size();
    for (int a = 0; a < 2; ++a) {
      const int b = 1 - a;
      slow[a].assign(G * G, 0.0);
      for (size_t x = 0; x < G; ++x)
        for (size_t y = 0; y < G; ++y) {
          const auto& gx = *groups[x].cost;
          const auto& gy = *groups[y].cost;
          if (!canPair(x, y) || !gx.allowed(a) || !gy.allowed(b)) continue;
          slow[a][x * G + y] = p.contention.slowdown(a, gx.demand[static_cast<size_t>(a)], gy.demand[static_cast<size_t>(b)]);
        }
    }
  }
  bool canPair(size_t x, size_t y) const {
    return !related[static_cast<size_t>(groups[x].dnn)][static_cast<size_t>(groups[y].dnn)];
  }
};

namespace {

using PairTable = WorkWeightBuilder::Table;

// Raises side a's weights as far as the pair constraints with side b allow:
// w(x,a) = min(1, min_y s_a(x|y) (1 - w(y,b) / s_b(y|x))).
void raise(const PairTable& t, WorkWeighting& w, int a) {
  const int b = 1 - a;
  const size_t G = t.groups.size();
  for (size_t x = 0; x < G; ++x) {
    if (!t.groups[x].cost->allowed(a)) {
      w[x * 2 + static_cast<size_t>(a)] = 0;
      continue;
    }
    double m = 1.0;
    for (size_t y = 0; y < G; ++y) {
      double sa = t.slow[a][x * G + y];
      if (sa == 0) continue;
      double sb = t.slow[b][y * G + x];
      m = std::min(m, sa * (1.0 - w[y * 2 + static_cast<size_t>(b)] / sb));
    }
    w[x * 2 + static_cast<size_t>(a)] = std::max(0.0, m);
  }
}

}  // namespace

WorkWeightBuilder::WorkWeightBuilder(const sim::Problem& p) : p_(p) {
  if (p.numAccelerators() == 2) t_ = std::make_unique<Table>(p);
}

WorkWeightBuilder::~WorkWeightBuilder() = default;

std::vector<WorkWeighting> WorkWeightBuilder::family(int steps) const {
  std::vector<WorkWeighting> out;
  if (!t_ || steps < 1) return out;
  const Table& t = *t_;
  const size_t G = t.groups.size();
  for (int side = 0; side < 2; ++side)
    for (int k = 0; k <= steps; ++k) {
      WorkWeighting w(G * 2, 0.0);
      double mu = static_cast<double>(k) / steps;
      for (size_t x = 0; x < G; ++x)
        if (t.groups[x].cost->allowed(side)) w[x * 2 + static_cast<size_t>(side)] = mu;
      raise(t, w, 1 - side);
      raise(t, w, side);
      raise(t, w, 1 - side);
      // A hair below the constraints, so rounding in the sums above can never
      // make a bound exceed what the constraints prove.
      for (double& v : w) v *= 1.0 - 1e-12;
      out.push_back(std::move(w));
    }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

WorkWeighting WorkWeightBuilder::combine(const std::vector<WorkWeighting>& ws, const std::vector<double>& theta) const {
  assert(t_ && !ws.empty() && ws.size() == theta.size());
  const Table& t = *t_;
  WorkWeighting w(ws[0].size(), 0.0);
  for (size_t k = 0; k < ws.size(); ++k)
    for (size_t i = 0; i < w.size(); ++i) w[i] += theta[k] * ws[k][i];
  raise(t, w, 0);
  raise(t, w, 1);
  for (double& v : w) v *= 1.0 - 1e-12;
  return w;
}

WorkWeighting WorkWeightBuilder::targeted(const sim::Schedule& s, int iterations) const {
  assert(t_);
  const Table& t = *t_;
  const sim::Problem& p = p_;
  const size_t G = t.groups.size();
  std::vector<size_t> on0, on1;
  std::vector<double> time(G, 0.0);
  {
    size_t x = 0;
    for (size_t n = 0; n < p.dnns.size(); ++n)
      for (size_t i = 0; i < p.dnns[n].groups.size(); ++i, ++x) {
        int a = s.assign[n][i];
        (a == 0 ? on0 : on1).push_back(x);
        time[x] = p.dnns[n].groups[i].timeMs[static_cast<size_t>(a)];
      }
  }
  std::vector<double> v(G, 0.0), bestV(G, 0.0), grad(G, 0.0);
  for (size_t y : on1) v[y] = 0.5;
  double best = -1;
  for (int it = 0; it < iterations; ++it) {
    // Each placement on accelerator 0 takes its largest weight given v; the
    // pair that binds it is where raising v costs.
    double f = 0;
    std::fill(grad.begin(), grad.end(), 0.0);
    for (size_t y : on1) {
      f += time[y] * v[y];
      grad[y] = time[y];
    }
    for (size_t x : on0) {
      double m = 1.0, dm = 0;
      size_t arg = G;
      for (size_t y : on1) {
        double sa = t.slow[0][x * G + y];
        if (sa == 0) continue;
        double sb = t.slow[1][y * G + x];
        double val = sa * (1.0 - v[y] / sb);
        if (val < m) m = val, arg = y, dm = sa / sb;
      }
      f += time[x] * std::max(0.0, m);
      if (arg < G && m > 0) grad[arg] -= time[x] * dm;
    }
    if (f > best) best = f, bestV = v;
    double gmax = 0;
    for (size_t y : on1) gmax = std::max(gmax, std::fabs(grad[y]));
    if (gmax == 0) break;
    const double step = 0.2 / std::sqrt(1.0 + it);
    for (size_t y : on1) v[y] = std::clamp(v[y] + step * grad[y] / gmax, 0.0, 1.0);
  }
  WorkWeighting w(G * 2, 0.0);
  for (size_t y : on1) w[y * 2 + 1] = bestV[y];
  raise(t, w, 0);
  raise(t, w, 1);
  for (double& x : w) x *= 1.0 - 1e-12;
  return w;
}

double weightedWork(const sim::Problem& p, const WorkWeighting& w, const sim::Schedule& s) {
  double sum = 0;
  size_t x = 0;
  for (size_t n = 0; n < p.dnns.size(); ++n)
    for (size_t i = 0; i < p.dnns[n].groups.size(); ++i, ++x) {
      auto a = static_cast<size_t>(s.assign[n][i]);
      sum += w[x * 2 + a] * p.dnns[n].groups[i].timeMs[a];
    }
  return sum;
}

double WorkWeightBuilder::violation(const WorkWeighting& w) const {
  assert(t_);
  const Table& t = *t_;
  const size_t G = t.groups.size();
  double worst = -1;
  for (double v : w) worst = std::max(worst, v - 1.0);
  for (size_t x = 0; x < G; ++x)
    for (size_t y = 0; y < G; ++y) {
      double s0 = t.slow[0][x * G + y];
      if (s0 == 0) continue;
      double s1 = t.slow[1][y * G + x];
      worst = std::max(worst, w[x * 2] / s0 + w[y * 2 + 1] / s1 - 1.0);
    }
  return worst;
}

}  // namespace zp::schedule
