#include "libplan/estimate/metrics.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <numeric>
#include <set>

namespace zp::estimate {

namespace {
std::vector<size_t> orderDescending(const std::vector<double>& v) {
  std::vector<size_t> idx(v.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return v[a] > v[b]; });
  return idx;
}
}  // namespace

double topKRecall(const std::vector<double>& predicted, const std::vector<double>& truth, size_t k) {
  assert(predicted.size() == truth.size());
  k = std::min(k, truth.size());
  if (k == 0) return 1.0;
  auto byTruth = orderDescending(truth);
  const double kth = truth[byTruth[k - 1]];
  std::set<size_t> trueTop;
  for (size_t i = 0; i < truth.size(); ++i)
    if (truth[i] >= kth) trueTop.insert(i);
  auto byPred = orderDescending(predicted);
  size_t hits = 0;
  for (size_t i = 0; i < k; ++i) hits += trueTop.count(byPred[i]);
  return static_cast<double>(hits) / static_cast<double>(k);
}

std::vector<double> averageRanks(const std::vector<double>& v) {
  std::vector<size_t> idx(v.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> ranks(v.size());
  for (size_t i = 0; i < idx.size();) {
    size_t j = i;
    while (j + 1 < idx.size() && v[idx[j + 1]] == v[idx[i]]) ++j;
    double r = (static_cast<double>(i) + static_cast<double>(j)) / 2.0 + 1.0;
    for (size_t t = i; t <= j; ++t) ranks[idx[t]] = r;
    i = j + 1;
  }
  return ranks;
}

double spearman(const std::vector<double>& a, const std::vector<double>& b) {
  assert(a.size() == b.size());
  const size_t n = a.size();
  if (n < 2) return 0.0;
  auto ra = averageRanks(a), rb = averageRanks(b);
  double ma = std::accumulate(ra.begin(), ra.end(), 0.0) / static_cast<double>(n);
  double mb = std::accumulate(rb.begin(), rb.end(), 0.0) / static_cast<double>(n);
  double cov = 0, va = 0, vb = 0;
  for (size_t i = 0; i < n; ++i) {
    cov += (ra[i] - ma) * (rb[i] - mb);
    va += (ra[i] - ma) * (ra[i] - ma);
    vb += (rb[i] - mb) * (rb[i] - mb);
  }
  if (va == 0 || vb == 0) return 0.0;
  return cov / std::sqrt(va * vb);
}

double meanAbsoluteError(const std::vector<double>& p, const std::vector<double>& t) {
  assert(p.size() == t.size());
  if (p.empty()) return 0.0;
  double s = 0;
  for (size_t i = 0; i < p.size(); ++i) s += std::abs(p[i] - t[i]);
  return s / static_cast<double>(p.size());
}

double meanAbsolutePercentageError(const std::vector<double>& p, const std::vector<double>& t) {
  assert(p.size() == t.size());
  double s = 0;
  size_t n = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    if (t[i] == 0) continue;
    s += std::abs(p[i] - t[i]) / std::abs(t[i]);
    ++n;
  }
  return n ? s / static_cast<double>(n) : 0.0;
}

}  // namespace zp::estimate
