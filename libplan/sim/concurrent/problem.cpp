#include "libplan/sim/concurrent/problem.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace zp::sim {

const char* objectiveName(Objective o) { return o == Objective::Latency ? "latency" : "throughput"; }

int Problem::totalGroups() const {
  int n = 0;
  for (const auto& d : dnns) n += static_cast<int>(d.groups.size());
  return n;
}

bool isValidSchedule(const Problem& p, const Schedule& s) {
  if (s.assign.size() != p.dnns.size()) return false;
  for (size_t n = 0; n < p.dnns.size(); ++n) {
    if (s.assign[n].size() != p.dnns[n].groups.size()) return false;
    for (size_t i = 0; i < s.assign[n].size(); ++i) {
      int a = s.assign[n][i];
      if (a < 0 || a >= p.numAccelerators() || !p.dnns[n].groups[i].allowed(a)) return false;
    }
  }
  return true;
}

int countTransitions(const Schedule& s, int dnn) {
  const auto& a = s.assign[static_cast<size_t>(dnn)];
  int c = 0;
  for (size_t i = 1; i < a.size(); ++i) c += a[i] != a[i - 1];
  return c;
}

std::vector<std::vector<bool>> dependencyRelated(const Problem& p) {
  const size_t N = p.dnns.size();
  // before[d][n]: d ends before n starts (deps always point to lower indices).
  std::vector<std::vector<bool>> before(N, std::vector<bool>(N, false));
  for (size_t n = 0; n < N; ++n)
    for (int d : p.dnns[n].deps) {
      before[static_cast<size_t>(d)][n] = true;
      for (size_t k = 0; k < N; ++k)
        if (before[k][static_cast<size_t>(d)]) before[k][n] = true;
    }
  std::vector<std::vector<bool>> r(N, std::vector<bool>(N, false));
  for (size_t a = 0; a < N; ++a)
    for (size_t b = 0; b < N; ++b) r[a][b] = a == b || before[a][b] || before[b][a];
  return r;
}

bool better(Objective o, double a, double b) {
  double tol = 1e-9 * std::max({1.0, std::fabs(a), std::fabs(b)});
  return o == Objective::Latency ? a < b - tol : a > b + tol;
}

double worstValue(Objective o) {
  return o == Objective::Latency ? std::numeric_limits<double>::infinity() : 0.0;
}

}  // namespace zp::sim
