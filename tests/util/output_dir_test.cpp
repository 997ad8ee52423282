// The output guard: what a directory output may replace, what it refuses
// (leaving everything as it was), the atomic swap, debris of killed runs, the lock.
#include "libplan/util/output_dir.h"

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <thread>

#include <gtest/gtest.h>

#include "libplan/util/json.h"

namespace zp {
namespace {
namespace fs = std::filesystem;

class OutputDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "zp_util_XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    root_ = tmpl;
  }
  void TearDown() override { fs::remove_all(root_); }

  static void write(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
  }
  static std::string read(const fs::path& p) {
    auto r = readFile(p);
    return r.ok() ? *r : "<missing>";
  }
  // Every file under root_ (relative path -> content): what "nothing changed" compares.
  std::map<std::string, std::string> snapshot() const {
    std::map<std::string, std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(root_))
      out[fs::relative(e.path(), root_).string()] = e.is_regular_file() ? read(e.path()) : "<dir>";
    return out;
  }
  // A complete run of `tool` into `dest` writing `files`.
  static Status run(const fs::path& dest, const std::string& tool, const std::map<std::string, std::string>& files,
                    std::vector<GuardedPath> inputs = {}) {
    ZP_ASSIGN_OR_RETURN(auto out, OutputDir::open(dest, OutputDirOptions{tool, std::move(inputs), nullptr}));
    for (const auto& [name, text] : files) write(out.path() / name, text);
    return out.commit();
  }
  std::vector<std::string> siblings() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(root_)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
  fs::path root_;
};

TEST_F(OutputDirTest, CommitIntoAbsentDestinationWritesTheMarker) {
  const fs::path dest = root_ / "out";
  ASSERT_TRUE(run(dest, "zoo-stitch", {{"stitch.json", "{}"}, {"subgraphs/a.onnx", "a"}}).ok());
  EXPECT_EQ(read(dest / "stitch.json"), "{}");
  EXPECT_EQ(read(dest / "subgraphs/a.onnx"), "a");
  Json marker = Json::parse(read(dest / kOutputMarker));
  EXPECT_EQ(marker["tool"], "zoo-stitch");
  EXPECT_EQ(marker["entries"], Json::array({"stitch.json", "subgraphs"}));
  EXPECT_EQ(siblings(), std::vector<std::string>{"out"});  // no staging, no lock file left
}

TEST_F(OutputDirTest, CommitReplacesAnEarlierRunOfTheSameToolWhole) {
  const fs::path dest = root_ / "out";
  ASSERT_TRUE(run(dest, "zoo-profile", {{"a.csv", "1"}, {"b.csv", "1"}}).ok());
  ASSERT_TRUE(run(dest, "zoo-profile", {{"a.csv", "2"}}).ok());
  EXPECT_EQ(read(dest / "a.csv"), "2");
  EXPECT_FALSE(fs::exists(dest / "b.csv"));
  EXPECT_EQ(siblings(), std::vector<std::string>{"out"});
}

TEST_F(OutputDirTest, AnEmptyDirectoryIsReplaced) {
  const fs::path dest = root_ / "out";
  fs::create_directories(dest);
  auto out = OutputDir::open(dest, OutputDirOptions{"plan-emit", {}, nullptr});
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_FALSE(out->replacesEarlierRun());
  write(out->path() / "plan.json", "p");
  ASSERT_TRUE(out->commit().ok());
  EXPECT_EQ(read(dest / "plan.json"), "p");
}

