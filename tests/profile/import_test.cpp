#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>

#include "tests/profile/test_util.h"
#include "libplan/graph/analysis.h"
#include "libplan/graph/model_io.h"
#include "libplan/profile/import.h"
#include "libplan/artifacts/profile_csv.h"
#include "libplan/profile/lenient_json.h"
#include "tests/common/test_paths.h"

namespace zp::profile {
namespace {
namespace fs = std::filesystem;

using testing::data;

ImportParams params(const std::string& processor = "npu") {
  ImportParams p;
  p.task = "digits";
  p.variant = "dense";
  p.processor = processor;
  return p;
}

std::map<std::string, ProfileRow> byNode(const std::vector<ProfileRow>& rows) {
  std::map<std::string, ProfileRow> m;
  for (const auto& r : rows) m[r.node] = r;
  return m;
}

double sumMs(const std::vector<ProfileRow>& rows) {
  double s = 0;
  for (const auto& r : rows) s += r.medianMs;
  return s;
}

class profileDigits : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto m = graph::loadModel(data("digits/models/dense.onnx"));
    ASSERT_TRUE(m.ok()) << m.error().message;
    model_ = new onnx::ModelProto(std::move(*m));
    view_ = new graph::GraphView(*model_);
  }
  static void TearDownTestSuite() {
    delete view_;
    delete model_;
  }
  static double flops(const std::string& node) {
    for (int i = 0; i < view_->numNodes(); ++i)
      if (view_->node(i).name() == node) return view_->nodeStats(i).flops;
    ADD_FAILURE() << "no node " << node;
    return 0;
  }
  static onnx::ModelProto* model_;
  static graph::GraphView* view_;
};
onnx::ModelProto* profileDigits::model_ = nullptr;
graph::GraphView* profileDigits::view_ = nullptr;

// --- lenient JSON ---------------------------------------------------------------------

TEST(profileLenientJson, RepairsUnescapedQuotesBackslashesAndControlCharacters) {
  std::string text = "[{\"name\" :\"a \"b\" c\\d\x1f\", \"v\": 1}]";
  auto j = parseLenientJson(text, "x.json", JsonRepair{.backslashesLiteral = true});
  ASSERT_TRUE(j.ok()) << j.error().message;
  EXPECT_EQ((*j)[0]["name"], "a \"b\" c\\d\x1f");
  // valid escapes survive when backslashes are not all literal
  auto k = parseLenientJson("{\"n\": \"x\\u001fy\\\\z\x1f\"}", "y.json", JsonRepair{.backslashesLiteral = false});
  ASSERT_TRUE(k.ok()) << k.error().message;
  EXPECT_EQ((*k)["n"], "x\x1fy\\z\x1f");
  auto bad = parseLenientJson("[{\"a\": 1,]", "bad.json", {});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message.rfind("bad.json: not valid JSON (even after repairing unescaped names): ", 0), 0u)
      << bad.error().message;
  // A number beyond double's range is the JSON library's out_of_range, not a parse_error: still an error.
  auto big = parseLenientJson("[{\"dur\": 1e400}]", "big.json", {});
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.error().message, "big.json: not valid JSON (even after repairing unescaped names): number overflow parsing '1e400'");
}

// --- name mapping ---------------------------------------------------------------------

