// A set of items with sizes under a byte budget, evicting least recently used
// items to make room (SparseLoom §3.4: preloaded subgraphs stay, others are
// loaded on demand and evicted under the memory budget). Pinned items (the
// preload set) are never evicted. Pure bookkeeping: the serving executor wraps it
// around real sessions and the serving simulator uses it as it is, so both evict
// the same items in the same situation.
#pragma once
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <vector>

namespace zp {

class BudgetedLru {
 public:
  explicit BudgetedLru(int64_t budgetBytes) : budget_(budgetBytes) {}

  // Adds a pinned item (resident for good). Pinned bytes count against the budget.
  void addPinned(int id, int64_t bytes);
  bool contains(int id) const { return items_.count(id) > 0; }
  bool pinned(int id) const;
  // Marks a resident item as used now.
  void touch(int id);
  // Evicts unpinned items, least recently used first, skipping those `evictable`
  // refuses (e.g. in use right now), until `bytes` more fit under the budget or
  // nothing more can go. Returns the evicted ids in eviction order.
  std::vector<int> makeRoom(int64_t bytes, const std::function<bool(int)>& evictable);
  // Adds an unpinned item as the most recently used (whether or not it fits).
  void insert(int id, int64_t bytes);

  int64_t budgetBytes() const { return budget_; }
  int64_t residentBytes() const { return resident_; }
  int64_t peakBytes() const { return peak_; }
  bool fits(int64_t bytes) const { return resident_ + bytes <= budget_; }

 private:
  struct Item {
    int64_t bytes = 0;
    bool pinned = false;
    std::list<int>::iterator use;  // position in useOrder_ (unpinned only)
  };
  int64_t budget_;
  int64_t resident_ = 0, peak_ = 0;
  std::map<int, Item> items_;
  std::list<int> useOrder_;  // unpinned items, least recently used first
};

}  // namespace zp
