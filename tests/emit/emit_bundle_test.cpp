// plan.proto round trips, bundle emission (determinism, hash checks, bad
// input) and the staleness check.
#include <fstream>

#include <gtest/gtest.h>

#include <limits>

#include "libplan/util/file.h"
#include "libplan/util/hash.h"
#include "drivers/emit/emit_bundle.h"
#include "libplan/artifacts/plan_pb.h"
#include "tests/common/emit_fixture.h"
#include "libplan/artifacts/plan_json.h"
#include "libplan/artifacts/stitch_json.h"

namespace zp::drivers {
namespace {
namespace fs = std::filesystem;
using testing::scratchDir;

// One stitch output shared by the tests of this process (zoo-stitch takes a few seconds).
class emitTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(scratchDir("emit"));
    auto m = testing::stitchMultitask(*dir_);
    ASSERT_TRUE(m.ok()) << m.error().message;
    manifest_ = new zoo::StitchManifest(std::move(*m));
  }
  static void TearDownTestSuite() {
    fs::remove_all(*dir_);
    delete dir_;
    delete manifest_;
  }
  // Writes the fixture plan to DIR/plan.json and returns its path.
  fs::path writePlan(const plan::Plan& p, const std::string& name = "plan.json") {
    fs::path path = *dir_ / name;
    EXPECT_TRUE(artifacts::writePlan(p, path).ok());
    return path;
  }
  EmitParams params(const fs::path& plan, const std::string& out) {
    EmitParams e;
    e.plan = plan;
    e.out = *dir_ / out;
    e.toolVersion = "test";
    return e;
  }
  CheckResult check(const std::string& bundle, const fs::path& plan = {}) {
    auto r = checkBundle(CheckParams{*dir_ / bundle, plan, "test"});
    EXPECT_TRUE(r.ok()) << r.error().message;
    return r.ok() ? *r : CheckResult{{"error"}};
  }
  static std::string treeDigest(const fs::path& d) {
    std::string all;
    std::vector<fs::path> files;
    for (const auto& e : fs::recursive_directory_iterator(d))
      if (e.is_regular_file()) files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) all += fs::relative(f, d).generic_string() + " " + sha256Hex(*readFile(f)) + "\n";
    return all;
  }
  static bool anyContains(const std::vector<std::string>& lines, const std::string& s) {
    for (const auto& l : lines)
      if (l.find(s) != std::string::npos) return true;
    return false;
  }
  static inline fs::path* dir_ = nullptr;
  static inline zoo::StitchManifest* manifest_ = nullptr;
};

// Field paths (array indices dropped) of a JSON document: all of them, and
// those with a non-default value (not 0, "", false, [] or {}) somewhere.
void fieldPaths(const Json& j, const std::string& path, std::set<std::string>* all, std::set<std::string>* set) {
  all->insert(path);
  if (j.is_object()) {
    if (!j.empty()) set->insert(path);
    for (auto it = j.begin(); it != j.end(); ++it) fieldPaths(it.value(), path + "." + it.key(), all, set);
  } else if (j.is_array()) {
    if (!j.empty()) set->insert(path);
    for (const auto& e : j) fieldPaths(e, path + "[]", all, set);
  } else if (!(j == Json(0) || j == Json("") || j == Json(false) || j.is_null())) {
    set->insert(path);
  }
}

// plan.pb bytes and plan.json text both read back to the same plan.
void expectRoundTripsThroughBytesAndJson(const plan::Plan& p) {
  auto viaBytes = artifacts::parsePlanPb(artifacts::serializePlanPb(p), "test");
  ASSERT_TRUE(viaBytes.ok()) << viaBytes.error().message;
  EXPECT_EQ(*viaBytes, p);
  auto viaJson = artifacts::planFromJson(Json::parse(artifacts::planToText(p)), "test");
  ASSERT_TRUE(viaJson.ok()) << viaJson.error().message;
  EXPECT_EQ(*viaJson, p);
}

