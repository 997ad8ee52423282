// MTS stitching rule by rule on small models built from ONNX text, each checked
// against the members' own outputs in the runtime (mts_test_util.h).
#include "tests/mts/mts_test_util.h"

namespace zp::mts::testing {
namespace {

const char* kHeader = "<ir_version: 8, opset_import: [\"\" : 13]>\n";

// x[1,in] -> Gemm(w1: hidden x in, b1) -> Relu -> Gemm(w2: out x hidden, b2) -> y.
// Seeds pick the tensors; seed -1 leaves the bias out.
std::string mlp(int in, int hidden, int out, int w1, int b1, int w2, int b2) {
  std::string inits = tensor("w1", {hidden, in}, w1) + ", " + tensor("w2", {out, hidden}, w2);
  if (b1 >= 0) inits += ", " + tensor("b1", {hidden}, b1);
  if (b2 >= 0) inits += ", " + tensor("b2", {out}, b2);
  return std::string(kHeader) + "g (float[1," + std::to_string(in) + "] x) => (float[1," + std::to_string(out) +
         "] y)\n<" + inits + ">\n{\n  h = Gemm <transB = 1> (x, w1" + (b1 >= 0 ? ", b1" : "") +
         ")\n  r = Relu (h)\n  y = Gemm <transB = 1> (r, w2" + (b2 >= 0 ? ", b2" : "") + ")\n}\n";
}

TEST(MtsStitch, SharedInputNeuronsConcatenateWeightsSideBySide) {
  // Special case 1 (Eq. 1-2): the first layer is shared, the second exclusive:
  // one Gemm [X1 X2] over the batch-concatenated shared activations.
  auto g = expectEquivalentAllModes({parse(mlp(4, 6, 3, 1, 2, 3, 4)), parse(mlp(4, 6, 3, 1, 2, 5, 6))});
  EXPECT_EQ(g.stats.sharedBytes, (6 * 4 + 6) * 4);
  EXPECT_EQ(g.stats.exclusiveBytes, 2 * (3 * 6 + 3) * 4);
  StitchParams paper;
  paper.restrictRows = false;
  auto whole = expectEquivalent({parse(mlp(4, 6, 3, 1, 2, 3, 4)), parse(mlp(4, 6, 3, 1, 2, 5, 6))}, paper);
  int gemms = 0;
  for (const auto& n : whole.model.graph().node()) gemms += n.op_type() == "Gemm";
  EXPECT_EQ(gemms, 2);  // each layer one block: [U] and [X1 X2] over all rows
  EXPECT_GT(whole.stats.flops, g.stats.flops);  // restricted rows skip the P1·X2 products
  EXPECT_EQ(g.stats.flops, g.stats.memberFlops);  // exactly the members' own work
}

TEST(MtsStitch, ExclusiveInputsIntoSharedOutputsArePaddedWithZeros) {
  // Special case 2 (Eq. 3-4): different inputs (3 and 5 features) through
  // bias-free exclusive layers into the same neurons, then one shared layer U.
  auto g = expectEquivalentAllModes({parse(mlp(3, 4, 2, 1, -1, 7, 8)), parse(mlp(5, 4, 2, 2, -1, 7, 8))});
  EXPECT_EQ(g.stats.sharedBytes, (2 * 4 + 2) * 4);             // U and its bias, once
  EXPECT_EQ(g.stats.exclusiveBytes, (4 * 3 + 4 * 5) * 4);       // Y1, Y2
  EXPECT_EQ(g.stats.masks, 0);  // no redundant products: nothing to zero
  bool padded = false;
  for (const auto& n : g.model.graph().node()) padded = padded || n.op_type() == "ConstantOfShape";
  EXPECT_TRUE(padded);
}

TEST(MtsStitch, GeneralCaseSharesUAndKeepsXYZPerMember) {
  // Eq. 5 / 8: member 1 widens the hidden layer from 4 to 6 neurons; its first
  // four neurons and their weights are member 0's (U), the rest are X (in
  // layer 1) and Y (in layer 2). Three members: 0, the widened one, and one
  // with an exclusive second layer (Z).
  auto g = expectEquivalentAllModes({parse(mlp(3, 4, 2, 1, 2, 3, 4)), parse(mlp(3, 6, 2, 1, 2, 3, 4)),
                             parse(mlp(3, 4, 2, 1, 2, 9, 4))});
  const int64_t u1 = (4 * 3 + 4) * 4, x1 = (2 * 3 + 2) * 4;
  const int64_t u2 = (2 * 4 + 2) * 4, y2 = 2 * 2 * 4, z2 = (2 * 4 + 2) * 4;
  EXPECT_EQ(g.stats.sharedBytes, u1 + u2);
  EXPECT_EQ(g.stats.exclusiveBytes, x1 + y2 + z2);
  StitchParams paper;
  paper.restrictRows = false;
  auto whole = expectEquivalent({parse(mlp(3, 4, 2, 1, 2, 3, 4)), parse(mlp(3, 6, 2, 1, 2, 3, 4)),
                                 parse(mlp(3, 4, 2, 1, 2, 9, 4))}, paper);
  EXPECT_GT(whole.stats.masks, 0);  // P1·X2 products are zeroed before layer 2
}

TEST(MtsStitch, SharedInputRunsCommonLayersOnce) {
  // Three members on one input: the shared first layer runs on one row block,
  // which is copied when the members diverge.
  StitchParams p;
  p.sharedInput = true;
  auto g = expectEquivalent({parse(mlp(3, 4, 2, 1, 2, 3, 4)), parse(mlp(3, 4, 2, 1, 2, 5, 4)),
                             parse(mlp(3, 4, 2, 1, 2, 9, 4))}, p);
  EXPECT_EQ(g.stats.flops, 2.0 * (4 * 3) + 3 * 2.0 * (2 * 4));
  EXPECT_EQ(g.members[0].stitchedInput, g.members[2].stitchedInput);
}

// x[1,2,5,5] -> Conv(w0)+BN(s0) -> Relu -> Conv(w1)+BN(s1) -> Add(skip) -> Relu -> GAP -> Flatten -> Gemm(wf, bf).
std::string resnet(int w0, int s0, int w1, int s1, int wf) {
  auto bn = [](const std::string& p, int seed) {
    return tensor(p + "_scale", {4}, seed, 1.f) + ", " + tensor(p + "_bias", {4}, seed + 1) + ", " +
           tensor(p + "_mean", {4}, seed + 2) + ", " + tensor(p + "_var", {4}, seed + 3, 1.f);
  };
  return std::string(kHeader) + "g (float[1,2,5,5] x) => (float[1,3] y)\n<" + tensor("w0", {4, 2, 3, 3}, w0) + ", " +
         bn("bn0", s0) + ", " + tensor("w1", {4, 4, 3, 3}, w1) + ", " + bn("bn1", s1) + ", " +
         tensor("wf", {3, 4}, wf) + ", " + tensor("bf", {3}, wf + 1) + R"(>
{
  c0 = Conv <kernel_shape = [3, 3], pads = [1, 1, 1, 1]> (x, w0)
  n0 = BatchNormalization (c0, bn0_scale, bn0_bias, bn0_mean, bn0_var)
  r0 = Relu (n0)
  c1 = Conv <kernel_shape = [3, 3], pads = [1, 1, 1, 1]> (r0, w1)
  n1 = BatchNormalization (c1, bn1_scale, bn1_bias, bn1_mean, bn1_var)
  a = Add (n1, r0)
  r1 = Relu (a)
  p = GlobalAveragePool (r1)
  f = Flatten (p)
  y = Gemm <transB = 1> (f, wf, bf)
}
)";
}

TEST(MtsStitch, ConvWithBatchNormFoldedAndSharedOnce) {
  // The stem (Conv + BN) is shared: folded identically, stored once.
  auto g = expectEquivalentAllModes({parse(resnet(1, 10, 2, 20, 3)), parse(resnet(1, 10, 2, 20, 5))});
  EXPECT_EQ(g.stats.sharedBytes, 2 * (4 * 2 * 9 + 4) * 4 + (4 * 4 * 9 + 4) * 4 - (4 * 2 * 9 + 4) * 4);
  for (const auto& n : g.model.graph().node()) EXPECT_NE(n.op_type(), "BatchNormalization");
}

TEST(MtsStitch, ResidualWithOneExclusiveBranchIsRealigned) {
  // Member 1 fine-tuned the residual branch (w1, bn1): the Add joins a shared
  // skip with branches of different layouts.
  auto g = expectEquivalentAllModes({parse(resnet(1, 10, 2, 20, 3)), parse(resnet(1, 10, 4, 30, 5)),
                             parse(resnet(1, 10, 2, 20, 7))});
  EXPECT_EQ(g.stats.realignments, 1);
  EXPECT_EQ(g.stats.sharedBytes, (4 * 2 * 9 + 4) * 4 + (4 * 4 * 9 + 4) * 4);  // stem; branch of members 0 and 2
}

TEST(MtsStitch, NetFuseStoresEveryMemberInFullAndGroupsConvs) {
  StitchParams p;
  p.mode = StitchMode::NetFuse;
  auto g = expectEquivalent({parse(resnet(1, 10, 2, 20, 3)), parse(resnet(1, 10, 4, 30, 5))}, p);
  EXPECT_EQ(g.stats.sharedBytes, 0);
  EXPECT_EQ(g.stats.weightBytes(), g.stats.memberFoldedBytes);
  int grouped = 0;
  for (const auto& n : g.model.graph().node())
    for (const auto& a : n.attribute()) grouped += a.name() == "group" && a.i() == 2;
  EXPECT_EQ(grouped, 2);
}

Expected<StitchedGroup> stitchTexts(const std::vector<std::string>& texts, const StitchParams& p = {}) {
  std::vector<onnx::ModelProto> models;
  for (const auto& t : texts) models.push_back(parse(t));
  std::vector<const onnx::ModelProto*> ptrs;
  std::vector<std::string> tasks;
  for (size_t t = 0; t < models.size(); ++t) {
    ptrs.push_back(&models[t]);
    tasks.push_back("m" + std::to_string(t));
  }
  return stitchGroup(ptrs, tasks, p);
}

TEST(MtsStitch, RejectsMembersSharingNoWeights) {
  auto g = stitchTexts({mlp(4, 6, 3, 1, 2, 3, 4), mlp(4, 6, 3, 5, 6, 7, 8)});
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.error().message, "'m0' shares no weights with the other members of the group");
}

