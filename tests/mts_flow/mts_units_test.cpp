// The MTS plan's units: each group on zooplan's processor, each member's own
// model a unit of its group; a task that is a member of two groups gives two
// units, and the plan reads back.
#include <gtest/gtest.h>

#include "drivers/mts_flow/solve_mts.h"
#include "libplan/artifacts/plan_json.h"

namespace zp::drivers {
namespace {

plan::MtsUnit group(const std::string& name, const std::vector<std::string>& tasks) {
  plan::MtsUnit u{name, true, {}, 1000, 2000, {0.5, 0.4}};
  for (const auto& t : tasks) u.members.push_back({t, "x", "x", {"y"}, {t + ".y"}, {0.3, 0.2}});
  return u;
}

GroupModels files(const std::string& name, char sha, const std::vector<std::string>& tasks) {
  GroupModels g{"st/" + name + ".onnx", std::string(64, sha), {}};
  for (const auto& t : tasks) g.members.push_back({"zoo/" + t + ".onnx", std::string(64, 'f')});
  return g;
}

TEST(MtsUnits, ATaskInTwoGroupsIsAUnitOfEach) {
  plan::Plan p;
  p.header = {"plan-solve", "0.1.0", {{"st/mts.json", std::string(64, 'a')}}};
  plan::MtsPlan m;
  m.manifest = "st/mts.json";
  for (const char* name : {"cpu", "npu"}) {
    Processor proc;
    proc.name = proc.kind = name;
    p.processors.push_back(proc);
    m.processors.push_back(name);
  }
  m.units = {group("vision", {"digits", "gt4"}), group("pairs", {"digits", "wine"})};
  m.solver = "enumeration";
  m.status = "optimal";
  m.lowerBoundMs = 0.4;
  m.assignments = 4;
  m.systems = {{"zooplan", "the plan", {"npu", "cpu"}, {true, true}, 0.5}};
  p.mts = m;
  p.units = mtsUnits(m, {files("vision", 'b', {"digits", "gt4"}), files("pairs", 'c', {"digits", "wine"})});

  ASSERT_EQ(p.units.size(), 6u);
  EXPECT_EQ(p.units[0].id, plan::UnitId::group("vision"));
  EXPECT_EQ(p.units[0].processor, "npu");
  EXPECT_EQ(p.units[3].id, plan::UnitId::group("pairs"));
  EXPECT_EQ(p.units[3].processor, "cpu");
  EXPECT_EQ(p.units[1].id, plan::UnitId::model("vision/digits"));
  EXPECT_EQ(p.units[4].id, plan::UnitId::model("pairs/digits"));
  EXPECT_EQ(p.units[4].group, plan::UnitId::group("pairs"));
  EXPECT_EQ(p.units[3].file, "st/pairs.onnx");
  EXPECT_EQ(p.units[4].file, "zoo/digits.onnx");
  EXPECT_TRUE(p.units[4].processor.empty());  // only the comparison systems run a member alone
  auto back = artifacts::parsePlanJson(artifacts::planToText(p), "plan.json");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->units, p.units);
}

}  // namespace
}  // namespace zp::drivers
