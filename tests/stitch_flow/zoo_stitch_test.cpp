// zoo-stitch's driver: the stitch directory it writes (subgraphs once by
// content, stitched models that load), byte-identical reruns, failures that
// leave nothing behind, and stitch.json read back.
#include "tests/common/mlp_zoo.h"
#include "tests/common/temp_dir.h"
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <tuple>

#include "libplan/graph/analysis.h"
#include "libplan/graph/model_io.h"
#include "libplan/util/file.h"
#include "libplan/util/hash.h"
#include "libplan/util/json.h"
#include "drivers/stitch_flow/zoo_stitch.h"
#include "libplan/artifacts/stitch_json.h"
#include "passes/stitch/stitch.h"

namespace zp::stitch {
namespace {
namespace fs = std::filesystem;

class StitchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = zp::testing::uniqueTempDir("stitch_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::create_directories(dir_ / "m");
    write("dense", zp::testing::prunedMlp(4, 0));
    write("u50", zp::testing::prunedMlp(4, 2));
    write("s50", zp::testing::prunedMlp(2, 0));
    std::ofstream(dir_ / "zoo.json") << R"({"schema_version": 1, "name": "mlp",
      "processors": [{"name": "cpu", "kind": "cpu"}, {"name": "gpu", "kind": "gpu"}, {"name": "npu", "kind": "npu"}],
      "tasks": [{"name": "t", "variants": [
        {"id": "dense", "onnx": "m/dense.onnx", "kind": "dense"},
        {"id": "u50", "onnx": "m/u50.onnx", "kind": "unstructured"},
        {"id": "s50", "onnx": "m/s50.onnx", "kind": "structured"}]}]})";
  }
  void TearDown() override { fs::remove_all(dir_); }
  void write(const std::string& id, const std::string& text) {
    auto m = graph::parseModelText(text);
    ASSERT_TRUE(m.ok()) << m.error().message;
    ASSERT_TRUE(graph::saveModel(*m, dir_ / "m" / (id + ".onnx")).ok());
  }
  Expected<zoo::StitchManifest> run(const fs::path& out, int s, const std::string& materialize = "all") {
    drivers::ZooStitchOptions o;
    o.zoo = dir_ / "zoo.json";
    o.out = out;
    o.params.subgraphs = s;
    o.params.materialize = materialize;
    return drivers::runZooStitch(o);
  }
  fs::path dir_;
};

TEST_F(StitchTest, WritesSubgraphsCombinationsAndStitchedModels) {
  auto m = run(dir_ / "out", 2);
  ASSERT_TRUE(m.ok()) << m.error().message;
  const auto& t = m->tasks[0];
  ASSERT_EQ(t.positions(), 2);
  EXPECT_EQ(t.cuts[0].tensor.name, "r1");
  // s50 narrows the boundary: only combinations that keep s50 on both sides or on neither are valid.
  ASSERT_EQ(t.combinations.size(), 9u);
  int valid = 0;
  for (const auto& c : t.combinations) {
    bool mixed = (c.variants[0] == "s50") != (c.variants[1] == "s50");
    EXPECT_EQ(c.valid, !mixed) << c.id;
    valid += c.valid;
    if (!c.valid) {
      EXPECT_NE(c.reason.find("float32[1,2]"), std::string::npos) << c.reason;
    }
    if (c.valid) {
      ASSERT_FALSE(c.file.empty());
      auto model = graph::loadModel(dir_ / "out" / c.file);
      ASSERT_TRUE(model.ok()) << model.error().message;  // loadModel runs the checker
    }
  }
  EXPECT_EQ(valid, 5);
  // The dense and u50 second halves share w3 but differ in w2; the stitched
  // "dense+dense" has exactly the dense model's nodes.
  auto dense = graph::loadModel(dir_ / "m/dense.onnx");
  auto same = graph::loadModel(dir_ / "out/stitched/t/dense+dense.onnx");
  ASSERT_TRUE(dense.ok() && same.ok());
  ASSERT_EQ(same->graph().node_size(), dense->graph().node_size());
  for (int i = 0; i < dense->graph().node_size(); ++i)
    EXPECT_EQ(same->graph().node(i).op_type(), dense->graph().node(i).op_type());
  EXPECT_EQ(same->graph().initializer_size(), 3);
  // Sparsity is measured, not declared.
  EXPECT_GT(t.subgraph(0, "u50").cost.weightSparsity, 0.4);
  EXPECT_EQ(t.subgraph(0, "dense").cost.weightSparsity, 0.0);
}

