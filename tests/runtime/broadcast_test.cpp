// The broadcast iterators: forEachPiece over any range of pieces visits exactly the
// elements forEachRow does, with the same operand offsets, for random shapes.
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "libplan/runtime/ops/broadcast.h"

namespace zp::runtime::detail {
namespace {

// Per output element: the offsets of both operands (-1 where never visited).
using Visits = std::vector<std::pair<int64_t, int64_t>>;

template <typename Iterate>
Visits visit(int64_t total, Iterate&& iterate) {
  Visits v(static_cast<size_t>(total), {-1, -1});
  iterate([&](int64_t o, const int64_t* offs, int64_t len, const int64_t* st) {
    for (int64_t i = 0; i < len; ++i) {
      auto& e = v[static_cast<size_t>(o + i)];
      EXPECT_EQ(e.first, -1) << "element " << o + i << " visited twice";
      e = {offs[0] + i * st[0], offs[1] + i * st[1]};
    }
  });
  return v;
}

TEST(Broadcast, PiecesVisitWhatRowsVisitForAnySplit) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> u(0, 1 << 30);
  for (int t = 0; t < 200; ++t) {
    const int rank = u(rng) % 5;
    Shape out, a, b;
    for (int d = 0; d < rank; ++d) {
      const int64_t n = 1 + u(rng) % 7;
      out.push_back(n);
      a.push_back(u(rng) % 3 == 0 ? 1 : n);
      b.push_back(u(rng) % 3 == 0 ? 1 : n);
    }
    if (u(rng) % 2 && !b.empty()) b.erase(b.begin());  // lower rank: broadcast from the left
    const Broadcast bc = makeBroadcast(out, {a, b});
    const int64_t total = numel(out);
    const Visits rows = visit(total, [&](auto f) { forEachRow(bc, f); });
    const int64_t piece = 1 + u(rng) % 9;
    const int64_t pieces = pieceCount(bc, piece);
    // Two ranges split at a random piece, as two workers would run them.
    const int64_t cut = pieces ? u(rng) % (pieces + 1) : 0;
    const Visits split = visit(total, [&](auto f) {
      forEachPiece(bc, piece, 0, cut, f);
      forEachPiece(bc, piece, cut, pieces, f);
    });
    ASSERT_EQ(split, rows) << "case " << t << " piece " << piece << " cut " << cut << " of " << pieces;
  }
}

}  // namespace
}  // namespace zp::runtime::detail
