// Which subgraph sessions are resident (SparseLoom §3.4). The preload set is
// loaded before serving and stays; any other slot is loaded the first time a query
// needs it, and least recently used non-preloaded slots that no worker is using
// are evicted to keep the resident bytes under the memory budget. When nothing
// more can be evicted the load goes ahead over the budget and is counted, rather
// than stalling a query; when a run ends over the budget, idle slots are evicted
// (least recently used first, the one just run too) until it holds. Thread-safe: the workers of all processors share one.
#pragma once
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "libplan/runtime/serve/subgraph_loader.h"
#include "libplan/util/budgeted_lru.h"

namespace zp::runtime::serve {

class ResidencyManager {
 public:
  // An error when the preload set alone exceeds the budget.
  static Expected<std::unique_ptr<ResidencyManager>> create(const std::vector<ServeSlot>& slots, int64_t budgetBytes);

  // Installs a preloaded slot's session (resident for good).
  void installPreloaded(int slot, LoadedSubgraph loaded);

  struct Lease {
    LoadedUnit* unit = nullptr;
    bool loaded = false;          // this acquire loaded it
    double loadMs = 0;            // time spent loading, the evicted units freed first (0 when it was resident)
    int64_t loadedBytes = 0;      // what the loaded session holds
    std::vector<int> evicted;     // slots evicted to make room, in order
    bool overBudget = false;      // loaded although it did not fit
  };
  // Makes `slot` resident (calling `load` when it is not) and marks it in use
  // until release(slot).
  Expected<Lease> acquire(int slot, const std::function<Expected<LoadedSubgraph>()>& load);
  void release(int slot);

  int loads() const;
  int evictions() const;
  int overBudgetLoads() const;
  int64_t peakResidentBytes() const;
  int64_t residentBytes() const;

 private:
  ResidencyManager(std::vector<ServeSlot> slots, int64_t budgetBytes);
  std::vector<ServeSlot> slots_;
  mutable std::mutex mutex_;
  BudgetedLru lru_;
  std::vector<LoadedUnit> units_;
  std::vector<int> inUse_;
  int loads_ = 0, evictions_ = 0, overBudget_ = 0;
};

}  // namespace zp::runtime::serve
