// The bundled weight-shared zoo (testdata/mts): every group stitched, each
// member's outputs from the stitched graph equal its own on the test split, and
// its top-1 accuracy through the stitched graph equals the one zoo.json records.
#include <fstream>

#include "libplan/artifacts/zoo_json.h"
#include "libplan/artifacts/multitask_group_json.h"
#include "libplan/runtime/npy.h"
#include "drivers/mts_flow/zoo_mts.h"
#include "tests/mts/mts_test_util.h"
#include "tests/common/test_paths.h"

namespace zp::mts::testing {
namespace {
namespace fs = std::filesystem;

const fs::path kZoo = fs::path(zp::testing::kSourceDir) / "testdata" / "mts" / "zoo.json";

runtime::Tensor row(const runtime::Tensor& all, int64_t i) {
  runtime::Shape shape = all.shape;
  shape[0] = 1;
  const int64_t n = all.size() / all.shape[0];
  std::vector<float> v(all.ptr<float>() + i * n, all.ptr<float>() + (i + 1) * n);
  return runtime::Tensor::fromFloats(v, shape);
}

class MtsZoo : public ::testing::TestWithParam<std::tuple<std::string, bool>> {};

TEST_P(MtsZoo, StitchedGroupReproducesEveryMember) {
  auto zoo = artifacts::loadZoo(kZoo);
  ASSERT_TRUE(zoo.ok()) << zoo.error().message;
  auto groups = artifacts::loadMultitaskGroups(*zoo);
  ASSERT_TRUE(groups.ok()) << groups.error().message;
  const zoo::MultitaskGroup* group = nullptr;
  for (const auto& g : *groups)
    if (g.name == std::get<0>(GetParam())) group = &g;
  ASSERT_NE(group, nullptr);
  zoo::MultitaskGroup chosen = *group;
  chosen.sharedInput = std::get<1>(GetParam());  // the digit tasks read the same images
  group = &chosen;
  auto stitched = stitchZooGroup(*zoo, *group, StitchMode::Mts, std::nullopt);
  ASSERT_TRUE(stitched.ok()) << stitched.error().message;
  EXPECT_EQ(stitched->stats.weightBytes(), stitched->stats.sharedBytes + stitched->stats.exclusiveBytes);
  EXPECT_LT(stitched->stats.weightBytes(), stitched->stats.memberFoldedBytes);
  runtime::SessionOptions options;
  auto session = runtime::Session::fromModel(stitched->model, group->name, options);
  ASSERT_TRUE(session.ok()) << session.error().message;
  auto models = loadGroupModels(*zoo, *group);
  ASSERT_TRUE(models.ok());
  std::vector<runtime::Tensor> xs, ys;
  std::vector<std::unique_ptr<runtime::Session>> own;
  std::vector<double> accuracy;
  int64_t samples = -1;
  for (size_t t = 0; t < group->members.size(); ++t) {
    const zoo::TaskSpec* task = nullptr;
    for (const auto& ts : zoo->tasks)
      if (ts.name == group->members[t].task) task = &ts;
    ASSERT_TRUE(task && task->dataset);
    auto x = runtime::readNpy(zoo->resolve(task->dataset->inputs));
    auto y = runtime::readNpy(zoo->resolve(task->dataset->labels));
    ASSERT_TRUE(x.ok() && y.ok());
    samples = std::max(samples, x->shape[0]);
    xs.push_back(std::move(*x));
    ys.push_back(std::move(*y));
    auto s = runtime::Session::fromModel(models->models[t], group->members[t].task, options);
    ASSERT_TRUE(s.ok());
    own.push_back(std::move(*s));
    accuracy.push_back(*task->variants[0].accuracy);
  }
  std::vector<int64_t> correct(group->members.size(), 0);
  double worst = 0;
  for (int64_t i = 0; i < samples; ++i) {
    runtime::TensorMap feeds;
    // A member whose split is shorter gets its first sample again (not counted).
    for (size_t t = 0; t < xs.size(); ++t) feeds[stitched->members[t].stitchedInput] = row(xs[t], i < xs[t].shape[0] ? i : 0);
    auto got = (*session)->run(feeds);
    ASSERT_TRUE(got.ok()) << got.error().message;
    for (size_t t = 0; t < xs.size(); ++t) {
      const auto& io = stitched->members[t];
      auto want = own[t]->run({{io.input, feeds[io.stitchedInput]}});
      ASSERT_TRUE(want.ok());
      const auto& a = got->at(io.stitchedOutputs[0]);
      const auto& b = want->at(io.outputs[0]);
      worst = std::max(worst, relDiff(a, b));
      const float* p = a.ptr<float>();
      const int64_t best = std::max_element(p, p + a.size()) - p;
      if (i < xs[t].shape[0]) correct[t] += best == ys[t].ptr<int64_t>()[i];
    }
  }
  EXPECT_LE(worst, 1e-5);
  for (size_t t = 0; t < xs.size(); ++t) {
    EXPECT_NEAR(static_cast<double>(correct[t]) / static_cast<double>(xs[t].shape[0]), accuracy[t], 1e-6)
        << group->members[t].task;
  }
}

INSTANTIATE_TEST_SUITE_P(Groups, MtsZoo,
                         ::testing::Values(std::make_tuple("digits", false), std::make_tuple("tabular", false),
                                           std::make_tuple("digits", true)));

}  // namespace
}  // namespace zp::mts::testing
