// Layer grouping on ONNX: groups are unions of the partition pass's minimal
// segments, never split a fusible chain, carry the profile rows' times, and
// feed the scheduler through workload.json ("model" DNNs).
#include "tests/common/temp_dir.h"
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "libplan/graph/model_io.h"
#include "passes/grouping/grouping.h"
#include "passes/partition/cut_points.h"
#include "passes/schedule/concurrent.h"
#include "tests/common/onnx_text.h"
#include "libplan/artifacts/profile_csv.h"
#include "drivers/concurrent_flow/workload.h"

using namespace zp;
namespace fs = std::filesystem;

namespace {

using zp::testing::floatInitializer;

// A chain of conv blocks: c_k = Conv, r_k = Relu (fusible: never cut in between).
std::string chainCnn(int blocks) {
  std::string inits, body;
  for (int k = 0; k < blocks; ++k) {
    inits += (k ? ", " : "") + floatInitializer("w" + std::to_string(k), {4, k == 0 ? 1 : 4, 3, 3});
    std::string in = k == 0 ? "x" : "r" + std::to_string(k - 1);
    body += "      c" + std::to_string(k) + " = Conv <pads = [1,1,1,1]> (" + in + ", w" + std::to_string(k) + ")\n";
    body += "      r" + std::to_string(k) + " = Relu (c" + std::to_string(k) + ")\n";
  }
  return "<ir_version: 8, opset_import: [\"\" : 13]>\n    g (float[1,1,8,8] x) => (float[1,4,8,8] r" +
         std::to_string(blocks - 1) + ")\n    <" + inits + ">\n    {\n" + body + "    }";
}

profile::ProfileDb rows(const onnx::ModelProto& m, bool dlaSkipsLast) {
  profile::ProfileDb db;
  graph::GraphView v(m);
  for (int n = 0; n < v.numNodes(); ++n) {
    const auto& node = v.node(n);
    std::string name = node.name().empty() ? node.op_type() + "_" + std::to_string(n) : node.name();
    for (const char* proc : {"GPU", "DLA"}) {
      if (dlaSkipsLast && std::string(proc) == "DLA" && n == v.numNodes() - 1) continue;
      profile::ProfileRow r;
      r.kind = profile::RowKind::Node;
      r.task = "cnn";
      r.variant = "dense";
      r.node = name;
      r.processor = proc;
      r.policy = "default";
      r.medianMs = (node.op_type() == "Conv" ? 0.2 : 0.02) * (std::string(proc) == "DLA" ? 1.6 : 1.0) + 0.001 * n;
      r.source = "csv";
      db.add(r);
    }
  }
  return db;
}

grouping::GroupingParams params() {
  grouping::GroupingParams p;
  p.accelerators = {"GPU", "DLA"};
  p.task = "cnn";
  p.variant = "dense";
  return p;
}

}  // namespace

TEST(concurrentGrouping, GroupsFollowCutPointsAndSumProfileRows) {
  auto m = graph::parseModelText(chainCnn(6));
  ASSERT_TRUE(m.ok()) << m.error().message;
  graph::GraphView v(*m);
  auto db = rows(*m, false);
  auto prm = params();
  prm.minTimeToTransition = 0;  // every cut point becomes a boundary
  auto g = grouping::groupLayers(v, db, prm, "cnn.onnx");
  ASSERT_TRUE(g.ok()) << g.error().message;
  auto cuts = partition::findCutPoints(v);
  ASSERT_EQ(g->groups.size(), cuts.size() + 1);
  for (size_t i = 0; i < cuts.size(); ++i) EXPECT_EQ(g->boundaryTensors[i], cuts[i].tensor);
  // Every boundary lies after a Relu: Conv->Relu is never split.
  for (const auto& names : g->nodes) EXPECT_EQ(names.back().rfind("Relu", 0), 0u) << names.back();
  double total = 0, expect = 0;
  for (const auto& gr : g->groups) total += gr.timeMs[0];
  for (const auto* r : db.select(profile::RowKind::Node, "cnn", "dense", "GPU")) expect += r->medianMs;
  EXPECT_NEAR(total, expect, 1e-12);
  EXPECT_GT(g->groups[0].demand[0], 0);
  EXPECT_GT(g->groups[0].transitionOutMs[0], prm.transitionOverheadMs);  // 1x4x8x8 floats cross
  EXPECT_EQ(g->groups[0].transitionInMs[0], 0);
}

TEST(concurrentGrouping, SmallGroupsMergeUntilWorthATransition) {
  auto m = graph::parseModelText(chainCnn(6));
  ASSERT_TRUE(m.ok());
  graph::GraphView v(*m);
  auto db = rows(*m, false);
  auto prm = params();
  prm.transitionOverheadMs = 0.1;  // each block (~0.22 ms) is not worth 2 x 2 x 0.1 ms alone
  auto g = grouping::groupLayers(v, db, prm, "cnn.onnx");
  ASSERT_TRUE(g.ok());
  EXPECT_LT(g->groups.size(), 6u);
  for (size_t i = 0; i + 1 < g->groups.size(); ++i)
    EXPECT_GE(g->groups[i].timeMs[0], prm.minTimeToTransition * g->groups[i].transitionOutMs[0] * 2 - 1e-12);
  prm.transitionOverheadMs = 0.001;
  prm.maxGroups = 2;
  auto g2 = grouping::groupLayers(v, db, prm, "cnn.onnx");
  ASSERT_TRUE(g2.ok());
  EXPECT_EQ(g2->groups.size(), 2u);
}

TEST(concurrentGrouping, UnsupportedNodeKeepsItsGroupOffThatAccelerator) {
  auto m = graph::parseModelText(chainCnn(3));
  ASSERT_TRUE(m.ok());
  graph::GraphView v(*m);
  auto prm = params();
  prm.minTimeToTransition = 0;
  auto g = grouping::groupLayers(v, rows(*m, true), prm, "cnn.onnx");
  ASSERT_TRUE(g.ok());
  EXPECT_FALSE(g->groups.back().allowed(1));
  EXPECT_TRUE(g->groups.front().allowed(1));
  profile::ProfileDb empty;
  auto e = grouping::groupLayers(v, empty, prm, "cnn.onnx");
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().message.find("cnn.onnx: node "), std::string::npos);
}

TEST(concurrentGrouping, WorkloadWithOnnxModelsSolves) {
  fs::path d = zp::testing::uniqueTempDir("grouping");
  auto m = graph::parseModelText(chainCnn(8));
  ASSERT_TRUE(m.ok());
  ASSERT_TRUE(graph::saveModel(*m, d / "cnn.onnx").ok());
  ASSERT_TRUE(artifacts::writeProfileCsv(rows(*m, false), d / "cnn.csv").ok());
  std::ofstream(d / "w.json") << R"({"version": 1, "accelerators": ["GPU", "DLA"], "objective": "latency",
    "dnns": [{"name": "cnn", "instances": 2, "model": "cnn.onnx", "profile": "cnn.csv", "task": "cnn",
              "variant": "dense", "grouping": {"minTimeToTransition": 0.5}}]})";
  auto w = drivers::loadWorkload(d / "w.json");
  ASSERT_TRUE(w.ok()) << w.error().message;
  EXPECT_EQ(w->inputFiles.size(), 3u);  // workload, model, profile
  auto o = schedule::solveConcurrent(*w, "w.json", {});
  ASSERT_TRUE(o.ok()) << o.error().message;
  for (const auto& b : o->section.baselines) EXPECT_LE(o->section.latencyMs, b.latencyMs + 1e-12) << b.name;
  fs::remove_all(d);
}
