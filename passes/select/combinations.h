// The stitched variants of one task as numbers, never as a list: with V
// variants at S positions a combination is an S-digit number in base V,
// position 0 the most significant digit — the order stitch.json lists them
// in. The combinations that start with a given prefix of variants are then
// one contiguous range, which is what the searches over them rely on.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

namespace zp::select {

class Combinations {
 public:
  // The most combinations a task may number (so that every range and count fits).
  static constexpr uint64_t kMaxNumbered = uint64_t{1} << 62;
  // V^S, or nothing when it exceeds kMaxNumbered (or a count is not positive).
  static std::optional<uint64_t> count(int variants, int positions);

  Combinations() = default;
  // Callers check count() first.
  Combinations(int variants, int positions);

  int variants() const { return variants_; }
  int positions() const { return positions_; }
  uint64_t size() const { return power_.empty() ? 0 : power_[static_cast<size_t>(positions_)]; }
  // How many combinations share a prefix of `depth` positions: V^(S - depth).
  uint64_t subtreeSize(int depth) const { return power_[static_cast<size_t>(positions_ - depth)]; }

  // The variant at `position` of combination k.
  int digit(uint64_t k, int position) const {
    return static_cast<int>((k / power_[static_cast<size_t>(positions_ - 1 - position)]) % static_cast<uint64_t>(variants_));
  }
  std::vector<int> digits(uint64_t k) const;
  uint64_t number(const std::vector<int>& digits) const;
  // All positions from one variant.
  bool original(uint64_t k) const;
  // The original variant v as a combination.
  uint64_t originalNumber(int v) const;

 private:
  int variants_ = 0, positions_ = 0;
  std::vector<uint64_t> power_;  // power_[i] = V^i, i in [0, S]
};

}  // namespace zp::select
