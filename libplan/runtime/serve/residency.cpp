#include "libplan/runtime/serve/residency.h"

#include <chrono>

namespace zp::runtime::serve {

Expected<std::unique_ptr<ResidencyManager>> ResidencyManager::create(const std::vector<ServeSlot>& slots,
                                                                      int64_t budgetBytes) {
  int64_t preloadBytes = 0;
  for (const auto& s : slots)
    if (s.preload) preloadBytes += s.bytes;
  if (preloadBytes > budgetBytes)
    return makeError("memory budget: the preload set needs {} bytes, above the budget of {} bytes", preloadBytes,
                     budgetBytes);
  return std::unique_ptr<ResidencyManager>(new ResidencyManager(slots, budgetBytes));
}

ResidencyManager::ResidencyManager(std::vector<ServeSlot> slots, int64_t budgetBytes)
    : slots_(std::move(slots)), lru_(budgetBytes), units_(slots_.size()), inUse_(slots_.size(), 0) {}

void ResidencyManager::installPreloaded(int slot, LoadedSubgraph loaded) {
  std::lock_guard lock(mutex_);
  const auto s = static_cast<size_t>(slot);
  assert(slots_[s].preload && !lru_.contains(slot));
  lru_.addPinned(slot, slots_[s].bytes);
  units_[s] = std::move(loaded.unit);
}

Expected<ResidencyManager::Lease> ResidencyManager::acquire(int slot,
                                                            const std::function<Expected<LoadedSubgraph>()>& load) {
  const auto s = static_cast<size_t>(slot);
  Lease lease;
  std::vector<LoadedUnit> dropped;
  {
    std::lock_guard lock(mutex_);
    ++inUse_[s];
    if (lru_.contains(slot)) {
      assert(units_[s]);  // only the slot's own worker acquires it, so it is not being loaded
      lru_.touch(slot);
      lease.unit = &units_[s];
      return lease;
    }
    lease.evicted = lru_.makeRoom(slots_[s].bytes, [this](int id) { return inUse_[static_cast<size_t>(id)] == 0; });
    for (int e : lease.evicted) dropped.push_back(std::move(units_[static_cast<size_t>(e)]));
    lease.overBudget = !lru_.fits(slots_[s].bytes);
    lru_.insert(slot, slots_[s].bytes);  // reserved now, so concurrent loads see the bytes
    evictions_ += static_cast<int>(lease.evicted.size());
    ++loads_;
    if (lease.overBudget) ++overBudget_;
  }
  // The evicted units are freed outside the lock, on this worker: part of making
  // the slot resident, so inside the load's time (as calibration times loads).
  const auto t0 = std::chrono::steady_clock::now();
  dropped.clear();
  auto loaded = load();
  lease.loadMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (!loaded.ok()) return loaded.error();
  lease.loaded = true;
  lease.loadedBytes = loaded->bytes;
  std::lock_guard lock(mutex_);
  units_[s] = std::move(loaded->unit);
  lease.unit = &units_[s];
  return lease;
}

void ResidencyManager::release(int slot) {
  std::vector<LoadedUnit> dropped;
  {
    std::lock_guard lock(mutex_);
    --inUse_[static_cast<size_t>(slot)];
    // A load that went over the budget holds it only while it runs: once idle,
    // units go again, least recently used first, until the budget holds.
    if (!lru_.fits(0)) {
      const auto evicted = lru_.makeRoom(0, [this](int id) { return inUse_[static_cast<size_t>(id)] == 0; });
      for (int e : evicted) dropped.push_back(std::move(units_[static_cast<size_t>(e)]));
      evictions_ += static_cast<int>(evicted.size());
    }
  }
  dropped.clear();  // units are freed outside the lock
}

int ResidencyManager::loads() const {
  std::lock_guard lock(mutex_);
  return loads_;
}
int ResidencyManager::evictions() const {
  std::lock_guard lock(mutex_);
  return evictions_;
}
int ResidencyManager::overBudgetLoads() const {
  std::lock_guard lock(mutex_);
  return overBudget_;
}
int64_t ResidencyManager::peakResidentBytes() const {
  std::lock_guard lock(mutex_);
  return lru_.peakBytes();
}
int64_t ResidencyManager::residentBytes() const {
  std::lock_guard lock(mutex_);
  return lru_.residentBytes();
}

}  // namespace zp::runtime::serve