TEST_F(profileDigits, NameMapperRules) {
  NameMapper m(*view_);
  auto rule = [&](const std::string& n) { return std::string(matchRuleName(m.resolveName(n).rule)); };
  EXPECT_EQ(rule("/block1/conv1/Conv"), "node-name");
  EXPECT_EQ(rule("/block1/conv1/Conv_output_0"), "output-tensor");
  EXPECT_EQ(rule("node_of_/block1/conv1/Conv_output_0"), "node-of");
  EXPECT_EQ(rule("/block1/conv1/Conv + /block1/bn1/BatchNormalization"), "fused");
  EXPECT_EQ(rule("/block2/conv1/Conv || /block2/proj_conv/Conv"), "merged");
  EXPECT_EQ(rule("Reformatting CopyNode for Input Tensor 0 to /fc/Gemm"), "reformat");
  EXPECT_EQ(rule("/fc/Gemm input reformatter 0"), "reformat");
  EXPECT_EQ(rule("{ForeignNode[/stem/conv/Conv.../fc/Gemm]}"), "foreign-node");
  EXPECT_EQ(rule("/block2/Add_/block2/Add_output_0"), "prefix");
  EXPECT_EQ(rule("/block2/relu2/Relu_output_0_nchwc"), "prefix");
  EXPECT_EQ(rule("PWN(PWN(/block1/Add), /block1/relu2/Relu)"), "fused");
  EXPECT_EQ(m.resolveName("PWN(PWN(/block1/Add), /block1/relu2/Relu)").nodes.size(), 2u);
  EXPECT_EQ(rule("ReorderOutput"), "unmatched");
  EXPECT_EQ(rule("Reformatting CopyNode for Input Tensor x to /fc/Gemm"), "unmatched");
  // the whole graph in topological order
  EXPECT_EQ(m.resolveName("{ForeignNode[/stem/conv/Conv.../fc/Gemm]}").nodes, view_->topoOrder());
  // reformat of a fused layer: the fused layer's nodes
  EXPECT_EQ(m.resolveName("Reformatting CopyNode for Input Tensor 0 to /block1/conv1/Conv + /block1/bn1/BatchNormalization")
                .nodes.size(), 2u);
}

// --- ONNX Runtime ---------------------------------------------------------------------

// The model the hand-written ORT trace describes: names that break JSON, and an unnamed node.
onnx::ModelProto awkwardModel() {
  onnx::ModelProto m;
  m.set_ir_version(7);
  m.add_opset_import()->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name("awkward");
  auto io = [](onnx::ValueInfoProto* v, const std::string& name) {
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    t->mutable_shape()->add_dim()->set_dim_value(4);
  };
  io(g->add_input(), "X");
  io(g->add_output(), "Y");
  auto node = [&](const std::string& op, const std::string& name, const std::string& in, const std::string& out) {
    auto* n = g->add_node();
    n->set_op_type(op);
    n->set_name(name);
    n->add_input(in);
    n->add_output(out);
  };
  node("Relu", "weird \"quoted\" node", "X", "A");
  node("Sigmoid", "C:\\path\\node", "A", "B");
  node("Neg", "", "B", "Y");
  return m;
}

TEST(profileImportOrt, HandWrittenTraceWithUnescapedNamesUnnamedNodeAndWarmup) {
  onnx::ModelProto model = awkwardModel();
  graph::GraphView view(model);
  ImportParams p = params("cpu");
  p.skipRuns = 1;
  auto imp = importOrtProfile(data("profiles/ort/handwritten_awkward.json"), view, p);
  ASSERT_TRUE(imp.ok()) << imp.error().message;
  auto rows = byNode(imp->rows);
  ASSERT_EQ(rows.size(), 3u) << imp->report.summary();
  // per-run sums over runs 2..4 (run 1 is warm-up): [10,12,14] us
  EXPECT_DOUBLE_EQ(rows["weird \"quoted\" node"].medianMs, 0.012);
  EXPECT_NEAR(*rows["weird \"quoted\" node"].p90Ms, 0.0136, 1e-12);
  EXPECT_EQ(rows["weird \"quoted\" node"].runs, 3);
  EXPECT_DOUBLE_EQ(rows["C:\\path\\node"].medianMs, 0.022);
  EXPECT_DOUBLE_EQ(rows["node_of_Y"].medianMs, 0.007);  // the unnamed Neg, by node_index and op type
  EXPECT_EQ(rows["node_of_Y"].source, "ort-json");
  EXPECT_EQ(rows["node_of_Y"].processor, "cpu");
  const ImportReport& rep = imp->report;
  EXPECT_EQ(rep.layers, 4);
  EXPECT_EQ(rep.unmatched, 1);  // MemcpyToHost: ORT-inserted
  ASSERT_EQ(rep.unmatchedNames.size(), 1u);
  EXPECT_EQ(rep.unmatchedNames[0], "MemcpyToHost");
  EXPECT_EQ(rep.rules.at("node-index"), 1);
  bool repairedNote = false;
  for (const auto& n : rep.notes) repairedNote |= n.find("repaired unescaped") != std::string::npos;
  EXPECT_TRUE(repairedNote);

  // without skipping the warm-up run the first run counts: [50,10,12,14] -> median 13
  p.skipRuns = 0;
  auto all = importOrtProfile(data("profiles/ort/handwritten_awkward.json"), view, p);
  ASSERT_TRUE(all.ok());
  EXPECT_NEAR(byNode(all->rows)["weird \"quoted\" node"].medianMs, 0.013, 1e-12);

  p.skipRuns = 4;
  auto tooMany = importOrtProfile(data("profiles/ort/handwritten_awkward.json"), view, p);
  ASSERT_FALSE(tooMany.ok());
  EXPECT_EQ(tooMany.error().message,
            data("profiles/ort/handwritten_awkward.json").string() + ": 4 model_run events, cannot skip 4 warm-up runs");
}

