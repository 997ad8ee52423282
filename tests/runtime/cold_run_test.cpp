// Sessions following a cold schedule: whatever kernels, caching, cores and GEMM
// libraries the schedule mixes, the cold run and the runs after it (which switch
// to the warm kernels) give the outputs of a plain session; the cache holds
// payloads only for the nodes the schedule caches; idle threads steal work.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include "tests/common/onnx_text.h"
#include "libplan/graph/model_io.h"
#include "libplan/runtime/cache/crc32c.h"
#include "libplan/runtime/cache/model_extents.h"
#include "libplan/runtime/cache/skeleton.h"
#include "libplan/runtime/cache/weight_cache.h"
#include "libplan/runtime/measure.h"
#include "libplan/runtime/session.h"
#include "libplan/util/file.h"
#include "tests/common/temp_dir.h"
#include "tests/runtime/test_util.h"

namespace zp::runtime {
namespace {

namespace fs = std::filesystem;

using zp::testing::randomValues;

// Conv 3x3 (+BN+Relu) -> Conv 1x1 -> depthwise Conv 3x3 -> GlobalAveragePool -> Flatten -> Gemm:
// four heavy nodes with several kernels each; the first three weights are over 4 KiB.
std::string modelText() {
  return fmt::format(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,16,10,10] x) => (float[1,40] y)
    <float[32,16,3,3] W1 = {{{}}}, float[32] B1 = {{{}}},
     float[32] s = {{{}}}, float[32] bb = {{{}}}, float[32] mu = {{{}}}, float[32] var = {{{}}},
     float[48,32,1,1] W2 = {{{}}}, float[48,1,3,3] Wd = {{{}}}, float[40,48] Wg = {{{}}}, float[40] Bg = {{{}}}>
    {{
      c1 = Conv <pads=[1,1,1,1]> (x, W1, B1)
      n1 = BatchNormalization <epsilon=0.001> (c1, s, bb, mu, var)
      r1 = Relu (n1)
      c2 = Conv (r1, W2)
      c3 = Conv <pads=[1,1,1,1], group=48> (c2, Wd)
      p = GlobalAveragePool (c3)
      f = Flatten (p)
      y = Gemm <transB=1> (f, Wg, Bg)
    }}
  )",
                     randomValues(32 * 16 * 9, 1), randomValues(32, 2), randomValues(32, 3, 0.5f, 1.5f), randomValues(32, 4), randomValues(32, 5),
                     randomValues(32, 6, 0.5f, 1.5f), randomValues(48 * 32, 7), randomValues(48 * 9, 8), randomValues(40 * 48, 9), randomValues(40, 10));
}

// The kernels each heavy node can run, and whether they multiply through a GEMM library.
const std::map<std::string, std::vector<std::string>> kKernels = {
    {"Conv_0", {"im2col", "winograd", "sparse"}},
    {"Conv_3", {"gemm1x1", "im2col", "packed1x1", "sparse"}},
    {"Conv_4", {"depthwise", "im2col", "sparse"}},
    {"Gemm_7", {"blas", "sparse"}}};
bool usesGemm(const std::string& k) { return k == "im2col" || k == "gemm1x1" || k == "winograd" || k == "blas"; }

class ColdRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = zp::testing::uniqueTempDir("coldrun");
    auto m = graph::parseModelText(modelText());
    ASSERT_TRUE(m.ok()) << m.error().message;
    ASSERT_TRUE(graph::saveModel(*m, model()).ok());
    auto s = Session::load(model(), {});
    ASSERT_TRUE(s.ok()) << s.error().message;
    in = randomInputs(**s, 5);
    auto r = (*s)->run(in);
    ASSERT_TRUE(r.ok());
    expect = r->at("y");
    for (const auto& n : (*s)->nodes()) steps.push_back(n.name);
    ASSERT_EQ(steps.size(), 6u);
  }
  void TearDown() override { fs::remove_all(dir); }
  fs::path model() const { return dir / "m.onnx"; }
  fs::path cache() const { return dir / "m.zwc"; }

  // A random schedule: per heavy node a kernel, library, weights and core, and a warm kernel.
  ColdSchedule randomSchedule(std::mt19937& rng) const {
    ColdSchedule sc;
    sc.cores = 1 + static_cast<int>(rng() % 3);
    sc.pipelined = rng() % 4 != 0;
    auto lib = [&] { return rng() % 2 ? GemmLibrary::Blis : GemmLibrary::OneDnn; };
    for (const auto& name : steps) {
      ColdStep s;
      s.node = name;
      auto it = kKernels.find(name);
      if (it != kKernels.end()) {
        const auto& ks = it->second;
        s.kernel = ks[rng() % ks.size()];
        if (usesGemm(s.kernel)) s.gemm = lib();
        s.weights = rng() % 2 ? ColdWeights::Cache : ColdWeights::Transform;
        if (s.weights == ColdWeights::Transform) s.transformCore = static_cast<int>(rng() % sc.cores);
        s.warmKernel = ks[rng() % ks.size()];
        if (usesGemm(s.warmKernel)) s.warmGemm = lib();
        if (s.switchesKernel()) {
          s.warmWeights = rng() % 2 ? ColdWeights::Cache : ColdWeights::Transform;
          s.warmCore = static_cast<int>(rng() % sc.cores);
        }
        if (s.gemm && std::find(sc.startups.begin(), sc.startups.end(), *s.gemm) == sc.startups.end() && rng() % 2)
          sc.startups.push_back(*s.gemm);
      }
      sc.steps.push_back(s);
    }
    return sc;
  }

  Expected<std::unique_ptr<Session>> loadCold(const ColdSchedule& sc) {
    SessionOptions o;
    o.cache = cache();
    o.coldSchedule = std::make_shared<ColdSchedule>(sc);
    return Session::load(model(), o);
  }

  fs::path dir;
  TensorMap in;
  Tensor expect;
  std::vector<std::string> steps;
};

TEST_F(ColdRunTest, OutputsEqualAPlainSessionWhateverTheScheduleMixes) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 24; ++trial) {
    const ColdSchedule sc = randomSchedule(rng);
    SCOPED_TRACE(fmt::format("trial {}: {} cores, {}", trial, sc.cores, sc.pipelined ? "pipelined" : "serial"));
    ASSERT_TRUE(Session::writeColdCache(model(), sc, {}, cache(), true).ok());
    auto s = loadCold(sc);
    ASSERT_TRUE(s.ok()) << s.error().message;
    auto cold = (*s)->run(in);
    ASSERT_TRUE(cold.ok()) << cold.error().message;
    EXPECT_LE(test_util::relErr(cold->at("y"), expect, 1.0), 1e-5);
    EXPECT_TRUE((*s)->warnings().empty()) << (*s)->warnings().front();
    for (size_t i = 0; i < sc.steps.size(); ++i) EXPECT_EQ((*s)->nodes()[i].kernel, sc.steps[i].kernel);
    auto second = (*s)->run(in);  // some nodes may have switched already
    ASSERT_TRUE(second.ok()) << second.error().message;
    EXPECT_LE(test_util::relErr(second->at("y"), cold->at("y"), 1.0), 1e-5);
    (*s)->waitForWarmSwitch();
    auto warm = (*s)->run(in);
    ASSERT_TRUE(warm.ok()) << warm.error().message;
    EXPECT_LE(test_util::relErr(warm->at("y"), cold->at("y"), 1.0), 1e-5);
    for (size_t i = 0; i < sc.steps.size(); ++i)
      if (!sc.steps[i].kernel.empty()) {
        EXPECT_EQ((*s)->nodes()[i].kernel, sc.steps[i].warmKernel) << sc.steps[i].node;
      }
    auto report = (*s)->coldReport();
    ASSERT_TRUE(report);
    for (size_t t = 0; t < report->tasks.size(); ++t) {
      const ColdTaskRecord& r = report->records[t];
      EXPECT_TRUE(r.done && r.error.empty()) << coldTaskKindName(report->tasks[t].kind) << " " << r.error;
      for (int d : report->tasks[t].deps) EXPECT_LE(report->records[static_cast<size_t>(d)].endMs, r.startMs);
    }
    for (size_t i = 0; i + 1 < sc.steps.size(); ++i)
      EXPECT_LE(report->executeMs[i].second, report->executeMs[i + 1].first);
  }
}

