#include "libplan/estimate/accuracy_estimator.h"

#include <algorithm>
#include <random>
#include <set>

namespace zp::estimate {

FeatureMatrix accuracyFeatures(const zoo::TaskStitch& task, const std::map<std::string, double>& variantAccuracy,
                               const StitchSignals& signals) {
  FeatureMatrix m;
  const int s = task.positions();
  const bool withDrift = !signals.drift.empty(), withMismatch = !signals.mismatch.empty();
  auto add = [&](std::string name, int monotone) {
    m.names.push_back(std::move(name));
    m.monotone.push_back(monotone);
  };
  for (int p = 0; p < s; ++p) {
    add(fmt::format("p{}_source_accuracy", p), 1);
    for (const char* f : {"weight_sparsity", "int8", "flops_ratio", "params_ratio"}) add(fmt::format("p{}_{}", p, f), 0);
    if (withDrift) add(fmt::format("p{}_drift", p), 0);
  }
  if (withMismatch)
    for (int p = 0; p + 1 < s; ++p) add(fmt::format("b{}_mismatch", p), -1);
  add("mean_source_accuracy", 1);
  add("min_source_accuracy", 1);
  add("flops_weighted_accuracy", 1);
  add("distinct_sources", 0);
  if (withMismatch) {
    add("total_mismatch", -1);
    add("max_mismatch", -1);
  }
  const bool withVotes = !signals.correct.empty();
  if (withVotes) {
    add("share_any_source_wrong", -1);
    add("share_most_sources_wrong", -1);
    add("share_all_sources_wrong", -1);
    add("share_last_source_wrong", -1);
    add("mean_source_errors", -1);
  }
  for (const auto& c : task.combinations) {
    double sum = 0, minAcc = 1.0, weighted = 0, flopsTotal = 0;
    std::set<std::string> distinct(c.variants.begin(), c.variants.end());
    for (int p = 0; p < s; ++p) {
      const auto& v = c.variants[static_cast<size_t>(p)];
      const auto& sg = task.subgraph(p, v);
      const auto& ref = task.subgraph(p, task.reference);
      double acc = variantAccuracy.at(v);
      double flopsRatio = ref.cost.flops > 0 ? sg.cost.flops / ref.cost.flops : 1.0;
      double paramsRatio = ref.cost.params > 0 ? static_cast<double>(sg.cost.params) / static_cast<double>(ref.cost.params) : 1.0;
      for (double x : {acc, sg.cost.weightSparsity, sg.cost.precision == "int8" ? 1.0 : 0.0, flopsRatio, paramsRatio})
        m.values.push_back(static_cast<float>(x));
      if (withDrift) {
        auto it = signals.drift.find({p, v});
        m.values.push_back(static_cast<float>(it == signals.drift.end() ? 0.0 : it->second));
      }
      sum += acc;
      minAcc = std::min(minAcc, acc);
      weighted += acc * ref.cost.flops;
      flopsTotal += ref.cost.flops;
    }
    double totalMismatch = 0, maxMismatch = 0;
    if (withMismatch)
      for (int p = 0; p + 1 < s; ++p) {
        auto it = signals.mismatch.find({p, c.variants[static_cast<size_t>(p)], c.variants[static_cast<size_t>(p + 1)]});
        double x = it == signals.mismatch.end() ? 0.0 : it->second;
        m.values.push_back(static_cast<float>(x));
        totalMismatch += x;
        maxMismatch = std::max(maxMismatch, x);
      }
    m.values.push_back(static_cast<float>(sum / s));
    m.values.push_back(static_cast<float>(minAcc));
    m.values.push_back(static_cast<float>(flopsTotal > 0 ? weighted / flopsTotal : sum / s));
    m.values.push_back(static_cast<float>(distinct.size()));
    if (withMismatch) {
      m.values.push_back(static_cast<float>(totalMismatch));
      m.values.push_back(static_cast<float>(maxMismatch));
    }
    if (withVotes) {
      std::vector<const std::vector<uint8_t>*> src;
      for (const auto& v : c.variants) src.push_back(&signals.correct.at(v));
      const size_t n = src[0]->size();
      double any = 0, most = 0, all = 0, last = 0, errors = 0;
      for (size_t i = 0; i < n; ++i) {
        int wrong = 0;
        for (const auto* cv : src) wrong += (*cv)[i] == 0;
        any += wrong > 0;
        most += 2 * wrong > s;
        all += wrong == s;
        last += (*src.back())[i] == 0;
        errors += wrong;
      }
      const double d = n ? static_cast<double>(n) : 1.0;
      for (double x : {any / d, most / d, all / d, last / d, errors / (d * s)}) m.values.push_back(static_cast<float>(x));
    }
  }
  return m;
}

Expected<AccuracyEstimator> AccuracyEstimator::train(const FeatureMatrix& features, const std::vector<size_t>& rows,
                                                     const std::vector<double>& accuracy, const XgbParams& params) {
  assert(rows.size() == accuracy.size());
  if (rows.empty()) return makeError("accuracy estimator: no training rows");
  const size_t cols = features.names.size();
  FeatureMatrix sample{features.names, features.monotone, {}};
  // Constraints are always passed, all free if none given: that is how every
  // saved estimator was trained, and an unconstrained run writes other bytes.
  sample.monotone.resize(cols, 0);
  for (size_t r : rows) sample.values.insert(sample.values.end(), features.row(r), features.row(r) + cols);
  ZP_ASSIGN_OR_RETURN(auto booster, XgbRegressor::train(sample, accuracy, params));
  return AccuracyEstimator(std::move(booster));
}

Expected<AccuracyEstimator> AccuracyEstimator::load(const std::filesystem::path& path) {
  ZP_ASSIGN_OR_RETURN(auto booster, XgbRegressor::load(path));
  return AccuracyEstimator(std::move(booster));
}

std::vector<double> AccuracyEstimator::predict(const FeatureMatrix& features) const {
  // Accuracy is a fraction: clamp what the trees extrapolate beyond it.
  auto result = booster_.predict(features);
  for (double& v : result) v = std::clamp(v, 0.0, 1.0);
  return result;
}

std::vector<size_t> sampleIndices(size_t total, size_t count, uint64_t seed, const std::vector<size_t>& always) {
  std::set<size_t> chosen(always.begin(), always.end());
  count = std::min(count, total);
  std::vector<size_t> rest;
  for (size_t i = 0; i < total; ++i)
    if (!chosen.count(i)) rest.push_back(i);
  // A seeded Fisher-Yates shuffle with our own index draw: std::shuffle's
  // algorithm is implementation-defined, and the sample must not depend on it.
  std::mt19937_64 rng(seed);
  for (size_t i = rest.size(); i > 1; --i) std::swap(rest[i - 1], rest[rng() % i]);
  for (size_t i = 0; chosen.size() < count && i < rest.size(); ++i) chosen.insert(rest[i]);
  return std::vector<size_t>(chosen.begin(), chosen.end());
}

}  // namespace zp::estimate