TEST_F(profileDigits, ImportOrtRealTraceOptimizationDisabled) {
  ImportParams p = params("cpu");
  p.skipRuns = 2;  // make_ort_profiles.js: 2 warm-up + 10 runs
  auto imp = importOrtProfile(data("profiles/ort/digits_dense_disabled.json"), *view_, p);
  ASSERT_TRUE(imp.ok()) << imp.error().message;
  const ImportReport& rep = imp->report;
  EXPECT_EQ(rep.layers, view_->numNodes()) << rep.summary();
  EXPECT_EQ(rep.unmatched, 0) << rep.summary();
  EXPECT_EQ(rep.rules.at("node-name"), view_->numNodes());
  ASSERT_EQ(static_cast<int>(imp->rows.size()), view_->numNodes());
  for (const auto& r : imp->rows) {
    EXPECT_EQ(r.runs, 10);
    EXPECT_GE(*r.p90Ms, r.medianMs);
  }
  EXPECT_NEAR(sumMs(imp->rows), rep.totalMs, 1e-9);
  EXPECT_GT(rep.totalMs, 0);
}

TEST_F(profileDigits, ImportOrtRealTraceAllOptimizationsReportsInsertedNodes) {
  ImportParams p = params("cpu");
  p.skipRuns = 2;
  auto imp = importOrtProfile(data("profiles/ort/digits_dense_all.json"), *view_, p);
  ASSERT_TRUE(imp.ok()) << imp.error().message;
  const ImportReport& rep = imp->report;
  // NCHWc nodes are named after their output tensor + "_nchwc"; ReorderOutput exists only in ORT.
  EXPECT_GT(rep.rules.at("prefix"), 0) << rep.summary();
  EXPECT_EQ(rep.unmatched, 1) << rep.summary();
  ASSERT_EQ(rep.unmatchedNames.size(), 1u);
  EXPECT_EQ(rep.unmatchedNames[0], "ReorderOutput");
  EXPECT_LT(rep.layers, view_->numNodes());  // fused away
  EXPECT_NE(rep.summary().find("1 unmatched"), std::string::npos);
}

TEST(profileImportOrt, NotJsonAndNoNodeEventsAreErrorsNamingTheFile) {
  fs::path dir = testing::scratchDir("zp_profile_ort_err");
  std::ofstream(dir / "trunc.json") << "[\n{\"cat\" : \"Session\", \"name\" : \"model_run\", \"ts\" : 1,";
  std::ofstream(dir / "empty.json") << "[\n{\"cat\" : \"Session\",\"dur\" :5,\"ts\" :1,\"name\" :\"model_run\",\"args\" : {}}\n]\n";
  onnx::ModelProto model = awkwardModel();
  graph::GraphView view(model);
  auto a = importOrtProfile(dir / "trunc.json", view, params());
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.error().message.rfind((dir / "trunc.json").string() + ": not valid JSON", 0), 0u) << a.error().message;
  auto b = importOrtProfile(dir / "empty.json", view, params());
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.error().message, (dir / "empty.json").string() + ": no node events ('<node>_kernel_time', cat Node)");
  ImportParams noTask = params();
  noTask.task.clear();
  auto c = importOrtProfile(data("profiles/ort/handwritten_awkward.json"), view, noTask);
  ASSERT_FALSE(c.ok());
  fs::remove_all(dir);
}

// --- TensorRT -------------------------------------------------------------------------

