#include "passes/preload/preload.h"

#include <algorithm>
#include <cassert>
#include <functional>
#include <map>
#include <numeric>
#include <set>

namespace zp::preload {

std::vector<size_t> greedyPreload(const std::vector<Item>& items, int64_t budget) {
  std::map<std::pair<int, int>, std::vector<size_t>> groups;  // (task, position) -> items
  for (size_t i = 0; i < items.size(); ++i) groups[{items[i].task, items[i].position}].push_back(i);
  std::vector<size_t> chosen;
  int64_t used = 0;
  for (auto& [key, group] : groups) {
    std::stable_sort(group.begin(), group.end(), [&](size_t a, size_t b) { return items[a].hotness > items[b].hotness; });
    for (size_t i : group) {
      if (used + items[i].bytes <= budget) {
        chosen.push_back(i);
        used += items[i].bytes;
        break;
      }
    }
  }
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

ExactResult exactPreload(const std::vector<Item>& items, int64_t budget, uint64_t nodeLimit) {
  // Items with no hotness never help; the rest by hotness density, best first.
  std::vector<size_t> order;
  for (size_t i = 0; i < items.size(); ++i)
    if (items[i].hotness > 0 && items[i].bytes <= budget) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    double da = items[a].hotness / static_cast<double>(std::max<int64_t>(items[a].bytes, 1));
    double db = items[b].hotness / static_cast<double>(std::max<int64_t>(items[b].bytes, 1));
    return da > db;
  });
  ExactResult best;
  best.hotness = 0;
  std::vector<size_t> current;
  // Fractional (LP) bound of the remaining items from position k.
  auto bound = [&](size_t k, int64_t room, double value) {
    for (; k < order.size(); ++k) {
      const auto& it = items[order[k]];
      if (it.bytes <= room) {
        room -= it.bytes;
        value += it.hotness;
      } else {
        return value + it.hotness * static_cast<double>(room) / static_cast<double>(std::max<int64_t>(it.bytes, 1));
      }
    }
    return value;
  };
  std::function<void(size_t, int64_t, double)> dfs = [&](size_t k, int64_t room, double value) {
    if (++best.nodes > nodeLimit) {
      best.optimal = false;
      return;
    }
    if (value > best.hotness + 1e-12) {
      best.hotness = value;
      best.chosen = current;
    }
    if (k == order.size() || bound(k, room, value) <= best.hotness + 1e-12) return;
    const auto& it = items[order[k]];
    if (it.bytes <= room) {
      current.push_back(order[k]);
      dfs(k + 1, room - it.bytes, value + it.hotness);
      current.pop_back();
    }
    if (!best.optimal) return;
    dfs(k + 1, room, value);
  };
  dfs(0, budget, 0.0);
  std::sort(best.chosen.begin(), best.chosen.end());
  return best;
}

ExactResult bruteForcePreload(const std::vector<Item>& items, int64_t budget) {
  assert(items.size() <= 24);
  ExactResult best;
  for (uint64_t mask = 0; mask < (1ull << items.size()); ++mask) {
    int64_t bytes = 0;
    double value = 0;
    for (size_t i = 0; i < items.size(); ++i)
      if (mask >> i & 1) {
        bytes += items[i].bytes;
        value += items[i].hotness;
      }
    if (bytes <= budget && value > best.hotness + 1e-12) {
      best.hotness = value;
      best.chosen.clear();
      for (size_t i = 0; i < items.size(); ++i)
        if (mask >> i & 1) best.chosen.push_back(i);
    }
  }
  return best;
}

}  // namespace zp::preload
