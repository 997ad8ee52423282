#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>

#include "tests/common/temp_dir.h"
#include "drivers/run/run_model.h"
#include "libplan/graph/model_io.h"
#include "libplan/runtime/cache/crc32c.h"
#include "libplan/runtime/cache/weight_cache.h"
#include "libplan/runtime/measure.h"
#include "libplan/runtime/npy.h"
#include "libplan/runtime/session.h"
#include "libplan/util/file.h"
#include "libplan/util/hash.h"
#include "libplan/util/json.h"
#include "tests/common/onnx_text.h"
#include "tests/runtime/test_util.h"

namespace zp::runtime {
namespace {

using test_util::relErr;
namespace fs = std::filesystem;

std::string floats(size_t n, uint32_t seed, double zeros = 0) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1, 1);
  std::uniform_real_distribution<double> z(0, 1);
  std::string s;
  for (size_t i = 0; i < n; ++i) s += fmt::format("{}{:.6f}", i ? ", " : "", z(rng) < zeros ? 0.0f : d(rng));
  return s;
}

std::string positive(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(0.5f, 1.5f);
  std::string s;
  for (size_t i = 0; i < n; ++i) s += fmt::format("{}{:.6f}", i ? ", " : "", d(rng));
  return s;
}

// Conv(3x3) -> BN -> Relu -> Conv(1x1, pruned) -> Add(skip) -> GlobalAveragePool -> Flatten -> Gemm.
std::string cnnText() {
  return fmt::format(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,4,9,9] x) => (float[1,5] y)
    <float[8,4,3,3] W1 = {{{}}}, float[8] B1 = {{{}}},
     float[8] s = {{{}}}, float[8] bb = {{{}}}, float[8] mu = {{{}}}, float[8] var = {{{}}},
     float[8,8,1,1] W2 = {{{}}}, float[5,8] Wg = {{{}}}, float[5] Bg = {{{}}}>
    {{
      c1 = Conv <pads=[1,1,1,1]> (x, W1, B1)
      n1 = BatchNormalization <epsilon=0.001> (c1, s, bb, mu, var)
      r1 = Relu (n1)
      c2 = Conv (r1, W2)
      a = Add (c2, r1)
      p = GlobalAveragePool (a)
      f = Flatten (p)
      y = Gemm <transB=1> (f, Wg, Bg)
    }}
  )",
                     floats(288, 1), floats(8, 2), positive(8, 3), floats(8, 4), floats(8, 5), positive(8, 6),
                     floats(64, 7, 0.97), floats(40, 8), floats(5, 9));
}

TensorMap oneInput(const std::string& name, Shape s, uint64_t seed) {
  IoInfo io{name, DType::F32, s};
  return {{name, randomInput(io, seed)}};
}

fs::path tempDir(const std::string& name) {
  return zp::testing::uniqueTempDir("runtime_" + name);
}

TEST(Session, FusionAndPoliciesAgreeWithUnfusedExecution) {
  auto model = graph::parseModelText(cnnText());
  ASSERT_TRUE(model.ok()) << model.error().message;
  SessionOptions plain;
  plain.foldBatchNorm = false;
  plain.fuseActivations = false;
  plain.kernels.policy = "naive";
  auto ref = Session::fromModel(*model, "cnn", plain);
  ASSERT_TRUE(ref.ok()) << ref.error().message;
  auto in = oneInput("x", {1, 4, 9, 9}, 11);
  auto expect = (*ref)->run(in);
  ASSERT_TRUE(expect.ok()) << expect.error().message;
  EXPECT_EQ((*ref)->nodes().size(), 8u);
  for (const auto& policy : policyNames())
    for (GemmLibrary gemm : kAllGemmLibraries) {
      SessionOptions o;
      o.kernels.policy = policy;
      o.gemm = gemm;
      auto s = Session::fromModel(*model, "cnn", o);
      ASSERT_TRUE(s.ok()) << s.error().message;
      EXPECT_EQ((*s)->nodes().size(), 5u) << "BN and Relu fused into the first Conv, the Add into the second";
      for (int rep = 0; rep < 2; ++rep) {  // first run plans memory if needed, second uses the arena
        auto got = (*s)->run(in);
        ASSERT_TRUE(got.ok()) << got.error().message;
        EXPECT_LE(relErr(got->at("y"), expect->at("y")), 1e-5) << policy << " " << gemmLibraryKey(gemm);
      }
    }
}

TEST(Session, DefaultPolicyPicksSparseForPrunedWeightsAndKernelsCanBeForcedPerNode) {
  auto model = graph::parseModelText(cnnText());
  ASSERT_TRUE(model.ok());
  auto s = Session::fromModel(*model, "cnn", {});
  ASSERT_TRUE(s.ok());
  std::map<std::string, std::string> k;
  for (const auto& n : (*s)->nodes()) k[n.name] = n.kernel;
  EXPECT_EQ(k["Conv_3"], "sparse");  // W2 is ~97% zeros
  // 4 channels: too narrow for Winograd; along output rows where vectors are 16 wide,
  // else 8 outputs: blocks of 8 for the direct kernel.
  EXPECT_EQ(k["Conv_0"], directRowsFast() ? "direct_rows" : "direct");
  SessionOptions o;
  o.kernels.perNode["Conv_0"] = "winograd";
  auto s2 = Session::fromModel(*model, "cnn", o);
  ASSERT_TRUE(s2.ok());
  EXPECT_EQ((*s2)->nodes()[0].kernel, "winograd");
  o.kernels.perNode["Conv_0"] = "depthwise";
  auto bad = Session::fromModel(*model, "cnn", o);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("Conv_0"), std::string::npos);
  EXPECT_NE(bad.error().message.find("depthwise"), std::string::npos);
}

// The default policy's sparse rule: pruned kxk convs of any stride and map size; pruned
// 1x1 convs only from 7x7 outputs (dense 1x1 is a plain GEMM, sparse has a fixed cost).
TEST(Session, DefaultPolicyPicksSparseForPrunedStridedAndSmallConvs) {
  auto model = graph::parseModelText(fmt::format(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,8,8,8] x) => (float[1,8,4,4] y, float[1,8,2,2] z)
    <float[8,8,3,3] W1 = {{{}}}, float[8,8,1,1] W2 = {{{}}}>
    {{
      y = Conv <strides=[2,2], pads=[1,1,1,1]> (x, W1)
      z = Conv <strides=[2,2]> (y, W2)
    }}
  )", floats(576, 1, 0.9), floats(64, 2, 0.97)));
  ASSERT_TRUE(model.ok()) << model.error().message;
  auto s = Session::fromModel(*model, "g", {});
  ASSERT_TRUE(s.ok()) << s.error().message;
  std::map<std::string, std::string> k;
  for (const auto& n : (*s)->nodes()) k[n.name] = n.kernel;
  EXPECT_EQ(k["Conv_0"], "sparse");   // 3x3 stride 2 on 8x8, 90% zeros
  // 1x1 with 2x2 outputs: too small for sparse; dense on packed weights (AVX-512 hosts) or GEMM
  EXPECT_EQ(k["Conv_1"], pointwisePackedFast() ? "packed1x1" : "gemm1x1");
}

