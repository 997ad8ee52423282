// plan.json's and plan.pb's MTS section: what plan-solve --mode mts writes reads
// back the same, and the reader names the path of what is wrong.
#include <gtest/gtest.h>

#include "libplan/artifacts/plan_json.h"
#include "libplan/artifacts/plan_pb.h"
#include "libplan/plan/plan.h"

using namespace zp;

namespace {

const std::string kSha(64, 'a');

plan::Plan mtsPlan() {
  plan::MtsPlan m;
  m.manifest = "st/mts.json";
  m.processors = {"cpu", "npu"};
  plan::MtsUnit digits{"digits", true, {}, 146564, 314436, {0.391, 0.331}};
  digits.members.push_back({"digit10", "x", "x", {"logits"}, {"digit10.logits"}, {0.0412, 0.0371}});
  digits.members.push_back({"gt4", "x", "x", {"logits"}, {"gt4.logits"}, {0.0401, 0.0366}});
  plan::MtsUnit tabular{"tabular", false, {}, 19212, 32800, {0.013, 0.018}};
  tabular.members.push_back({"wine", "x", "wine.x", {"y", "p"}, {"wine.y", "wine.p"}, {0.031, 0.033}});
  m.units = {digits, tabular};
  m.solver = "enumeration";
  m.status = "optimal";
  m.lowerBoundMs = 0.331;
  m.assignments = 4;
  m.seed = 3;
  m.systems = {{"zooplan", "faster of the two", {"npu", "cpu"}, {true, true}, 0.331},
               {"sequential", "members", {"npu", "cpu"}, {false, false}, 0.1}};
  plan::Plan p;
  p.header = {"plan-solve", "0.1.0", {{"st/mts.json", kSha}}};
  p.processors = {Processor{"cpu", "cpu", "host", "default", 1, {0}, "onednn"},
                  Processor{"npu", "npu", "host", "sparse", 1, {1}, "blis"}};
  p.mts = m;
  // Each group's stitched graph and each member's own model are units of the plan.
  auto unit = [&](plan::UnitId id, const std::string& file, char sha, std::optional<plan::UnitId> group) {
    plan::Unit u;
    u.id = std::move(id);
    u.file = file;
    u.sha256 = std::string(64, sha);
    u.group = std::move(group);
    p.units.push_back(u);
  };
  unit(plan::UnitId::group("digits"), "st/digits.onnx", 'a', std::nullopt);
  unit(plan::UnitId::model("digits/digit10"), "zoo/models/digit10.onnx", 'b', plan::UnitId::group("digits"));
  unit(plan::UnitId::model("digits/gt4"), "zoo/models/gt4.onnx", 'c', plan::UnitId::group("digits"));
  unit(plan::UnitId::group("tabular"), "st/tabular.onnx", 'd', std::nullopt);
  unit(plan::UnitId::model("tabular/wine"), "zoo/models/wine.onnx", 'e', plan::UnitId::group("tabular"));
  return p;
}

Expected<plan::Plan> readWith(const std::function<void(Json&)>& change) {
  Json j = artifacts::toJson(mtsPlan());
  change(j);
  return artifacts::planFromJson(j, "plan.json");
}

}  // namespace

TEST(mtsPlan, MtsSectionRoundTripsThroughJsonAndProtobuf) {
  const plan::Plan p = mtsPlan();
  const std::string text = artifacts::planToText(p);
  auto back = artifacts::planFromJson(Json::parse(text), "plan.json");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(artifacts::planToText(*back), text);
  EXPECT_EQ(*back->mts, *p.mts);
  EXPECT_DOUBLE_EQ(back->mts->units[0].sequentialMs(1), 0.0371 + 0.0366);
  auto fromPb = artifacts::parsePlanPb(artifacts::serializePlanPb(p), "plan.pb");
  ASSERT_TRUE(fromPb.ok()) << fromPb.error().message;
  EXPECT_EQ(*fromPb, p);
  EXPECT_EQ(artifacts::serializePlanPb(*fromPb), artifacts::serializePlanPb(p));
}

TEST(mtsPlan, ReaderErrorsNameThePathAndTheProblem) {
  auto expectError = [](const std::function<void(Json&)>& change, const std::string& message) {
    auto r = readWith(change);
    ASSERT_FALSE(r.ok()) << message;
    EXPECT_EQ(r.error().message, message);
  };
  expectError([](Json& j) { j["mts"]["units"][0]["stitched_ms"] = Json::array({1.0}); },
              "plan.json: $.mts.units[0]: stitched_ms: 1 values for 2 processors");
  expectError([](Json& j) { j["mts"]["units"][1]["members"][0]["stitched_outputs"] = Json::array({"wine.y"}); },
              "plan.json: $.mts.units[1].members[0]: outputs: 2 for 1 stitched outputs (one or more each, in the same order)");
  expectError([](Json& j) { j["mts"]["units"][1]["group"] = "digits"; },
              "plan.json: $.mts.units[1]: group 'digits' is a unit twice");
  expectError([](Json& j) { j["units"].erase(4), j["units"].erase(3); },
              "plan.json: $.mts.units[1]: 'group:tabular' is not a unit of the plan");
  expectError([](Json& j) { j["units"][2]["group"] = "group:tabular"; },
              "plan.json: $.mts.units[0].members[1]: 'model:digits/gt4' is not a unit of the plan in group 'digits'");
  expectError([](Json& j) { j["mts"]["systems"][1]["placement"][0] = "gpu"; },
              "plan.json: $.mts.systems[1]: placement: unknown processor 'gpu'");
  expectError([](Json& j) { j["mts"]["systems"][0]["stitched"] = Json::array({true}); },
              "plan.json: $.mts.systems[0]: placement, stitched: 2 and 1 values for 2 units");
  expectError([](Json& j) { std::swap(j["mts"]["systems"][0], j["mts"]["systems"][1]); },
              "plan.json: $.mts: systems: the first must be 'zooplan' (the plan's own placement)");
  expectError([](Json& j) { j["mts"]["solver"] = "guess"; }, "plan.json: $.mts: solver: 'guess' is not enumeration or lpt");
  expectError([](Json& j) { j["mts"]["units"] = Json::array(); }, "plan.json: $.mts: units: empty (leave the section out)");
}
