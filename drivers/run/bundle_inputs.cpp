#include "drivers/run/bundle_inputs.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>

#include <fmt/format.h>

#include "libplan/artifacts/bundle_manifest.h"
#include "libplan/artifacts/mts_json.h"
#include "libplan/artifacts/plan_json.h"
#include "libplan/artifacts/plan_pb.h"
#include "libplan/artifacts/stitch_json.h"
#include "libplan/artifacts/zoo_json.h"
#include "libplan/runtime/npy.h"
#include "libplan/util/file.h"
#include "libplan/util/hash.h"

namespace zp::drivers {
namespace fs = std::filesystem;
using artifacts::BundleManifest;
using runtime::Tensor;

runtime::Shape staticShape(const runtime::IoInfo& io) {
  runtime::Shape s = io.shape;
  for (auto& d : s)
    if (d < 0) d = 1;
  return s;
}

Expected<Dataset> datasetSamples(const zoo::Zoo& zoo, const std::string& task, const runtime::IoInfo& input,
                                 int limit, std::string* why) {
  Dataset d;
  const zoo::TaskSpec* spec = nullptr;
  for (const auto& t : zoo.tasks)
    if (t.name == task) spec = &t;
  if (!spec) {
    *why = fmt::format("task '{}' not in {}", task, zoo.file.string());
    return d;
  }
  if (!spec->dataset || spec->dataset->inputs.empty()) {
    *why = fmt::format("task '{}' has no dataset in {}", task, zoo.file.string());
    return d;
  }
  const fs::path xs = zoo.resolve(spec->dataset->inputs);
  ZP_ASSIGN_OR_RETURN(Tensor x, runtime::readNpy(xs));
  const runtime::Shape shape = staticShape(input);
  const int64_t per = runtime::numel(shape);
  if (x.dtype != runtime::DType::F32 || x.shape.empty() || x.shape[0] == 0 || x.size() != x.shape[0] * per)
    return makeError("{}: {} {} does not hold samples of {}", xs.string(), runtime::dtypeName(x.dtype),
                     runtime::shapeString(x.shape), runtime::shapeString(shape));
  const int64_t n = std::min<int64_t>(limit, x.shape[0]);
  for (int64_t i = 0; i < n; ++i) {
    Tensor t = Tensor::empty(runtime::DType::F32, shape);
    std::memcpy(t.data, x.ptr<float>() + i * per, static_cast<size_t>(per) * sizeof(float));
    d.samples.push_back(std::move(t));
  }
  if (!spec->dataset->labels.empty()) {
    const fs::path ys = zoo.resolve(spec->dataset->labels);
    ZP_ASSIGN_OR_RETURN(Tensor y, runtime::readNpy(ys));
    auto v = y.toI64();
    if (static_cast<int64_t>(v.size()) < n)
      return makeError("{}: {} labels for {} samples", ys.string(), v.size(), n);
    d.labels.assign(v.begin(), v.begin() + n);
  }
  d.source = "dataset";
  return d;
}

int64_t argmax(const Tensor& t) {
  auto v = t.toF32();
  return static_cast<int64_t>(std::max_element(v.begin(), v.end()) - v.begin());
}

void OutputDiff::add(const runtime::TensorMap& got, const runtime::TensorMap& want) {
  for (const auto& [name, w] : want) {
    auto it = got.find(name);
    if (it == got.end() || it->second.shape != w.shape) {
      maxAbsDiff = INFINITY;
      continue;
    }
    const auto gv = it->second.toF32(), wv = w.toF32();
    for (size_t k = 0; k < wv.size(); ++k) {
      const double d = std::abs(static_cast<double>(gv[k]) - wv[k]);
      maxAbsDiff = std::isnan(d) ? INFINITY : std::max(maxAbsDiff, d);
      refScale = std::max(refScale, std::abs(static_cast<double>(wv[k])));
    }
  }
}

bool OutputDiff::within(double tolerance) const { return maxAbsDiff <= tolerance * std::max(1.0, refScale); }

Expected<std::vector<std::string>> systemsToRun(const std::vector<std::string>& planSystems, const std::string& chosen,
                                                const std::vector<std::string>& compare) {
  auto carried = [&](const std::string& name) {
    return std::find(planSystems.begin(), planSystems.end(), name) != planSystems.end();
  };
  std::string names;
  for (const auto& n : planSystems) names += (names.empty() ? "" : ", ") + n;
  if (!carried(chosen)) return makeError("the plan's chosen system '{}' is none of its systems ({})", chosen, names);
  std::vector<std::string> out{chosen};
  auto add = [&](const std::string& name) {
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  };
  for (const auto& name : compare) {
    if (name == "all") {
      for (const auto& n : planSystems) add(n);
    } else if (carried(name)) {
      add(name);
    } else {
      return makeError("--compare {}: the plan carries no such system (it carries: {}; or all)", name, names);
    }
  }
  return out;
}

std::optional<std::string> inputMismatch(const runtime::IoInfo& input, const Tensor& t) {
  if (t.dtype != input.dtype)
    return fmt::format("holds {}, the input '{}' is {}", runtime::dtypeName(t.dtype), input.name,
                       runtime::dtypeName(input.dtype));
  bool match = t.shape.size() == input.shape.size();
  for (size_t d = 0; match && d < input.shape.size(); ++d) match = input.shape[d] < 0 || input.shape[d] == t.shape[d];
  if (!match)
    return fmt::format("shape {}, the input '{}' is {}", runtime::shapeString(t.shape), input.name,
                       runtime::shapeString(input.shape));
  return std::nullopt;
}

std::string npyFileName(std::string name) {
  std::replace_if(name.begin(), name.end(), [](char c) { return c == '/' || c == '\\' || c == ':'; }, '_');
  return name + ".npy";
}

}  // namespace zp::drivers
