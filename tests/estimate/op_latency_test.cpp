// The operator latency predictor on a synthetic cost law it has to learn:
// leave-one-model-out accuracy, and predictions that follow FLOPs and sparsity.
#include <gtest/gtest.h>

#include <random>

#include <fmt/format.h>

#include "libplan/estimate/op_latency.h"

namespace zp::estimate {
namespace {

// A conv costs 1 ns per FLOP (sparse kernel: per non-zero weight FLOP) plus
// 5 us; a Relu 0.2 ns per output byte plus 2 us. 1% multiplicative noise.
std::vector<OpSample> synthetic(int models, int nodesPerModel, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> ch(1, 16), hw(2, 7), pick(0, 2);
  std::uniform_real_distribution<double> unit(0, 1), noise(0.99, 1.01);
  std::vector<OpSample> out;
  for (int m = 0; m < models; ++m)
    for (int i = 0; i < nodesPerModel; ++i) {
      OpFeatures f;
      f.batch = 1;
      f.inChannels = 8 * ch(rng);
      f.inH = f.inW = int64_t{1} << hw(rng);
      f.outChannels = 8 * ch(rng);
      const int kind = pick(rng);
      double ms = 0;
      if (kind < 2) {
        f.opType = "Conv";
        f.kernel = kind == 0 ? "im2col" : "sparse";
        f.kernelH = f.kernelW = 3;
        f.stride = f.groups = 1;
        f.weightSparsity = kind == 1 ? 0.5 + 0.45 * unit(rng) : 0.0;
        f.flops = 2.0 * 9 * f.inChannels * f.outChannels * f.inH * f.inW;
        f.intensity = f.flops / 2;
        ms = 1e-6 * f.flops * (1 - f.weightSparsity) + 0.005;
      } else {
        f.opType = "Relu";
        f.kernel = "";
        f.outChannels = f.inChannels;
        f.bytes = 8.0 * f.inChannels * f.inH * f.inW;
        f.flops = f.intensity = static_cast<double>(f.inChannels * f.inH * f.inW);
        ms = 2e-7 * f.bytes + 0.002;
      }
      if (f.bytes == 0) f.bytes = 4.0 * (f.inChannels + f.outChannels) * f.inH * f.inW;
      f.inputSparsity = unit(rng) * 0.5;
      out.push_back(OpSample{fmt::format("m{}", m), f, ms * noise(rng)});
    }
  return out;
}

TEST(estimateOpLatency, LeaveOneModelOutLearnsTheCostLaw) {
  auto samples = synthetic(4, 200, 11);
  auto params = defaultOpLatencyParams();
  params.rounds = 200;
  params.eta = 0.1;
  auto rep = leaveOneModelOut(samples, params);
  ASSERT_TRUE(rep.ok()) << rep.error().message;
  EXPECT_EQ(rep->models.size(), 4u);
  EXPECT_EQ(rep->nodes, samples.size());
  EXPECT_GT(rep->nodeWithinShare, 0.8);
  EXPECT_GT(rep->timeWithinShare, 0.8);
  EXPECT_LE(rep->timeWithinShare, 1.0);
  EXPECT_EQ(rep->modelWithinShare, 1.0);
  EXPECT_GT(rep->modelBytes, 1000u);
}

TEST(estimateOpLatency, PredictionsFollowFlopsAndWeightSparsity) {
  auto samples = synthetic(2, 300, 5);
  auto params = defaultOpLatencyParams();
  params.rounds = 200;
  params.eta = 0.1;
  auto p = OpLatencyPredictor::train(samples, params);
  ASSERT_TRUE(p.ok()) << p.error().message;
  OpFeatures small = samples[0].features;
  small.opType = "Conv";
  small.kernel = "sparse";
  small.kernelH = small.kernelW = 3;
  small.inChannels = small.outChannels = 32;
  small.inH = small.inW = 16;
  small.flops = 2.0 * 9 * 32 * 32 * 16 * 16;
  small.weightSparsity = 0.5;
  OpFeatures big = small;
  big.inH = big.inW = 64;
  big.flops *= 16;
  OpFeatures sparser = small;
  sparser.weightSparsity = 0.9;
  auto ms = p->predict({small, big, sparser});
  EXPECT_GT(ms[1], 4 * ms[0]);
  EXPECT_LT(ms[2], ms[0]);
}

TEST(estimateOpLatency, ExtrapolatesToOperatorsLargerThanAnySeen) {
  // Trained on convs up to 128 channels at up to 128x128, asked about 512
  // channels at 256x256: 32x more FLOPs than the largest seen. The time is
  // learnt relative to workPriorMs, so it scales; a tree on log(ms) would stop
  // at the largest time it saw.
  auto samples = synthetic(3, 300, 21);
  auto params = defaultOpLatencyParams();
  params.rounds = 200;
  params.eta = 0.1;
  auto p = OpLatencyPredictor::train(samples, params);
  ASSERT_TRUE(p.ok()) << p.error().message;
  OpFeatures f;
  f.opType = "Conv";
  f.kernel = "im2col";
  f.batch = 1;
  f.inChannels = f.outChannels = 512;
  f.inH = f.inW = 256;
  f.kernelH = f.kernelW = 3;
  f.stride = f.groups = 1;
  f.flops = 2.0 * 9 * 512 * 512 * 256 * 256;
  f.intensity = f.flops / 2;
  f.bytes = 4.0 * 1024 * 256 * 256;
  const double truth = 1e-6 * f.flops + 0.005;
  const double got = p->predict({f})[0];
  EXPECT_NEAR(got, truth, 0.1 * truth);
  double largest = 0;
  for (const auto& s : samples) largest = std::max(largest, s.ms);
  EXPECT_GT(got, 10 * largest);
}

TEST(estimateOpLatency, OneModelIsNotEnoughToValidate) {
  auto samples = synthetic(1, 20, 1);
  EXPECT_FALSE(leaveOneModelOut(samples, defaultOpLatencyParams()).ok());
}

}  // namespace
}  // namespace zp::estimate
