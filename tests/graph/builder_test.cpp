#include <gtest/gtest.h>

#include "libplan/graph/analysis.h"
#include "libplan/graph/builder.h"
#include "libplan/graph/model_io.h"

namespace zp::graph {
namespace {

const char* kChain = R"(
  <ir_version: 8, opset_import: ["" : 13]>
  g (float[1,4] x) => (float[1,4] y)
  <float[4,4] w1 = {1.0,0.0,0.0,0.0, 0.0,1.0,0.0,0.0, 0.0,0.0,1.0,0.0, 0.0,0.0,0.0,1.0},
   float[4,4] w2 = {1.0,0.0,0.0,0.0, 0.0,1.0,0.0,0.0, 0.0,0.0,1.0,0.0, 0.0,0.0,0.0,1.0},
   float[2] shp = {1.0, 4.0}>
  {
    a = MatMul (x, w1)
    b = Relu (a)
    c = MatMul (b, w2)
    y = Sigmoid (c)
  }
)";

TEST(Builder, ExtractKeepsOnlyWhatTheBoundaryNeeds) {
  auto m = parseModelText(kChain);
  ASSERT_TRUE(m.ok()) << m.error().message;
  GraphView v(*m);
  auto first = extractSubgraph(v, {"x"}, {"b"}, "first");
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_TRUE(checkModel(*first, "first").ok());
  EXPECT_EQ(first->graph().node_size(), 2);
  EXPECT_EQ(first->graph().initializer_size(), 1);
  EXPECT_EQ(first->graph().initializer(0).name(), "w1");
  ASSERT_EQ(first->graph().output_size(), 1);
  EXPECT_EQ(first->graph().output(0).type().tensor_type().shape().dim(1).dim_value(), 4);

  auto second = extractSubgraph(v, {"b"}, {"y"}, "second");
  ASSERT_TRUE(second.ok());
  EXPECT_TRUE(checkModel(*second, "second").ok());

  // The chain of the two parts is the original computation, with the two
  // identical identity matrices stored once.
  auto chained = chainModels({&*first, &*second}, "chained");
  ASSERT_TRUE(chained.ok()) << chained.error().message;
  EXPECT_TRUE(checkModel(*chained, "chained").ok());
  EXPECT_EQ(chained->graph().node_size(), 4);
  EXPECT_EQ(chained->graph().initializer_size(), 1);
  EXPECT_EQ(chained->graph().node(2).input(1), "w1");
}

TEST(Builder, ExtractRejectsAnOpenBoundary) {
  auto m = parseModelText(kChain);
  ASSERT_TRUE(m.ok());
  GraphView v(*m);
  auto bad = extractSubgraph(v, {"a"}, {"y"}, "bad");
  ASSERT_TRUE(bad.ok());  // a closes the boundary
  auto open = extractSubgraph(v, {"b"}, {"a", "y"}, "open");
  ASSERT_FALSE(open.ok());
  EXPECT_NE(open.error().message.find("graph input 'x'"), std::string::npos);
}

TEST(Builder, ChainRenamesCollidingNames) {
  auto m = parseModelText(kChain);
  ASSERT_TRUE(m.ok());
  GraphView v(*m);
  auto first = extractSubgraph(v, {"x"}, {"b"}, "first");
  ASSERT_TRUE(first.ok());
  // Chaining a part with itself: its internal tensor 'a' and node names collide.
  onnx::ModelProto again = *first;
  again.mutable_graph()->mutable_input(0)->set_name("x2");
  again.mutable_graph()->mutable_node(0)->set_input(0, "x2");
  auto chained = chainModels({&*first, &again}, "twice");
  ASSERT_TRUE(chained.ok()) << chained.error().message;
  EXPECT_TRUE(checkModel(*chained, "twice").ok()) << checkModel(*chained, "twice").error().message;
  EXPECT_EQ(chained->graph().node(2).input(0), "b");
  EXPECT_EQ(chained->graph().node(2).output(0), "p1/a");
  EXPECT_EQ(chained->graph().output(0).name(), "p1/b");
}

}  // namespace
}  // namespace zp::graph
