#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>
#include <map>

#include "tests/profile/test_util.h"
#include "libplan/graph/analysis.h"
#include "libplan/graph/model_io.h"
#include "libplan/profile/import.h"
#include "libplan/profile/subgraph_map.h"
#include "libplan/artifacts/profile_csv.h"
#include "drivers/stitch_flow/subgraph_models_read.h"
#include "drivers/stitch_flow/zoo_stitch.h"
#include "tests/common/test_paths.h"

namespace zp::profile {
namespace {
namespace fs = std::filesystem;

using testing::data;

ProfileRow nodeRow(const std::string& node, double ms, std::optional<double> p90 = std::nullopt) {
  ProfileRow r;
  r.kind = RowKind::Node;
  r.task = "t";
  r.variant = "v";
  r.node = node;
  r.processor = "cpu";
  r.policy = "default";
  r.medianMs = ms;
  r.p90Ms = p90;
  r.runs = 5;
  r.source = "csv";
  return r;
}

// Two hand-made subgraph files: a constant-foldable node "dq" appears in both, constant
// in the first (reads an initializer) and computed in the second (reads a graph input).
TEST(profileSubgraphs, DuplicatedNodeCountsOnceWhereItIsNotConstant) {
  auto s0 = graph::parseModelText(R"(<ir_version: 8, opset_import: ["" : 13]>
    g0 (float[4] x) => (float[4] y) <float[4] w = {1,2,3,4}> {
      wq = Relu (w)
      y = Add (x, wq)
    })");
  auto s1 = graph::parseModelText(R"(<ir_version: 8, opset_import: ["" : 13]>
    g1 (float[4] y, float[4] w) => (float[4] z) {
      wq = Relu (w)
      z = Mul (y, wq)
    })");
  ASSERT_TRUE(s0.ok() && s1.ok());
  // parseModelText names unnamed nodes "<op>_<index>": give them the same names in both
  auto name = [](onnx::ModelProto& m, int i, const std::string& n) { m.mutable_graph()->mutable_node(i)->set_name(n); };
  name(*s0, 0, "dq");
  name(*s0, 1, "add");
  name(*s1, 0, "dq");
  name(*s1, 1, "mul");
  const SubgraphModels models{{"s0.onnx", *s0}, {"s1.onnx", *s1}};
  zoo::StitchManifest man;
  zoo::TaskStitch task;
  task.name = "t";
  zoo::SubgraphInfo a, b;
  a.position = 0;
  a.variant = b.variant = "v";
  a.file = "s0.onnx";
  b.position = 1;
  b.file = "s1.onnx";
  task.subgraphs = {{a}, {b}};
  man.tasks.push_back(task);

  std::vector<ProfileRow> rows = {nodeRow("dq", 1.0, 1.5), nodeRow("add", 2.0, 2.5), nodeRow("mul", 4.0, 4.5),
                                  nodeRow("gone", 0.5, 0.5)};
  auto files = subgraphFilesFor(rows, man);
  ASSERT_TRUE(files.ok()) << files.error().message;
  EXPECT_EQ(*files, (std::vector<std::string>{"s0.onnx", "s1.onnx"}));
  auto m = mapToSubgraphs(rows, man, models);
  ASSERT_TRUE(m.ok()) << m.error().message;
  ASSERT_EQ(m->rows.size(), 2u);
  EXPECT_EQ(m->rows[0].position, 0);
  EXPECT_DOUBLE_EQ(m->rows[0].medianMs, 2.0);  // add only: dq is constant here
  EXPECT_DOUBLE_EQ(*m->rows[0].p90Ms, 2.5);
  EXPECT_EQ(m->rows[1].position, 1);
  EXPECT_DOUBLE_EQ(m->rows[1].medianMs, 5.0);  // mul + dq
  EXPECT_DOUBLE_EQ(*m->rows[1].p90Ms, 6.0);
  EXPECT_EQ(m->rows[1].kind, RowKind::Subgraph);
  EXPECT_EQ(m->rows[1].runs, 5);
  EXPECT_EQ(m->rows[1].source, "csv");
  EXPECT_EQ(m->nodes, 4);
  EXPECT_EQ(m->mappedNodes, 3);
  EXPECT_DOUBLE_EQ(m->coverage(), 7.0 / 7.5);
  ASSERT_EQ(m->unmappedNames.size(), 1u);
  EXPECT_EQ(m->unmappedNames[0], "gone");

  // unknown task / variant are errors
  rows[0].task = "nope";
  auto e = mapToSubgraphs(rows, man, models);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().message, "stitch.json: no task 'nope' (node rows name it)");
  rows[0].task = "t";
  rows[0].variant = "w";
  auto f = mapToSubgraphs(rows, man, models);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.error().message, "stitch.json: task 't' has no subgraph of variant 'w' at position 0");
  EXPECT_FALSE(subgraphFilesFor(rows, man).ok());
  // a subgraph the caller did not load is an error, not a silent gap
  rows[0].variant = "v";
  auto g = mapToSubgraphs(rows, man, SubgraphModels{{"s0.onnx", *s0}});
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.error().message, "stitch.json: subgraph 's1.onnx' of task 't' was not loaded");
}

