#include "libplan/estimate/xgb_regressor.h"

#include <xgboost/c_api.h>

#include <cmath>
#include <utility>

namespace zp::estimate {
namespace {

Error xgbError(const std::string& what) { return makeError("xgboost: {}: {}", what, XGBGetLastError()); }

struct DMatrix {
  DMatrixHandle h = nullptr;
  ~DMatrix() {
    if (h) XGDMatrixFree(h);
  }
};

}  // namespace

XgbRegressor::XgbRegressor(XgbRegressor&& o) noexcept : booster_(o.booster_), columns_(o.columns_) { o.booster_ = nullptr; }
XgbRegressor& XgbRegressor::operator=(XgbRegressor&& o) noexcept {
  std::swap(booster_, o.booster_);
  std::swap(columns_, o.columns_);
  return *this;
}
XgbRegressor::~XgbRegressor() {
  if (booster_) XGBoosterFree(booster_);
}

Expected<XgbRegressor> XgbRegressor::train(const FeatureMatrix& features, const std::vector<double>& targets,
                                           const XgbParams& params) {
  assert(features.rows() == targets.size());
  if (targets.empty()) return makeError("xgboost regressor: no training rows");
  const size_t cols = features.names.size();
  std::vector<float> y(targets.begin(), targets.end());
  DMatrix train;
  if (XGDMatrixCreateFromMat(features.values.data(), features.rows(), cols, NAN, &train.h) != 0)
    return xgbError("creating the training matrix");
  if (XGDMatrixSetFloatInfo(train.h, "label", y.data(), y.size()) != 0) return xgbError("setting labels");
  BoosterHandle booster = nullptr;
  if (XGBoosterCreate(&train.h, 1, &booster) != 0) return xgbError("creating the booster");
  XgbRegressor reg(booster, cols);
  const std::vector<std::pair<std::string, std::string>> settings = {
      {"objective", params.objective},
      {"max_depth", std::to_string(params.maxDepth)},
      {"eta", fmt::format("{}", params.eta)},
      {"subsample", fmt::format("{}", params.subsample)},
      {"lambda", fmt::format("{}", params.lambda)},
      {"min_child_weight", fmt::format("{}", params.minChildWeight)},
      {"seed", std::to_string(params.seed)},
      {"nthread", std::to_string(params.threads)},
      {"tree_method", "exact"},
      {"verbosity", "0"},
  };
  for (const auto& [k, v] : settings)
    if (XGBoosterSetParam(booster, k.c_str(), v.c_str()) != 0) return xgbError("setting " + k);
  for (int it = 0; it < params.rounds; ++it)
    if (XGBoosterUpdateOneIter(booster, it, train.h) != 0) return xgbError("training");
  return reg;
}

std::vector<double> XgbRegressor::predict(const FeatureMatrix& features) const {
  assert(features.names.size() == columns_);
  if (features.rows() == 0) return {};
  DMatrix m;
  [[maybe_unused]] int rc = XGDMatrixCreateFromMat(features.values.data(), features.rows(), columns_, NAN, &m.h);
  assert(rc == 0);
  bst_ulong len = 0;
  const float* out = nullptr;
  rc = XGBoosterPredict(booster_, m.h, 0, 0, 0, &len, &out);
  assert(rc == 0 && len == features.rows());
  return std::vector<double>(out, out + len);
}

std::string XgbRegressor::serialized() const {
  bst_ulong len = 0;
  const char* buf = nullptr;
  [[maybe_unused]] int rc = XGBoosterSaveModelToBuffer(booster_, R"({"format": "json"})", &len, &buf);
  assert(rc == 0);
  return std::string(buf, len);
}

}  // namespace zp::estimate
