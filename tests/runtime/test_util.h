// Helpers shared by the runtime's unit tests.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "libplan/runtime/tensor.h"

namespace zp::runtime::test_util {

// n floats drawn uniformly from [-1, 1).
inline std::vector<float> randomVec(int64_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = d(rng);
  return v;
}

// The largest absolute difference of two float tensors of one shape, relative
// to b's largest magnitude (never below `floor`).
inline double relErr(const Tensor& a, const Tensor& b, double floor = 1e-12) {
  EXPECT_EQ(a.shape, b.shape);
  double m = 0, r = floor;
  for (int64_t i = 0; i < a.size(); ++i) {
    m = std::max(m, static_cast<double>(std::fabs(a.ptr<float>()[i] - b.ptr<float>()[i])));
    r = std::max(r, static_cast<double>(std::fabs(b.ptr<float>()[i])));
  }
  return m / r;
}

}  // namespace zp::runtime::test_util
