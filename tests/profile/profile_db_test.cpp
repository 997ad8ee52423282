#include <gtest/gtest.h>

#include <filesystem>
#include <cctype>
#include <fstream>
#include <ostream>

#include "tests/profile/test_util.h"
#include "libplan/profile/profile_db.h"
#include "libplan/artifacts/profile_csv.h"
#include "libplan/util/file.h"
#include "tests/common/test_paths.h"

namespace zp::profile {
namespace {
using namespace artifacts;
namespace fs = std::filesystem;

const std::string kHeader(profileCsvHeader());

ProfileRow subgraphRow(const std::string& task, int pos, const std::string& variant, const std::string& proc,
                       double ms, const std::string& policy = "default") {
  ProfileRow r;
  r.kind = RowKind::Subgraph;
  r.task = task;
  r.position = pos;
  r.variant = variant;
  r.processor = proc;
  r.policy = policy;
  r.medianMs = ms;
  r.source = "host";
  return r;
}

TEST(profileDb, HeaderIsTheDocumentedColumnList) {
  EXPECT_EQ(kHeader,
            "kind,task,position,variant,node,processor,policy,median_ms,p90_ms,runs,memory_bytes,from_processor,"
            "to_processor,bytes,source");
}

TEST(profileDb, WriteSortsAndRewriteIsByteIdentical) {
  ProfileDb db;
  // added out of order; names that need quoting
  ProfileRow t;
  t.kind = RowKind::Transition;
  t.task = "digits";
  t.position = 1;
  t.fromProcessor = "cpu";
  t.toProcessor = "gpu";
  t.bytes = 8192;
  t.medianMs = 0.1 + 0.2;  // 0.30000000000000004 must survive the round trip
  t.p90Ms = 1e-7;
  t.source = "host";
  db.add(t);
  ProfileRow n;
  n.kind = RowKind::Node;
  n.task = "digits";
  n.variant = "dense";
  n.node = "odd \"name\", with comma";
  n.processor = "npu";
  n.policy = "default";
  n.medianMs = 0.25;
  n.runs = 10;
  n.source = "ort-json";
  db.add(n);
  db.add(subgraphRow("digits", 2, "u50", "cpu", 1.5));
  auto s = subgraphRow("digits", 0, "dense", "cpu", 2.0, "winograd");
  s.p90Ms = 2.5;
  s.runs = 20;
  s.memoryBytes = 123456789012;
  db.add(s);
  db.add(subgraphRow("digits", 0, "dense", "cpu", 1.0));
  db.add(subgraphRow("alpha", 0, "dense", "cpu", 3.0));

  std::string text = formatProfileCsv(db);
  EXPECT_EQ(text, kHeader + "\n" +
                      "node,digits,,dense,\"odd \"\"name\"\", with comma\",npu,default,0.25,,10,,,,,ort-json\n"
                      "subgraph,alpha,0,dense,,cpu,default,3,,,,,,,host\n"
                      "subgraph,digits,0,dense,,cpu,default,1,,,,,,,host\n"
                      "subgraph,digits,0,dense,,cpu,winograd,2,2.5,20,123456789012,,,,host\n"
                      "subgraph,digits,2,u50,,cpu,default,1.5,,,,,,,host\n"
                      "transition,digits,1,,,,,0.30000000000000004,1e-07,,,cpu,gpu,8192,host\n");
  auto back = parseProfileCsv(text, "mem.csv");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->size(), db.size());
  EXPECT_EQ(formatProfileCsv(*back), text);
  EXPECT_EQ(back->findNode("digits", "dense", "npu", "odd \"name\", with comma")->runs, 10);
  EXPECT_EQ(back->findTransition("digits", 1, "cpu", "gpu")->medianMs, 0.1 + 0.2);

  // through a file, atomically written
  fs::path dir = testing::scratchDir("zp_profile_db_test");
  ASSERT_TRUE(writeProfileCsv(*back, dir / "p.csv").ok());
  auto bytes = readFile(dir / "p.csv");
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(*bytes, text);
  size_t files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++files;
  EXPECT_EQ(files, 1u);  // no temp file left behind
  fs::remove_all(dir);
}

TEST(profileDb, HandWrittenFileReadsAndRewritesStably) {
  auto db = readProfileCsv(fs::path(zp::testing::kSourceDir) / "testdata/profiles/csv/digits_example.csv");
  ASSERT_TRUE(db.ok()) << db.error().message;
  EXPECT_EQ(db->size(), 7u);
  EXPECT_EQ(db->select(RowKind::Subgraph).size(), 3u);
  EXPECT_EQ(db->select(RowKind::Node, "digits", "dense", "npu").size(), 3u);
  const ProfileRow* r = db->find("digits", 1, "dense", "npu", "winograd");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->medianMs, 0.08);
  EXPECT_EQ(r->memoryBytes, 32768);
  EXPECT_EQ(db->find("digits", 1, "dense", "npu"), nullptr);  // only the winograd policy was measured
  std::string once = formatProfileCsv(*db);
  auto again = parseProfileCsv(once, "again.csv");
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(formatProfileCsv(*again), once);
}