TEST_F(emitTest, StitchPlanRoundTripsThroughProtoAndJson) {
  plan::Plan p = testing::stitchPlanFor(*manifest_);
  // The fixture sets every field of the plan model somewhere, so a field added
  // to plan.h without a value here (and so, likely, without a proto field and
  // converter) fails this test instead of silently dropping out of plan.pb.
  std::set<std::string> all, set;
  fieldPaths(artifacts::toJson(p), "$", &all, &set);
  for (const auto& f : all) EXPECT_TRUE(set.count(f)) << f << " is never set in the fixture: add it to the fixture, schemas/plan.proto and passes/emit/plan_proto.cpp";
  auto viaProto = artifacts::fromProto(artifacts::toProto(p), "test");
  ASSERT_TRUE(viaProto.ok()) << viaProto.error().message;
  EXPECT_EQ(*viaProto, p);
  expectRoundTripsThroughBytesAndJson(p);
  // Every field of the fixture is set, so the proto form is a whole rendering:
  // changing any one part of the plan changes the bytes.
  plan::Plan q = p;
  q.stitch->preload[0].exactOptimal = false;
  EXPECT_NE(artifacts::serializePlanPb(q), artifacts::serializePlanPb(p));
  q = p;
  q.stitch->systems[0].selections[1].tasks[0].miss->latencyOverMs = 2;
  EXPECT_NE(artifacts::serializePlanPb(q), artifacts::serializePlanPb(p));
  q = p;
  q.stitch->systems[0].servingOrder = ServingOrder::FirstCome;
  EXPECT_NE(artifacts::serializePlanPb(q), artifacts::serializePlanPb(p));
}

TEST_F(emitTest, AServingOrderNotKnownIsAOneLineErrorNamingIt) {
  plan::Plan p = testing::stitchPlanFor(*manifest_);
  Json j = artifacts::toJson(p);
  ASSERT_EQ(j["stitch"]["systems"][0]["serving_order"], "earliest-deadline");
  j["stitch"]["systems"][0]["serving_order"] = "shortest-first";
  auto bad = artifacts::planFromJson(j, "plan.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("plan.json"), std::string::npos) << bad.error().message;
  EXPECT_NE(bad.error().message.find("serving_order: 'shortest-first' is not first-come or earliest-deadline"),
            std::string::npos) << bad.error().message;
  EXPECT_EQ(bad.error().message.find('\n'), std::string::npos);
  auto pb = artifacts::toProto(p);
  pb.mutable_stitch()->mutable_systems(0)->set_serving_order("shortest-first");
  auto badPb = artifacts::fromProto(pb, "plan.pb");
  ASSERT_FALSE(badPb.ok());
  EXPECT_NE(badPb.error().message.find("plan.pb: stitch.systems 'zooplan': serving_order 'shortest-first'"),
            std::string::npos) << badPb.error().message;
  // A plan written before serving orders existed serves first come first served.
  j["stitch"]["systems"][0].erase("serving_order");
  auto old = artifacts::planFromJson(j, "old.json");
  ASSERT_TRUE(old.ok()) << old.error().message;
  EXPECT_EQ(old->stitch->systems[0].servingOrder, ServingOrder::FirstCome);
}

TEST_F(emitTest, PlanWithoutBoundDimsReadsAsBatchOne) {
  // Plans written before symbolic dims were bound have no batch and dims: they read as batch 1, none.
  plan::Plan p = testing::stitchPlanFor(*manifest_);
  Json j = artifacts::toJson(p);
  j["stitch"].erase("batch");
  j["stitch"].erase("dims");
  auto old = artifacts::planFromJson(j, "old.json");
  ASSERT_TRUE(old.ok()) << old.error().message;
  EXPECT_EQ(old->stitch->batch, 1);
  EXPECT_TRUE(old->stitch->dims.empty());
  plan::Plan q = p;
  q.stitch->batch = 1;
  q.stitch->dims.clear();
  EXPECT_EQ(*old, q);
  // plan.pb of such a plan: proto3 leaves batch 0, which reads as 1.
  auto pb = artifacts::toProto(q);
  pb.mutable_stitch()->clear_batch();
  auto viaProto = artifacts::fromProto(pb, "old.pb");
  ASSERT_TRUE(viaProto.ok());
  EXPECT_EQ(*viaProto, q);
  j["stitch"]["batch"] = 0;
  auto bad = artifacts::planFromJson(j, "bad.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("batch"), std::string::npos) << bad.error().message;
}

TEST_F(emitTest, ConcurrentPlanRoundTripsThroughProtoAndJson) {
  auto solved = testing::solveConcurrent(*dir_);
  ASSERT_TRUE(solved.ok()) << solved.error().message;
  const plan::Plan& p = *solved;
  ASSERT_TRUE(p.concurrent.has_value());
  ASSERT_FALSE(p.concurrent->dnns.empty());
  expectRoundTripsThroughBytesAndJson(p);
  // Negative values (afterGroup -1 from a dependency, unrestricted -1) survive.
  plan::Plan q = p;
  q.concurrent->solver.maxTransitionsPerDnn = -1;
  q.concurrent->dnns[0].transitions.push_back({-1, "GPU", "DLA", 0.5, 0.75});
  auto back = artifacts::parsePlanPb(artifacts::serializePlanPb(q), "test");
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, q);
}

TEST_F(emitTest, GarbageProtoIsAnError) {
  auto r = artifacts::parsePlanPb("\xff\xff\xff garbage", "x.pb");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("x.pb: not a valid"), std::string::npos);
}

