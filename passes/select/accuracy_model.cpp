#include "passes/select/accuracy_model.h"
#include "libplan/util/infinity.h"

#include <algorithm>
#include <cassert>

namespace zp::select {
namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
}  // namespace

AccuracyTable::AccuracyTable(Combinations combinations, const std::vector<AccuracyEntry>& entries)
    : AccuracyModel(std::move(combinations)) {
  const auto& c = this->combinations();
  const int S = c.positions();
  const uint64_t V = static_cast<uint64_t>(c.variants());
  predicted_.assign(c.size(), kNaN);
  measured_.assign(c.size(), -1.0);
  for (const auto& e : entries) {
    assert(e.combination < c.size() && e.predicted == e.predicted && "a valid combination has a number");
    predicted_[e.combination] = e.predicted;
    measured_[e.combination] = e.measured;
  }
  validCount_.resize(static_cast<size_t>(S) + 1);
  for (int f = 0; f < 2; ++f) {
    lo_[f].resize(static_cast<size_t>(S) + 1);
    hi_[f].resize(static_cast<size_t>(S) + 1);
  }
  // The leaves, then each level from the one below: a prefix's bounds are its children's.
  auto& leafCount = validCount_[static_cast<size_t>(S)];
  leafCount.assign(c.size(), 0);
  for (int f = 0; f < 2; ++f) {
    lo_[f][static_cast<size_t>(S)].assign(c.size(), kInf);
    hi_[f][static_cast<size_t>(S)].assign(c.size(), -kInf);
  }
  for (uint64_t k = 0; k < c.size(); ++k) {
    if (!valid(k)) continue;
    leafCount[k] = 1;
    for (int f = 0; f < 2; ++f) lo_[f][static_cast<size_t>(S)][k] = hi_[f][static_cast<size_t>(S)][k] = decision(k, f == 1);
  }
  for (int d = S; d-- > 0;) {
    const size_t n = static_cast<size_t>(c.size() / c.subtreeSize(d));
    const auto& below = validCount_[static_cast<size_t>(d) + 1];
    auto& count = validCount_[static_cast<size_t>(d)];
    count.assign(n, 0);
    for (size_t i = 0; i < n; ++i)
      for (uint64_t v = 0; v < V; ++v) count[i] += below[i * V + v];
    for (int f = 0; f < 2; ++f) {
      const auto &loBelow = lo_[f][static_cast<size_t>(d) + 1], &hiBelow = hi_[f][static_cast<size_t>(d) + 1];
      auto &lo = lo_[f][static_cast<size_t>(d)], &hi = hi_[f][static_cast<size_t>(d)];
      lo.assign(n, kInf);
      hi.assign(n, -kInf);
      for (size_t i = 0; i < n; ++i)
        for (uint64_t v = 0; v < V; ++v) {
          lo[i] = std::min(lo[i], loBelow[i * V + v]);
          hi[i] = std::max(hi[i], hiBelow[i * V + v]);
        }
    }
  }
}

AccuracyBounds AccuracyTable::bounds(const int*, uint64_t prefixNumber, int depth, bool measuredForDecisions) const {
  const int f = measuredForDecisions ? 1 : 0;
  const size_t d = static_cast<size_t>(depth);
  AccuracyBounds b;
  b.lo = lo_[f][d][prefixNumber];
  b.hi = hi_[f][d][prefixNumber];
  b.complete = validCount_[d][prefixNumber] == combinations().subtreeSize(depth);
  return b;
}

MeanSourceAccuracy::MeanSourceAccuracy(Combinations combinations, std::vector<std::vector<double>> perPosition)
    : AccuracyModel(std::move(combinations)), perPosition_(std::move(perPosition)) {
  assert(static_cast<int>(perPosition_.size()) == this->combinations().positions());
  for (const auto& row : perPosition_) {
    assert(static_cast<int>(row.size()) == this->combinations().variants());
    lowest_.push_back(*std::min_element(row.begin(), row.end()));
    highest_.push_back(*std::max_element(row.begin(), row.end()));
  }
}

double MeanSourceAccuracy::predicted(uint64_t k) const {
  const auto& c = combinations();
  double sum = 0;
  for (int p = 0; p < c.positions(); ++p) sum += perPosition_[static_cast<size_t>(p)][static_cast<size_t>(c.digit(k, p))];
  return sum / c.positions();
}

AccuracyBounds MeanSourceAccuracy::bounds(const int* prefix, uint64_t, int depth, bool) const {
  // The same additions in the same order with the free positions at their
  // extremes: rounding is monotone, so these bound the computed means.
  const int S = combinations().positions();
  double lo = 0, hi = 0;
  for (int p = 0; p < S; ++p) {
    const size_t i = static_cast<size_t>(p);
    lo += p < depth ? perPosition_[i][static_cast<size_t>(prefix[p])] : lowest_[i];
    hi += p < depth ? perPosition_[i][static_cast<size_t>(prefix[p])] : highest_[i];
  }
  return AccuracyBounds{lo / S, hi / S, true};
}

}  // namespace zp::select
