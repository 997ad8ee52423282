// latency_model.json: what zoo-profile writes, plan-solve reads back exactly
// (every double bit for bit), and the reader rejects what it cannot use.
#include <gtest/gtest.h>

#include <random>

#include "libplan/artifacts/latency_model_json.h"

namespace zp::artifacts {
namespace {

estimate::TaskLatencyModel randomModel(std::mt19937_64& rng, const std::string& name, int positions) {
  std::uniform_real_distribution<double> ms(1e-6, 50.0);
  const std::vector<std::string> procs = {"cpu", "gpu", "npu"}, variants = {"dense", "u50", "s75"};
  estimate::TaskLatencyModel m;
  m.task = name;
  m.positions = positions;
  for (int p = 0; p + 1 < positions; ++p) m.boundaryBytes.push_back(static_cast<double>(4 * (rng() % 100000)));
  for (int p = 0; p < positions; ++p)
    for (const auto& v : variants)
      for (const auto& proc : procs) m.model.setSubgraph(p, v, proc, ms(rng));
  for (const auto& proc : procs) m.model.setOverhead(proc, ms(rng) / 1000);
  for (const auto& a : procs)
    for (const auto& b : procs)
      if (a != b) m.model.setTransition(a, b, {ms(rng) / 100, ms(rng) * 1e-9});
  return m;
}

TEST(artifactsLatencyModel, RandomModelsReadBackBitForBitAndRewriteToTheSameBytes) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 20; ++round) {
    std::vector<estimate::TaskLatencyModel> tasks{randomModel(rng, "digits", 1 + round % 4),
                                                  randomModel(rng, "faces", 2 + round % 3)};
    const std::string text = formatLatencyModel(tasks);
    auto back = parseLatencyModel(text, "latency_model.json");
    ASSERT_TRUE(back.ok()) << back.error().message;
    EXPECT_EQ(*back, tasks);
    EXPECT_EQ(formatLatencyModel(*back), text);
    // The estimate plan-solve computes is the one zoo-profile computed.
    const std::vector<std::string> variants(static_cast<size_t>(tasks[1].positions), "u50");
    std::vector<std::string> placement;
    for (int p = 0; p < tasks[1].positions; ++p) placement.push_back(p % 2 ? "gpu" : "npu");
    EXPECT_EQ((*back)[1].model.estimate(variants, placement, (*back)[1].boundaryBytes),
              tasks[1].model.estimate(variants, placement, tasks[1].boundaryBytes));
  }
}

std::string errorOf(const std::string& text) {
  auto r = parseLatencyModel(text, "lm.json");
  return r.ok() ? "" : r.error().message;
}

TEST(artifactsLatencyModel, RejectsWhatItCannotUseNamingThePath) {
  const std::string task =
      R"({"name": "t", "positions": 2, "boundary_bytes": [16], "overhead_ms": {"cpu": 0.1},
          "subgraph_ms": [{"position": 0, "variant": "a", "processor": "cpu", "ms": 1.5}],
          "transitions": [{"from": "cpu", "to": "gpu", "fixed_ms": 0, "ms_per_byte": 1e-9}]})";
  ASSERT_EQ(errorOf(R"({"schema_version": 1, "tasks": [)" + task + "]}"), "");
  EXPECT_NE(errorOf("{"), "");
  EXPECT_NE(errorOf(R"({"schema_version": 2, "tasks": []})").find("schema_version"), std::string::npos);
  auto with = [&](const std::string& from, const std::string& to) {
    std::string t = task;
    t.replace(t.find(from), from.size(), to);
    return errorOf(R"({"schema_version": 1, "tasks": [)" + t + "]}");
  };
  EXPECT_NE(with(R"("ms": 1.5)", R"("ms": -1)").find("$.tasks[0].subgraph_ms[0].ms"), std::string::npos);
  EXPECT_NE(with(R"("position": 0)", R"("position": 2)").find("position"), std::string::npos);
  EXPECT_NE(with(R"([16])", R"([16, 8])").find("boundary_bytes"), std::string::npos);
  EXPECT_NE(with(R"("to": "gpu")", R"("to": "cpu")").find("itself"), std::string::npos);
  EXPECT_NE(with(R"("cpu": 0.1)", R"("cpu": "fast")").find("overhead_ms"), std::string::npos);
  EXPECT_NE(errorOf(R"({"schema_version": 1, "tasks": [)" + task + "," + task + "]}").find("twice"), std::string::npos);
  EXPECT_EQ(errorOf(R"({"schema_version": 1, "tasks": [)" + task + "]}").find("lm.json"), std::string::npos);
}

}  // namespace
}  // namespace zp::artifacts