// What a bundle reads to feed a unit: the inputs a session takes, from the
// graph alone (an initializer listed among the graph inputs is no input).
TEST(Session, ModelInputsAreTheSessionsInputsWithoutBuildingOne) {
  auto model = graph::parseModelText(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[N,4] x, int64[2] shape, float[4] b) => (float[2,N,2] y) {
      s = Add (x, b)
      y = Reshape (s, shape)
    }
  )");
  ASSERT_TRUE(model.ok()) << model.error().message;
  auto* b = model->mutable_graph()->add_initializer();
  b->set_name("b");
  b->set_data_type(onnx::TensorProto::FLOAT);
  b->add_dims(4);
  for (int i = 0; i < 4; ++i) b->add_float_data(static_cast<float>(i));
  auto inputs = modelInputs(*model, "m.onnx");
  ASSERT_TRUE(inputs.ok()) << inputs.error().message;
  auto s = Session::fromModel(*model, "m.onnx", {});
  ASSERT_TRUE(s.ok()) << s.error().message;
  ASSERT_EQ(inputs->size(), 2u);
  ASSERT_EQ(inputs->size(), (*s)->inputs().size());
  for (size_t i = 0; i < inputs->size(); ++i) {
    EXPECT_EQ((*inputs)[i].name, (*s)->inputs()[i].name);
    EXPECT_EQ((*inputs)[i].dtype, (*s)->inputs()[i].dtype);
    EXPECT_EQ((*inputs)[i].shape, (*s)->inputs()[i].shape);
  }
  EXPECT_EQ((*inputs)[0].shape, (Shape{-1, 4}));
  EXPECT_EQ((*inputs)[1].dtype, DType::I64);
}

TEST(Session, UnsupportedOperatorIsReportedAtLoadNamingNodeAndOp) {
  auto model = graph::parseModelText(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[3,2,2] x) => (float[3] y) { y = Det (x) }
  )");
  ASSERT_TRUE(model.ok()) << model.error().message;
  auto s = Session::fromModel(*model, "m.onnx", {});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, "m.onnx: node 'Det_0': operator 'Det' is not supported");
}

TEST(Session, MemoryIsPlannedOnceAndBuffersAreReused) {
  std::string body;
  std::string prev = "x";
  for (int i = 0; i < 8; ++i) {
    body += fmt::format("t{} = Relu ({})\n u{} = Add (t{}, {})\n", i, prev, i, i, prev);
    prev = fmt::format("u{}", i);
  }
  auto model = graph::parseModelText(fmt::format(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,64,32,32] x) => (float[1,64,32,32] u7) {{ {} }}
  )", body));
  ASSERT_TRUE(model.ok()) << model.error().message;
  auto s = Session::fromModel(*model, "chain", {});
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_TRUE((*s)->memoryPlanned());
  const size_t one = 64 * 32 * 32 * 4;
  // 15 intermediate tensors, at most 2 alive at once (plus the one being written).
  EXPECT_LE((*s)->arenaBytes(), 3 * one);
  EXPECT_GE((*s)->arenaBytes(), 2 * one);
  auto in = oneInput("x", {1, 64, 32, 32}, 3);
  auto a = (*s)->run(in);
  auto b = (*s)->run(in);
  ASSERT_TRUE(a.ok() && b.ok());
  // Reference: u = relu(u) + u, 8 times.
  const float* x = in.at("x").ptr<float>();
  for (int64_t i = 0; i < 100; ++i) {
    float v = x[i];
    for (int k = 0; k < 8; ++k) v = std::max(v, 0.0f) + v;
    EXPECT_FLOAT_EQ(a->at("u7").ptr<float>()[i], v);
    EXPECT_FLOAT_EQ(b->at("u7").ptr<float>()[i], v);
  }
}

TEST(Session, ShapeOpsAndTransformerPieces) {
  auto model = graph::parseModelText(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2,3,4] x, int64[2] idx) => (float[2,3,2] t, float[2,2,2] sl, float[2,2,4] ga, float[2,3,1] rm,
                                         float[2,3,4] sm, float[6,4] rs, float[2,3,4] wh, float[2,3,2] s1)
    <int64[3] shp = {-1, 0, 4}, int64[3] st = {0, 3, 1}, int64[3] en = {2, -100, 4}, int64[3] ax = {0, 2, 1},
     int64[3] sp = {1, -2, 1}, int64[2] spl = {2, 2}, float[1] zero = {0.0}>
    {
      tt = Transpose <perm=[0,2,1]> (x)
      t = Slice (tt, st, en, ax, sp)
      sl = Slice (x, st, en, ax, sp)
      ga = Gather <axis=1> (x, idx)
      rm = ReduceMean <axes=[2]> (x)
      sm = Softmax <axis=-1> (x)
      r3 = Reshape (x, shp)
      rs = Flatten <axis=2> (r3)
      pos = Greater (x, zero)
      wh = Where (pos, x, zero)
      s1, s2 = Split <axis=2> (x, spl)
    }
  )");
  ASSERT_TRUE(model.ok()) << model.error().message;
  auto s = Session::fromModel(*model, "ops", {});
  ASSERT_TRUE(s.ok()) << s.error().message;
  Tensor x = Tensor::empty(DType::F32, {2, 3, 4});
  for (int i = 0; i < 24; ++i) x.ptr<float>()[i] = static_cast<float>(i) - 10.0f;
  auto out = (*s)->run({{"x", x}, {"idx", Tensor::fromI64({2, -3}, {2})}});
  ASSERT_TRUE(out.ok()) << out.error().message;
  auto v = [&](const char* n) { return out->at(n).toF32(); };
  // sl: axis 0 -> 0,1; axis 2 from 3 step -2 -> 3,1; axis 1 from 1 to the end -> 1,2
  const auto sl = v("sl");
  // axis 2: indices 3, 1; axis 1: indices 1, 2
  EXPECT_EQ(out->at("sl").shape, (Shape{2, 2, 2}));
  EXPECT_FLOAT_EQ(sl[0], x.ptr<float>()[1 * 4 + 3]);
  EXPECT_FLOAT_EQ(sl[1], x.ptr<float>()[1 * 4 + 1]);
  EXPECT_FLOAT_EQ(sl[2], x.ptr<float>()[2 * 4 + 3]);
  const auto ga = v("ga");
  EXPECT_EQ(out->at("ga").shape, (Shape{2, 2, 4}));
  EXPECT_FLOAT_EQ(ga[0], x.ptr<float>()[2 * 4]);      // idx 2
  EXPECT_FLOAT_EQ(ga[4], x.ptr<float>()[0]);          // idx -3 == 0
  const auto rm = v("rm");
  EXPECT_FLOAT_EQ(rm[0], (-10 - 9 - 8 - 7) / 4.0f);
  const auto sm = v("sm");
  float e0 = 1.0f / (1 + std::exp(1.0f) + std::exp(2.0f) + std::exp(3.0f));
  EXPECT_NEAR(sm[0], e0, 1e-6);
  EXPECT_EQ(out->at("rs").shape, (Shape{6, 4}));
  const auto wh = v("wh");
  EXPECT_FLOAT_EQ(wh[0], 0.0f);
  EXPECT_FLOAT_EQ(wh[23], 13.0f);
  const auto s1 = v("s1");
  EXPECT_FLOAT_EQ(s1[0], -10.0f);
  EXPECT_FLOAT_EQ(s1[2], -6.0f);
  const auto t = v("t");
  // tt = x^T per batch [2,4,3]; t: axis 2 from 2 (clamped) step -2 -> 2,0; axis 1 -> 1,2,3
  EXPECT_EQ(out->at("t").shape, (Shape{2, 3, 2}));
  EXPECT_FLOAT_EQ(t[0], x.ptr<float>()[2 * 4 + 1]);  // tt[0][1][2] = x[0][2][1]
  EXPECT_FLOAT_EQ(t[1], x.ptr<float>()[0 * 4 + 1]);  // tt[0][1][0] = x[0][0][1]
}

