#include "libplan/estimate/xgb_regressor.h"

#include <xgboost/c_api.h>

#include <cmath>
#include <utility>

#include "libplan/util/file.h"

namespace zp::estimate {
namespace {

// XGBoost's last error without the stack trace it appends: errors are one line.
std::string lastXgbError() {
  const std::string text = XGBGetLastError();
  return text.substr(0, text.find('\n'));
}

Error xgbError(const std::string& what) { return makeError("xgboost: {}: {}", what, lastXgbError()); }

struct DMatrix {
  DMatrixHandle h = nullptr;
  ~DMatrix() {
    if (h) XGDMatrixFree(h);
  }
};

// XGBoost's tuple syntax, "(1,0,-1)", padded with free columns.
std::string monotoneConstraints(const std::vector<int>& monotone, size_t columns) {
  std::string s = "(";
  for (size_t c = 0; c < columns; ++c) {
    if (c) s += ',';
    s += std::to_string(c < monotone.size() ? monotone[c] : 0);
  }
  return s + ")";
}

std::vector<std::pair<std::string, std::string>> boosterSettings(const XgbParams& params, const FeatureMatrix& features) {
  std::vector<std::pair<std::string, std::string>> settings = {
      {"objective", params.objective},
      {"max_depth", std::to_string(params.maxDepth)},
      {"eta", fmt::format("{}", params.eta)},
      {"subsample", fmt::format("{}", params.subsample)},
      {"lambda", fmt::format("{}", params.lambda)},
      {"min_child_weight", fmt::format("{}", params.minChildWeight)},
      {"seed", std::to_string(params.seed)},
      {"nthread", std::to_string(params.threads)},
      {"tree_method", "exact"},
  };
  if (!features.monotone.empty())
    settings.emplace_back("monotone_constraints", monotoneConstraints(features.monotone, features.names.size()));
  settings.emplace_back("verbosity", "0");
  return settings;
}

// The JSON model in a buffer the booster owns until its next call.
bool modelJson(BoosterHandle booster, std::string_view& json) {
  bst_ulong len = 0;
  const char* buf = nullptr;
  if (XGBoosterSaveModelToBuffer(booster, R"({"format": "json"})", &len, &buf) != 0) return false;
  json = std::string_view(buf, len);
  return true;
}

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
  for (const auto& [k, v] : boosterSettings(params, features))
    if (XGBoosterSetParam(booster, k.c_str(), v.c_str()) != 0) return xgbError("setting " + k);
  for (int it = 0; it < params.rounds; ++it)
    if (XGBoosterUpdateOneIter(booster, it, train.h) != 0) return xgbError("training");
  return reg;
}

Expected<XgbRegressor> XgbRegressor::fromJson(std::string_view json, const std::string& origin) {
  BoosterHandle booster = nullptr;
  if (XGBoosterCreate(nullptr, 0, &booster) != 0) return xgbError("creating a booster");
  XgbRegressor reg(booster, 0);
  if (XGBoosterLoadModelFromBuffer(booster, json.data(), json.size()) != 0)
    return makeError("{}: not an XGBoost model: {}", origin, lastXgbError());
  bst_ulong features = 0;
  if (XGBoosterGetNumFeature(booster, &features) != 0) return xgbError("reading " + origin);
  reg.columns_ = features;
  return reg;
}

Expected<XgbRegressor> XgbRegressor::load(const std::filesystem::path& path) {
  ZP_ASSIGN_OR_RETURN(std::string bytes, readFile(path));
  return fromJson(bytes, path.string());
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
  std::string_view json;
  [[maybe_unused]] bool ok = modelJson(booster_, json);
  assert(ok);
  return std::string(json);
}

Status XgbRegressor::save(const std::filesystem::path& path) const {
  std::string_view json;
  if (!modelJson(booster_, json)) return xgbError("saving " + path.string());
  return writeFileAtomic(path, json);
}

}  // namespace zp::estimate
