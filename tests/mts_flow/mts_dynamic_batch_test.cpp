// Members exported with a dynamic batch axis (torch.onnx.export's dynamic_axes)
// stitch as zoo-stitch's variants do: their batch is bound (DimBinding), and the
// stitched group is the one their static twins give.
#include <gtest/gtest.h>

#include <filesystem>

#include "drivers/mts_flow/zoo_mts.h"
#include "libplan/artifacts/multitask_group_json.h"
#include "libplan/artifacts/zoo_json.h"
#include "libplan/graph/model_io.h"
#include "tests/common/temp_dir.h"
#include "tests/common/test_paths.h"

namespace zp::mts {
namespace {
namespace fs = std::filesystem;

// testdata/mts copied, every member's graph inputs with a symbolic leading dim.
fs::path dynamicBatchZoo() {
  const fs::path src = fs::path(zp::testing::kSourceDir) / "testdata" / "mts";
  const fs::path dir = zp::testing::uniqueTempDir("mts_dynamic") / "mts";
  fs::copy(src, dir, fs::copy_options::recursive);
  for (const auto& e : fs::directory_iterator(dir / "models")) {
    if (e.path().extension() != ".onnx") continue;
    auto model = graph::loadModel(e.path());
    EXPECT_TRUE(model.ok()) << model.error().message;
    for (auto& in : *model->mutable_graph()->mutable_input())
      in.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_param("batch");
    EXPECT_TRUE(graph::saveModel(*model, e.path()).ok());
  }
  return dir / "zoo.json";
}

Expected<StitchedGroup> stitchFirstGroup(const fs::path& zooFile, const graph::DimBinding& dims) {
  ZP_ASSIGN_OR_RETURN(auto zoo, artifacts::loadZoo(zooFile));
  ZP_ASSIGN_OR_RETURN(auto groups, artifacts::loadMultitaskGroups(zoo));
  return stitchZooGroup(zoo, groups.front(), StitchMode::Mts, std::nullopt, dims);
}

TEST(MtsDynamicBatch, MembersWithADynamicBatchStitchAsTheirStaticTwins) {
  const fs::path dynamicZoo = dynamicBatchZoo();
  const fs::path staticZoo = fs::path(zp::testing::kSourceDir) / "testdata" / "mts" / "zoo.json";
  auto dynamic = stitchFirstGroup(dynamicZoo, {});
  ASSERT_TRUE(dynamic.ok()) << dynamic.error().message;
  auto fixed = stitchFirstGroup(staticZoo, {});
  ASSERT_TRUE(fixed.ok()) << fixed.error().message;
  EXPECT_EQ(dynamic->stats.sharedBytes, fixed->stats.sharedBytes);
  EXPECT_EQ(dynamic->stats.exclusiveBytes, fixed->stats.exclusiveBytes);
  EXPECT_EQ(dynamic->model.graph().node_size(), fixed->model.graph().node_size());
  for (const auto& in : dynamic->model.graph().input())
    EXPECT_EQ(in.type().tensor_type().shape().dim(0).dim_value(), 1) << in.name();
  fs::remove_all(dynamicZoo.parent_path().parent_path());
}

}  // namespace
}  // namespace zp::mts
