// plan-run's measured cold run: written and read back, read from a whole report, and
// each malformed field a one-line error naming the file and the JSON path.
#include <gtest/gtest.h>

#include "libplan/artifacts/cold_run_json.h"

namespace zp::artifacts {
namespace {

profile::MeasuredColdRun sampleRun() {
  profile::MeasuredColdRun r;
  r.configuration = "K+C+P";
  r.cores = 2;
  r.runEndMs = 12.5;
  r.setupMs = 0.75;
  profile::MeasuredColdNode a;
  a.step = 0, a.node = "/conv1/Conv", a.kernel = "winograd", a.gemm = "blis", a.weights = "transform";
  a.read = profile::Span{1.0, 1.5};
  a.transform = profile::Span{1.5, 3.0};
  a.execute = {3.0, 9.0};
  profile::MeasuredColdNode b;
  b.step = 1, b.node = "/relu/Relu", b.weights = "none", b.execute = {9.0, 12.5};
  r.nodes = {a, b};
  r.startups = {{"blis", {0.2, 0.5}}};
  return r;
}

TEST(ColdRunJson, RoundTripsAndReadsTheWholeReport) {
  const profile::MeasuredColdRun r = sampleRun();
  auto back = parseColdRunReport(coldRunReportJson(r), "run.json");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back, r);
  // plan-run's report: the section under cold_plan_run, with scheduling details beside the spans.
  Json report{{"model", "m.onnx"}, {"cold_plan_run", coldRunReportJson(r)}};
  report["cold_plan_run"]["nodes"][0]["read"]["core"] = -1;
  report["cold_plan_run"]["steals"] = 1;
  back = parseColdRunReport(report, "run.json");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back, r);
  // A task that did not finish is no span.
  report["cold_plan_run"]["nodes"][0]["transform"]["done"] = false;
  back = parseColdRunReport(report, "run.json");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_FALSE(back->nodes[0].transform.has_value());
  // Start-ups: the warm kernels' and unfinished ones are not the cold run's; older reports have none.
  report["cold_plan_run"]["gemm_startups"].push_back(
      Json{{"library", "onednn"}, {"start_ms", 4.0}, {"end_ms", 0.0}, {"done", false}, {"warm", false}});
  report["cold_plan_run"]["gemm_startups"].push_back(
      Json{{"library", "onednn"}, {"start_ms", 4.0}, {"end_ms", 30.0}, {"done", true}, {"warm", true}});
  back = parseColdRunReport(report, "run.json");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->startups, r.startups);
  report["cold_plan_run"].erase("gemm_startups");
  back = parseColdRunReport(report, "run.json");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_TRUE(back->startups.empty());
  // Older reports without the setup: not reported (0).
  report["cold_plan_run"].erase("setup_ms");
  back = parseColdRunReport(report, "run.json");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->setupMs, 0.0);
}

TEST(ColdRunJson, MalformedFieldsAreNamedErrors) {
  auto expectError = [](Json doc, const std::string& part) {
    auto r = parseColdRunReport(doc, "run.json");
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find(part), std::string::npos) << r.error().message;
    EXPECT_EQ(r.error().message.find('\n'), std::string::npos);
  };
  const Json good = coldRunReportJson(sampleRun());
  expectError(Json{{"model", "m"}}, "run.json: $: no 'cold_plan_run' section");
  Json j = good;
  j["nodes"][1]["step"] = 5;
  expectError(j, "$.nodes[1].step");
  j = good;
  j["nodes"][0]["weights"] = "disk";
  expectError(j, "'disk' is not none, cache or transform");
  j = good;
  j["nodes"][1]["weights"] = "cache";
  expectError(j, "exactly when it names a kernel");
  j = good;
  j["nodes"][0]["execute"]["end_ms"] = 1.0;
  expectError(j, "$.nodes[0].execute.end_ms");
  j = good;
  j["nodes"] = Json::array();
  expectError(j, "nodes: empty");
}

}  // namespace
}  // namespace zp::artifacts
