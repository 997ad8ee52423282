// A plain XGBoost regressor over a FeatureMatrix (C API), unclamped: what the
// operator latency predictor trains (the accuracy estimator clamps to [0, 1]).
#pragma once
#include <string>
#include <vector>

#include "libplan/estimate/accuracy_estimator.h"
#include "libplan/util/error.h"

namespace zp::estimate {

class XgbRegressor {
 public:
  XgbRegressor(XgbRegressor&&) noexcept;
  XgbRegressor& operator=(XgbRegressor&&) noexcept;
  ~XgbRegressor();

  static Expected<XgbRegressor> train(const FeatureMatrix& features, const std::vector<double>& targets,
                                      const XgbParams& params);
  std::vector<double> predict(const FeatureMatrix& features) const;
  // XGBoost's JSON model.
  std::string serialized() const;

 private:
  XgbRegressor(void* booster, size_t columns) : booster_(booster), columns_(columns) {}
  void* booster_ = nullptr;
  size_t columns_ = 0;
};

}  // namespace zp::estimate
