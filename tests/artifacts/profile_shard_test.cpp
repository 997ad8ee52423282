// shard.json: a shard written reads back as the same shard and rewrites to the
// same bytes (every double exactly); the reader names the file and JSON path
// of a bad field.
#include <gtest/gtest.h>

#include <random>

#include "libplan/artifacts/profile_shard.h"

namespace zp::artifacts {
namespace {

ProfileShard randomShard(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  ProfileShard s;
  s.tool = "zoo-profile 0.1";
  s.index = 2;
  s.count = 3;
  s.runUnits = 40;
  s.units = 13;
  s.stitchDir = "../st";
  s.inputs = Json{{"stitch_json_sha256", "ab"}, {"repeat", 5}};
  s.params = Json{{"training_fraction", 0.15}, {"seed", 0}};
  const std::string hash(64, 'c');
  for (int i = 0; i < 5; ++i) {
    s.overheads.push_back({"default@" + std::to_string(i + 1), u(rng)});
    s.subgraphs.push_back({hash, "sparse@1", u(rng), 1 + u(rng), 5 + i, 1000 * i});
    s.transitions.push_back({"digits", i, u(rng) / 3});
    std::vector<uint8_t> correct;
    for (int k = 0; k < 17; ++k) correct.push_back(static_cast<uint8_t>(rng() % 2));
    s.originals.push_back({"digits", "u" + std::to_string(i), u(rng), correct});
    s.combinations.push_back({"digits", "dense+u50+u" + std::to_string(i), u(rng)});
    s.wholes.push_back({"kws", "a+b", "cpu", 10 * u(rng)});
  }
  NodeProfileRow r;
  r.model = "digits/digits/dense";
  r.node = "/stem/conv/Conv";
  r.policy = "default";
  r.features.opType = "Conv";
  r.ms = u(rng), r.msOdd = u(rng), r.msEven = u(rng);
  s.nodes.push_back({"digits", "dense", "default@1", {r, r}});
  return s;
}

TEST(artifactsProfileShard, RoundTripsAndRewritesToTheSameBytes) {
  std::mt19937_64 rng(3);
  for (int round = 0; round < 20; ++round) {
    const ProfileShard s = randomShard(rng);
    const std::string text = formatProfileShard(s);
    auto back = parseProfileShard(text, "shard.json");
    ASSERT_TRUE(back.ok()) << back.error().message;
    EXPECT_TRUE(*back == s);
    EXPECT_EQ(formatProfileShard(*back), text);
  }
}

TEST(artifactsProfileShard, BadFieldsAreOneLineErrorsWithTheirPath) {
  std::mt19937_64 rng(4);
  const Json good = Json::parse(formatProfileShard(randomShard(rng)));
  auto errorOf = [](const Json& j) {
    auto r = parseProfileShard(j.dump(), "d/shard.json");
    return r.ok() ? std::string("accepted") : r.error().message;
  };
  Json j = good;
  j["shard"]["index"] = 3;
  EXPECT_EQ(errorOf(j), "d/shard.json: $.shard.index: 3 is above 2");
  j = good;
  j["subgraphs"][1]["median_ms"] = -1;
  EXPECT_EQ(errorOf(j).rfind("d/shard.json: $.subgraphs[1].median_ms: ", 0), 0u) << errorOf(j);
  j = good;
  j["subgraphs"][0]["hash"] = "../x";
  EXPECT_EQ(errorOf(j), "d/shard.json: $.subgraphs[0]: hash: not a SHA-256 in lowercase hex");
  j = good;
  j["originals"][0]["correct"] = "01x";
  EXPECT_EQ(errorOf(j), "d/shard.json: $.originals[0]: correct: not a string of '0' and '1'");
  j = good;
  j["combinations"][0]["combination"] = "a++b";
  EXPECT_EQ(errorOf(j), "d/shard.json: $.combinations[0]: combination: not variant ids joined by '+'");
  j = good;
  j["overheads"][0]["config"] = "default@0";
  EXPECT_EQ(errorOf(j), "d/shard.json: $.overheads[0]: config: 'default@0' is not POLICY@THREADS");
  j = good;
  j["nodes"][0]["csv"] = "nonsense";
  EXPECT_EQ(errorOf(j).rfind("d/shard.json: $.nodes[0].csv", 0), 0u) << errorOf(j);
  j = good;
  j["wholes"][0]["processor"] = "a/b";
  EXPECT_EQ(errorOf(j).rfind("d/shard.json: $.wholes[0].processor: ", 0), 0u) << errorOf(j);
  j = good;
  j["extra"] = 1;
  EXPECT_NE(errorOf(j).find("unknown field"), std::string::npos) << errorOf(j);
  EXPECT_EQ(errorOf(good), "accepted");
}

}  // namespace
}  // namespace zp::artifacts