// The pointwise and depthwise convs of an inverted residual block hand their values
// on channel-blocked (kernels.h BlockedLayouts): the expansion writes blocks, the
// depthwise conv reads and writes them, the projection reads them and writes planes
// for the Add. Outputs are the same bits as with planes throughout. A value that is
// also a graph output stays in planes.
TEST(Session, PointwiseAndDepthwiseConvsPassValuesChannelBlockedWithTheSameBits) {
  auto nodeNamed = [](const Session& s, const std::string& name) {
    for (const auto& n : s.nodes())
      if (n.name == name) return n;
    ADD_FAILURE() << "no node " << name;
    return NodeInfo{};
  };
  for (bool depthwiseOut : {false, true}) {
    auto model = graph::parseModelText(zp::testing::invertedResidualText(depthwiseOut));
    ASSERT_TRUE(model.ok()) << model.error().message;
    for (auto& n : *model->mutable_graph()->mutable_node()) n.set_name(n.output(0) == "e" ? "expand" : n.output(0));
    SessionOptions blocked, planes, naive;
    blocked.kernels.perNode["expand"] = "packed1x1";  // the default takes the GEMM on AVX2 hosts
    blocked.kernels.perNode["p"] = "packed1x1";
    planes = blocked;
    planes.channelBlocks = false;
    naive.kernels.policy = "naive";
    auto sb = Session::fromModel(*model, "block", blocked);
    auto sp = Session::fromModel(*model, "block", planes);
    auto sn = Session::fromModel(*model, "block", naive);
    ASSERT_TRUE(sb.ok() && sp.ok() && sn.ok());
    const NodeInfo e = nodeNamed(**sb, "expand"), d = nodeNamed(**sb, "d"), p = nodeNamed(**sb, "p");
    EXPECT_EQ(e.kernel, "packed1x1");
    EXPECT_EQ(d.kernel, "depthwise");
    EXPECT_FALSE(e.blockedInput);
    EXPECT_TRUE(e.blockedOutput);
    EXPECT_TRUE(d.blockedInput);
    EXPECT_EQ(d.blockedOutput, !depthwiseOut);
    EXPECT_EQ(p.blockedInput, !depthwiseOut);
    EXPECT_FALSE(p.blockedOutput);
    for (const auto& n : (*sp)->nodes()) EXPECT_FALSE(n.blockedInput || n.blockedOutput) << n.name;
    for (uint64_t seed : {1, 2}) {
      const auto in = oneInput("x", {1, 16, 8, 8}, seed);
      auto yb = (*sb)->run(in), yp = (*sp)->run(in), yn = (*sn)->run(in);
      ASSERT_TRUE(yb.ok() && yp.ok() && yn.ok());
      for (const auto& [name, t] : *yp) {
        ASSERT_EQ(yb->at(name).size(), t.size());
        EXPECT_EQ(std::memcmp(yb->at(name).ptr<float>(), t.ptr<float>(), t.size() * 4), 0) << name;
        EXPECT_LE(relErr(t, yn->at(name)), 1e-5) << name;
      }
    }
  }
}

// A squeeze-and-excite block: the depthwise conv's output goes channel-blocked to both
// of its readers, the pooling and the Mul that scales it, and the Mul's to the
// projection. Same bits as planes with the same kernels.
TEST(Session, SqueezeAndExciteReadsTheDepthwiseOutputChannelBlocked) {
  auto model = graph::parseModelText(zp::testing::squeezeExciteText());
  ASSERT_TRUE(model.ok()) << model.error().message;
  for (auto& n : *model->mutable_graph()->mutable_node()) n.set_name(n.output(0));
  SessionOptions blocked;
  blocked.kernels.perNode["e"] = "packed1x1";
  blocked.kernels.perNode["y"] = "packed1x1";
  SessionOptions planes = blocked;
  planes.channelBlocks = false;
  auto sb = Session::fromModel(*model, "se", blocked);
  auto sp = Session::fromModel(*model, "se", planes);
  ASSERT_TRUE(sb.ok() && sp.ok());
  std::map<std::string, NodeInfo> nodes;
  for (const auto& n : (*sb)->nodes()) nodes[n.name] = n;
  EXPECT_TRUE(nodes["e"].blockedOutput);
  EXPECT_TRUE(nodes["d"].blockedInput && nodes["d"].blockedOutput);
  EXPECT_TRUE(nodes["g"].blockedInput);
  EXPECT_FALSE(nodes["g"].blockedOutput);
  EXPECT_FALSE(nodes["f1"].blockedInput || nodes["f2"].blockedOutput);
  EXPECT_TRUE(nodes["m"].blockedInput && nodes["m"].blockedOutput);
  EXPECT_TRUE(nodes["y"].blockedInput);
  EXPECT_FALSE(nodes["y"].blockedOutput);
  const auto in = oneInput("x", {1, 16, 8, 8}, 7);
  auto yb = (*sb)->run(in), yp = (*sp)->run(in);
  ASSERT_TRUE(yb.ok() && yp.ok());
  EXPECT_EQ(std::memcmp(yb->at("y").ptr<float>(), yp->at("y").ptr<float>(), yp->at("y").size() * 4), 0);
}

