#include "passes/select/combinations.h"

#include <cassert>

#include "libplan/util/validate.h"

namespace zp::select {

std::optional<uint64_t> Combinations::count(int variants, int positions) {
  if (variants < 1 || positions < 1) return std::nullopt;
  return checkedPow(static_cast<uint64_t>(variants), static_cast<uint64_t>(positions), kMaxNumbered);
}

Combinations::Combinations(int variants, int positions) : variants_(variants), positions_(positions) {
  assert(count(variants, positions) && "callers check the number of combinations first");
  power_.assign(static_cast<size_t>(positions) + 1, 1);
  for (size_t i = 1; i < power_.size(); ++i) power_[i] = power_[i - 1] * static_cast<uint64_t>(variants);
}

std::vector<int> Combinations::digits(uint64_t k) const {
  std::vector<int> out(static_cast<size_t>(positions_));
  for (int p = positions_; p-- > 0;) {
    out[static_cast<size_t>(p)] = static_cast<int>(k % static_cast<uint64_t>(variants_));
    k /= static_cast<uint64_t>(variants_);
  }
  return out;
}

uint64_t Combinations::number(const std::vector<int>& digits) const {
  assert(static_cast<int>(digits.size()) == positions_);
  uint64_t k = 0;
  for (int d : digits) k = k * static_cast<uint64_t>(variants_) + static_cast<uint64_t>(d);
  return k;
}

bool Combinations::original(uint64_t k) const {
  const uint64_t v = k % static_cast<uint64_t>(variants_);
  return k == originalNumber(static_cast<int>(v));
}

uint64_t Combinations::originalNumber(int v) const {
  uint64_t k = 0;
  for (int p = 0; p < positions_; ++p) k = k * static_cast<uint64_t>(variants_) + static_cast<uint64_t>(v);
  return k;
}

}  // namespace zp::select
