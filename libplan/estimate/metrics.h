// Quality figures for estimators: Top-K recall, Spearman correlation, MAE, MAPE.
#pragma once
#include <cstddef>
#include <vector>

namespace zp::estimate {

// Fraction of the true top-K found among the predicted top-K. The true top-K
// includes every item tied with the K-th best (measured accuracies on a finite
// test set tie often); the predicted top-K is exactly K items (ties broken by
// index). Returns |predicted ∩ true| / K.
double topKRecall(const std::vector<double>& predicted, const std::vector<double>& truth, size_t k);

// Spearman rank correlation with average ranks for ties.
double spearman(const std::vector<double>& a, const std::vector<double>& b);

double meanAbsoluteError(const std::vector<double>& predicted, const std::vector<double>& truth);
// Mean of |p - t| / |t| over items with t != 0.
double meanAbsolutePercentageError(const std::vector<double>& predicted, const std::vector<double>& truth);

// Ranks (1-based) with ties sharing their average rank.
std::vector<double> averageRanks(const std::vector<double>& v);

}  // namespace zp::estimate
