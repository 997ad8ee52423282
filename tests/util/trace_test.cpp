// The Chrome-trace writer: metadata and complete events in the Trace Event
// Format, times written in microseconds.
#include <gtest/gtest.h>

#include "libplan/util/trace.h"

namespace zp {
namespace {

TEST(ChromeTrace, WritesMetadataAndSpansInOrder) {
  ChromeTrace t;
  t.processName(1, "plan", 0);
  t.threadName(1, 2, "gpu");
  t.threadSortIndex(1, 2, 5);
  t.span({"conv", "group", 1, 2, 1.5, 0.25, Json{{"k", 1}}, "bad"});
  t.span({"copy", "transition", 1, 3, 2.0, 0.5, Json::object(), ""});
  const Json j = t.json();
  EXPECT_EQ(j["displayTimeUnit"], "ms");
  const Json& ev = j["traceEvents"];
  ASSERT_EQ(ev.size(), 5u);
  EXPECT_EQ(ev[0], (Json{{"name", "process_name"}, {"ph", "M"}, {"pid", 1}, {"tid", 0}, {"args", {{"name", "plan"}}}}));
  EXPECT_EQ(ev[1]["name"], "thread_name");
  EXPECT_EQ(ev[1]["args"]["name"], "gpu");
  EXPECT_EQ(ev[2]["args"]["sort_index"], 5);
  EXPECT_EQ(ev[3]["ph"], "X");
  EXPECT_DOUBLE_EQ(ev[3]["ts"].get<double>(), 1500.0);
  EXPECT_DOUBLE_EQ(ev[3]["dur"].get<double>(), 250.0);
  EXPECT_EQ(ev[3]["cname"], "bad");
  EXPECT_EQ(ev[3]["args"]["k"], 1);
  EXPECT_FALSE(ev[4].contains("cname"));
  EXPECT_EQ(ev[4]["cat"], "transition");
}

TEST(ChromeTrace, ProcessNameWithoutThread) {
  ChromeTrace t;
  t.processName(3, "p");
  EXPECT_FALSE(t.json()["traceEvents"][0].contains("tid"));
}

}  // namespace
}  // namespace zp
