// The measure pass alone, on models and samples in memory: the accuracy of every
// stitched variant measured subgraph by subgraph (prefixes shared, two threads)
// equals the accuracy of the same variant stitched into one model and run whole,
// and the shared prefixes cost V + V^2 subgraph runs per sample, not S * V^S.
#include <gtest/gtest.h>

#include <random>
#include <map>
#include <set>

#include "libplan/graph/model_io.h"
#include "libplan/runtime/session.h"
#include "passes/measure/accuracy_eval.h"
#include "passes/stitch/stitch.h"
#include "tests/common/mlp_zoo.h"

namespace zp::measure {
namespace {

// A 3-layer MLP [1,4] -> [1,3] whose weights depend on `seed`.
std::string mlp(unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  auto init = [&](const char* name, int rows, int cols) {
    std::string v;
    for (int i = 0; i < rows * cols; ++i) {
      if (i) v += ",";
      v += std::to_string(u(rng));
    }
    return fmt::format("float[{},{}] {} = {{{}}}", rows, cols, name, v);
  };
  // One after the other: in one expression the order of the draws would be the compiler's.
  const std::string w1 = init("w1", 4, 6), w2 = init("w2", 6, 6), w3 = init("w3", 6, 3);
  return zp::testing::mlpText(w1, w2, w3);
}

TEST(measureAccuracy, StitchedVariantsMeasuredByPartsEqualTheWholeModels) {
  std::vector<zp::testing::VariantText> variants;
  for (unsigned v = 0; v < 3; ++v) {
    const std::string id = "v" + std::to_string(v);
    variants.push_back({id, v == 0 ? "dense" : "unstructured", mlp(v + 1), id});
  }
  auto zoo = zp::testing::oneTaskZoo(variants);
  ASSERT_TRUE(zoo.ok()) << zoo.error().message;
  auto st = stitch::stitchZoo(zoo->zoo, {zoo->models}, stitch::StitchParams{}, "zoo.json");
  ASSERT_TRUE(st.ok()) << st.error().message;
  const auto& ts = st->manifest.tasks.at(0);
  ASSERT_EQ(ts.positions(), 2);
  ASSERT_EQ(ts.combinations.size(), 9u);

  Dataset data;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (int i = 0; i < 40; ++i) {
    auto x = runtime::Tensor::empty(runtime::DType::F32, {1, 4});
    for (int k = 0; k < 4; ++k) x.ptr<float>()[k] = u(rng);
    data.samples.push_back(std::move(x));
    data.labels.push_back(static_cast<int64_t>(rng() % 3));
  }
  std::vector<size_t> all(ts.combinations.size());
  for (size_t k = 0; k < all.size(); ++k) all[k] = k;
  EvalStats stats;
  auto byParts = combinationAccuracy(ts, st->subgraphModels, data, all, 2, nullptr, nullptr, &stats);
  ASSERT_TRUE(byParts.ok()) << byParts.error().message;
  EXPECT_EQ(stats.subgraphRuns, (3u + 9u) * data.samples.size());
  EXPECT_EQ(walkRuns(ts, all, data.samples.size()), stats.subgraphRuns);
  for (const std::vector<size_t>& some : {std::vector<size_t>{0, 4, 5}, std::vector<size_t>{8}, std::vector<size_t>{}}) {
    EvalStats part;
    ASSERT_TRUE(combinationAccuracy(ts, st->subgraphModels, data, some, 1, nullptr, nullptr, &part).ok());
    EXPECT_EQ(walkRuns(ts, some, data.samples.size()), part.subgraphRuns);
  }
  std::set<double> distinct;
  std::vector<std::vector<uint8_t>> wholeCorrect(all.size());
  for (size_t k = 0; k < all.size(); ++k) {
    auto whole = stitch::materializeCombination(ts, ts.combinations[k], st->subgraphModels);
    ASSERT_TRUE(whole.ok()) << whole.error().message;
    runtime::SessionOptions o;
    o.threads = 1;
    auto session = runtime::Session::fromModel(*whole, ts.combinations[k].id, o);
    ASSERT_TRUE(session.ok()) << session.error().message;
    auto acc = modelAccuracy(**session, data, &wholeCorrect[k]);
    ASSERT_TRUE(acc.ok()) << acc.error().message;
    EXPECT_DOUBLE_EQ((*byParts)[k], *acc) << ts.combinations[k].id;
    distinct.insert(*acc);
  }
  EXPECT_GT(distinct.size(), 1u) << "the variants should not all agree on random weights";

  // On a subset of samples per combination: the whole model's verdicts on
  // those samples, each shared prefix run once on the union below it.
  std::vector<std::vector<size_t>> subsets(all.size());
  for (size_t k = 0; k < all.size(); ++k)
    for (size_t i = 0; i < data.samples.size(); ++i)
      if (k != 4 && (i * 7 + k) % (k % 3 + 2) == 0) subsets[k].push_back(i);
  EvalStats subsetStats;
  auto onSubsets = combinationCorrectness(ts, st->subgraphModels, data, all, subsets, 2, nullptr, nullptr, &subsetStats);
  ASSERT_TRUE(onSubsets.ok()) << onSubsets.error().message;
  size_t expectedRuns = 0;
  std::map<std::string, std::set<size_t>> firstPart;
  for (size_t k = 0; k < all.size(); ++k) {
    ASSERT_EQ((*onSubsets)[k].size(), subsets[k].size()) << k;
    for (size_t j = 0; j < subsets[k].size(); ++j)
      EXPECT_EQ((*onSubsets)[k][j], wholeCorrect[k][subsets[k][j]]) << ts.combinations[k].id << " sample " << subsets[k][j];
    firstPart[ts.combinations[k].variants[0]].insert(subsets[k].begin(), subsets[k].end());
    expectedRuns += subsets[k].size();
  }
  for (const auto& [v, need] : firstPart) expectedRuns += need.size();
  EXPECT_EQ(subsetStats.subgraphRuns, expectedRuns);
  // A subgraph the caller did not read is an error naming it.
  auto missing = combinationAccuracy(ts, stitch::SubgraphModels{}, data, all, 1, nullptr, nullptr, nullptr);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("subgraph model not loaded"), std::string::npos) << missing.error().message;
}

}  // namespace
}  // namespace zp::measure
