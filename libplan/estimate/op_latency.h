// Per-operator latency predictor, one per processor (kernel policy): an
// XGBoost regressor from OpFeatures (plus the GEMM shape a Conv or Gemm amounts
// to) to log(ms / workPriorMs), trained on per-node host profiles, with
// leave-one-model-out validation in nn-Meter's metric (the share of predictions
// within +-10% of the measurement). The trees learn an efficiency, which stays
// in a narrow range, rather than a time that spans six orders of magnitude:
// piecewise-constant trees cannot extrapolate a time to an operator larger
// than any they saw, and can an efficiency.
#pragma once
#include <string>
#include <vector>

#include "libplan/estimate/op_features.h"
#include "libplan/estimate/xgb_regressor.h"
#include "libplan/util/error.h"

namespace zp::estimate {

struct OpSample {
  std::string model;  // the graph the node belongs to (the unit left out)
  OpFeatures features;
  double ms = 0;
};

// The op types, kernels and fused activations one-hot encoded, the numeric features after them.
struct OpVocabulary {
  std::vector<std::string> opTypes, kernels, activations;  // sorted
  static OpVocabulary of(const std::vector<OpSample>& samples);
  FeatureMatrix encode(const std::vector<OpFeatures>& rows) const;
};

XgbParams defaultOpLatencyParams();

// A roofline-like prior of an operator's time: its FLOPs left once zero weights
// are skipped at 50 GFLOP/s, its bytes at 10 GB/s, plus 1 us.
double workPriorMs(const OpFeatures& features);

class OpLatencyPredictor {
 public:
  static Expected<OpLatencyPredictor> train(const std::vector<OpSample>& samples, const XgbParams& params);
  std::vector<double> predict(const std::vector<OpFeatures>& rows) const;
  // Bytes of the XGBoost JSON model (the trees).
  size_t modelBytes() const;

 private:
  OpLatencyPredictor(OpVocabulary vocab, XgbRegressor booster) : vocab_(std::move(vocab)), booster_(std::move(booster)) {}
  OpVocabulary vocab_;
  XgbRegressor booster_;  // predicts log(ms / workPriorMs)
};

struct LomoModelResult {
  std::string model;
  size_t nodes = 0;
  double withinShare = 0;       // nodes predicted within the tolerance
  double measuredMs = 0, predictedMs = 0;  // sums over the model's nodes
};

struct LomoReport {
  double tolerance = 0.1;
  size_t nodes = 0;
  double nodeWithinShare = 0;   // over every node of every left-out model
  double timeWithinShare = 0;   // the same weighted by measured time (the nodes that matter for latency)
  double modelWithinShare = 0;  // models whose summed prediction is within the tolerance
  double trainSeconds = 0;      // mean wall time of one training
  size_t modelBytes = 0;        // of the predictor trained on all samples
  std::vector<LomoModelResult> models;
  std::vector<double> predictedMs;  // per sample, in the samples' order, by the predictor that left its model out
};

// Trains once per model on the other models' samples (and on every one of
// `alwaysTrain`, e.g. an operator sweep, never left out) and predicts the left-out one.
Expected<LomoReport> leaveOneModelOut(const std::vector<OpSample>& samples, const XgbParams& params, double tolerance = 0.1,
                                      const std::vector<OpSample>& alwaysTrain = {});

}  // namespace zp::estimate