// A stem (3 input channels, stride 2) feeding a depthwise conv: with the direct kernel
// it writes channel blocks, which the depthwise conv reads where they lie. Same bits as
// planes with the same kernels, at one and two threads; the default picks the direct
// kernel where stems otherwise run along rows.
TEST(Session, AStemWritesChannelBlocksForTheDepthwiseConvItFeeds) {
  auto model = graph::parseModelText(fmt::format(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    stem (float[1,3,37,30] x) => (float[1,32,19,15] y)
    <float[32,3,3,3] ws = {{{}}}, float[32] bs = {{{}}}, float[32,1,3,3] wd = {{{}}}, float[32] bd = {{{}}}>
    {{
      s = Conv <strides = [2, 2], pads = [1, 1, 1, 1]> (x, ws, bs)
      sr = Relu (s)
      y = Conv <group = 32, pads = [1, 1, 1, 1]> (sr, wd, bd)
    }}
  )", zp::testing::randomValues(864, 11, -0.5f, 0.5f), zp::testing::randomValues(32, 12),
      zp::testing::randomValues(288, 13, -0.5f, 0.5f), zp::testing::randomValues(32, 14)));
  ASSERT_TRUE(model.ok()) << model.error().message;
  for (auto& n : *model->mutable_graph()->mutable_node()) n.set_name(n.output(0));
  auto byDefault = Session::fromModel(*model, "stem", {});
  ASSERT_TRUE(byDefault.ok());
  EXPECT_EQ((*byDefault)->nodes().front().kernel, directRowsFast() ? "direct" : "im2col");
  SessionOptions blocked;
  blocked.kernels.perNode["sr"] = "direct";  // the fused Conv + Relu takes the Relu's name
  SessionOptions planes = blocked;
  planes.channelBlocks = false;
  for (int threads : {1, 2}) {
    blocked.threads = planes.threads = threads;
    auto sb = Session::fromModel(*model, "stem", blocked);
    auto sp = Session::fromModel(*model, "stem", planes);
    ASSERT_TRUE(sb.ok() && sp.ok()) << (sb.ok() ? sp.error().message : sb.error().message);
    const auto& stem = (*sb)->nodes().front();
    EXPECT_EQ(stem.kernel, "direct");
    EXPECT_TRUE(stem.blockedOutput);
    EXPECT_TRUE((*sb)->nodes().back().blockedInput);
    const auto in = oneInput("x", {1, 3, 37, 30}, 5);
    auto yb = (*sb)->run(in), yp = (*sp)->run(in);
    ASSERT_TRUE(yb.ok() && yp.ok());
    EXPECT_EQ(std::memcmp(yb->at("y").ptr<float>(), yp->at("y").ptr<float>(), yp->at("y").size() * 4), 0);
  }
}

// A Concat of more than one piece (64 KB) per input, on channels and on rows: at two
// threads its pieces are copied by both, to the same result as the definition.
TEST(Session, ConcatsCopiedInPiecesOnTwoThreadsGiveTheDefinition) {
  auto model = graph::parseModelText(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,40,30,30] a, float[1,25,30,30] b) => (float[1,65,30,30] c, float[1,40,60,30] r)
    {
      c = Concat <axis = 1> (a, b)
      r = Concat <axis = 2> (a, a)
    }
  )");
  ASSERT_TRUE(model.ok()) << model.error().message;
  TensorMap in = oneInput("a", {1, 40, 30, 30}, 3);
  in.merge(oneInput("b", {1, 25, 30, 30}, 4));
  const float* a = in.at("a").ptr<float>();
  const float* b = in.at("b").ptr<float>();
  for (int threads : {1, 2}) {
    SessionOptions o;
    o.threads = threads;
    auto s = Session::fromModel(*model, "concat", o);
    ASSERT_TRUE(s.ok()) << s.error().message;
    auto out = (*s)->run(in);
    ASSERT_TRUE(out.ok()) << out.error().message;
    const float* c = out->at("c").ptr<float>();
    const float* r = out->at("r").ptr<float>();
    EXPECT_EQ(std::memcmp(c, a, 40 * 900 * 4), 0) << threads;
    EXPECT_EQ(std::memcmp(c + 40 * 900, b, 25 * 900 * 4), 0) << threads;
    for (int ch = 0; ch < 40; ++ch)
      for (int half = 0; half < 2; ++half)
        EXPECT_EQ(std::memcmp(r + (ch * 2 + half) * 900, a + ch * 900, 900 * 4), 0) << threads << " " << ch;
  }
}

TEST(Session, HookSeesEveryNodeOutputAndTraceIsWritten) {
  auto model = graph::parseModelText(cnnText());
  ASSERT_TRUE(model.ok());
  auto s = Session::fromModel(*model, "cnn", {});
  ASSERT_TRUE(s.ok());
  std::map<std::string, double> zeroFrac;
  RunOptions ro;
  ro.profile = true;
  ro.onNode = [&](const NodeEvent& e) {
    const Tensor* t = e.outputs[0];
    int64_t z = 0;
    for (int64_t i = 0; i < t->size(); ++i) z += t->ptr<float>()[i] == 0.0f;
    zeroFrac[e.info.name] = static_cast<double>(z) / static_cast<double>(t->size());
  };
  auto out = (*s)->run(oneInput("x", {1, 4, 9, 9}, 5), ro);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(zeroFrac.size(), (*s)->nodes().size());
  EXPECT_GT(zeroFrac["Conv_0"], 0.1);  // fused Relu zeroes part of the activation
  EXPECT_EQ(zeroFrac["Gemm_7"], 0.0);
  Json trace = chromeTrace((*s)->lastProfile(), "cnn");
  EXPECT_EQ(trace["traceEvents"].size(), (*s)->nodes().size() + 1);
  EXPECT_EQ(trace["traceEvents"][1]["ph"], "X");
}

class WeightCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = tempDir("cache");
    auto m = graph::parseModelText(cnnText());
    ASSERT_TRUE(m.ok());
    ASSERT_TRUE(graph::saveModel(*m, dir / "cnn.onnx").ok());
    opts.kernels.perNode["Conv_0"] = "winograd";
    auto s = Session::load(dir / "cnn.onnx", opts);
    ASSERT_TRUE(s.ok()) << s.error().message;
    in = oneInput("x", {1, 4, 9, 9}, 9);
    auto r = (*s)->run(in);
    ASSERT_TRUE(r.ok());
    expect = r->at("y");
    ASSERT_TRUE((*s)->writeCache(dir / "cnn.zpwc", true).ok());
    opts.cache = dir / "cnn.zpwc";
  }
  void TearDown() override { fs::remove_all(dir); }

  void flipByte(size_t offset) {
    std::fstream f(dir / "cnn.zpwc", std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(static_cast<std::streamoff>(offset));
    char c;
    f.read(&c, 1);
    c ^= 0x5a;
    f.seekp(static_cast<std::streamoff>(offset));
    f.write(&c, 1);
  }

  std::string cacheBytes() {
    auto b = readFile(dir / "cnn.zpwc");
    EXPECT_TRUE(b.ok());
    return b.ok() ? *b : std::string();
  }
  template <typename T>
  static T field(const std::string& bytes, size_t offset) {
    T v;
    std::memcpy(&v, bytes.data() + offset, sizeof v);
    return v;
  }
  // The header checksum (bytes 36-39: CRC-32C of the header with that field zero),
  // after a test has edited the header.
  static void resealHeader(std::string& bytes) {
    std::memset(bytes.data() + 36, 0, 4);
    const uint32_t crc = crc32c(bytes.data(), 128);
    std::memcpy(bytes.data() + 36, &crc, 4);
  }

  fs::path dir;
  SessionOptions opts;
  TensorMap in;
  Tensor expect;
};

