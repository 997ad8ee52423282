#include "libplan/estimate/op_latency.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <set>

namespace zp::estimate {
namespace {

// Latencies below this are clamped before the log: the timer's resolution.
constexpr double kFloorMs = 1e-5;

std::vector<std::string> sortedUnique(std::set<std::string> s) { return {s.begin(), s.end()}; }

double log1pSafe(double x) { return std::log1p(std::max(0.0, x)); }

// The GEMM a Conv (im2col: M = Cout/g, K = Cin/g*kh*kw, N = output pixels) or a
// Gemm/MatMul (K = inner, N = output columns, M = rows) amounts to, from the
// FLOPs; zeros for other operators.
struct GemmShape {
  double m = 0, n = 0, k = 0;
};
GemmShape gemmShape(const OpFeatures& r) {
  GemmShape g;
  if (r.flops <= 0 || r.inChannels <= 0 || r.outChannels <= 0) return g;
  if (r.opType == "Conv") {
    const double groups = static_cast<double>(std::max<int64_t>(1, r.groups));
    g.m = static_cast<double>(r.outChannels) / groups;
    g.k = static_cast<double>(r.inChannels) / groups * static_cast<double>(std::max<int64_t>(1, r.kernelH)) *
          static_cast<double>(std::max<int64_t>(1, r.kernelW));
    g.n = r.flops / (2 * g.m * g.k * groups);
  } else if (r.opType == "Gemm" || r.opType == "MatMul") {
    g.k = static_cast<double>(r.inChannels);
    g.n = static_cast<double>(r.outChannels);
    g.m = r.flops / (2 * g.k * g.n);
  }
  return g;
}

}  // namespace

double workPriorMs(const OpFeatures& r) {
  return r.flops * (1.0 - r.weightSparsity) * 2e-8 + r.bytes * 1e-7 + 1e-3;
}

OpVocabulary OpVocabulary::of(const std::vector<OpSample>& samples) {
  std::set<std::string> ops, kernels, activations;
  for (const auto& s : samples) {
    ops.insert(s.features.opType);
    kernels.insert(s.features.kernel);
    activations.insert(s.features.activation);
  }
  return OpVocabulary{sortedUnique(std::move(ops)), sortedUnique(std::move(kernels)), sortedUnique(std::move(activations))};
}

FeatureMatrix OpVocabulary::encode(const std::vector<OpFeatures>& rows) const {
  FeatureMatrix m;
  for (const auto& o : opTypes) m.names.push_back("op_" + o);
  for (const auto& k : kernels) m.names.push_back("kernel_" + k);
  for (const auto& a : activations) m.names.push_back("activation_" + a);
  for (const char* n : {"log_batch", "log_in_channels", "log_in_h", "log_in_w", "log_out_channels", "kernel_h",
                        "kernel_w", "stride", "log_groups", "log_flops", "log_intensity", "log_bytes",
                        "flops_per_byte", "weight_sparsity", "input_sparsity", "output_sparsity",
                        "log_dense_flops", "log_gemm_m", "log_gemm_n", "log_gemm_k", "log_gemm_min",
                        "log_input_elements", "log_input_reuse_bytes", "log_model_bytes"})
    m.names.push_back(n);
  for (const auto& r : rows) {
    for (const auto& o : opTypes) m.values.push_back(r.opType == o ? 1.f : 0.f);
    for (const auto& k : kernels) m.values.push_back(r.kernel == k ? 1.f : 0.f);
    for (const auto& a : activations) m.values.push_back(r.activation == a ? 1.f : 0.f);
    const double flopsPerByte = r.bytes > 0 ? r.flops / r.bytes : 0.0;
    // FLOPs left once the weights' zeros are skipped (what a sparse kernel does).
    const double denseFlops = r.flops * (1.0 - r.weightSparsity);
    const GemmShape g = gemmShape(r);
    const double inputElements = static_cast<double>(r.batch) * static_cast<double>(r.inChannels) *
                                 static_cast<double>(r.inH) * static_cast<double>(r.inW);
    for (double x : {log1pSafe(static_cast<double>(r.batch)), log1pSafe(static_cast<double>(r.inChannels)),
                     log1pSafe(static_cast<double>(r.inH)), log1pSafe(static_cast<double>(r.inW)),
                     log1pSafe(static_cast<double>(r.outChannels)), static_cast<double>(r.kernelH),
                     static_cast<double>(r.kernelW), static_cast<double>(r.stride),
                     log1pSafe(static_cast<double>(r.groups)), log1pSafe(r.flops), log1pSafe(r.intensity),
                     log1pSafe(r.bytes), flopsPerByte, r.weightSparsity, r.inputSparsity, r.outputSparsity,
                     log1pSafe(denseFlops), log1pSafe(g.m), log1pSafe(g.n), log1pSafe(g.k),
                     log1pSafe(std::min({g.m, g.n, g.k})), log1pSafe(inputElements), log1pSafe(r.inputReuseBytes),
                     log1pSafe(r.modelBytes)})
      m.values.push_back(static_cast<float>(x));
  }
  return m;
}

XgbParams defaultOpLatencyParams() {
  XgbParams p;
  p.rounds = 400;
  p.maxDepth = 6;
  p.eta = 0.05;
  p.minChildWeight = 1.0;
  return p;
}

Expected<OpLatencyPredictor> OpLatencyPredictor::train(const std::vector<OpSample>& samples, const XgbParams& params) {
  if (samples.empty()) return makeError("operator latency predictor: no samples");
  auto vocab = OpVocabulary::of(samples);
  std::vector<OpFeatures> rows;
  std::vector<double> y;
  for (const auto& s : samples) {
    rows.push_back(s.features);
    y.push_back(std::log(std::max(s.ms, kFloorMs)) - std::log(workPriorMs(s.features)));
  }
  ZP_ASSIGN_OR_RETURN(auto reg, XgbRegressor::train(vocab.encode(rows), y, params));
  return OpLatencyPredictor(std::move(vocab), std::move(reg));
}

std::vector<double> OpLatencyPredictor::predict(const std::vector<OpFeatures>& rows) const {
  auto logRatio = booster_.predict(vocab_.encode(rows));
  for (size_t i = 0; i < rows.size(); ++i) logRatio[i] = std::exp(logRatio[i]) * workPriorMs(rows[i]);
  return logRatio;
}

size_t OpLatencyPredictor::modelBytes() const { return booster_.serialized().size(); }

Expected<LomoReport> leaveOneModelOut(const std::vector<OpSample>& samples, const XgbParams& params, double tolerance,
                                      const std::vector<OpSample>& alwaysTrain) {
  std::map<std::string, std::vector<size_t>> byModel;
  for (size_t i = 0; i < samples.size(); ++i) byModel[samples[i].model].push_back(i);
  if (byModel.size() < 2) return makeError("leave-one-model-out: needs samples of at least two models");
  LomoReport rep;
  rep.tolerance = tolerance;
  rep.predictedMs.assign(samples.size(), 0.0);
  size_t within = 0, modelsWithin = 0;
  double trainS = 0, timeWithin = 0, timeAll = 0;
  auto close = [&](double pred, double meas) { return std::abs(pred - meas) <= tolerance * meas; };
  for (const auto& [model, idx] : byModel) {
    std::vector<OpSample> train = alwaysTrain;
    std::vector<OpFeatures> test;
    for (size_t i = 0; i < samples.size(); ++i)
      if (samples[i].model != model) train.push_back(samples[i]);
    for (size_t i : idx) test.push_back(samples[i].features);
    const auto t0 = std::chrono::steady_clock::now();
    ZP_ASSIGN_OR_RETURN(auto pred, OpLatencyPredictor::train(train, params));
    trainS += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const auto ms = pred.predict(test);
    LomoModelResult r{model, idx.size(), 0, 0, 0};
    size_t w = 0;
    for (size_t j = 0; j < idx.size(); ++j) {
      rep.predictedMs[idx[j]] = ms[j];
      const bool ok = close(ms[j], samples[idx[j]].ms);
      w += ok;
      timeWithin += ok ? samples[idx[j]].ms : 0.0;
      timeAll += samples[idx[j]].ms;
      r.measuredMs += samples[idx[j]].ms;
      r.predictedMs += ms[j];
    }
    r.withinShare = static_cast<double>(w) / static_cast<double>(idx.size());
    within += w;
    modelsWithin += close(r.predictedMs, r.measuredMs);
    rep.nodes += idx.size();
    rep.models.push_back(r);
  }
  rep.nodeWithinShare = static_cast<double>(within) / static_cast<double>(rep.nodes);
  rep.timeWithinShare = timeAll > 0 ? timeWithin / timeAll : 0.0;
  rep.modelWithinShare = static_cast<double>(modelsWithin) / static_cast<double>(byModel.size());
  rep.trainSeconds = trainS / static_cast<double>(byModel.size());
  std::vector<OpSample> everything = samples;
  everything.insert(everything.end(), alwaysTrain.begin(), alwaysTrain.end());
  ZP_ASSIGN_OR_RETURN(auto all, OpLatencyPredictor::train(everything, params));
  rep.modelBytes = all.modelBytes();
  return rep;
}

}  // namespace zp::estimate
