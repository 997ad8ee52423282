#include "tests/common/temp_dir.h"
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>

#include "libplan/zoo/stitch_manifest.h"
#include "libplan/zoo/zoo.h"
#include "libplan/artifacts/stitch_json.h"
#include "libplan/artifacts/zoo_json.h"

namespace zp::zoo {
namespace {
using namespace artifacts;
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
  EXPECT_EQ(z->processors[0].threads, 1);
  EXPECT_EQ(z->processors[0].policy, "im2col");
  EXPECT_TRUE(z->processors[0].host());
  EXPECT_EQ(z->tasks[0].variants[1].accuracy.value(), 0.9);
  EXPECT_EQ(z->resolve("m/dense.onnx"), fs::path("dir/m/dense.onnx"));
  // The writer leaves out what equals the defaults (threads 1), and reads back the same.
  Json expected = base();
  expected["processors"][0]["profile"].erase("threads");
  EXPECT_EQ(zooToJson(*z), expected);
  auto again = parseZoo(zooToJson(*z).dump(), "dir/zoo.json", false);
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(again->processors, z->processors);
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
  fs::path dir = zp::testing::uniqueTempDir("zoo");
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

StitchManifest smallManifest() {
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
  return m;
}

TEST(StitchManifest, RoundTripsThroughJson) {
  Json j = toJson(smallManifest());
  auto back = stitchManifestFromJson(j, "stitch.json");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(toJson(*back), j);
  EXPECT_EQ(back->tasks[0].combinations[2].reason, "boundary 0->1: narrow");
  EXPECT_EQ(back->tasks[0].subgraph(1, "b").hash, "s1b");
}

TEST(Zoo, IdsAreSafeThreadsFitTheMachineNumbersParse) {
  Json j = base();
  j["tasks"][0]["variants"][1]["id"] = "..";
  EXPECT_EQ(errorOf(j), "zoo.json: $.tasks[0].variants[1].id: '..' is not a safe id (it names a directory)");
  j = base();
  j["tasks"][0]["name"] = "a/b";
  EXPECT_EQ(errorOf(j), "zoo.json: $.tasks[0].name: 'a/b' is not a safe id (letters, digits, '_', '.' and '-' only)");
  j = base();
  j["processors"][0]["profile"]["threads"] = 100000;
  EXPECT_EQ(errorOf(j).rfind("zoo.json: $.processors[0].profile.threads: 100000 threads is above the", 0), 0u) << errorOf(j);
  j = base();
  j["processors"][0]["profile"]["threads"] = UINT64_MAX;  // not wrapped into a negative count
  EXPECT_NE(errorOf(j).find("9223372036854775807 threads is above the"), std::string::npos) << errorOf(j);
  std::string text = kZoo;
  text.replace(text.find("\"sparsity\": 0.0"), 16, "\"sparsity\": 1e400");
  EXPECT_EQ(parseZoo(text, "zoo.json", false).error().message,
            "zoo.json: not valid JSON: number overflow parsing '1e400'");
}

std::string manifestError(const Json& j) {
  auto m = stitchManifestFromJson(j, "stitch.json");
  return m.ok() ? "" : m.error().message;
}

TEST(StitchManifest, ReaderChecksTypesRangesAndShapeBeforeEnumerating) {
  const Json good = toJson(smallManifest());
  EXPECT_EQ(manifestError(good), "");
  Json j = good;
  j["tasks"][0]["positions"] = Json::array();
  EXPECT_EQ(manifestError(j), "stitch.json: $.tasks[0]: 0 positions; a task has 1 to 32");
  // 2 variants at 17 positions: 131072 combinations, above the bound; nothing is enumerated.
  j = good;
  for (int p = 2; p < 17; ++p) {
    Json pos = j["tasks"][0]["positions"][1];
    pos["position"] = p;
    j["tasks"][0]["positions"].push_back(pos);
    j["tasks"][0]["cut_points"]["chosen"].push_back(j["tasks"][0]["cut_points"]["chosen"][0]);
  }
  j["tasks"][0]["combinations"]["total"] = 131072;
  EXPECT_EQ(manifestError(j), "stitch.json: $.tasks[0]: 2 variants at 17 positions make more than 100000 combinations, "
                              "too many to list one by one");
  j = good;
  j["tasks"][0]["combinations"]["total"] = 5;
  EXPECT_EQ(manifestError(j), "stitch.json: $.tasks[0].combinations: total 5 does not match 2 variants at 2 positions (4)");
  j = good;
  j["tasks"][0]["positions"][1]["subgraphs"].erase(1);
  EXPECT_EQ(manifestError(j), "stitch.json: $.tasks[0].positions[1]: 1 subgraphs for 2 variants (one per variant)");
  j = good;
  j["tasks"][0]["positions"][0]["subgraphs"][1]["variant"] = "c";
  EXPECT_EQ(manifestError(j), "stitch.json: $.tasks[0].positions[0].subgraphs[1]: variant 'c' is not among the task's variants");
  j = good;
  j["tasks"][0]["variants"][0]["cost"]["weight_bytes"] = "x";
  EXPECT_EQ(manifestError(j), "stitch.json: $.tasks[0].variants[0].cost.weight_bytes: expected an integer");
  j = good;
  j["tasks"][0]["positions"][0]["subgraphs"][0]["inputs"][0]["shape"][0] = -2;
  EXPECT_EQ(manifestError(j), "stitch.json: $.tasks[0].positions[0].subgraphs[0].inputs[0].shape[0]: -2 is below -1");
  j = good;
  j["tasks"][0]["positions"][0]["subgraphs"][0]["outputs"][0]["shape"] = Json::array({1099511627776, 1099511627776});
  EXPECT_EQ(manifestError(j), "stitch.json: $.tasks[0].positions[0].subgraphs[0].outputs[0]: a tensor of more than "
                              "137438953472 elements");
  j = good;
  j["tasks"][0]["positions"][0]["subgraphs"][0]["inputs"] = Json::array();
  EXPECT_EQ(manifestError(j), "stitch.json: $.tasks[0].positions[0].subgraphs[0]: 'inputs' must not be empty");
  j = good;
  j["tasks"][0]["positions"][0]["subgraphs"][0]["file"] = "../../x.onnx";
  EXPECT_EQ(manifestError(j), "stitch.json: $.tasks[0].positions[0].subgraphs[0].file: '../../x.onnx' is not a relative "
                              "path inside the stitch directory");
  j = good;
  j["tasks"][0]["variants"][1]["id"] = "..";
  EXPECT_EQ(manifestError(j), "stitch.json: $.tasks[0].variants[1].id: '..' is not a safe id (it names a directory)");
  j = good;
  j["tasks"][0]["cut_points"]["chosen"] = Json::array();
  EXPECT_EQ(manifestError(j), "stitch.json: $.tasks[0].cut_points: 0 chosen cuts for 2 positions");
  j = good;
  j["tasks"][0]["reference_variant"] = "z";
  EXPECT_EQ(manifestError(j), "stitch.json: $.tasks[0].reference_variant: 'z' is not among the task's variants");
  j = good;
  j["tasks"] = "x";
  EXPECT_EQ(manifestError(j), "stitch.json: $.tasks: expected an array");
}

TEST(StitchManifest, CombinationCountIsBounded) {
  EXPECT_EQ(combinationCount(9, 3), 729u);
  EXPECT_EQ(combinationCount(1, 32), 1u);
  EXPECT_FALSE(combinationCount(9, 12));
  EXPECT_FALSE(combinationCount(1000000, 2));
  EXPECT_EQ(combinationCount(10, 5), kMaxCombinations);
}

TEST(CombinationId, SplitsAndJoinsAndNamesWhatIsUnsafe) {
  EXPECT_EQ(combinationVariants("dense+u50+s50"), (std::vector<std::string>{"dense", "u50", "s50"}));
  EXPECT_EQ(combinationVariants("dense"), (std::vector<std::string>{"dense"}));
  EXPECT_EQ(combinationId({"dense", "u50", "s50"}), "dense+u50+s50");
  EXPECT_EQ(combinationId(combinationVariants("a+b")), "a+b");
  EXPECT_FALSE(combinationIdProblem("dense+u50"));
  EXPECT_TRUE(combinationIdProblem("dense++u50"));  // an empty variant id
  EXPECT_TRUE(combinationIdProblem("dense+../x"));
  EXPECT_TRUE(combinationIdProblem(""));
}

}  // namespace
}  // namespace zp::zoo
