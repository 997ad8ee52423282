// The accuracy estimator of SparseLoom §3.2 (Eq. 2-4): an XGBoost regressor
// from per-position features of a stitched variant to its accuracy. Features
// start with the accuracy of each position's source variant (Eq. 2) and add
// weight sparsity, precision and FLOPs/params share per position.
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "libplan/estimate/feature_matrix.h"
#include "libplan/estimate/xgb_regressor.h"
#include "libplan/util/error.h"
#include "libplan/zoo/stitch_manifest.h"

namespace zp::estimate {

// Cheap measured signals of how well subgraphs fit together, taken on a few
// calibration samples (V * S subgraph runs):
//  - drift (position, variant): how far the subgraph's output moves from the
//    reference variant's when both get the reference chain's boundary input;
//  - mismatch (boundary, producer, consumer): how far the producer variant's own
//    boundary activation is from the consumer variant's own — what the
//    consumer's next subgraph was trained (or fine-tuned, or refitted) to see.
//    Stitching damage comes from these mismatches; a uniform combination has none.
// Both are mean relative L2 distances over the samples.
//  - correct (variant): per test sample, whether the original variant gets it
//    right (measured anyway for Eq. 2). A stitched variant mostly errs where
//    its sources err; counting the samples that none, some, most or all of its
//    sources get wrong ranks the close calls that decide the top-K.
struct StitchSignals {
  std::map<std::pair<int, std::string>, double> drift;
  std::map<std::tuple<int, std::string, std::string>, double> mismatch;
  std::map<std::string, std::vector<uint8_t>> correct;
  bool empty() const { return drift.empty() && mismatch.empty() && correct.empty(); }
};

// Features of every combination of a task, in the manifest's order.
// `variantAccuracy` maps each original variant id to its accuracy; `signals`
// (optional) adds per-position drift and per-boundary mismatch. Accuracy rises
// with the sources' accuracies and falls with mismatch and with the sources'
// shared errors; the columns' monotone constraints say so, which keeps a small
// training sample from learning the opposite in sparse corners.
FeatureMatrix accuracyFeatures(const zoo::TaskStitch& task, const std::map<std::string, double>& variantAccuracy,
                               const StitchSignals& signals = {});

// An XgbRegressor whose predictions are clamped to [0, 1].
class AccuracyEstimator {
 public:
  // Trains on the given rows of `features` with their measured accuracies.
  static Expected<AccuracyEstimator> train(const FeatureMatrix& features, const std::vector<size_t>& rows,
                                           const std::vector<double>& accuracy, const XgbParams& params);
  static Expected<AccuracyEstimator> load(const std::filesystem::path& path);

  std::vector<double> predict(const FeatureMatrix& features) const;
  // XGBoost's JSON model, written atomically.
  Status save(const std::filesystem::path& path) const { return booster_.save(path); }

 private:
  explicit AccuracyEstimator(XgbRegressor booster) : booster_(std::move(booster)) {}
  XgbRegressor booster_;
};

// `count` distinct indices from [0, total) drawn with a seeded generator;
// `always` indices are included first (they count towards `count`). Sorted.
std::vector<size_t> sampleIndices(size_t total, size_t count, uint64_t seed, const std::vector<size_t>& always);

}  // namespace zp::estimate
