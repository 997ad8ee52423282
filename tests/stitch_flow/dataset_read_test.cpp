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
