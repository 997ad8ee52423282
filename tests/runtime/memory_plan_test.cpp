// The memory plan on its own: lifetimes, release points and arena placement, on
// hand-written programs and on random ones against the rules a plan must keep.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

#include "libplan/runtime/memory_plan.h"

namespace zp::runtime {
namespace {

ValueKinds kindsOf(size_t n, std::vector<int> outputs, std::vector<int> pinned) {
  ValueKinds k;
  k.aliasRoot.resize(n);
  for (size_t v = 0; v < n; ++v) k.aliasRoot[v] = static_cast<int>(v);
  k.pinned.assign(n, false);
  for (int v : pinned) k.pinned[static_cast<size_t>(v)] = true;
  for (int v : outputs) k.pinned[static_cast<size_t>(v)] = true;
  k.graphOutputs = std::move(outputs);
  return k;
}

// x(0) -> a(1) -> b(2) -> c(3) -> y(4), plus a view r(5) of b read by the last step.
TEST(MemoryPlan, AChainReusesBuffersAndAViewKeepsItsRootAlive) {
  std::vector<StepValues> steps = {{{0}, {1}}, {{1}, {2}}, {{2}, {5}}, {{2}, {3}}, {{3, 5}, {4}}};
  ValueKinds k = kindsOf(6, {4}, {0});
  k.aliasRoot[5] = 2;
  const Liveness l = computeLiveness(steps, k);
  EXPECT_EQ(l.lastUse[1], 1);
  EXPECT_EQ(l.lastUse[2], 4) << "read through its view by step 4";
  EXPECT_EQ(l.lastUse[3], 4);
  EXPECT_EQ(l.lastUse[4], 5) << "graph outputs live past the last step";
  EXPECT_EQ(l.releaseAfter[1], (std::vector<int>{1}));
  EXPECT_EQ(l.releaseAfter[4], (std::vector<int>{2, 3, 5}));
  EXPECT_TRUE(l.releaseAfter[0].empty() && l.releaseAfter[2].empty() && l.releaseAfter[3].empty());

  const std::vector<size_t> bytes = {100, 100, 100, 100, 100, 100};
  const ArenaLayout a = layoutArena(steps, k, l.lastUse, bytes);
  EXPECT_TRUE(a.inArena[1] && a.inArena[2] && a.inArena[3]);
  EXPECT_FALSE(a.inArena[0] || a.inArena[4] || a.inArena[5]) << "inputs, outputs and views are not planned";
  EXPECT_EQ(a.offset[1], 0u);
  EXPECT_EQ(a.offset[2], 128u) << "a and b are alive together (step 1)";
  EXPECT_EQ(a.offset[3], 0u) << "c reuses a's slot";
  EXPECT_EQ(a.bytes, 256u);
}

TEST(MemoryPlan, LargerBuffersArePlacedFirstAndSizesAreAlignedTo64Bytes) {
  // Three values alive at once: 10, 1000 and 70 bytes.
  std::vector<StepValues> steps = {{{0}, {1}}, {{0}, {2}}, {{0}, {3}}, {{1, 2, 3}, {4}}};
  const ValueKinds k = kindsOf(5, {4}, {0});
  const Liveness l = computeLiveness(steps, k);
  const ArenaLayout a = layoutArena(steps, k, l.lastUse, {0, 10, 1000, 70, 8});
  EXPECT_EQ(a.offset[2], 0u);
  EXPECT_EQ(a.offset[3], 1024u);
  EXPECT_EQ(a.offset[1], 1152u);
  EXPECT_EQ(a.bytes, 1216u);
}

// A random program over `n` values: each step reads earlier values and writes new
// ones; some outputs are views of an input.
struct RandomProgram {
  std::vector<StepValues> steps;
  ValueKinds kinds;
  std::vector<size_t> bytes;
};

RandomProgram randomProgram(std::mt19937& rng) {
  RandomProgram p;
  const int inputs = 1 + static_cast<int>(rng() % 3);
  int next = inputs;
  std::vector<int> pinned;
  for (int v = 0; v < inputs; ++v) pinned.push_back(v);
  std::vector<std::pair<int, int>> views;  // (view, viewed)
  const int nSteps = 2 + static_cast<int>(rng() % 20);
  for (int s = 0; s < nSteps; ++s) {
    StepValues st;
    const int reads = 1 + static_cast<int>(rng() % 3);
    for (int r = 0; r < reads; ++r) st.in.push_back(static_cast<int>(rng() % static_cast<unsigned>(next)));
    if (rng() % 5 == 0) st.in.push_back(-1);
    const int writes = 1 + static_cast<int>(rng() % 2);
    for (int w = 0; w < writes; ++w) st.out.push_back(next++);
    if (rng() % 4 == 0 && st.in[0] >= inputs) views.push_back({st.out[0], st.in[0]});
    p.steps.push_back(st);
  }
  std::vector<int> outputs = {next - 1};
  p.kinds = kindsOf(static_cast<size_t>(next), outputs, pinned);
  for (auto [view, viewed] : views) p.kinds.aliasRoot[static_cast<size_t>(view)] = viewed;
  for (int v = 0; v < next; ++v) p.bytes.push_back(rng() % 7 == 0 ? 0 : 1 + rng() % 5000);
  return p;
}

TEST(MemoryPlan, RandomProgramsNeverShareMemoryBetweenValuesAliveTogether) {
  std::mt19937 rng(12);
  for (int iter = 0; iter < 300; ++iter) {
    const RandomProgram p = randomProgram(rng);
    const Liveness l = computeLiveness(p.steps, p.kinds);
    const ArenaLayout a = layoutArena(p.steps, p.kinds, l.lastUse, p.bytes);
    const size_t n = p.bytes.size();
    std::vector<int> def(n, -1);
    for (size_t s = 0; s < p.steps.size(); ++s)
      for (int o : p.steps[s].out) def[static_cast<size_t>(o)] = static_cast<int>(s);
    size_t total = 0;
    for (size_t v = 0; v < n; ++v) {
      const bool planned = def[v] >= 0 && !p.kinds.pinned[v] && p.kinds.aliasRoot[v] == static_cast<int>(v) && p.bytes[v] > 0;
      ASSERT_EQ(a.inArena[v], planned) << "value " << v;
      if (!planned) continue;
      EXPECT_EQ(a.offset[v] % 64, 0u);
      EXPECT_LE(a.offset[v] + p.bytes[v], a.bytes);
      total += (p.bytes[v] + 63) / 64 * 64;
      for (size_t u = 0; u < v; ++u) {
        if (!a.inArena[u]) continue;
        const bool together = !(l.lastUse[u] < def[v] || l.lastUse[v] < def[u]);
        const bool overlap = a.offset[u] < a.offset[v] + p.bytes[v] && a.offset[v] < a.offset[u] + p.bytes[u];
        EXPECT_FALSE(together && overlap) << "iteration " << iter << ": values " << u << " and " << v;
      }
    }
    EXPECT_LE(a.bytes, total);
    // Every value not pinned is released once, after the last step that reads it or a view of it.
    std::vector<int> releasedAt(n, -1);
    for (size_t s = 0; s < l.releaseAfter.size(); ++s)
      for (int v : l.releaseAfter[s]) {
        EXPECT_EQ(releasedAt[static_cast<size_t>(v)], -1);
        releasedAt[static_cast<size_t>(v)] = static_cast<int>(s);
      }
    for (size_t s = 0; s < p.steps.size(); ++s)
      for (int v : p.steps[s].in) {
        if (v < 0) continue;
        for (size_t w = 0; w < n; ++w)
          if (p.kinds.root(static_cast<int>(w)) == p.kinds.root(v) && releasedAt[w] >= 0)
            EXPECT_GE(releasedAt[w], static_cast<int>(s)) << "iteration " << iter;
      }
    // Same program, same layout.
    const ArenaLayout again = layoutArena(p.steps, p.kinds, l.lastUse, p.bytes);
    EXPECT_EQ(again.offset, a.offset);
  }
}

// Steps placed at random on processors, run concurrently: two values whose slots
// overlap must have every step touching one ordered before the step writing the other.
TEST(MemoryPlan, OrderedLastUseNeverSharesASlotBetweenValuesOfUnorderedSteps) {
  std::mt19937 rng(31);
  for (int iter = 0; iter < 300; ++iter) {
    const RandomProgram p = randomProgram(rng);
    const size_t n = p.steps.size(), nv = p.bytes.size();
    const int processors = 1 + static_cast<int>(rng() % 3);
    std::vector<int> def(nv, -1), lastOn(static_cast<size_t>(processors), -1);
    for (size_t s = 0; s < n; ++s)
      for (int o : p.steps[s].out) def[static_cast<size_t>(o)] = static_cast<int>(s);
    std::vector<std::vector<int>> after(n);
    for (size_t s = 0; s < n; ++s) {
      for (int v : p.steps[s].in)
        if (v >= 0 && def[static_cast<size_t>(v)] >= 0) after[s].push_back(def[static_cast<size_t>(v)]);
      const int proc = static_cast<int>(rng() % static_cast<unsigned>(processors));
      if (lastOn[static_cast<size_t>(proc)] >= 0) after[s].push_back(lastOn[static_cast<size_t>(proc)]);
      lastOn[static_cast<size_t>(proc)] = static_cast<int>(s);
    }
    // Brute force: ordered[s][t] when t reaches s through `after`.
    std::vector<std::vector<bool>> ordered(n, std::vector<bool>(n, false));
    for (size_t s = 0; s < n; ++s) {
      std::vector<int> stack(after[s].begin(), after[s].end());
      while (!stack.empty()) {
        const int t = stack.back();
        stack.pop_back();
        if (ordered[s][static_cast<size_t>(t)]) continue;
        ordered[s][static_cast<size_t>(t)] = true;
        for (int u : after[static_cast<size_t>(t)]) stack.push_back(u);
      }
    }
    const auto last = orderedLastUse(p.steps, p.kinds, after);
    const Liveness l = computeLiveness(p.steps, p.kinds);
    for (size_t v = 0; v < nv; ++v)
      if (p.kinds.aliasRoot[v] == static_cast<int>(v) && l.lastUse[v] >= 0) EXPECT_GE(last[v], l.lastUse[v]);
    const ArenaLayout a = layoutArena(p.steps, p.kinds, last, p.bytes);
    std::vector<std::vector<int>> touching(nv);
    for (size_t s = 0; s < n; ++s) {
      for (int v : p.steps[s].in)
        if (v >= 0) touching[static_cast<size_t>(p.kinds.root(v))].push_back(static_cast<int>(s));
      for (int v : p.steps[s].out) touching[static_cast<size_t>(p.kinds.root(v))].push_back(static_cast<int>(s));
    }
    auto orderedBefore = [&](size_t first, size_t second) {  // every step touching `first` precedes second's writer
      const size_t w = static_cast<size_t>(def[second]);
      return std::all_of(touching[first].begin(), touching[first].end(),
                         [&](int u) { return ordered[w][static_cast<size_t>(u)]; });
    };
    for (size_t v = 0; v < nv; ++v)
      for (size_t u = 0; u < v; ++u) {
        if (!a.inArena[u] || !a.inArena[v]) continue;
        const bool overlap = a.offset[u] < a.offset[v] + p.bytes[v] && a.offset[v] < a.offset[u] + p.bytes[u];
        if (overlap) EXPECT_TRUE(orderedBefore(u, v) || orderedBefore(v, u)) << "iteration " << iter << ": values " << u << " and " << v;
      }
  }
}

// Two branches on two processors: the first branch's values may not reuse each other's
// slots with the second's, though one step order alone would allow it.
TEST(MemoryPlan, OrderedLastUseKeepsConcurrentBranchesApart) {
  // x(0) -> a(1) -> b(2) on processor 0; x -> c(3) -> d(4) on processor 1; y(5) = join(b, d).
  std::vector<StepValues> steps = {{{0}, {1}}, {{1}, {2}}, {{0}, {3}}, {{3}, {4}}, {{2, 4}, {5}}};
  const ValueKinds k = kindsOf(6, {5}, {0});
  const std::vector<std::vector<int>> after = {{}, {0}, {}, {2}, {1, 3}};
  const auto last = orderedLastUse(steps, k, after);
  EXPECT_EQ(last[1], 3) << "a's last reader (step 1) is not ordered before steps 2 and 3";
  EXPECT_EQ(last[3], 3);
  const ArenaLayout a = layoutArena(steps, k, last, {0, 100, 100, 100, 100, 8});
  const std::set<size_t> offsets = {a.offset[1], a.offset[2], a.offset[3], a.offset[4]};
  EXPECT_EQ(offsets.size(), 4u) << "all four values may be alive at once";
  const Liveness l = computeLiveness(steps, k);
  const ArenaLayout seq = layoutArena(steps, k, l.lastUse, {0, 100, 100, 100, 100, 8});
  EXPECT_LT(seq.bytes, a.bytes) << "in one step order a's slot would be reused";
}

}  // namespace
}  // namespace zp::runtime
