// node_profile.csv: rows written read back as the same rows and rewrite to the
// same bytes; the reader names the file and line of a bad cell.
#include <gtest/gtest.h>

#include <random>

#include "libplan/artifacts/node_profile_csv.h"

namespace zp::artifacts {
namespace {

TEST(artifactsNodeProfileCsv, RandomRowsRoundTripAndRewriteToTheSameBytes) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::uniform_int_distribution<int64_t> d(0, 512);
  const std::vector<std::string> names = {"/layer1/conv", "block/conv,2", "say \"hi\"", " padded ", ""};
  const std::vector<std::string> policies = {"default", "im2col", "sparse"};
  std::vector<NodeProfileRow> rows;
  for (int i = 0; i < 200; ++i) {
    NodeProfileRow r;
    r.model = i % 2 ? "resnet18_112" : "digits/dense";
    r.policy = policies[static_cast<size_t>(i) % 3];
    r.threads = 1 + i % 2;
    r.node = names[static_cast<size_t>(i) % names.size()];
    auto& f = r.features;
    f.opType = i % 3 ? "Conv" : "Relu";
    f.kernel = i % 3 ? "winograd" : "";
    f.activation = i % 4 ? "Relu" : "";
    f.batch = 1;
    f.inChannels = d(rng), f.inH = d(rng), f.inW = d(rng), f.outChannels = d(rng);
    f.kernelH = f.kernelW = 3, f.stride = 1 + i % 2, f.groups = 1;
    f.flops = 1e9 * u(rng), f.intensity = 1e8 * u(rng), f.bytes = 1e6 * u(rng);
    f.weightSparsity = u(rng), f.inputSparsity = u(rng), f.outputSparsity = u(rng);
    f.inputReuseBytes = 1e7 * u(rng), f.modelBytes = 1e8 * u(rng);
    r.ms = u(rng), r.msOdd = u(rng), r.msEven = u(rng);
    rows.push_back(r);
  }
  const std::string text = formatNodeProfileCsv(rows);
  auto back = parseNodeProfileCsv(text, "node_profile.csv");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back, rows);
  EXPECT_EQ(formatNodeProfileCsv(*back), text);
}

TEST(artifactsNodeProfileCsv, BadCellIsAOneLineErrorNamingFileAndLine) {
  const std::string good = "m,default,1,conv,Conv,im2col,Clip,1,3,32,32,8,3,3,1,1,100,50,40,0,0,0.5,1000,200000,0.1,0.1,0.1\n";
  auto ok = parseNodeProfileCsv(std::string(kNodeProfileCsvHeader) + "\n" + good, "node_profile.csv");
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ(ok->at(0).features.outChannels, 8);
  EXPECT_EQ(ok->at(0).features.activation, "Clip");
  EXPECT_DOUBLE_EQ(ok->at(0).features.inputReuseBytes, 1000);
  EXPECT_DOUBLE_EQ(ok->at(0).features.modelBytes, 200000);
  struct Case { std::string line, column; };
  for (const auto& c : std::vector<Case>{
           {"m,default,1,conv,Conv,im2col,Clip,1,3,32,32,8,3,3,1,1,100,50,40,0,0,0.5,1000,200000,-1,0.1,0.1\n", "'ms'"},
           {"m,default,1,conv,Conv,im2col,Clip,1,3,32,32,8,3,3,1,1,100,50,40,1.5,0,0.5,1000,200000,1,0.1,0.1\n", "'weight_sparsity'"},
           {"m,,1,conv,Conv,im2col,Clip,1,3,32,32,8,3,3,1,1,100,50,40,0,0,0.5,1000,200000,1,0.1,0.1\n", "'policy'"},
           {"m,default,0,conv,Conv,im2col,Clip,1,3,32,32,8,3,3,1,1,100,50,40,0,0,0.5,1000,200000,1,0.1,0.1\n", "'threads'"},
           {"m,default,1,conv,Conv,im2col,Clip,1,3,x,32,8,3,3,1,1,100,50,40,0,0,0.5,1000,200000,1,0.1,0.1\n", "'in_h'"},
           {"m,default,1,conv,Conv,im2col,Clip,1,3,32,32,8,3,3,1,1,100,50,40,0,0,0.5,1000,-5,1,0.1,0.1\n", "'model_bytes'"},
           {"m,default,1,conv,Conv,im2col,Clip,1,3\n", "cells"}}) {
    auto r = parseNodeProfileCsv(std::string(kNodeProfileCsvHeader) + "\n" + good + c.line, "node_profile.csv");
    ASSERT_FALSE(r.ok()) << c.line;
    EXPECT_EQ(r.error().message.rfind("node_profile.csv:3:", 0), 0u) << r.error().message;
    EXPECT_NE(r.error().message.find(c.column), std::string::npos) << r.error().message;
    EXPECT_EQ(r.error().message.find('\n'), std::string::npos);
  }
  EXPECT_FALSE(parseNodeProfileCsv("model,policy\n", "node_profile.csv").ok());
}

TEST(artifactsNodeProfileCsv, AFileWrittenBeforeTheActivationColumnReadsWithNoActivationNorContext) {
  const std::string old = std::string(kNodeProfileCsvHeaderNoActivation) +
                          "\nm,default,1,conv,Conv,im2col,1,3,32,32,8,3,3,1,1,100,50,40,0,0,0.5,0.1,0.1,0.1\n";
  auto r = parseNodeProfileCsv(old, "node_profile.csv");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->at(0).features.kernel, "im2col");
  EXPECT_EQ(r->at(0).features.activation, "");
  EXPECT_EQ(r->at(0).features.modelBytes, 0);
  EXPECT_EQ(r->at(0).features.outChannels, 8);
  EXPECT_DOUBLE_EQ(r->at(0).ms, 0.1);
  // A row of the new width under the old header is still an error naming the line.
  auto bad = parseNodeProfileCsv(std::string(kNodeProfileCsvHeaderNoActivation) +
                                     "\nm,default,1,conv,Conv,im2col,Relu,1,3,32,32,8,3,3,1,1,100,50,40,0,0,0.5,0.1,0.1,0.1\n",
                                 "node_profile.csv");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message.rfind("node_profile.csv:2:", 0), 0u) << bad.error().message;
}

}  // namespace
}  // namespace zp::artifacts