TEST_F(WeightCacheTest, SessionIsBuiltFromTheCacheAloneAndGivesTheSameOutputs) {
  auto s = Session::load(dir / "cnn.onnx", opts);
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_TRUE((*s)->warnings().empty()) << (*s)->warnings().front();
  EXPECT_TRUE((*s)->loadStats().fromCache);
  // Every heavy node comes from the cache: Conv_0 (Winograd), Conv_3 (CSR) and the
  // Gemm, whose kernel reads a copy of its ONNX weights.
  EXPECT_EQ((*s)->loadStats().cacheHits, 3);
  EXPECT_EQ((*s)->loadStats().cacheFallbacks, 0);
  for (const auto& n : (*s)->nodes()) {
    if (n.hasWeights) {
      EXPECT_TRUE(n.fromCache) << n.name;
    }
  }
  EXPECT_EQ((*s)->loadStats().verifyMs, 0.0) << "payloads are checked as their nodes first run";
  auto r = (*s)->run(in);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_GT((*s)->loadStats().verifyMs, 0.0);
  EXPECT_TRUE((*s)->loadStats().fromCache);
  EXPECT_EQ(relErr(r->at("y"), expect), 0.0);
  auto c = WeightCache::open(opts.cache);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ((*c)->version(), kWeightCacheVersion);
  EXPECT_EQ((*c)->entryCount(), 3u);
  ASSERT_NE((*c)->entry("Gemm_7"), nullptr);
  EXPECT_EQ((*c)->entry("Gemm_7")->transform, "none");
  EXPECT_EQ((*c)->entry("Conv_0")->sources,
            (std::vector<std::string>{"W1", "B1", "s", "bb", "mu", "var"}));  // BatchNormalization folded in
  EXPECT_GT((*c)->entry("Conv_3")->zeroFraction, 0.9);
  for (const auto& [off, bytes] : (*c)->payloadExtents("Conv_0")) EXPECT_EQ(off % kWeightCacheAlign, 0u);
  PackedWeights pw;
  std::string why;
  ASSERT_EQ((*c)->lookup("Conv_0", "winograd", 0, &pw, &why), WeightCache::Result::Corrupt)
      << "a wrong source checksum is rejected";
  // A kernel the cache holds no payload for (a schedule made for another cache) fails its check.
  EXPECT_FALSE((*c)->verify("Conv_0", "no-such-kernel", &why));
  EXPECT_EQ(why, "no payload for kernel 'no-such-kernel'");
}

// Version 2 (skeleton checked with SHA-256) is still read: rewrite the version-3
// header as version 2 would have it, and the session is still built from the cache alone.
TEST_F(WeightCacheTest, Version2CachesAreStillReadFromTheCacheAlone) {
  std::string bytes = cacheBytes();
  ASSERT_EQ(field<uint32_t>(bytes, 8), kWeightCacheVersion);
  const uint64_t skOff = field<uint64_t>(bytes, 56), skBytes = field<uint64_t>(bytes, 64);
  const uint32_t version = 2;
  std::memcpy(bytes.data() + 8, &version, 4);
  const Digest d = sha256(std::string_view(bytes.data() + skOff, skBytes));
  std::memcpy(bytes.data() + 72, d.data(), d.size());
  resealHeader(bytes);
  ASSERT_TRUE(writeFileAtomic(dir / "cnn.zpwc", bytes).ok());
  auto c = WeightCache::open(opts.cache);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ((*c)->version(), 2u);
  EXPECT_TRUE((*c)->hasSkeleton());
  auto s = Session::load(dir / "cnn.onnx", opts);
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_TRUE((*s)->loadStats().fromCache);
  auto r = (*s)->run(in);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(relErr(r->at("y"), expect), 0.0);
  // A version-3 check in a version-2 header is a mismatch.
  std::memcpy(bytes.data() + 72, std::string(32, '\0').data(), 32);
  resealHeader(bytes);
  ASSERT_TRUE(writeFileAtomic(dir / "cnn.zpwc", bytes).ok());
  auto bad = WeightCache::open(opts.cache);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("skeleton checksum mismatch"), std::string::npos) << bad.error().message;
}

// A table whose checksums and sizes are consistent but whose numbers are not
// integers in range (a float where a CRC belongs, a negative count) is a
// one-line error naming the field, not a silent conversion.
TEST_F(WeightCacheTest, TableNumbersOutOfRangeAreAnErrorNamingTheField) {
  const std::string original = cacheBytes();
  const uint64_t tableOffset = field<uint64_t>(original, 16), tableBytes = field<uint64_t>(original, 24);
  ASSERT_EQ(tableOffset + tableBytes, original.size()) << "the table ends the file";
  const Json table = Json::parse(original.substr(tableOffset));
  struct Case { std::string field; Json value; std::string want; };
  for (const auto& c : {Case{"source_crc", 1.10297e12, "source_crc"}, Case{"source_crc", 4294967296LL, "source_crc"},
                        Case{"source_crc", 1.5, "source_crc"}, Case{"count", -1, "count"}}) {
    Json t = table;
    if (c.field == "count") t[0]["arrays"][0]["count"] = c.value;
    else t[0][c.field] = c.value;
    const std::string text = t.dump();
    std::string bytes = original.substr(0, tableOffset) + text;
    const uint64_t n = text.size();
    std::memcpy(bytes.data() + 24, &n, 8);
    const uint32_t tcrc = crc32c(text.data(), text.size());
    std::memcpy(bytes.data() + 32, &tcrc, 4);
    resealHeader(bytes);
    ASSERT_TRUE(writeFileAtomic(dir / "cnn.zpwc", bytes).ok());
    auto bad = WeightCache::open(opts.cache);
    ASSERT_FALSE(bad.ok()) << c.field << " = " << c.value.dump();
    EXPECT_NE(bad.error().message.find(c.want), std::string::npos) << bad.error().message;
    EXPECT_EQ(bad.error().message.find('\n'), std::string::npos) << bad.error().message;
  }
  ASSERT_TRUE(writeFileAtomic(dir / "cnn.zpwc", original).ok());
  EXPECT_TRUE(WeightCache::open(opts.cache).ok()) << "the unmodified file still opens";
}

TEST_F(WeightCacheTest, TheModelFileIsNotReadWhenTheCacheMatchesIt) {
  // Same size and mtime, different bytes: only a session that never reads the file survives.
  const fs::path model = dir / "cnn.onnx";
  const auto size = fs::file_size(model);
  const auto mtime = fs::last_write_time(model);
  {
    std::ofstream f(model, std::ios::binary | std::ios::trunc);
    f << std::string(size, 'x');
  }
  fs::last_write_time(model, mtime);
  auto s = Session::load(model, opts);
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_TRUE((*s)->loadStats().fromCache);
  auto r = (*s)->run(in);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(relErr(r->at("y"), expect), 0.0);
}