// End to end on real ONNX Runtime traces (testdata/profiles/make_ort_profiles.js):
// import, map onto the subgraphs of a zoo-stitch run of the digits zoo.
class profileEndToEnd : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(testing::scratchDir("zp_profile_e2e_stitch"));
    fs::remove_all(*dir_);
    drivers::ZooStitchOptions o;
    o.zoo = data("digits/zoo.json");
    o.out = *dir_;
    auto m = drivers::runZooStitch(o);
    ASSERT_TRUE(m.ok()) << m.error().message;
    manifest_ = new zoo::StitchManifest(std::move(*m));
  }
  static void TearDownTestSuite() {
    fs::remove_all(*dir_);
    delete manifest_;
    delete dir_;
  }

  void check(const std::string& variant, const std::string& trace) {
    auto model = graph::loadModel(data("digits/models/" + variant + ".onnx"));
    ASSERT_TRUE(model.ok()) << model.error().message;
    graph::GraphView view(*model);
    ImportParams p;
    p.task = "digits";
    p.variant = variant;
    p.processor = "cpu";
    p.skipRuns = 2;
    auto imp = importOrtProfile(data("profiles/ort/" + trace), view, p);
    ASSERT_TRUE(imp.ok()) << imp.error().message;
    EXPECT_EQ(imp->report.unmatched, 0) << imp->report.summary();
    auto files = subgraphFilesFor(imp->rows, *manifest_);
    ASSERT_TRUE(files.ok()) << files.error().message;
    auto models = drivers::readSubgraphModels(*files, *dir_, graph::LoadOptions{false, false});
    ASSERT_TRUE(models.ok()) << models.error().message;
    auto m = mapToSubgraphs(imp->rows, *manifest_, *models);
    ASSERT_TRUE(m.ok()) << m.error().message;
    SCOPED_TRACE(m->summary());
    std::cout << imp->report.summary() << "\n" << variant << ": " << m->summary() << "\n";
    EXPECT_GE(m->coverage(), 0.95);
    const zoo::TaskStitch* task = manifest_->task("digits");
    ASSERT_NE(task, nullptr);
    ASSERT_EQ(static_cast<int>(m->rows.size()), task->positions());
    double sum = 0;
    for (int pos = 0; pos < task->positions(); ++pos) {
      const ProfileRow& r = m->rows[static_cast<size_t>(pos)];
      EXPECT_EQ(r.position, pos);
      EXPECT_EQ(r.variant, variant);
      EXPECT_EQ(r.source, "ort-json");
      EXPECT_EQ(r.runs, 10);
      EXPECT_GT(r.medianMs, 0);
      sum += r.medianMs;
    }
    EXPECT_NEAR(sum, m->mappedMs, 1e-9);
    EXPECT_TRUE(m->missing.empty());
    // the rows go into a profile database and a CSV that reads back identically
    ProfileDb db;
    for (const auto& r : m->rows) db.add(r);
    std::string csv = artifacts::formatProfileCsv(db);
    auto back = artifacts::parseProfileCsv(csv, "e2e.csv");
    ASSERT_TRUE(back.ok()) << back.error().message;
    EXPECT_EQ(artifacts::formatProfileCsv(*back), csv);
    EXPECT_NE(back->find("digits", 0, variant, "cpu"), nullptr);
  }

  static fs::path* dir_;
  static zoo::StitchManifest* manifest_;
};
fs::path* profileEndToEnd::dir_ = nullptr;
zoo::StitchManifest* profileEndToEnd::manifest_ = nullptr;

TEST_F(profileEndToEnd, RealOrtTraceOfDenseMapsOntoSubgraphs) { check("dense", "digits_dense_disabled.json"); }

TEST_F(profileEndToEnd, RealOrtTraceOfInt8QdqMapsOntoSubgraphs) { check("int8", "digits_int8_disabled.json"); }

}  // namespace
}  // namespace zp::profile
