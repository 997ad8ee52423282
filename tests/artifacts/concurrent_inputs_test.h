// Field-by-field comparison of the concurrent flow's inputs (the types hold
// doubles and vectors without operator==).
#pragma once
#include <gtest/gtest.h>

#include <vector>

#include "libplan/artifacts/workload_json.h"

namespace zp::artifacts::testing {

inline void expectSameGroups(const std::vector<sim::GroupCost>& a, const std::vector<sim::GroupCost>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].name, b[i].name) << i;
    EXPECT_EQ(a[i].timeMs, b[i].timeMs) << a[i].name;
    EXPECT_EQ(a[i].transitionOutMs, b[i].transitionOutMs) << a[i].name;
    EXPECT_EQ(a[i].transitionInMs, b[i].transitionInMs) << a[i].name;
    EXPECT_EQ(a[i].demand, b[i].demand) << a[i].name;
  }
}

inline void expectSameWorkload(const WorkloadSpec& a, const WorkloadSpec& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.accelerators, b.accelerators);
  EXPECT_EQ(a.objective, b.objective);
  EXPECT_EQ(a.contention, b.contention);
  EXPECT_EQ(a.processors, b.processors);
  ASSERT_EQ(a.dnns.size(), b.dnns.size());
  for (size_t n = 0; n < a.dnns.size(); ++n) {
    const auto &x = a.dnns[n], &y = b.dnns[n];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.jsonPath, y.jsonPath);
    EXPECT_EQ(x.instances, y.instances) << x.name;
    EXPECT_EQ(x.dependsOn, y.dependsOn) << x.name;
    EXPECT_EQ(x.source, y.source) << x.name;
    expectSameGroups(x.groups, y.groups);
    EXPECT_EQ(x.groupsCsv, y.groupsCsv) << x.name;
    EXPECT_EQ(x.model, y.model) << x.name;
    EXPECT_EQ(x.profile, y.profile) << x.name;
    EXPECT_EQ(x.task, y.task) << x.name;
    EXPECT_EQ(x.variant, y.variant) << x.name;
    EXPECT_EQ(x.grouping.minTimeToTransition, y.grouping.minTimeToTransition) << x.name;
    EXPECT_EQ(x.grouping.maxGroups, y.grouping.maxGroups) << x.name;
    EXPECT_EQ(x.grouping.transitionOverheadMs, y.grouping.transitionOverheadMs) << x.name;
    EXPECT_EQ(x.grouping.transitionBandwidthGBs, y.grouping.transitionBandwidthGBs) << x.name;
    EXPECT_EQ(x.grouping.peakBandwidthGBs, y.grouping.peakBandwidthGBs) << x.name;
  }
}

}  // namespace zp::artifacts::testing