TEST_F(WeightCacheTest, FromTheCacheAndFromTheModelGiveByteIdenticalOutputs) {
  for (const std::string policy :
       {"default", "im2col", "winograd", "gemm1x1", "sparse", "naive", "blas", "packed1x1", "direct"}) {
    SessionOptions o;
    o.kernels.policy = policy;
    auto full = Session::load(dir / "cnn.onnx", o);
    ASSERT_TRUE(full.ok()) << full.error().message;
    const fs::path cache = dir / (policy + ".zpwc");
    ASSERT_TRUE((*full)->writeCache(cache, true).ok());
    o.cache = cache;
    auto fast = Session::load(dir / "cnn.onnx", o);
    ASSERT_TRUE(fast.ok()) << fast.error().message;
    EXPECT_TRUE((*fast)->loadStats().fromCache) << policy;
    EXPECT_TRUE((*fast)->warnings().empty()) << policy << ": " << (*fast)->warnings().front();
    for (uint64_t seed : {1, 2}) {
      auto x = oneInput("x", {1, 4, 9, 9}, seed);
      auto a = (*full)->run(x);
      auto b = (*fast)->run(x);
      ASSERT_TRUE(a.ok() && b.ok());
      const Tensor& ya = a->at("y");
      const Tensor& yb = b->at("y");
      ASSERT_EQ(ya.bytes(), yb.bytes());
      EXPECT_EQ(std::memcmp(ya.data, yb.data, ya.bytes()), 0) << policy;
    }
  }
}

TEST_F(WeightCacheTest, WritingTheCacheAgainGivesTheSameBytes) {
  auto first = readFile(opts.cache);
  ASSERT_TRUE(first.ok());
  SessionOptions o;
  o.kernels = opts.kernels;
  auto full = Session::load(dir / "cnn.onnx", o);
  ASSERT_TRUE(full.ok());
  ASSERT_TRUE((*full)->writeCache(dir / "again.zpwc", true).ok());
  EXPECT_TRUE(*readFile(dir / "again.zpwc") == *first) << "from the model";
  auto fast = Session::load(dir / "cnn.onnx", opts);
  ASSERT_TRUE(fast.ok());
  ASSERT_TRUE((*fast)->loadStats().fromCache);
  ASSERT_TRUE((*fast)->writeCache(dir / "again2.zpwc", true).ok());
  EXPECT_TRUE(*readFile(dir / "again2.zpwc") == *first) << "from the cache alone";
}

TEST_F(WeightCacheTest, CacheNamingNoModelFileIsReproducibleAndCheckedAgainstTheModel) {
  // Bundles: the same content gives the same bytes, whatever the file's mtime.
  SessionOptions o;
  o.kernels = opts.kernels;
  auto a = Session::load(dir / "cnn.onnx", o);
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE((*a)->writeCache(dir / "a.zpwc").ok());
  fs::copy_file(dir / "cnn.onnx", dir / "copy.onnx");
  fs::last_write_time(dir / "copy.onnx", fs::last_write_time(dir / "cnn.onnx") + std::chrono::seconds(7));
  auto b = Session::load(dir / "copy.onnx", o);
  ASSERT_TRUE(b.ok());
  ASSERT_TRUE((*b)->writeCache(dir / "b.zpwc").ok());
  EXPECT_TRUE(*readFile(dir / "a.zpwc") == *readFile(dir / "b.zpwc"));
  o.cache = dir / "a.zpwc";
  auto s = Session::load(dir / "cnn.onnx", o);
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE((*s)->warnings().empty()) << (*s)->warnings().front();
  EXPECT_FALSE((*s)->loadStats().fromCache);
  EXPECT_EQ((*s)->loadStats().cacheHits, 2);
  auto r = (*s)->run(in);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(relErr(r->at("y"), expect), 0.0);
}

TEST_F(WeightCacheTest, CorruptPayloadFoundInTheFirstRunRebuildsFromTheModel) {
  auto c = WeightCache::open(opts.cache);
  ASSERT_TRUE(c.ok());
  const auto extents = (*c)->payloadExtents("Conv_0");
  ASSERT_EQ(extents.size(), 2u);  // bias, Winograd U
  c->reset();
  flipByte(extents[1].first + extents[1].second / 2);
  auto s = Session::load(dir / "cnn.onnx", opts);
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_TRUE((*s)->loadStats().fromCache) << "payloads are not read at load";
  EXPECT_TRUE((*s)->warnings().empty());
  auto r = (*s)->run(in);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(relErr(r->at("y"), expect), 0.0);
  ASSERT_EQ((*s)->warnings().size(), 1u);
  const std::string& w = (*s)->warnings()[0];
  EXPECT_NE(w.find(opts.cache.string()), std::string::npos) << w;
  EXPECT_NE(w.find("node 'Conv_0'"), std::string::npos) << w;
  EXPECT_NE(w.find("checksum mismatch"), std::string::npos) << w;
  EXPECT_NE(w.find("raw ONNX weights"), std::string::npos) << w;
  EXPECT_FALSE((*s)->loadStats().fromCache) << "rebuilt from the model file";
  EXPECT_EQ((*s)->loadStats().cacheHits, 1);  // Conv_3; the Gemm reads its ONNX weights in place
  EXPECT_EQ((*s)->loadStats().cacheFallbacks, 1);
  EXPECT_FALSE((*s)->nodes()[0].fromCache);
  // Later runs use the rebuilt session as it is.
  auto r2 = (*s)->run(in);
  ASSERT_TRUE(r2.ok());
  EXPECT_EQ(relErr(r2->at("y"), expect), 0.0);
  EXPECT_EQ((*s)->warnings().size(), 1u);
}

TEST_F(WeightCacheTest, CorruptInPlaceCopyIsFoundToo) {
  auto c = WeightCache::open(opts.cache);
  ASSERT_TRUE(c.ok());
  const auto extents = (*c)->payloadExtents("Gemm_7");
  ASSERT_EQ(extents.size(), 2u);  // bias, w
  c->reset();
  flipByte(extents[1].first + 3);
  auto s = Session::load(dir / "cnn.onnx", opts);
  ASSERT_TRUE(s.ok()) << s.error().message;
  auto r = (*s)->run(in);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(relErr(r->at("y"), expect), 0.0);
  ASSERT_EQ((*s)->warnings().size(), 1u);
  EXPECT_NE((*s)->warnings()[0].find("node 'Gemm_7'"), std::string::npos) << (*s)->warnings()[0];
  EXPECT_EQ((*s)->loadStats().cacheFallbacks, 1);
  EXPECT_EQ((*s)->loadStats().cacheHits, 2);
}

