// The input of the XGBoost regressors: a row-major matrix with named columns.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace zp::estimate {

struct FeatureMatrix {
  std::vector<std::string> names;
  // Per column: +1 the prediction may only rise with it, -1 only fall, 0 free;
  // missing trailing columns are free. Empty: XGBoost gets no constraint at
  // all, which is not the same as all free: with constraints it computes split
  // gains another way, so the saved gains differ in their last bits and near
  // ties may split differently.
  std::vector<int> monotone;
  std::vector<float> values;  // rows x names.size()
  size_t rows() const { return names.empty() ? 0 : values.size() / names.size(); }
  const float* row(size_t r) const { return values.data() + r * names.size(); }
};

}  // namespace zp::estimate
