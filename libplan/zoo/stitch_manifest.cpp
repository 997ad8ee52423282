#include "libplan/zoo/stitch_manifest.h"

#include <algorithm>
#include <cassert>

#include "libplan/util/validate.h"

namespace zp::zoo {

std::string TensorSig::str() const {
  std::string s = type + "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ',';
    s += shape[i] < 0 ? std::string("?") : std::to_string(shape[i]);
  }
  return s + "]";
}

int64_t TensorSig::bytes() const {
  int64_t n = 1;
  for (auto d : shape) n *= std::max<int64_t>(d, 1);
  const int64_t size = type == "float64" || type == "int64" ? 8 : type == "float16" ? 2 : type == "int8" || type == "uint8" ? 1 : 4;
  return n * size;
}

const SubgraphInfo& TaskStitch::subgraph(int position, const std::string& variant) const {
  for (const auto& s : subgraphs[static_cast<size_t>(position)])
    if (s.variant == variant) return s;
  assert(false && "unknown variant");
  return subgraphs[0][0];
}

const TaskStitch* StitchManifest::task(const std::string& name) const {
  for (const auto& t : tasks)
    if (t.name == name) return &t;
  return nullptr;
}

std::optional<uint64_t> combinationCount(size_t variants, size_t positions) {
  return checkedPow(variants, positions, kMaxCombinations);
}

std::vector<std::string> combinationVariants(std::string_view id) {
  std::vector<std::string> out;
  for (size_t start = 0;;) {
    const size_t plus = id.find('+', start);
    out.emplace_back(id.substr(start, plus == std::string_view::npos ? std::string_view::npos : plus - start));
    if (plus == std::string_view::npos) return out;
    start = plus + 1;
  }
}

std::string combinationId(const std::vector<std::string>& variants) {
  std::string id;
  for (const auto& v : variants) id += (id.empty() ? "" : "+") + v;
  return id;
}

std::optional<std::string> combinationIdProblem(std::string_view id) {
  for (const auto& part : combinationVariants(id))
    if (auto p = idProblem(part)) return p;
  return std::nullopt;
}

}  // namespace zp::zoo