TEST_F(WeightCacheTest, ModelNewerThanTheCacheIsLoadedAndTheCacheChecked) {
  const fs::path model = dir / "cnn.onnx";
  fs::last_write_time(model, fs::last_write_time(model) + std::chrono::seconds(5));
  auto s = Session::load(model, opts);
  ASSERT_TRUE(s.ok()) << s.error().message;
  ASSERT_EQ((*s)->warnings().size(), 1u);
  EXPECT_NE((*s)->warnings()[0].find("written for a different version of " + model.string() + ": loading the model"),
            std::string::npos)
      << (*s)->warnings()[0];
  EXPECT_FALSE((*s)->loadStats().fromCache);
  EXPECT_EQ((*s)->loadStats().cacheHits, 2);  // the transformed entries, checked against the model's weights
  auto r = (*s)->run(in);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(relErr(r->at("y"), expect), 0.0);

  // A changed model with a flipped payload: the full path checks payloads at load.
  auto c = WeightCache::open(opts.cache);
  ASSERT_TRUE(c.ok());
  const auto extents = (*c)->payloadExtents("Conv_3");
  c->reset();
  flipByte(extents.back().first + 1);
  auto s2 = Session::load(model, opts);
  ASSERT_TRUE(s2.ok());
  ASSERT_EQ((*s2)->warnings().size(), 2u);
  EXPECT_NE((*s2)->warnings()[1].find("node 'Conv_3'"), std::string::npos) << (*s2)->warnings()[1];
  EXPECT_EQ((*s2)->loadStats().cacheFallbacks, 1);
  auto r2 = (*s2)->run(in);
  ASSERT_TRUE(r2.ok());
  EXPECT_EQ(relErr(r2->at("y"), expect), 0.0);
}

TEST_F(WeightCacheTest, FlippedSkeletonOrHeaderByteRejectsTheFile) {
  const size_t skeletonAt = 128;  // right after the header
  for (size_t offset : {skeletonAt + 20, size_t{44}}) {  // a skeleton byte; the model size in the header
    flipByte(offset);
    auto s = Session::load(dir / "cnn.onnx", opts);
    ASSERT_TRUE(s.ok()) << s.error().message;
    ASSERT_EQ((*s)->warnings().size(), 2u) << offset;  // Conv_0 and Conv_3 fall back
    EXPECT_NE((*s)->warnings()[0].find("checksum mismatch"), std::string::npos) << (*s)->warnings()[0];
    EXPECT_NE((*s)->warnings()[0].find("uses raw ONNX weights"), std::string::npos) << (*s)->warnings()[0];
    EXPECT_EQ((*s)->loadStats().cacheFallbacks, 2);
    auto r = (*s)->run(in);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(relErr(r->at("y"), expect), 0.0);
    flipByte(offset);  // restore
  }
}

TEST_F(WeightCacheTest, WrongVersionRejectsTheFileAndEveryNodeFallsBack) {
  flipByte(8);  // low byte of the version
  auto s = Session::load(dir / "cnn.onnx", opts);
  ASSERT_TRUE(s.ok()) << s.error().message;
  ASSERT_EQ((*s)->warnings().size(), 2u);
  EXPECT_NE((*s)->warnings()[0].find("version"), std::string::npos) << (*s)->warnings()[0];
  EXPECT_NE((*s)->warnings()[0].find("node 'Conv_0'"), std::string::npos);
  auto r = (*s)->run(in);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(relErr(r->at("y"), expect), 0.0);
}

// Conv_0's weights are small enough to stay in the skeleton: another kernel for it
// transforms them there, and the other nodes still come from the cache. (Weights
// the skeleton left to the cache make the session load the model: cold_run_test.)
TEST_F(WeightCacheTest, ADifferentKernelChoiceTransformsTheWeightsTheSkeletonHolds) {
  opts.kernels.perNode["Conv_0"] = "im2col";
  auto s = Session::load(dir / "cnn.onnx", opts);
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE((*s)->warnings().empty()) << (*s)->warnings()[0];
  EXPECT_TRUE((*s)->loadStats().fromCache);
  EXPECT_EQ((*s)->loadStats().cacheHits, 2);
  EXPECT_FALSE((*s)->nodes()[0].fromCache);
  EXPECT_EQ((*s)->nodes()[0].kernel, "im2col");
  auto r = (*s)->run(in);
  ASSERT_TRUE(r.ok());
  EXPECT_LE(relErr(r->at("y"), expect), 1e-5);
}

TEST_F(WeightCacheTest, TunePolicyLoadsTheModel) {
  opts.kernels.perNode.clear();
  opts.kernels.policy = "tune";
  auto s = Session::load(dir / "cnn.onnx", opts);
  ASSERT_TRUE(s.ok());
  ASSERT_FALSE((*s)->warnings().empty());
  EXPECT_NE((*s)->warnings()[0].find("tune policy"), std::string::npos) << (*s)->warnings()[0];
  EXPECT_FALSE((*s)->loadStats().fromCache);
}

// Weights above 4 KiB read only by heavy nodes are left out of the skeleton; M is
// also read by a Transpose that constant folding runs, so it stays.
// The cold-start library: a cold plan-run with BLIS from the cache alone reports
// BLIS and its start-up, and saves the same outputs (within rounding) as oneDNN.
TEST_F(WeightCacheTest, RunModelColdWithBlisFromTheCacheMatchesOneDnn) {
  std::map<std::string, Tensor> saved;
  for (const char* gemm : {"onednn", "blis"}) {
    drivers::RunModelOptions o;
    o.model = dir / "cnn.onnx";
    o.cache = opts.cache;
    o.kernels = "winograd";
    o.gemm = gemm;
    o.cold = true;
    o.repeat = 2;
    o.saveOutputs = dir / gemm;
    o.trace = dir / (std::string(gemm) + ".trace.json");
    auto r = drivers::runModel(o);
    ASSERT_TRUE(r.ok()) << r.error().message;
    // The trace is of the cold run: every executed node once, under the cold run's name.
    auto trace = readFile(o.trace);
    ASSERT_TRUE(trace.ok());
    Json events = Json::parse(*trace).at("traceEvents");
    EXPECT_NE(events.at(0).at("args").at("name").get<std::string>().find("(cold run)"), std::string::npos);
    std::set<std::string> traced;
    for (const Json& e : events)
      if (e.at("ph") == "X") traced.insert(e.at("name").get<std::string>());
    ASSERT_FALSE(r->report.at("heavy_nodes").empty());
    for (const Json& n : r->report.at("heavy_nodes")) EXPECT_TRUE(traced.count(n.at("name").get<std::string>())) << n;
    EXPECT_TRUE(r->report.at("cold").at("from_cache").get<bool>()) << gemm;
    EXPECT_EQ(r->report.at("gemm_library").get<std::string>().rfind(std::string(gemm) == "blis" ? "BLIS" : "oneDNN", 0),
              0u);
    auto y = readNpy(dir / gemm / "y.npy");
    ASSERT_TRUE(y.ok()) << y.error().message;
    saved[gemm] = *y;
  }
  EXPECT_LE(relErr(saved.at("blis"), saved.at("onednn")), 1e-5);
  drivers::RunModelOptions bad;
  bad.model = dir / "cnn.onnx";
  bad.gemm = "openblas";
  auto r = drivers::runModel(bad);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("--gemm"), std::string::npos) << r.error().message;
}

