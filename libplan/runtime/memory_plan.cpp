#include "libplan/runtime/memory_plan.h"

#include <algorithm>
#include <cassert>
#include <utility>

namespace zp::runtime {
namespace {
size_t align64(size_t v) { return (v + 63) / 64 * 64; }
}  // namespace

int ValueKinds::root(int v) const {
  while (aliasRoot[static_cast<size_t>(v)] != v) v = aliasRoot[static_cast<size_t>(v)];
  return v;
}

Liveness computeLiveness(const std::vector<StepValues>& steps, const ValueKinds& kinds) {
  const size_t nv = kinds.aliasRoot.size();
  Liveness l;
  l.lastUse.assign(nv, -1);
  for (size_t s = 0; s < steps.size(); ++s) {
    for (int v : steps[s].in)
      if (v >= 0) l.lastUse[static_cast<size_t>(kinds.root(v))] = static_cast<int>(s);
    for (int v : steps[s].out) {
      auto& lu = l.lastUse[static_cast<size_t>(kinds.root(v))];
      lu = std::max(lu, static_cast<int>(s));
    }
  }
  for (int v : kinds.graphOutputs) l.lastUse[static_cast<size_t>(kinds.root(v))] = static_cast<int>(steps.size());
  l.releaseAfter.assign(steps.size(), {});
  for (size_t v = 0; v < nv; ++v) {
    if (kinds.pinned[v]) continue;
    const int lu = l.lastUse[static_cast<size_t>(kinds.root(static_cast<int>(v)))];
    if (lu >= 0 && lu < static_cast<int>(steps.size())) l.releaseAfter[static_cast<size_t>(lu)].push_back(static_cast<int>(v));
  }
  return l;
}

std::vector<int> orderedLastUse(const std::vector<StepValues>& steps, const ValueKinds& kinds,
                                const std::vector<std::vector<int>>& after) {
  const size_t n = steps.size(), nv = kinds.aliasRoot.size();
  assert(after.size() == n);
  // before[s][t]: step t finishes before step s starts (transitive closure; `after`
  // points to earlier steps only, so one pass in step order closes it).
  std::vector<std::vector<bool>> before(n, std::vector<bool>(n, false));
  for (size_t s = 0; s < n; ++s)
    for (int t : after[s]) {
      assert(t >= 0 && static_cast<size_t>(t) < s);
      before[s][static_cast<size_t>(t)] = true;
      for (size_t u = 0; u < n; ++u)
        if (before[static_cast<size_t>(t)][u]) before[s][u] = true;
    }
  std::vector<std::vector<int>> touching(nv);  // per root: the steps reading or writing it or an alias
  for (size_t s = 0; s < n; ++s) {
    for (int v : steps[s].in)
      if (v >= 0) touching[static_cast<size_t>(kinds.root(v))].push_back(static_cast<int>(s));
    for (int v : steps[s].out)
      if (v >= 0) touching[static_cast<size_t>(kinds.root(v))].push_back(static_cast<int>(s));
  }
  std::vector<int> last(nv, -1);
  for (size_t v = 0; v < nv; ++v) {
    const auto& uses = touching[v];
    if (uses.empty()) continue;
    int j = static_cast<int>(n) - 1;
    for (; j >= 0; --j) {
      const auto& b = before[static_cast<size_t>(j)];
      if (!std::all_of(uses.begin(), uses.end(), [&](int u) { return b[static_cast<size_t>(u)]; })) break;
    }
    last[v] = j;
  }
  for (int v : kinds.graphOutputs) last[static_cast<size_t>(kinds.root(v))] = static_cast<int>(n);
  return last;
}

ArenaLayout layoutArena(const std::vector<StepValues>& steps, const ValueKinds& kinds, const std::vector<int>& lastUse,
                        const std::vector<size_t>& bytes) {
  const size_t n = kinds.aliasRoot.size();
  std::vector<int> def(n, -1);
  for (size_t s = 0; s < steps.size(); ++s)
    for (int o : steps[s].out) def[static_cast<size_t>(o)] = static_cast<int>(s);
  std::vector<int> order;
  for (size_t v = 0; v < n; ++v)
    if (def[v] >= 0 && !kinds.pinned[v] && kinds.aliasRoot[v] == static_cast<int>(v) && bytes[v] > 0)
      order.push_back(static_cast<int>(v));
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return bytes[static_cast<size_t>(a)] > bytes[static_cast<size_t>(b)]; });
  struct Placed { int first, last; size_t off, size; };
  std::vector<Placed> placed;
  ArenaLayout layout;
  layout.offset.assign(n, 0);
  layout.inArena.assign(n, false);
  for (int v : order) {
    const size_t vi = static_cast<size_t>(v);
    const int first = def[vi], last = std::max(lastUse[vi], first);
    const size_t size = align64(bytes[vi]);
    std::vector<std::pair<size_t, size_t>> busy;
    for (const auto& p : placed)
      if (!(p.last < first || last < p.first)) busy.push_back({p.off, p.off + p.size});
    std::sort(busy.begin(), busy.end());
    size_t off = 0;
    for (const auto& [b, e] : busy) {
      if (off + size <= b) break;
      off = std::max(off, e);
    }
    placed.push_back({first, last, off, size});
    layout.offset[vi] = off;
    layout.inArena[vi] = true;
    layout.bytes = std::max(layout.bytes, off + size);
  }
  return layout;
}

}  // namespace zp::runtime
