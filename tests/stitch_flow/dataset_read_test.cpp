// Dataset and calibration .npy files: any number of samples along the first
// axis, each sample in any shape holding the model input's values, read into
// one batch-1 tensor per sample (also when the model's batch is symbolic).
#include "tests/common/temp_dir.h"
#include <gtest/gtest.h>

#include <filesystem>

#include "drivers/stitch_flow/dataset_read.h"
#include "libplan/runtime/npy.h"

namespace zp::drivers {
namespace {
namespace fs = std::filesystem;

struct DatasetRead : ::testing::Test {
  fs::path dir = testing::uniqueTempDir("dataset_read");
  ~DatasetRead() override { fs::remove_all(dir); }

  fs::path write(const std::string& name, runtime::Shape shape) {
    auto t = runtime::Tensor::empty(runtime::DType::F32, shape);
    for (int64_t i = 0; i < t.size(); ++i) t.ptr<float>()[i] = static_cast<float>(i);
    EXPECT_TRUE(runtime::writeNpy(dir / name, t).ok());
    return dir / name;
  }
};

TEST_F(DatasetRead, LeadingSampleAxisOfAnySizeWithSamplesInAnyShape) {
  for (const auto& shape : {runtime::Shape{5, 1, 4, 4}, runtime::Shape{5, 16}, runtime::Shape{5, 4, 4}}) {
    auto file = write("x.npy", shape);
    // The model input as stitch.json gives it at batch 1, and with its batch symbolic.
    for (const auto& model : {runtime::Shape{1, 1, 4, 4}, runtime::Shape{-1, 1, 4, 4}}) {
      auto s = readSamples(file, model);
      ASSERT_TRUE(s.ok()) << s.error().message;
      ASSERT_EQ(s->size(), 5u);
      for (size_t i = 0; i < 5; ++i) {
        EXPECT_EQ((*s)[i].shape, (runtime::Shape{1, 1, 4, 4}));
        EXPECT_EQ((*s)[i].ptr<float>()[0], static_cast<float>(16 * i));
      }
    }
  }
  auto limited = readSamples(write("y.npy", {1200, 16}), {-1, 1, 4, 4}, 3);
  ASSERT_TRUE(limited.ok());
  EXPECT_EQ(limited->size(), 3u);
}

TEST_F(DatasetRead, DatasetWithLabels) {
  auto x = write("x.npy", {6, 1, 4, 4});
  auto y = runtime::Tensor::empty(runtime::DType::I64, {6});
  for (int64_t i = 0; i < 6; ++i) y.ptr<int64_t>()[i] = i % 3;
  ASSERT_TRUE(runtime::writeNpy(dir / "y.npy", y).ok());
  auto d = readDataset(x, dir / "y.npy", {-1, 1, 4, 4});
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(d->samples.size(), 6u);
  EXPECT_EQ(d->labels, (std::vector<int64_t>{0, 1, 2, 0, 1, 2}));
}

// Labels as users save them: float class ids (numpy's default dtype) and
// one-hot rows read as class ids; anything else is refused with what labels are.
TEST_F(DatasetRead, FloatAndOneHotLabelsAreClassIdsOthersAreRefused) {
  auto x = write("x.npy", {3, 1, 4, 4});
  auto labels = [&](runtime::DType dtype, runtime::Shape shape, std::vector<double> values) {
    auto y = runtime::Tensor::empty(dtype, shape);
    for (size_t i = 0; i < values.size(); ++i) {
      if (dtype == runtime::DType::F64) y.ptr<double>()[i] = values[i];
      else if (dtype == runtime::DType::F32) y.ptr<float>()[i] = static_cast<float>(values[i]);
      else y.ptr<int64_t>()[i] = static_cast<int64_t>(values[i]);
    }
    EXPECT_TRUE(runtime::writeNpy(dir / "y.npy", y).ok());
    return readDataset(x, dir / "y.npy", {-1, 1, 4, 4});
  };
  const std::vector<int64_t> want{2, 0, 1};
  for (auto dtype : {runtime::DType::F64, runtime::DType::F32}) {
    auto d = labels(dtype, {3}, {2, 0, 1});
    ASSERT_TRUE(d.ok()) << d.error().message;
    EXPECT_EQ(d->labels, want);
  }
  for (auto dtype : {runtime::DType::F32, runtime::DType::I64}) {
    auto d = labels(dtype, {3, 3}, {0, 0, 1, 1, 0, 0, 0, 1, 0});
    ASSERT_TRUE(d.ok()) << d.error().message;
    EXPECT_EQ(d->labels, want);
  }
  auto column = labels(runtime::DType::I64, {3, 1}, {2, 0, 1});
  ASSERT_TRUE(column.ok()) << column.error().message;
  EXPECT_EQ(column->labels, want);

  auto regression = labels(runtime::DType::F64, {3}, {2, 0.37, 1});
  ASSERT_FALSE(regression.ok());
  EXPECT_EQ(regression.error().message, (dir / "y.npy").string() +
                                            ": label 1 is 0.37: labels are class ids for top-1 accuracy (integers, "
                                            "or one-hot rows); regression targets are not supported");
  auto scores = labels(runtime::DType::F32, {3, 3}, {0, 0, 1, 0.5, 0.5, 0, 0, 1, 0});
  ASSERT_FALSE(scores.ok());
  EXPECT_NE(scores.error().message.find("row 1 holds 0.5, not one-hot"), std::string::npos) << scores.error().message;
  auto two = labels(runtime::DType::I64, {3, 3}, {0, 0, 1, 1, 1, 0, 0, 1, 0});
  ASSERT_FALSE(two.ok());
  EXPECT_NE(two.error().message.find("row 1 has two 1s"), std::string::npos) << two.error().message;
}

TEST_F(DatasetRead, Float64SamplesAreReadAsFloat32) {
  auto x = runtime::Tensor::empty(runtime::DType::F64, {2, 16});
  for (int64_t i = 0; i < 32; ++i) x.ptr<double>()[i] = 0.5 * static_cast<double>(i);
  ASSERT_TRUE(runtime::writeNpy(dir / "x.npy", x).ok());
  auto s = readSamples(dir / "x.npy", {1, 1, 4, 4});
  ASSERT_TRUE(s.ok()) << s.error().message;
  ASSERT_EQ(s->size(), 2u);
  EXPECT_EQ((*s)[1].dtype, runtime::DType::F32);
  EXPECT_EQ((*s)[1].ptr<float>()[3], 0.5f * 19);
  auto u8 = runtime::Tensor::empty(runtime::DType::U8, {2, 16});
  ASSERT_TRUE(runtime::writeNpy(dir / "u.npy", u8).ok());
  auto refused = readSamples(dir / "u.npy", {1, 1, 4, 4});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("expected float32 or float64 samples, got uint8 (save them as float32"),
            std::string::npos)
      << refused.error().message;
}

TEST_F(DatasetRead, WrongSampleSizeNamesTheFileAndBothShapes) {
  auto file = write("x.npy", {1200, 1, 16, 16});
  auto s = readSamples(file, {-1, 1, 8, 8});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, (dir / "x.npy").string() +
                                   ": 256 values per sample ([1200,1,16,16]), but the model takes 64 ([1,1,8,8])");
}

TEST_F(DatasetRead, SymbolicNonLeadingDimIsRefused) {
  auto file = write("x.npy", {4, 1, 4, 4});
  auto s = readSamples(file, {-1, 1, -1, 4});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("symbolic dimension 2"), std::string::npos) << s.error().message;
}

}  // namespace
}  // namespace zp::drivers