TEST_F(profileDigits, ImportTrtexecWithDetailedLayerInfo) {
  auto imp = importTrtexecProfile(data("profiles/trtexec/digits_dense_profile.json"),
                                  data("profiles/trtexec/digits_dense_layerinfo.json"), *view_, params());
  ASSERT_TRUE(imp.ok()) << imp.error().message;
  const ImportReport& rep = imp->report;
  EXPECT_EQ(rep.layers, 15) << rep.summary();
  EXPECT_EQ(rep.unmatched, 2) << rep.summary();
  ASSERT_EQ(rep.unmatchedNames.size(), 2u);
  EXPECT_EQ(rep.unmatchedNames[0], "Reformatting CopyNode for Output Tensor 0 to \"odd\" C:\\out\\layer");
  EXPECT_EQ(rep.unmatchedNames[1], "myelin_graph_copy_1");
  EXPECT_NEAR(rep.unmatchedMs, 0.003 + 0.005, 1e-12);
  EXPECT_NEAR(sumMs(imp->rows), rep.matchedMs, 1e-12);
  EXPECT_EQ(rep.rules.at("metadata"), 2);  // block3_fused_conv1 and /fc/Gemm

  auto rows = byNode(imp->rows);
  for (const auto& r : imp->rows) {
    EXPECT_EQ(r.source, "trtexec");
    EXPECT_EQ(r.runs, 200);
    EXPECT_FALSE(r.p90Ms.has_value());
  }
  // "A + B + C" and its input reformatter, split by FLOPs
  double stem = flops("/stem/conv/Conv") + flops("/stem/bn/BatchNormalization") + flops("/stem/relu/Relu");
  EXPECT_NEAR(rows["/stem/conv/Conv"].medianMs, (0.008 + 0.031) * flops("/stem/conv/Conv") / stem, 1e-12);
  EXPECT_NEAR(rows["/stem/relu/Relu"].medianMs, (0.008 + 0.031) * flops("/stem/relu/Relu") / stem, 1e-12);
  // ForeignNode range: every block1 node, 0.078 ms in all
  double block1 = 0;
  int block1Nodes = 0;
  for (const auto& [name, r] : rows)
    if (name.rfind("/block1/", 0) == 0) {
      block1 += r.medianMs;
      ++block1Nodes;
    }
  EXPECT_EQ(block1Nodes, 7);
  EXPECT_NEAR(block1, 0.078, 1e-12);
  // "A || B"
  double b2 = flops("/block2/conv1/Conv") + flops("/block2/proj_conv/Conv");
  EXPECT_NEAR(rows["/block2/proj_conv/Conv"].medianMs, 0.024 * flops("/block2/proj_conv/Conv") / b2, 1e-12);
  // metadata "[ONNX Layer: X]\x1f[ONNX Layer: Y]..." with a raw \x1f in the file
  EXPECT_NEAR(rows["/block3/conv1/Conv"].medianMs + rows["/block3/bn1/BatchNormalization"].medianMs +
                  rows["/block3/relu1/Relu"].medianMs, 0.02, 1e-12);
  EXPECT_DOUBLE_EQ(rows["/pool/GlobalAveragePool"].medianMs, 0.006);  // node_of_<output0>
  EXPECT_DOUBLE_EQ(rows["/flatten/Flatten"].medianMs, 0.6 / 200);      // timeMs / count
  EXPECT_DOUBLE_EQ(rows["/fc/Gemm"].medianMs, 0.004 + 0.012);          // reformatter + averageMs
}

TEST_F(profileDigits, ImportTrtexecWithoutLayerInfoAndEvenSplit) {
  ImportParams p = params();
  p.split = SplitRule::Even;
  auto imp = importTrtexecProfile(data("profiles/trtexec/digits_dense_profile.json"), std::nullopt, *view_, p);
  ASSERT_TRUE(imp.ok()) << imp.error().message;
  EXPECT_EQ(imp->report.unmatched, 3);  // block3_fused_conv1 needs the layer info
  auto rows = byNode(imp->rows);
  EXPECT_DOUBLE_EQ(rows["/block2/conv1/Conv"].medianMs, 0.012);
  EXPECT_DOUBLE_EQ(rows["/block2/proj_conv/Conv"].medianMs, 0.012);
  EXPECT_EQ(rows.count("/block3/conv1/Conv"), 0u);

  // default-verbosity layer info (names only) adds nothing, and says so
  auto def = importTrtexecProfile(data("profiles/trtexec/digits_dense_profile.json"),
                                  data("profiles/trtexec/digits_dense_layerinfo_default.json"), *view_, p);
  ASSERT_TRUE(def.ok()) << def.error().message;
  EXPECT_EQ(def->report.unmatched, 3);
  bool note = false;
  for (const auto& n : def->report.notes) note |= n.find("default profiling verbosity") != std::string::npos;
  EXPECT_TRUE(note);
}