TEST(MtsStitch, RejectsDeclaredSharedTensorsOfDifferentShapes) {
  StitchParams p;
  p.declaredShared = {"w1"};
  auto g = stitchTexts({mlp(4, 6, 3, 1, 2, 3, 4), mlp(4, 7, 3, 1, 2, 3, 4)}, p);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.error().message, "shared tensor 'w1' has shape [6,4] in 'm0' but [7,4] in 'm1'");
  auto differs = stitchTexts({mlp(4, 6, 3, 1, 2, 3, 4), mlp(4, 6, 3, 2, 2, 3, 4)}, p);
  ASSERT_FALSE(differs.ok());
  EXPECT_EQ(differs.error().message, "shared tensor 'w1' differs between 'm0' and 'm1'");
}

TEST(MtsStitch, RejectsUnalignedMembers) {
  auto g = stitchTexts({mlp(4, 6, 3, 1, 2, 3, 4), resnet(1, 10, 2, 20, 3)});
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.error().message.find("are not aligned"), std::string::npos) << g.error().message;
}

TEST(MtsStitch, OutputIsDeterministic) {
  auto a = stitchTexts({resnet(1, 10, 2, 20, 3), resnet(1, 10, 4, 30, 5)});
  auto b = stitchTexts({resnet(1, 10, 2, 20, 3), resnet(1, 10, 4, 30, 5)});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(graph::serializeModel(a->model), graph::serializeModel(b->model));
}

}  // namespace
}  // namespace zp::mts::testing