TEST_F(StitchTest, IdenticalSubgraphsAreWrittenOnceAndRunsAreByteIdentical) {
  write("u50", zp::testing::prunedMlp(4, 0));  // now identical to dense
  auto a = run(dir_ / "a", 2);
  auto b = run(dir_ / "b", 2);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->tasks[0].subgraph(0, "dense").hash, a->tasks[0].subgraph(0, "u50").hash);
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir_ / "a/subgraphs")) files += e.is_regular_file();
  EXPECT_EQ(files, 4u);  // dense/u50 share both positions; s50 has its own two
  for (const auto& e : fs::recursive_directory_iterator(dir_ / "a")) {
    if (!e.is_regular_file()) continue;
    fs::path rel = fs::relative(e.path(), dir_ / "a");
    EXPECT_EQ(*readFile(e.path()), *readFile(dir_ / "b" / rel)) << rel;
  }
}

TEST_F(StitchTest, FailureLeavesNothingBehind) {
  auto bad = run(dir_ / "out", 9);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("--subgraphs 9"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir_ / "out"));
  for (const auto& e : fs::directory_iterator(dir_))
    EXPECT_EQ(e.path().filename().string().find(".out.staging"), std::string::npos);
  auto unknown = run(dir_ / "out", 2, "dense+nope");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().message, "--materialize: no task has a combination 'dense+nope'");
  auto invalid = run(dir_ / "out", 2, "t/dense+s50");
  ASSERT_FALSE(invalid.ok());
  EXPECT_NE(invalid.error().message.find("not a valid combination"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir_ / "out"));
}

TEST_F(StitchTest, BoundDimsReadBackAndOldManifestsReadAsBatchOne) {
  auto m = run(dir_ / "out", 2, "none");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->batch, 1);
  zoo::StitchManifest bound = *m;
  bound.batch = 8;
  bound.dims = {{"height", 32}, {"width", 24}};
  auto back = artifacts::stitchManifestFromJson(artifacts::toJson(bound), "stitch.json");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->batch, 8);
  EXPECT_EQ(back->dims, bound.dims);
  EXPECT_EQ(canonicalJson(artifacts::toJson(*back)), canonicalJson(artifacts::toJson(bound)));
  // A stitch.json written before symbolic dims were bound.
  Json old = artifacts::toJson(bound);
  old["params"].erase("batch");
  old["params"].erase("dims");
  auto oldBack = artifacts::stitchManifestFromJson(old, "old/stitch.json");
  ASSERT_TRUE(oldBack.ok()) << oldBack.error().message;
  EXPECT_EQ(oldBack->batch, 1);
  EXPECT_TRUE(oldBack->dims.empty());
  Json bad = artifacts::toJson(bound);
  bad["params"]["dims"]["height"] = -3;
  EXPECT_FALSE(artifacts::stitchManifestFromJson(bad, "bad/stitch.json").ok());
}

TEST_F(StitchTest, ManifestReadsBack) {
  auto m = run(dir_ / "out", 2, "dense+u50");
  ASSERT_TRUE(m.ok());
  auto back = artifacts::loadStitchManifest(dir_ / "out");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(canonicalJson(artifacts::toJson(*back)), canonicalJson(artifacts::toJson(*m)));
  EXPECT_EQ(back->zooPath, "../zoo.json");
  EXPECT_TRUE(fs::exists(dir_ / "out/stitched/t/dense+u50.onnx"));
  EXPECT_FALSE(fs::exists(dir_ / "out/stitched/t/dense+dense.onnx"));
}

}  // namespace
}  // namespace zp::stitch

