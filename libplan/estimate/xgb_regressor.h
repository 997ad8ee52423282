// An XGBoost regressor over a FeatureMatrix (C API), unclamped. The one place
// that calls XGBoost: the operator latency predictor and the accuracy
// estimator are built on it.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "libplan/estimate/feature_matrix.h"
#include "libplan/util/error.h"

namespace zp::estimate {

struct XgbParams {
  int rounds = 300;
  int maxDepth = 3;
  double eta = 0.05;
  double subsample = 1.0;
  double lambda = 1.0;
  double minChildWeight = 1.0;
  uint64_t seed = 0;
  int threads = 1;  // one thread: training is deterministic
  std::string objective = "reg:squarederror";
};

class XgbRegressor {
 public:
  XgbRegressor(XgbRegressor&&) noexcept;
  XgbRegressor& operator=(XgbRegressor&&) noexcept;
  ~XgbRegressor();

  // Honours features.monotone (see FeatureMatrix).
  static Expected<XgbRegressor> train(const FeatureMatrix& features, const std::vector<double>& targets,
                                      const XgbParams& params);
  // `origin` names where the bytes came from in error messages.
  static Expected<XgbRegressor> fromJson(std::string_view json, const std::string& origin);
  static Expected<XgbRegressor> load(const std::filesystem::path& path);

  std::vector<double> predict(const FeatureMatrix& features) const;
  // XGBoost's JSON model.
  std::string serialized() const;
  // serialized(), written atomically.
  Status save(const std::filesystem::path& path) const;

 private:
  XgbRegressor(void* booster, size_t columns) : booster_(booster), columns_(columns) {}
  void* booster_ = nullptr;
  size_t columns_ = 0;
};

}  // namespace zp::estimate