// Each refusal: one line naming the destination and why; nothing on disk changes.
TEST_F(OutputDirTest, RefusesWhatItDidNotWrite) {
  write(root_ / "file", "keep");
  write(root_ / "userdir/notes.txt", "keep");
  ASSERT_TRUE(run(root_ / "stitched", "zoo-stitch", {{"stitch.json", "{}"}}).ok());
  ASSERT_TRUE(run(root_ / "mixed", "zoo-profile", {{"report.json", "{}"}}).ok());
  write(root_ / "mixed/plan.json", "the user's");
  write(root_ / "badmarker/.zooplan-output", "not json");
  const auto before = snapshot();
  struct Case { fs::path dest; std::string tool, want; };
  for (const Case& c : std::vector<Case>{
           {root_ / "file", "zoo-stitch", "exists and is not a directory"},
           {root_ / "userdir", "zoo-stitch", "not empty and not written by zoo-stitch (it has no .zooplan-output)"},
           {root_ / "stitched", "zoo-profile", "written by zoo-stitch, not zoo-profile"},
           {root_ / "mixed", "zoo-profile", "holds 'plan.json', which zoo-profile did not write"},
           {root_ / "badmarker", "zoo-profile", "unreadable output marker"}}) {
    auto out = OutputDir::open(c.dest, OutputDirOptions{c.tool, {}, nullptr});
    ASSERT_FALSE(out.ok()) << c.dest;
    const std::string& msg = out.error().message;
    EXPECT_NE(msg.find(c.want), std::string::npos) << msg;
    EXPECT_NE(msg.find(c.dest.filename().string()), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
  EXPECT_EQ(snapshot(), before);
}

TEST_F(OutputDirTest, RefusesToWriteIntoOrOverAnInput) {
  write(root_ / "zoo/zoo.json", "{}");
  ASSERT_TRUE(run(root_ / "stitch", "zoo-stitch", {{"stitch.json", "{}"}}).ok());
  fs::create_symlink(root_ / "zoo", root_ / "zoolink");
  const auto before = snapshot();
  struct Case { fs::path dest; GuardedPath input; std::string want; };
  for (const Case& c : std::vector<Case>{
           {root_ / "zoo", {root_ / "zoo/zoo.json", "input"}, "contains the input"},
           {root_ / "zoolink", {root_ / "zoo/zoo.json", "input"}, "contains the input"},  // symlink resolved
           {root_ / "stitch", {root_ / "stitch", "input"}, "is the input"},
           {root_ / "stitch/prof", {root_ / "stitch", "input"}, "lies inside the input"},
           {root_ / "zoo/../stitch/x/..", {root_ / "stitch", "input"}, "is the input"}}) {
    auto out = OutputDir::open(c.dest, OutputDirOptions{"zoo-profile", {c.input}, nullptr});
    ASSERT_FALSE(out.ok()) << c.dest;
    EXPECT_NE(out.error().message.find(c.want), std::string::npos) << out.error().message;
  }
  EXPECT_EQ(snapshot(), before);
}

TEST_F(OutputDirTest, RefusesTheCurrentDirectory) {
  const fs::path cwd = fs::current_path();
  fs::create_directories(root_ / "here");
  fs::current_path(root_ / "here");
  auto out = OutputDir::open(".", OutputDirOptions{"plan-run", {}, nullptr});
  fs::current_path(cwd);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.error().message.find("contains the current directory"), std::string::npos);
}

TEST_F(OutputDirTest, WithoutCommitTheEarlierOutputStaysAsItWas) {
  const fs::path dest = root_ / "out";
  ASSERT_TRUE(run(dest, "zoo-stitch", {{"stitch.json", "old"}}).ok());
  const auto before = snapshot();
  {
    auto out = OutputDir::open(dest, OutputDirOptions{"zoo-stitch", {}, nullptr});
    ASSERT_TRUE(out.ok());
    EXPECT_TRUE(out->replacesEarlierRun());
    write(out->path() / "stitch.json", "new");
    // A failure: no commit.
  }
  EXPECT_EQ(snapshot(), before);
}

TEST_F(OutputDirTest, ParentsCreatedByARunThatDoesNotCommitAreRemoved) {
  fs::create_directories(root_ / "a");
  {
    auto out = OutputDir::open(root_ / "a/b/c/out", OutputDirOptions{"zoo-profile", {}, nullptr});
    ASSERT_TRUE(out.ok()) << out.error().message;
    write(out->path() / "profile.csv", "rows");
  }
  EXPECT_EQ(siblings(), std::vector<std::string>{"a"});
  EXPECT_TRUE(fs::is_empty(root_ / "a"));
  ASSERT_TRUE(run(root_ / "a/b/c/out", "zoo-profile", {{"profile.csv", "rows"}}).ok());
  EXPECT_EQ(read(root_ / "a/b/c/out/profile.csv"), "rows");
}

TEST_F(OutputDirTest, AFileAddedDuringTheRunStopsTheCommit) {
  const fs::path dest = root_ / "out";
  ASSERT_TRUE(run(dest, "zoo-stitch", {{"stitch.json", "old"}}).ok());
  auto out = OutputDir::open(dest, OutputDirOptions{"zoo-stitch", {}, nullptr});
  ASSERT_TRUE(out.ok());
  write(out->path() / "stitch.json", "new");
  write(dest / "notes.txt", "written by hand meanwhile");
  auto st = out->commit();
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find("holds 'notes.txt'"), std::string::npos) << st.error().message;
  EXPECT_EQ(read(dest / "notes.txt"), "written by hand meanwhile");
  EXPECT_EQ(read(dest / "stitch.json"), "old");
}

