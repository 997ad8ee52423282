#include "libplan/plan/workload.h"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace zp::plan {

namespace {

int indexOf(const std::vector<std::string>& names, const std::string& name) {
  const auto it = std::find(names.begin(), names.end(), name);
  return it == names.end() ? -1 : static_cast<int>(it - names.begin());
}

// Union-find root.
int root(std::vector<int>& parent, int i) {
  while (parent[static_cast<size_t>(i)] != i) i = parent[static_cast<size_t>(i)] = parent[static_cast<size_t>(parent[static_cast<size_t>(i)])];
  return i;
}

}  // namespace

Expected<std::vector<std::vector<std::string>>> frameChains(const FrameSpec& frame) {
  const size_t n = frame.dnns.size();
  std::vector<std::vector<int>> after(n);  // after[d]: the DNNs d starts after
  std::vector<int> parent(n);
  std::iota(parent.begin(), parent.end(), 0);
  for (const auto& [dnn, on] : frame.dependsOn) {
    const int d = indexOf(frame.dnns, dnn), e = indexOf(frame.dnns, on);
    if (d < 0 || e < 0)
      return makeError("frame '{}': '{}' depends on '{}', but the frame runs no DNN '{}'", frame.name, dnn, on,
                       d < 0 ? dnn : on);
    if (d == e) return makeError("frame '{}': '{}' depends on itself", frame.name, dnn);
    after[static_cast<size_t>(d)].push_back(e);
    parent[static_cast<size_t>(root(parent, d))] = root(parent, e);
  }
  // Kahn's order, lowest frame index first among the ready ones.
  std::vector<int> waiting(n);
  for (size_t d = 0; d < n; ++d) waiting[d] = static_cast<int>(after[d].size());
  std::vector<int> order;
  std::vector<bool> done(n, false);
  while (order.size() < n) {
    int next = -1;
    for (size_t d = 0; d < n && next < 0; ++d)
      if (!done[d] && waiting[d] == 0) next = static_cast<int>(d);
    if (next < 0) {
      std::vector<std::string> cycle;
      for (size_t d = 0; d < n; ++d)
        if (!done[d]) cycle.push_back(frame.dnns[d]);
      return makeError("frame '{}': its dependencies form a cycle among {}", frame.name, fmt::join(cycle, ", "));
    }
    done[static_cast<size_t>(next)] = true;
    order.push_back(next);
    for (size_t d = 0; d < n; ++d)
      for (int e : after[d]) waiting[d] -= e == next ? 1 : 0;
  }
  std::vector<std::vector<std::string>> chains;
  std::vector<int> chainOfRoot(n, -1);
  for (int d : order) {
    int& c = chainOfRoot[static_cast<size_t>(root(parent, d))];
    if (c < 0) {
      c = static_cast<int>(chains.size());
      chains.emplace_back();
    }
    chains[static_cast<size_t>(c)].push_back(frame.dnns[static_cast<size_t>(d)]);
  }
  return chains;
}

}  // namespace zp::plan