// JSON text cannot hold NaN, protobuf can: plan.pb's reader refuses it with the
// field's JSON path, as plan.json's reader refuses any other bad number.
TEST_F(emitTest, NonFiniteNumberInProtoIsAnError) {
  auto solved = testing::solveConcurrent(*dir_);
  ASSERT_TRUE(solved.ok()) << solved.error().message;
  for (double bad : {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
    plan::Plan q = *solved;
    q.concurrent->latencyMs = bad;
    auto r = artifacts::parsePlanPb(artifacts::serializePlanPb(q), "x.pb");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().message, "x.pb: $.concurrent.latencyMs: not a finite number");
  }
}

// A hand-written plan.json may carry more digits than plan.json holds: it reads
// as the plan its canonical text describes, so writing it back (plan.json or
// plan.pb) and reading again gives the same plan.
TEST_F(emitTest, PlanJsonWithMoreDigitsReadsAsItsCanonicalText) {
  auto solved = testing::solveConcurrent(*dir_);
  ASSERT_TRUE(solved.ok()) << solved.error().message;
  plan::Plan q = *solved;
  q.concurrent->latencyMs = 1.044319286;  // 10 significant digits
  const fs::path file = *dir_ / "ten_digits.json";
  ASSERT_TRUE(writeFileAtomic(file, canonicalJsonExact(artifacts::toJson(q))).ok());
  auto read = artifacts::readPlan(file);
  ASSERT_TRUE(read.ok()) << read.error().message;
  EXPECT_EQ(read->concurrent->latencyMs, roundSig(1.044319286));
  ASSERT_TRUE(writeFileAtomic(file, artifacts::planToText(*read)).ok());
  auto again = artifacts::readPlan(file);
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(*again, *read);
  auto viaPb = artifacts::parsePlanPb(artifacts::serializePlanPb(*read), "x.pb");
  ASSERT_TRUE(viaPb.ok()) << viaPb.error().message;
  EXPECT_EQ(*viaPb, *read);
}

