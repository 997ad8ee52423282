#include "libplan/util/budgeted_lru.h"

#include <algorithm>
#include <cassert>

namespace zp {

void BudgetedLru::addPinned(int id, int64_t bytes) {
  assert(!contains(id) && bytes >= 0);
  items_[id] = Item{bytes, true, useOrder_.end()};
  resident_ += bytes;
  peak_ = std::max(peak_, resident_);
}

bool BudgetedLru::pinned(int id) const {
  auto it = items_.find(id);
  return it != items_.end() && it->second.pinned;
}

void BudgetedLru::touch(int id) {
  auto it = items_.find(id);
  assert(it != items_.end());
  if (it->second.pinned) return;
  useOrder_.splice(useOrder_.end(), useOrder_, it->second.use);
}

std::vector<int> BudgetedLru::makeRoom(int64_t bytes, const std::function<bool(int)>& evictable) {
  std::vector<int> evicted;
  for (auto it = useOrder_.begin(); it != useOrder_.end() && !fits(bytes);) {
    const int id = *it;
    if (evictable && !evictable(id)) {
      ++it;
      continue;
    }
    resident_ -= items_[id].bytes;
    items_.erase(id);
    it = useOrder_.erase(it);
    evicted.push_back(id);
  }
  return evicted;
}

void BudgetedLru::insert(int id, int64_t bytes) {
  assert(!contains(id) && bytes >= 0);
  useOrder_.push_back(id);
  items_[id] = Item{bytes, false, std::prev(useOrder_.end())};
  resident_ += bytes;
  peak_ = std::max(peak_, resident_);
}

}  // namespace zp
