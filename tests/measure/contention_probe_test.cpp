#include "passes/measure/contention_probe.h"

#include <gtest/gtest.h>

#include "libplan/runtime/serve/processor.h"

namespace zp::measure {
namespace {

TEST(ContentionProbe, CoRunnerStreamsLessAtALowerDutyAndProbesTime) {
  const auto cores = runtime::serve::availableCores();
  const std::vector<int> probeCore{cores.front()}, coCore{cores.back()};
  auto peak = streamBandwidth(coCore, 0.05, 4u << 20);
  ASSERT_TRUE(peak.ok()) << peak.error().message;
  EXPECT_GT(*peak, 0.1);
  double gbs[2];
  int i = 0;
  for (double duty : {0.2, 1.0}) {
    auto co = StreamCoRunner::start(coCore, duty, 4u << 20);
    ASSERT_TRUE(co.ok()) << co.error().message;
    auto ms = timeProbe(triadProbe(1u << 20), probeCore, 1, 5);
    ASSERT_TRUE(ms.ok()) << ms.error().message;
    EXPECT_GT(*ms, 0);
    gbs[i++] = (*co)->stop();
  }
  EXPECT_GT(gbs[0], 0);
  EXPECT_LT(gbs[0], gbs[1]);  // streaming a fifth of each millisecond moves less than streaming all of it
  // A core this process may not use is an error, no thread left behind.
  EXPECT_FALSE(StreamCoRunner::start({1 << 20}, 0.5).ok());
}

}  // namespace
}  // namespace zp::measure