TEST_F(OutputDirTest, DebrisOfKilledRunsIsOfferedThenRemoved) {
  const fs::path dest = root_ / "out";
  ASSERT_TRUE(run(dest, "zoo-profile", {{"report.json", "old"}}).ok());
  // What a SIGKILLed run leaves: its staging directory and its lock file.
  write(root_ / ".out.staging.4194999/report.json", "partial");
  write(root_ / ".out.lock", "4194999\n");
  // Another destination whose name starts like ours: not ours to touch.
  write(root_ / ".out.staging.7.staging.12/x", "other");
  auto out = OutputDir::open(dest, OutputDirOptions{"zoo-profile", {}, nullptr});
  ASSERT_TRUE(out.ok()) << out.error().message;
  ASSERT_EQ(out->leftovers().size(), 1u);
  EXPECT_EQ(read(out->leftovers()[0] / "report.json"), "partial");
  write(out->path() / "report.json", "new");
  ASSERT_TRUE(out->commit().ok());
  EXPECT_EQ(siblings(), (std::vector<std::string>{".out.staging.7.staging.12", "out"}));
  EXPECT_EQ(read(dest / "report.json"), "new");
}

TEST_F(OutputDirTest, AnUnfinishedRunIsKeptForTheNextRun) {
  const fs::path dest = root_ / "out";
  ASSERT_TRUE(run(dest, "zoo-profile", {{"report.json", "old"}}).ok());
  fs::path kept;
  {
    auto out = OutputDir::open(dest, OutputDirOptions{"zoo-profile", {}, nullptr});
    ASSERT_TRUE(out.ok());
    write(out->path() / "profile.csv", "rows");
    kept = out->keepUnfinished();
  }
  EXPECT_EQ(read(dest / "report.json"), "old");
  EXPECT_EQ(read(kept / "profile.csv"), "rows");
  auto next = OutputDir::open(dest, OutputDirOptions{"zoo-profile", {}, nullptr});
  ASSERT_TRUE(next.ok());
  ASSERT_EQ(next->leftovers(), std::vector<fs::path>{kept});
  ASSERT_TRUE(next->commit().ok());
  EXPECT_FALSE(fs::exists(kept));
}

TEST_F(OutputDirTest, AnOldTreeMovedAsideByAKilledFallbackCommitIsPutBack) {
  const fs::path dest = root_ / "out";
  ASSERT_TRUE(run(dest, "zoo-stitch", {{"stitch.json", "old"}}).ok());
  fs::rename(dest, root_ / ".out.old.4194999");
  auto out = OutputDir::open(dest, OutputDirOptions{"zoo-stitch", {}, nullptr});
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_TRUE(out->replacesEarlierRun());
  EXPECT_EQ(read(dest / "stitch.json"), "old");
}

