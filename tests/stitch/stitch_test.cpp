// The stitch pass alone: models in, manifest, subgraph bytes and models out;
// no file is read or written (the zoo-stitch driver's tests: tests/stitch_flow).
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "libplan/graph/analysis.h"
#include "libplan/graph/model_io.h"
#include "libplan/util/hash.h"
#include "passes/stitch/stitch.h"
#include "tests/common/mlp_zoo.h"

namespace zp::stitch {
namespace {

// The pass alone: models in, manifest, subgraph bytes and models out; no file is read or written.
TEST(StitchPass, ReturnsTheSubgraphsAndTheManifestFromModelsInMemory) {
  auto zoo = zp::testing::oneTaskZoo({{"dense", "dense", zp::testing::prunedMlp(4, 0), std::string(64, 'a')},
                                      {"u50", "unstructured", zp::testing::prunedMlp(4, 2), std::string(64, 'a')},
                                      {"s50", "structured", zp::testing::prunedMlp(2, 0), std::string(64, 'a')}});
  ASSERT_TRUE(zoo.ok()) << zoo.error().message;
  const auto& z = zoo->zoo;
  const auto& models = zoo->models;
  StitchParams params;
  params.materialize = "all";
  auto r = stitchZoo(z, {models}, params, "zoo.json");
  ASSERT_TRUE(r.ok()) << r.error().message;
  const auto& t = r->manifest.tasks.at(0);
  ASSERT_EQ(t.positions(), 2);  // S = the zoo's two processors
  EXPECT_EQ(t.variants[0].sha256, std::string(64, 'a'));
  std::set<std::string> files;
  for (const auto& row : t.subgraphs)
    for (const auto& sg : row) {
      files.insert(sg.file);
      ASSERT_TRUE(r->subgraphBytes.count(sg.file)) << sg.file;
      EXPECT_EQ(sha256Hex(r->subgraphBytes.at(sg.file)), sg.hash);
      EXPECT_EQ(graph::serializeModel(r->subgraphModels.at(sg.file)), r->subgraphBytes.at(sg.file));
    }
  EXPECT_EQ(files.size(), r->subgraphBytes.size());
  EXPECT_EQ(files.size(), 6u);  // 3 variants x 2 positions, all different (dedup: IdenticalSubgraphsAreWrittenOnce...)
  for (const auto& c : t.combinations) EXPECT_TRUE(c.file.empty()) << "files are set when picked";

  auto picked = materializedCombinations(r->manifest);
  ASSERT_TRUE(picked.ok()) << picked.error().message;
  EXPECT_EQ(picked->size(), 5u);
  for (const auto& [ti, k] : *picked) {
    const auto& c = r->manifest.tasks[ti].combinations[k];
    EXPECT_TRUE(c.valid);
    EXPECT_EQ(c.file, "stitched/t/" + c.id + ".onnx");
    auto stitched = materializeCombination(r->manifest.tasks[ti], c, r->subgraphModels);
    ASSERT_TRUE(stitched.ok()) << stitched.error().message;
    EXPECT_EQ(stitched->graph().node_size(), 5) << c.id;
  }
  // A subgraph the caller did not give is an error, not a crash.
  auto missing = materializeCombination(t, t.combinations[0], SubgraphModels{});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("was not loaded"), std::string::npos) << missing.error().message;
  // An invalid --materialize pick fails the pass.
  params.materialize = "dense+s50";
  auto bad = stitchZoo(z, {models}, params, "zoo.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("is not a valid combination"), std::string::npos) << bad.error().message;
}

}  // namespace
}  // namespace zp::stitch
