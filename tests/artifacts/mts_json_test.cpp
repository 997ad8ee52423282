// Round trips of the MTS artifacts: zoo.json multitask_groups and mts.json.
#include <gtest/gtest.h>

#include "libplan/artifacts/mts_json.h"
#include "libplan/artifacts/zoo_json.h"
#include "libplan/artifacts/multitask_group_json.h"
#include "libplan/util/json.h"
#include "libplan/zoo/mts_manifest.h"
#include "libplan/zoo/multitask_group.h"

namespace zp::zoo {
namespace {

using artifacts::multitaskGroupsToJson;
using artifacts::parseMtsManifest;
using artifacts::parseMultitaskGroups;

TEST(MtsManifest, RoundTrips) {
  MtsManifest m;
  m.tool = "zoo-mts";
  m.zooPath = "../zoo.json";
  m.zooSha256 = "ab";
  MtsGroupEntry g;
  g.name = "digits";
  g.mode = "mts";
  g.sharedInput = true;
  g.file = "digits.onnx";
  g.sha256 = "cd";
  g.sharedBytes = 10;
  g.exclusiveBytes = 20;
  g.auxBytes = 3;
  g.memberBytes = 50;
  g.memberFoldedBytes = 40;
  g.flops = 1.5e6;
  g.memberFlops = 1e6;
  g.masks = 2;
  g.members.push_back(MtsMemberEntry{{"a", "input", "a/input", {"logits"}, {"a/logits"}}, "dense"});
  m.groups.push_back(g);
  const std::string text = canonicalJson(artifacts::mtsManifestToJson(m));
  auto back = parseMtsManifest(text, "mts.json");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(canonicalJson(artifacts::mtsManifestToJson(*back)), text);
}

TEST(MtsManifest, RejectsInconsistentWeightBytes) {
  const std::string text = R"({"schema_version": 1, "tool": "t", "zoo": {"path": "z", "sha256": "s"}, "groups": [
    {"name": "g", "mode": "mts", "shared_input": false, "file": "g.onnx", "sha256": "x", "shared_bytes": 1, "exclusive_bytes": 2,
     "weight_bytes": 4, "aux_bytes": 0, "member_bytes": 0, "member_folded_bytes": 0, "flops": 0,
     "member_flops": 0, "masks": 0, "realignments": 0, "members": []}]})";
  auto m = parseMtsManifest(text, "mts.json");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().message, "mts.json: $.groups[0]: weight_bytes is not shared_bytes + exclusive_bytes");
}

TEST(MultitaskGroups, RoundTripAndErrors) {
  const std::string zooText = R"({"schema_version": 1, "name": "z", "processors": [{"name": "cpu", "kind": "cpu"}],
    "tasks": [{"name": "a", "variants": [{"id": "dense", "onnx": "a.onnx", "kind": "dense"}]},
              {"name": "b", "variants": [{"id": "dense", "onnx": "b.onnx", "kind": "dense"}]}],
    "multitask_groups": [{"name": "g", "members": ["a", "b/dense"], "shared": ["w"], "memory_budget_bytes": 100,
                          "shared_input": true}]})";
  auto zoo = artifacts::parseZoo(zooText, "zoo.json", false);
  ASSERT_TRUE(zoo.ok()) << zoo.error().message;
  auto groups = parseMultitaskGroups(zooText, *zoo);
  ASSERT_TRUE(groups.ok()) << groups.error().message;
  ASSERT_EQ(groups->size(), 1u);
  EXPECT_EQ((*groups)[0].members[0].variant, "dense");
  EXPECT_EQ(*(*groups)[0].memoryBudgetBytes, 100);
  Json j = multitaskGroupsToJson(*groups);
  EXPECT_EQ(j.dump(), R"([{"members":["a/dense","b/dense"],"memory_budget_bytes":100,"name":"g","shared":["w"],"shared_input":true}])");
  Json doc = Json::parse(zooText);
  doc["multitask_groups"] = j;
  auto again = parseMultitaskGroups(doc.dump(), *zoo);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(multitaskGroupsToJson(*again).dump(), j.dump());

  doc["multitask_groups"][0]["members"] = Json::array({"a", "c"});
  auto bad = parseMultitaskGroups(doc.dump(), *zoo);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "zoo.json: $.multitask_groups[0].members[1]: no task 'c' in the zoo");
}

}  // namespace
}  // namespace zp::zoo