TEST_F(emitTest, EmitsAByteIdenticalBundleTwice) {
  plan::Plan p = testing::stitchPlanFor(*manifest_);
  fs::path planPath = writePlan(p);
  auto a = emitBundle(params(planPath, "bundle_a"));
  ASSERT_TRUE(a.ok()) << a.error().message;
  auto b = emitBundle(params(planPath, "bundle_b"));
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_EQ(treeDigest(*dir_ / "bundle_a"), treeDigest(*dir_ / "bundle_b"));

  // Contents: the canonical plan, the proto, every planned subgraph and a cache per policy.
  const fs::path bundle = *dir_ / "bundle_a";
  EXPECT_EQ(*readFile(bundle / "plan.json"), artifacts::planToText(p));
  auto pb = artifacts::parsePlanPb(*readFile(bundle / "plan.pb"), "plan.pb");
  ASSERT_TRUE(pb.ok());
  EXPECT_EQ(*pb, p);
  std::set<std::string> subgraphFiles;
  int cacheCount = 0;
  for (const auto& t : p.stitch->tasks)
    for (const auto& g : t.subgraphs) {
      const plan::Unit& u = testing::unitOf(p, t.name, g);
      subgraphFiles.insert(u.file);
      EXPECT_EQ(sha256Hex(*readFile(bundle / u.file)), u.sha256) << u.file;
      const std::string policy = g.position == 0 ? "default" : g.position == 1 ? "im2col" : "sparse";
      EXPECT_TRUE(fs::exists(bundle / artifacts::cacheFileName(u.sha256, policy)))
          << artifacts::cacheFileName(u.sha256, policy);
    }
  // Units only a preload set names are in the bundle too, each with its model.
  for (const auto& u : p.units)
    if (u.id.kind == plan::UnitKind::Subgraph && subgraphFiles.insert(u.file).second)
      EXPECT_EQ(sha256Hex(*readFile(bundle / u.file)), u.sha256) << u.file;
  for (const auto& e : fs::directory_iterator(bundle / "caches")) cacheCount += e.is_regular_file();
  EXPECT_EQ(a->subgraphs, static_cast<int>(subgraphFiles.size()));
  EXPECT_EQ(a->caches, cacheCount);

  // The manifest lists every file but itself, with size and hash, and the inputs.
  auto m = artifacts::readBundleManifest(bundle);
  ASSERT_TRUE(m.ok()) << m.error().message;
  size_t files = 0;
  for (const auto& e : fs::recursive_directory_iterator(bundle)) files += e.is_regular_file();
  EXPECT_EQ(m->artifacts.size() + 1, files);
  for (const auto& art : m->artifacts) {
    auto bytes = readFile(bundle / art.path);
    ASSERT_TRUE(bytes.ok());
    EXPECT_EQ(static_cast<int64_t>(bytes->size()), art.size);
    EXPECT_EQ(sha256Hex(*bytes), art.sha256);
  }
  std::map<std::string, int> roles;
  for (const auto& in : m->inputs) roles[in.role]++;
  EXPECT_EQ(roles["plan"], 1);
  EXPECT_EQ(roles["stitch-manifest"], 1);
  EXPECT_EQ(roles["subgraph"], static_cast<int>(subgraphFiles.size()));
  EXPECT_EQ(check("bundle_a").changes, std::vector<std::string>{});
}

