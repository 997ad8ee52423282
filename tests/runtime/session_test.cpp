#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include "libplan/graph/model_io.h"
#include "libplan/runtime/measure.h"
#include "libplan/runtime/npy.h"
#include "libplan/runtime/session.h"
#include "libplan/runtime/weight_cache.h"

namespace zp::runtime {
namespace {
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

double relErr(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.shape, b.shape);
  double m = 0, r = 1e-12;
  for (int64_t i = 0; i < a.size(); ++i) {
    m = std::max(m, static_cast<double>(std::fabs(a.ptr<float>()[i] - b.ptr<float>()[i])));
    r = std::max(r, static_cast<double>(std::fabs(b.ptr<float>()[i])));
  }
  return m / r;
}

fs::path tempDir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("zp_runtime_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
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
  for (const auto& policy : policyNames()) {
    SessionOptions o;
    o.kernels.policy = policy;
    auto s = Session::fromModel(*model, "cnn", o);
    ASSERT_TRUE(s.ok()) << s.error().message;
    EXPECT_EQ((*s)->nodes().size(), 6u) << "BN and Relu fused into the first Conv";
    for (int rep = 0; rep < 2; ++rep) {  // first run plans memory if needed, second uses the arena
      auto got = (*s)->run(in);
      ASSERT_TRUE(got.ok()) << got.error().message;
      EXPECT_LE(relErr(got->at("y"), expect->at("y")), 1e-5) << policy;
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
  EXPECT_EQ(k["Conv_0"], "im2col");  // 4 channels: too narrow for Winograd
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
  EXPECT_EQ(k["Conv_1"], "gemm1x1");  // 1x1 with 2x2 outputs: too small for sparse
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
    ASSERT_TRUE((*s)->writeCache(dir / "cnn.zpwc").ok());
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

  fs::path dir;
  SessionOptions opts;
  TensorMap in;
  Tensor expect;
};

TEST_F(WeightCacheTest, CachedWeightsAreMappedAndGiveTheSameOutputs) {
  auto s = Session::load(dir / "cnn.onnx", opts);
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_TRUE((*s)->warnings().empty());
  // Conv_0 (Winograd) and Conv_3 (CSR) are cached; the Gemm reads its ONNX weights in place.
  EXPECT_EQ((*s)->loadStats().cacheHits, 2);
  for (const auto& n : (*s)->nodes())
    if (n.hasWeights) EXPECT_EQ(n.fromCache, n.transform != "none") << n.name;
  auto r = (*s)->run(in);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(relErr(r->at("y"), expect), 0.0);
  // Payloads are 64-byte aligned in the file.
  auto c = WeightCache::open(opts.cache);
  ASSERT_TRUE(c.ok());
  PackedWeights pw;
  std::string why;
  ASSERT_EQ((*c)->lookup("Conv_0", "winograd", (*s)->nodes()[0].hasWeights ? 0 : 0, &pw, &why), WeightCache::Result::Corrupt)
      << "a wrong source checksum is rejected";
}

TEST_F(WeightCacheTest, FlippedPayloadByteFallsBackForThatNodeWithAWarning) {
  // The Winograd payload of Conv_0 starts at the second 64-byte aligned array (after its bias).
  flipByte(64 + 64 + 10);
  auto s = Session::load(dir / "cnn.onnx", opts);
  ASSERT_TRUE(s.ok()) << s.error().message;
  ASSERT_EQ((*s)->warnings().size(), 1u);
  EXPECT_NE((*s)->warnings()[0].find("node 'Conv_0'"), std::string::npos) << (*s)->warnings()[0];
  EXPECT_NE((*s)->warnings()[0].find("checksum"), std::string::npos);
  EXPECT_EQ((*s)->loadStats().cacheHits, 1);
  EXPECT_EQ((*s)->loadStats().cacheFallbacks, 1);
  EXPECT_FALSE((*s)->nodes()[0].fromCache);
  auto r = (*s)->run(in);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(relErr(r->at("y"), expect), 0.0);
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

TEST_F(WeightCacheTest, ADifferentKernelChoiceIsACacheMissNotAnError) {
  opts.kernels.perNode["Conv_0"] = "im2col";
  auto s = Session::load(dir / "cnn.onnx", opts);
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE((*s)->warnings().empty());
  EXPECT_EQ((*s)->loadStats().cacheHits, 1);
  EXPECT_FALSE((*s)->nodes()[0].fromCache);
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

TEST(PlanRun, KernelsArgumentIsAPolicyOrAFile) {
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