// A weight-shared group's stitched graph measured on a processor: the group's
// name in `task`, no position or variant; group rows sort first.
TEST(profileDb, GroupRowsReadAndRewriteFirst) {
  const std::string text = kHeader + "\nsubgraph,t,0,v,,cpu,default,1,,,,,,,host\ngroup,attrs,,,,cpu,sparse,0.25,0.3,20,4096,,,,host\n";
  auto db = parseProfileCsv(text, "prof.csv");
  ASSERT_TRUE(db.ok()) << db.error().message;
  const auto groups = db->select(RowKind::Group, "attrs");
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0]->medianMs, 0.25);
  EXPECT_EQ(groups[0]->memoryBytes, 4096);
  EXPECT_EQ(groups[0]->policy, "sparse");
  const std::string once = formatProfileCsv(*db);
  EXPECT_EQ(once.substr(kHeader.size() + 1, 6), "group,");
  auto again = parseProfileCsv(once, "again.csv");
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(formatProfileCsv(*again), once);
}

TEST(profileDb, MergeLaterSourceReplacesSameKey) {
  ProfileDb a, b;
  a.add(subgraphRow("t", 0, "v", "cpu", 1.0));
  a.add(subgraphRow("t", 1, "v", "cpu", 2.0));
  auto r = subgraphRow("t", 1, "v", "cpu", 5.0);
  r.source = "trtexec";
  b.add(r);
  b.add(subgraphRow("t", 1, "v", "gpu", 7.0));
  a.merge(b);
  EXPECT_EQ(a.size(), 3u);
  EXPECT_EQ(a.find("t", 0, "v", "cpu")->medianMs, 1.0);
  EXPECT_EQ(a.find("t", 1, "v", "cpu")->medianMs, 5.0);
  EXPECT_EQ(a.find("t", 1, "v", "cpu")->source, "trtexec");
  EXPECT_EQ(a.find("t", 1, "v", "gpu")->medianMs, 7.0);
  EXPECT_EQ(a.find("t", 2, "v", "cpu"), nullptr);

  ProfileRow tr;
  tr.kind = RowKind::Transition;
  tr.task = "t";
  tr.position = 0;
  tr.fromProcessor = "cpu";
  tr.toProcessor = "gpu";
  tr.bytes = 64;
  tr.medianMs = 0.5;
  tr.source = "host";
  a.add(tr);
  tr.variant = "v";
  tr.medianMs = 0.7;
  a.add(tr);
  EXPECT_EQ(a.findTransition("t", 0, "cpu", "gpu")->medianMs, 0.5);
  EXPECT_EQ(a.findTransition("t", 0, "cpu", "gpu", "v")->medianMs, 0.7);
  EXPECT_EQ(a.findTransition("t", 0, "cpu", "gpu", "w")->medianMs, 0.5);  // falls back to the generic row
  EXPECT_EQ(a.findTransition("t", 0, "gpu", "cpu"), nullptr);
}

struct BadCase {
  std::string body;  // rows after the header (or a whole file when it starts with '!')
  std::string error;
};
// Test names show the expected error's problem part, not a byte dump.
void PrintTo(const BadCase& c, std::ostream* os) {
  std::string e = c.error.substr(c.error.find(' ') + 1);
  for (char& ch : e)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  *os << e.substr(0, 48);
}

class profileCsvErrors : public ::testing::TestWithParam<BadCase> {};