TEST(WeightCacheSkeleton, LargeWeightsOfHeavyNodesAreLeftToTheCache) {
  const std::string text = fmt::format(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,16,8,8] x) => (float[1,100] y)
    <float[32,16,3,3] W1 = {{{}}}, float[32] B1 = {{{}}},
     float[32] s = {{{}}}, float[32] bb = {{{}}}, float[32] mu = {{{}}}, float[32] var = {{{}}},
     float[48,32,1,1] W2 = {{{}}}, float[48,48] M = {{{}}}, float[100,48] Wg = {{{}}}, float[100] Bg = {{{}}}>
    {{
      c1 = Conv <pads=[1,1,1,1]> (x, W1, B1)
      n1 = BatchNormalization (c1, s, bb, mu, var)
      r1 = Relu (n1)
      c2 = Conv (r1, W2)
      p = GlobalAveragePool (c2)
      f = Flatten (p)
      q = Transpose (M)
      h = MatMul (f, q)
      h2 = MatMul (h, M)
      y = Gemm <transB=1> (h2, Wg, Bg)
    }}
  )",
                                       floats(4608, 11), floats(32, 12), positive(32, 13), floats(32, 14),
                                       floats(32, 15), positive(32, 16), floats(1536, 17), floats(2304, 18),
                                       floats(4800, 19), floats(100, 20));
  auto m = graph::parseModelText(text);
  ASSERT_TRUE(m.ok()) << m.error().message;
  const fs::path dir = tempDir("skeleton");
  ASSERT_TRUE(graph::saveModel(*m, dir / "m.onnx").ok());
  for (const std::string policy : {"default", "im2col", "winograd", "sparse", "naive"}) {
    SessionOptions o;
    o.kernels.policy = policy;
    auto full = Session::load(dir / "m.onnx", o);
    ASSERT_TRUE(full.ok()) << full.error().message;
    ASSERT_TRUE((*full)->writeCache(dir / "m.zpwc", true).ok());
    auto c = WeightCache::open(dir / "m.zpwc");
    ASSERT_TRUE(c.ok()) << c.error().message;
    auto sk = graph::parseModelBytes((*c)->skeleton(), "skeleton");
    ASSERT_TRUE(sk.ok());
    std::map<std::string, bool> hasData;
    for (const auto& t : sk->graph().initializer()) hasData[t.name()] = t.has_raw_data() || t.float_data_size() > 0;
    EXPECT_FALSE(hasData.at("W1")) << policy;
    EXPECT_FALSE(hasData.at("W2")) << policy;
    EXPECT_FALSE(hasData.at("Wg")) << policy;
    EXPECT_TRUE(hasData.at("M")) << policy;
    EXPECT_TRUE(hasData.at("B1") && hasData.at("var") && hasData.at("Bg")) << policy;
    EXPECT_GT(sk->graph().value_info_size(), 0) << "shapes inferred when the cache was written";
    c->reset();
    o.cache = dir / "m.zpwc";
    auto fast = Session::load(dir / "m.onnx", o);
    ASSERT_TRUE(fast.ok()) << fast.error().message;
    EXPECT_TRUE((*fast)->loadStats().fromCache) << policy;
    EXPECT_TRUE((*fast)->warnings().empty()) << policy << ": " << (*fast)->warnings().front();
    EXPECT_LT((*fast)->weightBytes(), (*full)->weightBytes() + 1);
    auto x = oneInput("x", {1, 16, 8, 8}, 4);
    auto a = (*full)->run(x);
    auto b = (*fast)->run(x);
    ASSERT_TRUE(a.ok() && b.ok()) << (a.ok() ? b.error().message : a.error().message);
    ASSERT_EQ(a->at("y").bytes(), b->at("y").bytes());
    EXPECT_EQ(std::memcmp(a->at("y").data, b->at("y").data, a->at("y").bytes()), 0) << policy;
    // A session from the skeleton writes the same file again.
    ASSERT_TRUE((*fast)->writeCache(dir / "again.zpwc", true).ok());
    EXPECT_TRUE(*readFile(dir / "again.zpwc") == *readFile(dir / "m.zpwc")) << policy;
  }
  // The skeleton alone is not a model the runtime accepts.
  auto c = WeightCache::open(dir / "m.zpwc");
  ASSERT_TRUE(c.ok());
  auto sk = graph::parseModelBytes((*c)->skeleton(), "skeleton");
  ASSERT_TRUE(sk.ok());
  auto bad = Session::fromModel(*sk, "skeleton", {});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("has no data"), std::string::npos) << bad.error().message;
  fs::remove_all(dir);
}

TEST(Crc32c, MatchesTheBitwiseDefinitionAtEveryLength) {
  auto ref = [](const uint8_t* p, size_t n, uint32_t seed) {
    uint32_t c = ~seed;
    for (size_t i = 0; i < n; ++i) {
      c ^= p[i];
      for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    }
    return ~c;
  };
  std::mt19937 rng(3);
  std::vector<uint8_t> buf(300000);
  for (auto& b : buf) b = static_cast<uint8_t>(rng());
  EXPECT_EQ(crc32c("123456789", 9), 0xE3069283u);
  for (size_t n : {size_t{0}, size_t{1}, size_t{7}, size_t{4095}, size_t{4096}, size_t{4103}, size_t{24007},
                   size_t{65536}, size_t{299995}})
    for (uint32_t seed : {0u, 0x1234567u}) EXPECT_EQ(crc32c(buf.data() + 5, n, seed), ref(buf.data() + 5, n, seed)) << n;
}

TEST(Npy, RoundTripAndErrorsNameTheFile) {
  fs::path d = tempDir("npy");
  Tensor t = Tensor::fromFloats({1.5f, -2.0f, 3.25f, 0.0f, 7.0f, 8.0f}, {2, 3});
  ASSERT_TRUE(writeNpy(d / "a.npy", t).ok());
  auto back = readNpy(d / "a.npy");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->shape, t.shape);
  EXPECT_EQ(back->toF32(), t.toF32());
  std::ofstream(d / "bad.npy") << "nope";
  auto bad = readNpy(d / "bad.npy");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message.find((d / "bad.npy").string()), 0u);
  fs::remove_all(d);
}

TEST(KernelPolicyArgument, IsAPolicyNameOrAFile) {
  EXPECT_TRUE(parseKernelPolicy("winograd").ok());
  auto bad = parseKernelPolicy("fastest");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("--kernels"), std::string::npos);
  fs::path d = tempDir("kernels");
  std::ofstream(d / "k.json") << R"({"policy": "sparse", "nodes": {"conv1": "winograd"}})";
  auto p = parseKernelPolicy((d / "k.json").string());
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->policy, "sparse");
  EXPECT_EQ(p->perNode.at("conv1"), "winograd");
  fs::remove_all(d);
}

}  // namespace
}  // namespace zp::runtime