TEST_F(ColdRunTest, TheCacheHoldsOnlyWhatTheScheduleCaches) {
  ColdSchedule sc;
  sc.cores = 2;
  for (const auto& name : steps) {
    ColdStep s;
    s.node = name;
    if (name == "Conv_0") s = {name, "winograd", GemmLibrary::Blis, ColdWeights::Transform, 1, "winograd", {}, {}, -1};
    if (name == "Conv_3")
      s = {name, "sparse", {}, ColdWeights::Cache, -1, "gemm1x1", GemmLibrary::OneDnn, ColdWeights::Cache, 1};
    if (name == "Conv_4") s = {name, "depthwise", {}, ColdWeights::Transform, 0, "depthwise", {}, {}, -1};
    if (name == "Gemm_7") s = {name, "blas", GemmLibrary::Blis, ColdWeights::Cache, -1, "blas", GemmLibrary::OneDnn, {}, -1};
    sc.steps.push_back(s);
  }
  ASSERT_TRUE(Session::writeColdCache(model(), sc, {}, cache(), true).ok());
  auto c = WeightCache::open(cache());
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ((*c)->version(), kWeightCacheVersion);
  EXPECT_TRUE((*c)->kernels("Conv_0").empty()) << "transformed at load: read from the model file";
  EXPECT_TRUE((*c)->kernels("Conv_4").empty());
  EXPECT_EQ((*c)->kernels("Conv_3"), (std::vector<std::string>{"sparse", "gemm1x1"})) << "cold, then warm";
  EXPECT_EQ((*c)->kernels("Gemm_7"), (std::vector<std::string>{"blas"}));
  // The transformed node's large weight points at its bytes in the model file.
  auto skeleton = graph::parseModelBytes((*c)->skeleton(), "skeleton");
  ASSERT_TRUE(skeleton.ok());
  auto modelBytes = readFile(model());
  ASSERT_TRUE(modelBytes.ok());
  int refs = 0;
  for (const auto& init : skeleton->graph().initializer()) {
    auto ref = modelFileRef(init);
    ASSERT_TRUE(ref.ok()) << ref.error().message;
    if (!*ref) continue;
    ++refs;
    EXPECT_EQ(init.name(), "W1");
    EXPECT_EQ((*ref)->bytes, 32u * 16 * 9 * 4);
    EXPECT_EQ(crc32c(modelBytes->data() + (*ref)->offset, (*ref)->bytes), (*ref)->crc);
  }
  EXPECT_EQ(refs, 1);
  auto s = loadCold(sc);
  ASSERT_TRUE(s.ok()) << s.error().message;
  auto r = (*s)->run(in);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_LE(test_util::relErr(r->at("y"), expect, 1.0), 1e-5);
}

TEST_F(ColdRunTest, AnIdleExecutorStealsTheTransformsOfABusyCore) {
  ColdSchedule sc;
  sc.cores = 2;
  sc.workerDelayMs = 2000;  // core 1 is busy elsewhere for longer than the whole cold run
  for (const auto& name : steps) {
    ColdStep s;
    s.node = name;
    auto it = kKernels.find(name);
    if (it != kKernels.end())
      s = {name, it->second.back(), {}, ColdWeights::Transform, 1, it->second.back(), {}, {}, -1};
    sc.steps.push_back(s);
  }
  ASSERT_TRUE(Session::writeColdCache(model(), sc, {}, cache(), true).ok());
  auto s = loadCold(sc);
  ASSERT_TRUE(s.ok()) << s.error().message;
  const auto t0 = SteadyClock::now();
  auto r = (*s)->run(in);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_LT(msSince(t0), 1500.0) << "the run did not wait for the busy core";
  EXPECT_LE(test_util::relErr(r->at("y"), expect, 1.0), 1e-5);
  auto report = (*s)->coldReport();
  ASSERT_TRUE(report);
  int transforms = 0;
  for (size_t t = 0; t < report->tasks.size(); ++t) {
    if (report->tasks[t].kind != ColdTask::Kind::Transform) continue;
    ++transforms;
    EXPECT_EQ(report->records[t].core, 0);
    EXPECT_TRUE(report->records[t].stolen);
  }
  EXPECT_EQ(transforms, 4);
  EXPECT_GE(report->steals, 4);
}