TEST_F(OutputDirTest, ASecondRunWaitsForTheLockAndSeesTheFirstRunsOutput) {
  const fs::path dest = root_ / "out";
  auto first = OutputDir::open(dest, OutputDirOptions{"zoo-profile", {}, nullptr});
  ASSERT_TRUE(first.ok());
  write(first->path() / "report.json", "first");
  std::atomic<bool> opened{false};
  std::optional<Expected<OutputDir>> second;
  std::thread waiter([&] {
    second.emplace(OutputDir::open(dest, OutputDirOptions{"zoo-profile", {}, nullptr}));
    opened = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_FALSE(opened.load()) << "the second run must wait while the first holds the lock";
  ASSERT_TRUE(first->commit().ok());
  waiter.join();
  ASSERT_TRUE(second->ok()) << second->error().message;
  EXPECT_TRUE((*second)->replacesEarlierRun());
  EXPECT_EQ(read(dest / "report.json"), "first");
  ASSERT_TRUE((*second)->commit().ok());
  EXPECT_EQ(siblings(), std::vector<std::string>{"out"});
}

TEST_F(OutputDirTest, WaitingForTheLockEndsWhenStopped) {
  const fs::path dest = root_ / "out";
  auto first = OutputDir::open(dest, OutputDirOptions{"zoo-profile", {}, nullptr});
  ASSERT_TRUE(first.ok());
  std::atomic<bool> stop{false};
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    stop = true;
  });
  auto second = OutputDir::open(dest, OutputDirOptions{"zoo-profile", {}, &stop});
  stopper.join();
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.error().message.find("interrupted while waiting for another run"), std::string::npos);
}

TEST_F(OutputDirTest, OutputFilesRefuseDirectoriesAndInputs) {
  write(root_ / "prof/report.json", "{}");
  write(root_ / "plan.json", "old plan");
  EXPECT_NE(checkOutputFile(root_ / "prof", {}).error().message.find("is a directory"), std::string::npos);
  auto st = checkOutputFile(root_ / "prof/report.json", {{root_ / "prof/report.json", "input"}});
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find("is the input"), std::string::npos);
  st = checkOutputFile(root_ / "trace.json", {{root_ / "trace.json", "output"}});
  EXPECT_FALSE(st.ok());
  // Overwriting a file that is not an input is what -o is for.
  EXPECT_TRUE(checkOutputFile(root_ / "plan.json", {{root_ / "prof/report.json", "input"}}).ok());
}

TEST_F(OutputDirTest, StaleTempFilesOfDeadRunsAreRemoved) {
  pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);  // a pid that is gone
  write(root_ / ("plan.json.tmp." + std::to_string(child)), "half");
  write(root_ / ("plan.json.tmp." + std::to_string(::getpid())), "live run");
  ASSERT_TRUE(checkOutputFile(root_ / "plan.json", {}).ok());
  EXPECT_FALSE(fs::exists(root_ / ("plan.json.tmp." + std::to_string(child))));
  EXPECT_TRUE(fs::exists(root_ / ("plan.json.tmp." + std::to_string(::getpid()))));
}

TEST_F(OutputDirTest, StagedDirCommitSwapsTheWholeTree) {
  write(root_ / "out/old.txt", "old");
  auto staged = StagedDir::create(root_ / "out");
  ASSERT_TRUE(staged.ok());
  write(staged->path() / "new.txt", "new");
  ASSERT_TRUE(staged->commit().ok());
  EXPECT_EQ(read(root_ / "out/new.txt"), "new");
  EXPECT_FALSE(fs::exists(root_ / "out/old.txt"));
  EXPECT_EQ(siblings(), std::vector<std::string>{"out"});
}

}  // namespace
}  // namespace zp
