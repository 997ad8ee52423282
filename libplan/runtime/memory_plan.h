// Activation memory of a session: which step last uses each value, after which
// step a value's storage can be dropped, and where in one arena each value lives.
// Values are ids; aliases (views such as Reshape) share their root's storage.
#pragma once
#include <cstddef>
#include <vector>

namespace zp::runtime {

// The values a step reads and writes.
struct StepValues {
  std::vector<int> in;   // -1 for an absent optional input
  std::vector<int> out;
};

// What planning needs to know of each value.
struct ValueKinds {
  std::vector<int> aliasRoot;  // per value: the value whose storage it shares (itself if none)
  std::vector<bool> pinned;    // per value: storage not planned (constants, graph inputs and outputs)
  std::vector<int> graphOutputs;
  int root(int v) const;
};

struct Liveness {
  // Per value (meaningful at alias roots): the last step that reads or writes it or
  // one of its aliases; steps.size() for graph outputs; -1 when no step touches it.
  std::vector<int> lastUse;
  // Per step: the values, not pinned, whose storage can be dropped after it.
  std::vector<std::vector<int>> releaseAfter;
};
Liveness computeLiveness(const std::vector<StepValues>& steps, const ValueKinds& kinds);

// Liveness when steps run concurrently (one model placed on several processors):
// `after[s]` lists steps that finish before step s starts in every execution
// (the producers of its inputs, the step before it on its processor). Per value
// (at alias roots) the last step that is NOT ordered after every step touching
// it; a slot reused only by values written after that step is never shared by
// two values that may be alive at once. Graph outputs keep steps.size().
std::vector<int> orderedLastUse(const std::vector<StepValues>& steps, const ValueKinds& kinds,
                                const std::vector<std::vector<int>>& after);

struct ArenaLayout {
  std::vector<size_t> offset;  // per value, where it lies in the arena (when inArena)
  std::vector<bool> inArena;
  size_t bytes = 0;            // the arena's size
};
// Greedy by size: every value a step writes that is neither pinned nor an alias and
// has bytes > 0, largest first, takes the lowest 64-byte aligned offset that does
// not overlap a value alive at the same time (from the step writing it to its last
// use). Ties keep value order, so the layout is deterministic.
ArenaLayout layoutArena(const std::vector<StepValues>& steps, const ValueKinds& kinds, const std::vector<int>& lastUse,
                        const std::vector<size_t>& bytes);

}  // namespace zp::runtime