TEST_F(emitTest, CheckReportsEachKindOfStaleness) {
  plan::Plan p = testing::stitchPlanFor(*manifest_);
  fs::path planPath = writePlan(p, "plan_check.json");
  ASSERT_TRUE(emitBundle(params(planPath, "bundle_c")).ok());
  ASSERT_TRUE(check("bundle_c").upToDate());
  const fs::path bundle = *dir_ / "bundle_c";

  // plan.json changed.
  plan::Plan q = p;
  q.stitch->meanLatencyMs = 0.25;
  ASSERT_TRUE(artifacts::writePlan(q, planPath).ok());
  auto r = check("bundle_c");
  ASSERT_FALSE(r.upToDate());
  EXPECT_TRUE(anyContains(r.changes, "plan changed: " + planPath.generic_string())) << r.text();
  EXPECT_EQ(r.text().substr(0, 16), "bundle is stale:");
  ASSERT_TRUE(artifacts::writePlan(p, planPath).ok());
  EXPECT_TRUE(check("bundle_c").upToDate()) << check("bundle_c").text();

  // A plan given explicitly (another path, same content) is compared instead.
  fs::path copy = writePlan(q, "plan_other.json");
  r = check("bundle_c", copy);
  EXPECT_TRUE(anyContains(r.changes, "plan changed: " + copy.generic_string())) << r.text();

  // A source subgraph in the stitch directory changed.
  const std::string file = testing::unitOf(p, p.stitch->tasks[0].name, p.stitch->tasks[0].subgraphs[0]).file;
  const fs::path src = *dir_ / "stitch" / file;
  std::string original = *readFile(src);
  ASSERT_TRUE(writeFileAtomic(src, original + "x").ok());
  r = check("bundle_c");
  EXPECT_TRUE(anyContains(r.changes, "subgraph changed: " + (fs::path(*dir_) / "stitch" / file).generic_string()))
      << r.text();
  // ...and emitting from it is an error naming the file.
  auto bad = emitBundle(params(planPath, "bundle_bad"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find(src.string() + ": content hash"), std::string::npos) << bad.error().message;
  EXPECT_FALSE(fs::exists(*dir_ / "bundle_bad"));
  ASSERT_TRUE(writeFileAtomic(src, original).ok());
  EXPECT_TRUE(check("bundle_c").upToDate());

  // An artifact deleted, and a byte flipped in another.
  std::string cache;
  for (const auto& e : fs::directory_iterator(bundle / "caches")) cache = "caches/" + e.path().filename().string();
  std::string cacheBytes = *readFile(bundle / cache);
  fs::remove(bundle / cache);
  r = check("bundle_c");
  EXPECT_EQ(r.changes, std::vector<std::string>{"artifact missing: " + cache});
  std::string flipped = cacheBytes;
  flipped[flipped.size() / 2] ^= 0x01;
  ASSERT_TRUE(writeFileAtomic(bundle / cache, flipped).ok());
  r = check("bundle_c");
  ASSERT_EQ(r.changes.size(), 1u) << r.text();
  EXPECT_EQ(r.changes[0].rfind("artifact modified: " + cache, 0), 0u) << r.text();
  ASSERT_TRUE(writeFileAtomic(bundle / cache, cacheBytes).ok());

  // A file the manifest does not list.
  ASSERT_TRUE(writeFileAtomic(bundle / "extra.txt", "x").ok());
  r = check("bundle_c");
  EXPECT_EQ(r.changes, std::vector<std::string>{"unexpected file in the bundle: extra.txt"});
  fs::remove(bundle / "extra.txt");
  EXPECT_TRUE(check("bundle_c").upToDate());
  const std::string fresh = check("bundle_c").text();
  EXPECT_EQ(fresh.rfind("bundle is up to date (", 0), 0u) << fresh;
  EXPECT_NE(fresh.find("records no profile directory"), std::string::npos) << "a hand-made plan's chain is not checked, "
                                                                              "and the note says so: " << fresh;

  // Another tool version made it.
  auto other = checkBundle(CheckParams{bundle, {}, "9.9"});
  ASSERT_TRUE(other.ok());
  EXPECT_TRUE(anyContains(other->changes, "tool changed"));
}

TEST_F(emitTest, ConcurrentOnlyPlanGivesPlanAndManifest) {
  auto solved = testing::solveConcurrent(*dir_);
  ASSERT_TRUE(solved.ok()) << solved.error().message;
  auto r = emitBundle(params(*dir_ / "concurrent_plan.json", "bundle_conc"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  std::vector<std::string> paths;
  for (const auto& a : r->manifest.artifacts) paths.push_back(a.path);
  // The output marker is an artifact too: --check notices it changed.
  EXPECT_EQ(paths, (std::vector<std::string>{".zooplan-output", "plan.json", "plan.pb"}));
  // The workload is an input (the scenario names no ONNX models).
  bool workload = false;
  for (const auto& in : r->manifest.inputs) workload |= in.role == "workload";
  EXPECT_TRUE(workload);
  EXPECT_TRUE(check("bundle_conc").upToDate());
}

TEST_F(emitTest, WorkloadModelsAreKeyedByTheirPathFromTheWorkload) {
  auto solved = testing::solveConcurrent(*dir_);
  ASSERT_TRUE(solved.ok()) << solved.error().message;
  // One model under the workload's folder (named two ways), one beside it.
  fs::create_directories(*dir_ / "wl/m");
  ASSERT_TRUE(writeFileAtomic(*dir_ / "wl/m/a.onnx", "model a").ok());
  ASSERT_TRUE(writeFileAtomic(*dir_ / "b.onnx", "model b").ok());
  const std::string dnn = R"({"name": "%", "model": "@", "profile": "p.csv", "task": "t", "variant": "v"})";
  auto dnnJson = [&](const std::string& name, const std::string& model) {
    std::string d = dnn;
    d.replace(d.find('%'), 1, name);
    d.replace(d.find('@'), 1, model);
    return d;
  };
  ASSERT_TRUE(writeFileAtomic(*dir_ / "wl/workload.json",
                              R"({"version": 1, "accelerators": ["GPU"], "dnns": [)" + dnnJson("a", "./m/a.onnx") +
                                  ", " + dnnJson("b", "../b.onnx") + ", " + dnnJson("c", "m/a.onnx") + "]}")
                  .ok());
  auto modelKeys = [](const EmitResult& r) {
    std::vector<std::string> keys;
    for (const auto& in : r.manifest.inputs)
      if (in.role == "model") keys.push_back(in.key);
    return keys;
  };
  const std::vector<std::string> want{"../b.onnx", "m/a.onnx"};
  // The workload named by an absolute path.
  plan::Plan p = *solved;
  p.concurrent->workload = (*dir_ / "wl/workload.json").string();
  auto absolute = emitBundle(params(writePlan(p, "plan_wl_abs.json"), "bundle_wl_abs"));
  ASSERT_TRUE(absolute.ok()) << absolute.error().message;
  EXPECT_EQ(modelKeys(*absolute), want);
  // By a path relative to the plan's folder, with the plan named relative to the
  // working directory: the keys do not depend on where the tool runs.
  p.concurrent->workload = "wl/workload.json";
  writePlan(p, "plan_wl_rel.json");
  const fs::path cwd = fs::current_path();
  fs::current_path(*dir_);
  auto relative = emitBundle(params("plan_wl_rel.json", "bundle_wl_rel"));
  fs::current_path(cwd);
  ASSERT_TRUE(relative.ok()) << relative.error().message;
  EXPECT_EQ(modelKeys(*relative), want);
}

TEST_F(emitTest, BadInputIsAOneLineErrorAndLeavesNothing) {
  auto expectError = [&](const EmitParams& e, const std::string& want) {
    auto r = emitBundle(e);
    ASSERT_FALSE(r.ok()) << want;
    EXPECT_NE(r.error().message.find(want), std::string::npos) << r.error().message;
    EXPECT_EQ(r.error().message.find('\n'), std::string::npos);
    EXPECT_FALSE(fs::exists(e.out));
  };
  expectError(params(*dir_ / "nope.json", "b1"), "nope.json: cannot open");

  plan::Plan empty;
  empty.header = {"plan-solve", "0.1.0", {}};
  expectError(params(writePlan(empty, "empty.json"), "b2"), "empty.json: the plan has no 'stitch', 'concurrent', 'opplace' or 'mts' section");

  plan::Plan wrongDir = testing::stitchPlanFor(*manifest_, "no_such_stitch");
  expectError(params(writePlan(wrongDir, "wrongdir.json"), "b3"), "no_such_stitch/stitch.json: cannot open");

  plan::Plan wrongHash = testing::stitchPlanFor(*manifest_);
  testing::unitOf(wrongHash, wrongHash.stitch->tasks[1].name, wrongHash.stitch->tasks[1].subgraphs[0]).sha256 =
      std::string(64, 'f');
  expectError(params(writePlan(wrongHash, "wronghash.json"), "b4"), "differs from stitch.json's");

  plan::Plan escape = testing::stitchPlanFor(*manifest_);
  testing::unitOf(escape, escape.stitch->tasks[0].name, escape.stitch->tasks[0].subgraphs[0]).file = "../../etc/passwd";
  expectError(params(writePlan(escape, "escape.json"), "b5"), "is not a relative path inside the stitch directory");

  plan::Plan badPolicy = testing::stitchPlanFor(*manifest_);
  badPolicy.processors[1].policy = "magic";
  expectError(params(writePlan(badPolicy, "badpolicy.json"), "b6"), "unknown kernel policy 'magic'");

  ASSERT_TRUE(writeFileAtomic(*dir_ / "notjson.json", "{").ok());
  expectError(params(*dir_ / "notjson.json", "b7"), "notjson.json: not valid JSON");

  ASSERT_TRUE(writeFileAtomic(*dir_ / "afile", "x").ok());
  EmitParams unwritable = params(writePlan(testing::stitchPlanFor(*manifest_), "ok.json"), "afile/bundle");
  expectError(unwritable, "cannot create parent directory");

  // A failed run leaves an existing bundle as it was.
  fs::path good = writePlan(testing::stitchPlanFor(*manifest_), "good.json");
  ASSERT_TRUE(emitBundle(params(good, "keep")).ok());
  std::string before = treeDigest(*dir_ / "keep");
  auto r = emitBundle(params(*dir_ / "wronghash.json", "keep"));
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(treeDigest(*dir_ / "keep"), before);

  auto noBundle = checkBundle(CheckParams{*dir_ / "nothing_here", {}, "test"});
  ASSERT_FALSE(noBundle.ok());
  EXPECT_NE(noBundle.error().message.find("not a bundle directory"), std::string::npos);
}

}  // namespace
}  // namespace zp::drivers
