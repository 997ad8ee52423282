// Progress in a log (stderr is not a terminal under ctest): nothing for a step
// shorter than the log interval, else lines with done/total, share, elapsed and
// ETA, and one when it ends; nothing at all when turned off (--quiet).
#include <gtest/gtest.h>

#include <chrono>

#include "libplan/util/progress.h"

namespace zp {
namespace {

using std::chrono::milliseconds;

TEST(Progress, ALogGetsLinesOnlyOfLongStepsAndNoneWhenQuiet) {
  if (Progress::stderrIsTerminal()) GTEST_SKIP() << "checks the form for logs: run it with stderr to a pipe (ctest does)";
  ::testing::internal::CaptureStderr();
  {
    Progress shortStep("short step", 3, "items", milliseconds(60000));
    for (int i = 0; i < 3; ++i) shortStep.advance();
  }
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");

  ::testing::internal::CaptureStderr();
  {
    Progress longStep("long step", 4, "items", milliseconds(0));
    longStep.advance();
    longStep.set(2);
    longStep.set(4);
  }
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("long step: 1/4 items (25%), 0 s, ETA"), std::string::npos) << log;
  EXPECT_NE(log.find("long step: 2/4 items (50%)"), std::string::npos) << log;
  EXPECT_NE(log.find("long step: 4/4 items (100%), 0 s\n"), std::string::npos) << "the end's line: " << log;

  Progress::setOutput(Progress::Output::Off);
  ::testing::internal::CaptureStderr();
  {
    Progress quiet("quiet step", 2, "", milliseconds(0));
    quiet.advance(2);
  }
  Progress::setOutput(Progress::Output::Auto);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

}  // namespace
}  // namespace zp