TEST_F(ColdRunTest, AChangedModelFileIsFoundAndTheSessionRebuildsFromIt) {
  ColdSchedule sc;
  sc.cores = 2;
  for (const auto& name : steps) {
    ColdStep s;
    s.node = name;
    if (name == "Conv_0") s = {name, "im2col", GemmLibrary::OneDnn, ColdWeights::Transform, 1, "im2col", {}, {}, -1};
    if (name == "Conv_3") s = {name, "gemm1x1", GemmLibrary::OneDnn, ColdWeights::Cache, -1, "gemm1x1", {}, {}, -1};
    if (name == "Conv_4") s = {name, "depthwise", {}, ColdWeights::Cache, -1, "depthwise", {}, {}, -1};
    if (name == "Gemm_7") s = {name, "blas", GemmLibrary::OneDnn, ColdWeights::Cache, -1, "blas", {}, {}, -1};
    sc.steps.push_back(s);
  }
  // A cache naming no model file (a bundle's), vouched for by the caller.
  ASSERT_TRUE(Session::writeColdCache(model(), sc, {}, cache(), false).ok());
  auto c = WeightCache::open(cache());
  ASSERT_TRUE(c.ok());
  auto skeleton = graph::parseModelBytes((*c)->skeleton(), "skeleton");
  ASSERT_TRUE(skeleton.ok());
  uint64_t at = 0;
  for (const auto& init : skeleton->graph().initializer())
    if (auto ref = modelFileRef(init); ref.ok() && *ref) at = (*ref)->offset + 8;
  ASSERT_GT(at, 0u);
  {
    std::fstream f(model(), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(at));
    const float changed = 3.5f;
    f.write(reinterpret_cast<const char*>(&changed), sizeof changed);
  }
  auto changedRef = Session::load(model(), {});
  ASSERT_TRUE(changedRef.ok());
  auto want = (*changedRef)->run(in);
  ASSERT_TRUE(want.ok());
  SessionOptions o;
  o.cache = cache();
  o.coldSchedule = std::make_shared<ColdSchedule>(sc);
  EXPECT_FALSE(Session::load(model(), o).ok()) << "a cache naming no model file is refused unless vouched for";
  o.cacheIsForModel = true;
  auto s = Session::load(model(), o);
  ASSERT_TRUE(s.ok()) << s.error().message;
  auto r = (*s)->run(in);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_LE(test_util::relErr(r->at("y"), want->at("y"), 1.0), 1e-5);
  ASSERT_FALSE((*s)->warnings().empty());
  EXPECT_NE((*s)->warnings().front().find("initializer 'W1'"), std::string::npos) << (*s)->warnings().front();
}

TEST_F(ColdRunTest, APlanOfAnotherModelIsRefusedNamingTheNode) {
  std::mt19937 rng(1);
  ColdSchedule sc = randomSchedule(rng);
  auto s = loadCold(sc);
  ASSERT_FALSE(s.ok()) << "no cache written for it";
  ASSERT_TRUE(Session::writeColdCache(model(), sc, {}, cache(), true).ok());
  sc.steps[1].node = "Conv_9";
  s = loadCold(sc);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("node 'Conv_3' is not in the cold plan"), std::string::npos) << s.error().message;
  sc.steps[1].node = "Conv_3";
  std::swap(sc.steps[4], sc.steps[5]);
  s = loadCold(sc);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("step 4 runs 'Flatten_6', the cold plan 'Gemm_7'"), std::string::npos)
      << s.error().message;
}

