#include "passes/mts/layout.h"

#include <bit>
#include <cassert>

namespace zp::mts {

int popcount(Owners owners) { return std::popcount(owners); }

std::vector<int> membersOf(Owners owners) {
  std::vector<int> out;
  for (int t = 0; t < kMaxMembers; ++t)
    if (owners & (Owners{1} << t)) out.push_back(t);
  return out;
}

int lowestMember(Owners owners) {
  assert(owners != 0);
  return std::countr_zero(owners);
}

Layout::Layout(std::vector<Column> columns, const std::vector<int64_t>& channels) : columns_(std::move(columns)) {
  columnOf_.resize(channels.size());
  for (size_t t = 0; t < channels.size(); ++t) columnOf_[t].assign(static_cast<size_t>(channels[t]), -1);
  for (size_t k = 0; k < columns_.size(); ++k) {
    const Column& c = columns_[k];
    for (int t : membersOf(c.owners)) {
      assert(static_cast<size_t>(t) < channels.size() && c.channel < channels[static_cast<size_t>(t)]);
      assert(columnOf_[static_cast<size_t>(t)][static_cast<size_t>(c.channel)] == -1);
      columnOf_[static_cast<size_t>(t)][static_cast<size_t>(c.channel)] = static_cast<int64_t>(k);
    }
    if (segments_.empty() || segments_.back().owners != c.owners)
      segments_.push_back(Segment{c.owners, static_cast<int64_t>(k), 0});
    ++segments_.back().size;
  }
#ifndef NDEBUG
  for (const auto& row : columnOf_)
    for (int64_t k : row) assert(k >= 0);
#endif
}

bool Layout::operator==(const Layout& other) const {
  if (columns_.size() != other.columns_.size()) return false;
  for (size_t k = 0; k < columns_.size(); ++k)
    if (columns_[k].owners != other.columns_[k].owners || columns_[k].channel != other.columns_[k].channel) return false;
  return columnOf_.size() == other.columnOf_.size();
}

}  // namespace zp::mts