TEST_F(profileDigits, ImportTrtexecErrors) {
  fs::path dir = testing::scratchDir("zp_profile_trt_err");
  std::ofstream(dir / "nocount.json") << "[{\"name\": \"/fc/Gemm\", \"timeMs\": 1.0, \"percentage\": 100}]";
  std::ofstream(dir / "neg.json") << "[{\"count\": 10}, {\"name\": \"/fc/Gemm\", \"averageMs\": -1.0}]";
  std::ofstream(dir / "obj.json") << "{\"count\": 10}";
  auto a = importTrtexecProfile(dir / "nocount.json", std::nullopt, *view_, params());
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.error().message, (dir / "nocount.json").string() +
                                   ": element 0 ('/fc/Gemm'): needs 'medianMs', 'averageMs', or 'timeMs' with a "
                                   "preceding {\"count\": N}");
  auto b = importTrtexecProfile(dir / "neg.json", std::nullopt, *view_, params());
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.error().message,
            (dir / "neg.json").string() + ": element 1 ('/fc/Gemm'): 'averageMs' is not a finite non-negative number");
  auto c = importTrtexecProfile(dir / "obj.json", std::nullopt, *view_, params());
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().message, (dir / "obj.json").string() + ": expected a JSON array (trtexec --exportProfile)");
  fs::remove_all(dir);
}

// --- OpenVINO -------------------------------------------------------------------------

TEST_F(profileDigits, ImportOpenVinoDetailedCountersAveragesBlocks) {
  auto imp = importOpenVinoCounters(data("profiles/openvino/digits_dense_detailed_counters.csv"), *view_, params());
  ASSERT_TRUE(imp.ok()) << imp.error().message;
  const ImportReport& rep = imp->report;
  EXPECT_EQ(rep.layers, 15) << rep.summary();  // EXECUTED rows only
  EXPECT_EQ(rep.unmatched, 1);
  ASSERT_EQ(rep.unmatchedNames.size(), 1u);
  EXPECT_EQ(rep.unmatchedNames[0], "Convert_1234");
  ASSERT_EQ(rep.notes.size(), 1u);
  EXPECT_NE(rep.notes[0].find("2 counter blocks (infer requests) averaged; skipped 4 NOT_RUN, 4 OPTIMIZED_OUT and 2 "
                              "Total rows"), std::string::npos) << rep.notes[0];
  auto rows = byNode(imp->rows);
  EXPECT_DOUBLE_EQ(rows["/stem/conv/Conv"].medianMs, (0.020 + 0.024) / 2);
  EXPECT_NEAR(*rows["/stem/conv/Conv"].p90Ms, 0.020 + 0.9 * 0.004, 1e-12);
  EXPECT_EQ(rows["/stem/conv/Conv"].runs, 2);
  EXPECT_DOUBLE_EQ(rows["/block1/Add"].medianMs, 0.004);        // by output tensor name
  EXPECT_DOUBLE_EQ(rows["/block2/proj_conv/Conv"].medianMs, 0.006);  // "<node>_<output>"
  EXPECT_EQ(rows.count("/stem/relu/Relu"), 0u);                  // OPTIMIZED_OUT
  EXPECT_EQ(rows.count("/block1/bn1/BatchNormalization"), 0u);
  EXPECT_NEAR(rep.totalMs, (0.194 + 0.218) / 2, 1e-12);  // agrees with the Total rows
}