// A cache of other kernels: a node whose weights the skeleton left to the cache
// cannot be built from it alone, so the session loads the model and says why.
TEST_F(ColdRunTest, AKernelTheCacheLacksForStrippedWeightsLoadsTheModel) {
  auto s = Session::load(model(), {});
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE((*s)->writeCache(cache(), true).ok());
  SessionOptions o;
  o.cache = cache();
  o.kernels.perNode["Conv_0"] = (*s)->nodes()[0].kernel == "winograd" ? "im2col" : "winograd";
  auto t = Session::load(model(), o);
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_FALSE((*t)->loadStats().fromCache);
  ASSERT_FALSE((*t)->warnings().empty());
  EXPECT_NE((*t)->warnings()[0].find("for this node, not " + o.kernels.perNode["Conv_0"]), std::string::npos)
      << (*t)->warnings()[0];
  auto r = (*t)->run(in);
  ASSERT_TRUE(r.ok());
  EXPECT_LE(test_util::relErr(r->at("y"), expect, 1.0), 1e-5);
}

TEST(ModelExtents, EveryInitializerStoredAsItsBytesIsFound) {
  auto m = graph::parseModelText(modelText());
  ASSERT_TRUE(m.ok());
  // One initializer as raw_data, the others as packed float_data.
  for (auto& init : *m->mutable_graph()->mutable_initializer())
    if (init.name() == "W2") {
      std::string raw(reinterpret_cast<const char*>(init.float_data().data()), init.float_data_size() * sizeof(float));
      init.clear_float_data();
      init.set_raw_data(raw);
    }
  const std::string bytes = graph::serializeModel(*m);
  auto extents = initializerExtents(bytes, "m");
  ASSERT_TRUE(extents.ok()) << extents.error().message;
  EXPECT_EQ(extents->size(), static_cast<size_t>(m->graph().initializer_size()));
  for (const auto& init : m->graph().initializer()) {
    auto it = extents->find(init.name());
    ASSERT_NE(it, extents->end()) << init.name();
    const std::string& want = init.name() == "W2" ? init.raw_data()
                                                  : std::string(reinterpret_cast<const char*>(init.float_data().data()),
                                                                init.float_data_size() * sizeof(float));
    EXPECT_EQ(bytes.substr(it->second.offset, it->second.bytes), want) << init.name();
  }
  EXPECT_FALSE(initializerExtents(bytes.substr(0, bytes.size() / 2), "cut").ok());
}

TEST(ModelExtents, ANameTwoInitializersShareHasNoExtent) {
  // The second "W2" holds int64 data (not an extent of its own); the parser
  // keeps both, so the first one's bytes are not "W2"'s data either.
  auto m = graph::parseModelText(modelText());
  ASSERT_TRUE(m.ok());
  auto* twin = m->mutable_graph()->add_initializer();
  twin->set_name("W2");
  twin->set_data_type(onnx::TensorProto::INT64);
  twin->add_dims(1);
  twin->add_int64_data(7);
  auto extents = initializerExtents(graph::serializeModel(*m), "m");
  ASSERT_TRUE(extents.ok()) << extents.error().message;
  EXPECT_EQ(extents->count("W2"), 0u);
  EXPECT_EQ(extents->size(), static_cast<size_t>(m->graph().initializer_size() - 2));
}

TEST(ModelFileRef, MalformedKeysAreAnErrorNamingTheInitializer) {
  onnx::TensorProto t;
  t.set_name("w");
  t.set_data_location(onnx::TensorProto::EXTERNAL);
  auto* kv = t.add_external_data();
  kv->set_key("location");
  kv->set_value(kSkeletonModelFileLocation);
  auto r = modelFileRef(t);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("'w'"), std::string::npos);
  for (const char* key : {"offset", "length", "crc32c"}) {
    auto* k = t.add_external_data();
    k->set_key(key);
    k->set_value("12");
  }
  r = modelFileRef(t);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(**r, (ModelFileRef{12, 12, 12}));
  t.mutable_external_data(3)->set_value("1e3");
  EXPECT_FALSE(modelFileRef(t).ok());
}

}  // namespace
}  // namespace zp::runtime