TEST_P(profileCsvErrors, OneLineErrorNamingFileLineAndColumn) {
  const BadCase& c = GetParam();
  std::string text = c.body[0] == '!' ? c.body.substr(1) : kHeader + "\n" + c.body;
  auto db = parseProfileCsv(text, "prof.csv");
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.error().message, c.error);
  EXPECT_EQ(db.error().message.find('\n'), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(
    profileDb, profileCsvErrors,
    ::testing::Values(
        BadCase{"!", "prof.csv: empty file (expected the header " + kHeader + ")"},
        BadCase{"!kind,task,position,variant,node,processor,policy,p90_ms,runs,memory_bytes,from_processor,"
                "to_processor,bytes\n",
                "prof.csv:1: header: missing columns 'median_ms', 'source'"},
        BadCase{"!" + kHeader + ",comment\n", "prof.csv:1: header: unknown column 'comment' (expected " + kHeader + ")"},
        BadCase{"!" + kHeader + ",task\n", "prof.csv:1: header: column 'task' appears twice"},
        BadCase{"subgraph,t,0,v,,cpu,default,1,,,,,,,host\nlayer,t,0,v,,cpu,default,1,,,,,,,host\n",
                "prof.csv:3: column 'kind': unknown kind 'layer' (expected subgraph, node, transition or group)"},
        BadCase{"subgraph,t,0,v,,cpu,default,nan,,,,,,,host\n",
                "prof.csv:2: column 'median_ms': 'nan' is not a finite number"},
        BadCase{"subgraph,t,0,v,,cpu,default,1,inf,,,,,,host\n",
                "prof.csv:2: column 'p90_ms': 'inf' is not a finite number"},
        BadCase{"subgraph,t,0,v,,cpu,default,1e999,,,,,,,host\n",
                "prof.csv:2: column 'median_ms': '1e999' is not a finite number"},
        BadCase{"subgraph,t,0,v,,cpu,default,-0.5,,,,,,,host\n", "prof.csv:2: column 'median_ms': '-0.5' is negative"},
        BadCase{"subgraph,t,0,v,,cpu,default,fast,,,,,,,host\n", "prof.csv:2: column 'median_ms': 'fast' is not a number"},
        BadCase{"subgraph,t,1.5,v,,cpu,default,1,,,,,,,host\n", "prof.csv:2: column 'position': '1.5' is not an integer"},
        BadCase{"subgraph,t,-1,v,,cpu,default,1,,,,,,,host\n", "prof.csv:2: column 'position': '-1' is negative"},
        BadCase{"subgraph,t,0,v,,cpu,default,1,,ten,,,,,host\n", "prof.csv:2: column 'runs': 'ten' is not an integer"},
        BadCase{"subgraph,t,0,v,,cpu,default,1,,0,,,,,host\n", "prof.csv:2: column 'runs': 0 is not a positive count"},
        BadCase{"subgraph,t,0,v,,cpu,default,1,,,,,,host\n", "prof.csv:2: 14 cells, the header has 15"},
        BadCase{"subgraph,t,0,v,,cpu,default,1,,,,,,,,host\n", "prof.csv:2: 16 cells, the header has 15"},
        BadCase{"subgraph,t,,v,,cpu,default,1,,,,,,,host\n", "prof.csv:2: column 'position' is required"},
        BadCase{"subgraph,t,0,v,,cpu,default,,,,,,,,host\n", "prof.csv:2: column 'median_ms' is required"},
        BadCase{"subgraph,t,0,v,n1,cpu,default,1,,,,,,,host\n",
                "prof.csv:2: column 'node' must be empty in a subgraph row"},
        BadCase{"node,t,,v,,cpu,default,1,,,,,,,host\n", "prof.csv:2: column 'node' is required"},
        BadCase{"transition,t,0,,,,,1,,,,cpu,gpu,,host\n", "prof.csv:2: column 'bytes' is required"},
        BadCase{"transition,t,0,,,cpu,,1,,,,cpu,gpu,8,host\n",
                "prof.csv:2: column 'processor' must be empty in a transition row"},
        BadCase{"group,g,0,,,cpu,default,1,,,,,,,host\n", "prof.csv:2: column 'position' must be empty in a group row"},
        BadCase{"group,g,,v,,cpu,default,1,,,,,,,host\n", "prof.csv:2: column 'variant' must be empty in a group row"},
        BadCase{"group,g,,,,,default,1,,,,,,,host\n", "prof.csv:2: column 'processor' is required"},
        BadCase{"subgraph,t,0,v,,cpu,default,1,,,,,,,guess\n",
                "prof.csv:2: column 'source': unknown source 'guess' (expected host, ort-json, trtexec, openvino-csv "
                "or csv)"},
        BadCase{"subgraph,t,0,v,,cpu,default,1,,,,,,,host\nsubgraph,t,1,v,,cpu,default,1,,,,,,,host\n"
                "subgraph,t,0,v,,cpu,,2,,,,,,,csv\n",
                "prof.csv:4: duplicate row (same key as line 2)"},
        BadCase{"node,t,,v,\"unterminated,cpu,default,1,,,,,,,host\n", "prof.csv:2: unterminated quoted field"}));

TEST(profileDb, MissingFileIsAnErrorNamingIt) {
  auto db = readProfileCsv("/nonexistent/dir/prof.csv");
  ASSERT_FALSE(db.ok());
  EXPECT_NE(db.error().message.find("/nonexistent/dir/prof.csv"), std::string::npos) << db.error().message;
}

}  // namespace
}  // namespace zp::profile
