// The XGBoost wrapper: its JSON round trip and its monotone constraints.
#include "tests/common/temp_dir.h"
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <random>

#include "libplan/estimate/xgb_regressor.h"
#include "libplan/util/file.h"

namespace zp::estimate {
namespace {

// y = sin(6a) + b/2 on random points: not monotone in a.
FeatureMatrix wave(std::vector<double>& y) {
  FeatureMatrix f;
  f.names = {"a", "b"};
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  for (int i = 0; i < 300; ++i) {
    float a = u(rng), b = u(rng);
    f.values.insert(f.values.end(), {a, b});
    y.push_back(std::sin(6.0 * a) + 0.5 * b);
  }
  return f;
}

// Predictions along a with b fixed.
std::vector<double> alongA(const XgbRegressor& reg) {
  FeatureMatrix grid;
  grid.names = {"a", "b"};
  for (int i = 0; i <= 50; ++i) grid.values.insert(grid.values.end(), {static_cast<float>(i) / 50.0f, 0.5f});
  return reg.predict(grid);
}

TEST(XgbRegressor, RoundTripsThroughJsonBytesAndFiles) {
  std::vector<double> y;
  const FeatureMatrix f = wave(y);
  XgbParams params;
  params.rounds = 50;
  auto reg = XgbRegressor::train(f, y, params);
  ASSERT_TRUE(reg.ok()) << reg.error().message;
  const auto pred = reg->predict(f);
  const std::string json = reg->serialized();

  auto fromBytes = XgbRegressor::fromJson(json, "bytes");
  ASSERT_TRUE(fromBytes.ok()) << fromBytes.error().message;
  EXPECT_EQ(fromBytes->predict(f), pred);
  EXPECT_EQ(fromBytes->serialized(), json);

  const auto dir = zp::testing::uniqueTempDir("xgb_regressor");
  ASSERT_TRUE(reg->save(dir / "model.json").ok());
  auto written = readFile(dir / "model.json");
  ASSERT_TRUE(written.ok());
  EXPECT_EQ(*written, json);
  auto fromFile = XgbRegressor::load(dir / "model.json");
  ASSERT_TRUE(fromFile.ok()) << fromFile.error().message;
  EXPECT_EQ(fromFile->predict(f), pred);
  std::filesystem::remove_all(dir);

  auto bad = XgbRegressor::fromJson(R"({"not": "a model"})", "m.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message.rfind("m.json: not an XGBoost model: ", 0), 0u) << bad.error().message;
  EXPECT_EQ(bad.error().message.find('\n'), std::string::npos) << bad.error().message;
  EXPECT_FALSE(XgbRegressor::load(dir / "missing.json").ok());
  EXPECT_FALSE(XgbRegressor::train(FeatureMatrix{{"a"}, {}, {}}, {}, params).ok());
}

TEST(XgbRegressor, HonoursMonotoneConstraints) {
  std::vector<double> y;
  FeatureMatrix f = wave(y);
  XgbParams params;
  params.rounds = 100;
  auto free = XgbRegressor::train(f, y, params);
  f.monotone = {1};  // b left free
  auto rising = XgbRegressor::train(f, y, params);
  ASSERT_TRUE(free.ok() && rising.ok());
  const auto p = alongA(*rising), q = alongA(*free);
  for (size_t i = 1; i < p.size(); ++i) EXPECT_GE(p[i], p[i - 1]) << "a step " << i;
  // Unconstrained, the fit follows the wave down again.
  EXPECT_LT(q.back(), *std::max_element(q.begin(), q.end()) - 0.5);
}

}  // namespace
}  // namespace zp::estimate
