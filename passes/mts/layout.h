// The neuron (channel) layout of one stitched activation: which columns it has,
// which members own each column, and where every member's channels sit.
//
// A column is owned by a set of members (a bitmask). Members own the same
// column when their channels at that position are computed by weights that are
// equal wherever the members' inputs coincide (MTS §III-A: shared neurons);
// other channels are a member's exclusive neurons. Columns are kept ordered so
// that columns with the same owners form one contiguous segment.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace zp::mts {

using Owners = uint32_t;  // bit t: member t owns the column
inline constexpr int kMaxMembers = 32;

struct Column {
  Owners owners = 0;
  int64_t channel = 0;  // the members' channel index (sharing is positional)
};

struct Segment {
  Owners owners = 0;
  int64_t begin = 0, size = 0;
};

class Layout {
 public:
  Layout() = default;
  // `columns` in their final order; `channels[t]` is member t's channel count
  // (every channel of every member must be in exactly one column it owns).
  Layout(std::vector<Column> columns, const std::vector<int64_t>& channels);

  int64_t size() const { return static_cast<int64_t>(columns_.size()); }
  const std::vector<Column>& columns() const { return columns_; }
  const std::vector<Segment>& segments() const { return segments_; }
  // The column holding member t's channel c.
  int64_t columnOf(int t, int64_t c) const { return columnOf_[static_cast<size_t>(t)][static_cast<size_t>(c)]; }
  int64_t channels(int t) const { return static_cast<int64_t>(columnOf_[static_cast<size_t>(t)].size()); }
  int members() const { return static_cast<int>(columnOf_.size()); }
  bool operator==(const Layout& other) const;

 private:
  std::vector<Column> columns_;
  std::vector<Segment> segments_;
  std::vector<std::vector<int64_t>> columnOf_;
};

int popcount(Owners owners);
// Members in `owners`, ascending.
std::vector<int> membersOf(Owners owners);
int lowestMember(Owners owners);

}  // namespace zp::mts
