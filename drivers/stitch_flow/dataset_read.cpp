#include "drivers/stitch_flow/dataset_read.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "libplan/runtime/npy.h"

namespace zp::drivers {
namespace fs = std::filesystem;

Expected<std::vector<runtime::Tensor>> readSamples(const fs::path& inputs, const std::vector<int64_t>& sampleShape,
                                                   size_t limit) {
  ZP_ASSIGN_OR_RETURN(auto x, runtime::readNpy(inputs));
  // numpy's default float64 (e.g. sklearn's arrays saved as they come) is
  // read as the float32 the models take.
  if (x.dtype == runtime::DType::F64) {
    auto values = x.toF32();
    auto f = runtime::Tensor::empty(runtime::DType::F32, x.shape);
    std::memcpy(f.data, values.data(), values.size() * sizeof(float));
    x = std::move(f);
  }
  if (x.dtype != runtime::DType::F32)
    return makeError("{}: expected float32 or float64 samples, got {} (save them as float32: "
                     "np.save(path, x.astype(np.float32)) with the model's preprocessing applied)",
                     inputs.string(), runtime::dtypeName(x.dtype));
  if (x.shape.empty()) return makeError("{}: expected an array with a sample axis", inputs.string());
  // A symbolic leading dim is the model's batch: one sample per tensor.
  runtime::Shape shape = sampleShape;
  if (!shape.empty() && shape[0] < 0) shape[0] = 1;
  for (size_t i = 0; i < shape.size(); ++i)
    if (shape[i] < 0)
      return makeError("{}: the model's input {} has symbolic dimension {}; bind it (zoo-stitch --dim) to read samples",
                       inputs.string(), runtime::shapeString(sampleShape), i);
  const int64_t per = runtime::numel(shape);
  const int64_t n = x.shape[0];
  if (n == 0 || x.size() != n * per)
    return makeError("{}: {} values per sample ({}), but the model takes {} ({})", inputs.string(),
                     n ? x.size() / n : 0, runtime::shapeString(x.shape), per, runtime::shapeString(shape));
  const size_t count = limit ? std::min<size_t>(limit, static_cast<size_t>(n)) : static_cast<size_t>(n);
  std::vector<runtime::Tensor> out;
  for (size_t i = 0; i < count; ++i) {
    auto t = runtime::Tensor::empty(runtime::DType::F32, shape);
    std::memcpy(t.data, x.ptr<float>() + static_cast<int64_t>(i) * per, static_cast<size_t>(per) * sizeof(float));
    out.push_back(std::move(t));
  }
  return out;
}

namespace {

// Labels are class ids for top-1 accuracy: integers, floats holding integers,
// or one-hot rows (N x C, one 1 per row).
Expected<std::vector<int64_t>> classIds(const runtime::Tensor& y, const fs::path& file) {
  const char* what = "labels are class ids for top-1 accuracy (integers, or one-hot rows)";
  const bool rows = y.shape.size() == 2 && y.shape[1] > 1;
  if (!rows && !runtime::dtypeIsFloat(y.dtype)) return y.toI64();
  const auto v = y.toF64();
  if (!rows) {
    std::vector<int64_t> ids;
    for (size_t i = 0; i < v.size(); ++i) {
      if (v[i] != std::floor(v[i]) || std::fabs(v[i]) > 1e15)
        return makeError("{}: label {} is {}: {}; regression targets are not supported", file.string(), i, v[i], what);
      ids.push_back(static_cast<int64_t>(v[i]));
    }
    return ids;
  }
  const size_t n = static_cast<size_t>(y.shape[0]), c = static_cast<size_t>(y.shape[1]);
  std::vector<int64_t> ids(n, -1);
  for (size_t i = 0; i < n; ++i)
    for (size_t k = 0; k < c; ++k) {
      const double e = v[i * c + k];
      if (e != 0.0 && e != 1.0)
        return makeError("{}: row {} holds {}, not one-hot: {}; scores or probabilities are not labels", file.string(),
                         i, e, what);
      if (e == 1.0) {
        if (ids[i] >= 0) return makeError("{}: row {} has two 1s, not one-hot: {}", file.string(), i, what);
        ids[i] = static_cast<int64_t>(k);
      }
    }
  for (size_t i = 0; i < n; ++i)
    if (ids[i] < 0) return makeError("{}: row {} has no 1, not one-hot: {}", file.string(), i, what);
  return ids;
}

}  // namespace

Expected<measure::Dataset> readDataset(const fs::path& inputs, const fs::path& labels,
                                       const std::vector<int64_t>& sampleShape, size_t limit) {
  measure::Dataset d;
  ZP_ASSIGN_OR_RETURN(d.samples, readSamples(inputs, sampleShape, limit));
  ZP_ASSIGN_OR_RETURN(auto y, runtime::readNpy(labels));
  ZP_ASSIGN_OR_RETURN(auto values, classIds(y, labels));
  if (values.size() < d.samples.size())
    return makeError("{}: {} labels for {} samples in {}", labels.string(), values.size(), d.samples.size(), inputs.string());
  d.labels.assign(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(d.samples.size()));
  return d;
}

}  // namespace zp::drivers