TEST_F(profileDigits, ImportOpenVinoPythonAverageCounters) {
  auto imp = importOpenVinoCounters(data("profiles/openvino/digits_dense_average_counters_py.csv"), *view_, params());
  ASSERT_TRUE(imp.ok()) << imp.error().message;
  auto rows = byNode(imp->rows);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_DOUBLE_EQ(rows["/stem/conv/Conv"].medianMs, 0.022);
  EXPECT_EQ(rows["/stem/conv/Conv"].runs, 1);
  EXPECT_FALSE(rows["/stem/conv/Conv"].p90Ms.has_value());
  EXPECT_EQ(rows["/fc/Gemm"].source, "openvino-csv");
}

TEST_F(profileDigits, ImportOpenVinoErrors) {
  fs::path dir = testing::scratchDir("zp_profile_ov_err");
  const std::string hdr = "layerName;execStatus;layerType;execType;realTime (ms);cpuTime (ms);\n";
  std::ofstream(dir / "status.csv") << hdr << "/fc/Gemm;RUNNING;FullyConnected;jit;0.1;0.1;\n";
  std::ofstream(dir / "num.csv") << hdr << "/fc/Gemm;EXECUTED;FullyConnected;jit;-nan;0.1;\n";
  std::ofstream(dir / "nohdr.csv") << "/fc/Gemm;EXECUTED;FullyConnected;jit;0.1;0.1;\n";
  std::ofstream(dir / "cells.csv") << hdr << "/fc/Gemm;EXECUTED;0.1;\n";
  auto err = [&](const std::string& f) {
    auto r = importOpenVinoCounters(dir / f, *view_, params());
    EXPECT_FALSE(r.ok());
    return r.ok() ? std::string() : r.error().message;
  };
  std::string d = dir.string() + "/";
  EXPECT_EQ(err("status.csv"),
            d + "status.csv:2: column 'execStatus': unknown status 'RUNNING' (expected EXECUTED, NOT_RUN or OPTIMIZED_OUT)");
  EXPECT_EQ(err("num.csv"), d + "num.csv:2: column 'realTime (ms)': '-nan' is not a finite non-negative number");
  EXPECT_EQ(err("nohdr.csv"), d + "nohdr.csv:1: expected the header 'layerName;execStatus;layerType;execType;realTime "
                                  "(ms);cpuTime (ms);' before any row");
  EXPECT_EQ(err("cells.csv"), d + "cells.csv:2: 3 fields, the header has 6");
  fs::remove_all(dir);
}

// --- generic CSV ----------------------------------------------------------------------

TEST_F(profileDigits, ImportGenericCsv) {
  ImportParams p;
  p.task = "digits";
  p.processor = "npu";
  auto rows = artifacts::readProfileCsv(data("profiles/csv/digits_example.csv"));
  ASSERT_TRUE(rows.ok()) << rows.error().message;
  auto imp = importProfileRows(*rows, data("profiles/csv/digits_example.csv").string(), view_, p);
  ASSERT_TRUE(imp.ok()) << imp.error().message;
  const ProfileDb& db = imp->rows;
  auto nodes = db.select(RowKind::Node);
  ASSERT_EQ(nodes.size(), 2u);
  ASSERT_NE(db.findNode("digits", "dense", "npu", "/block1/Add"), nullptr);  // re-keyed from its output tensor
  EXPECT_DOUBLE_EQ(db.findNode("digits", "dense", "npu", "/fc/Gemm")->medianMs, 0.011);
  EXPECT_EQ(imp->report.unmatched, 1);
  EXPECT_EQ(imp->report.unmatchedNames.at(0), "fused \"node\", with comma");
  EXPECT_EQ(db.select(RowKind::Subgraph).size(), 2u);  // the gpu row is skipped
  EXPECT_EQ(db.select(RowKind::Transition).size(), 1u);
  ASSERT_EQ(imp->report.notes.size(), 1u);
  EXPECT_NE(imp->report.notes[0].find("1 row of other tasks, variants or processors skipped"), std::string::npos);
  // without a model node rows pass through unchanged
  auto raw = importProfileRows(*rows, "digits_example.csv", nullptr, ImportParams{});
  ASSERT_TRUE(raw.ok());
  EXPECT_EQ(raw->rows.size(), 7u);
}

}  // namespace
}  // namespace zp::profile
