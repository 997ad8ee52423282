#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "libplan/zoo/stitch_manifest.h"
#include "libplan/zoo/zoo.h"

namespace zp::zoo {
namespace {
namespace fs = std::filesystem;

const char* kZoo = R"({
  "schema_version": 1,
  "name": "tiny",
  "processors": [{"name": "cpu", "kind": "cpu", "profile": {"source": "host", "threads": 1, "policy": "im2col"}},
                 {"name": "npu", "kind": "npu"}],
  "tasks": [{
    "name": "t",
    "variants": [
      {"id": "dense", "onnx": "m/dense.onnx", "kind": "dense", "sparsity": 0.0, "precision": "fp32"},
      {"id": "u50", "onnx": "m/u50.onnx", "kind": "unstructured", "sparsity": 0.5, "accuracy": 0.9}
    ],
    "dataset": {"inputs": "x.npy", "labels": "y.npy", "metric": "top1"}
  }]
})";

Json base() { return Json::parse(kZoo); }

std::string errorOf(const Json& j) {
  auto z = parseZoo(j.dump(), "zoo.json", false);
  return z.ok() ? std::string("ok") : z.error().message;
}

TEST(Zoo, ParsesAndRoundTrips) {
  auto z = parseZoo(kZoo, "dir/zoo.json", false);
  ASSERT_TRUE(z.ok()) << z.error().message;
  EXPECT_EQ(z->processors.size(), 2u);
  EXPECT_EQ(z->processors[0].profile->threads, 1);
  EXPECT_EQ(z->processors[0].profile->policy, "im2col");
  EXPECT_EQ(z->tasks[0].variants[1].accuracy.value(), 0.9);
  EXPECT_EQ(z->resolve("m/dense.onnx"), fs::path("dir/m/dense.onnx"));
  EXPECT_EQ(zooToJson(*z), base());
}

TEST(Zoo, ErrorsNameTheFileAndTheJsonPath) {
  Json j = base();
  j["tasks"][0]["variants"][1].erase("id");
  EXPECT_EQ(errorOf(j), "zoo.json: $.tasks[0].variants[1]: missing field 'id'");
  j = base();
  j["tasks"][0]["variants"][0]["kind"] = "pruned";
  EXPECT_EQ(errorOf(j).rfind("zoo.json: $.tasks[0].variants[0].kind: 'pruned' is not one of", 0), 0u);
  j = base();
  j["processors"][1]["speed"] = 3;
  EXPECT_EQ(errorOf(j), "zoo.json: $.processors[1].speed: unknown field");
  j = base();
  j["tasks"][0]["variants"][1]["id"] = "dense";
  EXPECT_EQ(errorOf(j), "zoo.json: $.tasks[0].variants[1].id: duplicate variant id 'dense'");
  j = base();
  j["tasks"][0]["variants"][1]["sparsity"] = 1.5;
  EXPECT_EQ(errorOf(j), "zoo.json: $.tasks[0].variants[1].sparsity: 1.5 is not in [0, 1]");
  j = base();
  j["processors"][0]["profile"] = Json{{"source", "trtexec"}};
  EXPECT_EQ(errorOf(j), "zoo.json: $.processors[0].profile: source 'trtexec' needs a 'file'");
  EXPECT_EQ(parseZoo("{ not json", "zoo.json", false).error().message.rfind("zoo.json: not valid JSON", 0), 0u);
}

TEST(Zoo, MissingFilesAreReported) {
  fs::path dir = fs::temp_directory_path() / "zp_zoo_test";
  fs::create_directories(dir);
  std::ofstream(dir / "zoo.json") << kZoo;
  auto z = loadZoo(dir / "zoo.json");
  ASSERT_FALSE(z.ok());
  EXPECT_EQ(z.error().message, (dir / "zoo.json").string() + ": $.tasks[0].variants[0].onnx: file not found: " +
                                   (dir / "m/dense.onnx").string());
  auto missing = loadZoo(dir / "nope.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message.rfind((dir / "nope.json").string() + ": cannot open", 0), 0u);
  fs::remove_all(dir);
}

TEST(StitchManifest, RoundTripsThroughJson) {
  StitchManifest m;
  m.tool = "zoo-stitch test";
  m.zooPath = "../zoo.json";
  m.zooSha256 = "ab";
  m.subgraphs = 2;
  m.materialize = "all";
  TaskStitch t;
  t.name = "t";
  t.reference = "a";
  CostFigures cost{10.0, 4, 16, 0.25, "fp32", 3};
  t.variants = {{"a", "dense", "a.onnx", "h1", cost, 0.5}, {"b", "structured", "b.onnx", "h2", cost, std::nullopt}};
  TensorSig sig{"x", "float32", {1, 4}}, narrow{"x", "float32", {1, 2}};
  t.candidateCuts = {{3, sig, "relu"}};
  t.cuts = t.candidateCuts;
  t.partFlopsShare = {0.5, 0.5};
  t.subgraphs = {{{0, "a", "s0a", "subgraphs/s0a.onnx", {sig}, {sig}, cost}, {0, "b", "s0b", "subgraphs/s0b.onnx", {sig}, {narrow}, cost}},
                 {{1, "a", "s1a", "subgraphs/s1a.onnx", {sig}, {sig}, cost}, {1, "b", "s1b", "subgraphs/s1b.onnx", {sig}, {sig}, cost}}};
  for (std::string x : {"a", "b"})
    for (std::string y : {"a", "b"}) {
      Combination c{x + "+" + y, {x, y}, true, "", ""};
      if (x == "b") {
        c.valid = false;
        c.reason = "boundary 0->1: narrow";
      } else {
        c.file = "stitched/t/" + c.id + ".onnx";
      }
      t.combinations.push_back(c);
    }
  m.tasks.push_back(t);
  Json j = toJson(m);
  auto back = stitchManifestFromJson(j, "stitch.json");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(toJson(*back), j);
  EXPECT_EQ(back->tasks[0].combinations[2].reason, "boundary 0->1: narrow");
  EXPECT_EQ(back->tasks[0].subgraph(1, "b").hash, "s1b");
}

}  // namespace
}  // namespace zp::zoo
