#include "passes/mts/shared_weights.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <string>

#include "libplan/graph/tensor.h"

namespace zp::mts {

std::vector<SharedWeightFamily> sharedWeightFamilies(const std::vector<const onnx::ModelProto*>& models,
                                                     double minShare) {
  const size_t n = models.size();
  // Per model: content hash -> bytes (an initializer held twice counts once).
  std::vector<std::map<std::string, int64_t>> content(n);
  std::vector<int64_t> total(n, 0);
  for (size_t m = 0; m < n; ++m)
    for (const auto& init : models[m]->graph().initializer())
      if (content[m].emplace(graph::contentHash(init), graph::byteSize(init)).second) total[m] += graph::byteSize(init);
  auto common = [&](size_t a, size_t b) {
    int64_t bytes = 0;
    for (const auto& [key, size] : content[a])
      if (content[b].count(key)) bytes += size;
    return bytes;
  };
  std::vector<size_t> parent(n);
  std::iota(parent.begin(), parent.end(), size_t{0});
  auto root = [&](size_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  for (size_t a = 0; a < n; ++a)
    for (size_t b = a + 1; b < n; ++b) {
      const int64_t smaller = std::min(total[a], total[b]);
      if (smaller > 0 && static_cast<double>(common(a, b)) >= minShare * static_cast<double>(smaller)) {
        const size_t ra = root(a), rb = root(b);
        parent[std::max(ra, rb)] = std::min(ra, rb);
      }
    }
  std::map<size_t, std::vector<int>> byRoot;  // ordered by the smallest index, which is the root
  for (size_t m = 0; m < n; ++m) byRoot[root(m)].push_back(static_cast<int>(m));
  std::vector<SharedWeightFamily> out;
  for (const auto& [r, members] : byRoot) {
    if (members.size() < 2) continue;
    SharedWeightFamily f;
    f.members = members;
    f.smallestBytes = total[static_cast<size_t>(members.front())];
    for (int m : members) f.smallestBytes = std::min(f.smallestBytes, total[static_cast<size_t>(m)]);
    for (const auto& [key, size] : content[static_cast<size_t>(members.front())])
      if (std::all_of(members.begin() + 1, members.end(),
                      [&](int m) { return content[static_cast<size_t>(m)].count(key) > 0; }))
        f.sharedBytes += size;
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace zp::mts
