#include "drivers/stitch_flow/dataset_read.h"

#include <algorithm>
#include <cstring>

#include "libplan/runtime/npy.h"

namespace zp::drivers {
namespace fs = std::filesystem;

Expected<std::vector<runtime::Tensor>> readSamples(const fs::path& inputs, const std::vector<int64_t>& sampleShape,
                                                   size_t limit) {
  ZP_ASSIGN_OR_RETURN(auto x, runtime::readNpy(inputs));
  if (x.dtype != runtime::DType::F32)
    return makeError("{}: expected float32 samples, got {}", inputs.string(), runtime::dtypeName(x.dtype));
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

Expected<measure::Dataset> readDataset(const fs::path& inputs, const fs::path& labels,
                                       const std::vector<int64_t>& sampleShape, size_t limit) {
  measure::Dataset d;
  ZP_ASSIGN_OR_RETURN(d.samples, readSamples(inputs, sampleShape, limit));
  ZP_ASSIGN_OR_RETURN(auto y, runtime::readNpy(labels));
  auto values = y.toI64();
  if (values.size() < d.samples.size())
    return makeError("{}: {} labels for {} samples in {}", labels.string(), values.size(), d.samples.size(), inputs.string());
  d.labels.assign(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(d.samples.size()));
  return d;
}

}  // namespace zp::drivers
