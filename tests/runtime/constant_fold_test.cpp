// Constant folding on its own: which nodes fold, what they fold to, and which stay.
#include <gtest/gtest.h>

#include "libplan/graph/model_io.h"
#include "libplan/runtime/cache/weight_cache.h"
#include "libplan/runtime/constant_fold.h"

namespace zp::runtime {
namespace {

struct Folded {
  onnx::ModelProto model;
  ValueTable values;
  Expected<std::vector<int>> live = std::vector<int>{};
  std::vector<std::string> liveOps() const {
    std::vector<std::string> ops;
    for (int i : *live) ops.push_back(model.graph().node(i).op_type());
    return ops;
  }
  std::vector<float> floats(const std::string& name) const { return values.constant(name)->toF32(); }
  std::vector<int64_t> ints(const std::string& name) const { return values.constant(name)->toI64(); }
};

// Folds `text`; `inputsFixed` as the session decides it (every input shape fixed).
void fold(const std::string& text, bool inputsFixed, Folded* f, bool fromSkeleton = false) {
  auto m = graph::parseModelText(text);
  ASSERT_TRUE(m.ok()) << m.error().message;
  f->model = *m;
  ASSERT_TRUE(loadInitializers(f->model.graph(), fromSkeleton, "m", f->values).ok());
  graph::GraphView view(f->model);
  StaticShapes shapes(view, f->values, inputsFixed);
  Scratch scratch;
  FoldEnvironment env;
  env.scratch = &scratch;
  env.label = "m.onnx";
  f->live = foldConstants(view, shapes, env, f->values);
}

const char* kShapeArithmetic = R"(
  <ir_version: 8, opset_import: ["" : 13]>
  g (float[2,3,4] x) => (float[6,4] y, float[1] k)
  <float[1] one = {1.0}, int64[1] first = {0}, int64[1] second = {1}, int64[1] minus1 = {-1}>
  {
    c = Constant <value = float[1] {2.0}> ()
    d = Add (c, one)
    s = Shape (x)
    a = Gather (s, first)
    b = Gather (s, second)
    ab = Mul (a, b)
    shp = Concat <axis=0> (ab, minus1)
    t = Mul (x, d)
    y = Reshape (t, shp)
    k = Constant <value = float[1] {5.0}> ()
  }
)";

TEST(ConstantFold, ConstantsShapesOfStaticTensorsAndTheArithmeticAfterThemFold) {
  Folded f;
  fold(kShapeArithmetic, true, &f);
  ASSERT_TRUE(f.live.ok()) << f.live.error().message;
  EXPECT_EQ(f.liveOps(), (std::vector<std::string>{"Mul", "Reshape", "Constant"}));
  EXPECT_EQ(f.floats("d"), (std::vector<float>{3.0f}));
  EXPECT_EQ(f.ints("s"), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(f.ints("shp"), (std::vector<int64_t>{6, -1}));
  EXPECT_EQ(f.values.constant("t"), nullptr);
  EXPECT_EQ(f.values.constant("k"), nullptr) << "a graph output is computed by the run, not folded";
}

TEST(ConstantFold, ShapeOfADynamicTensorStays) {
  Folded f;
  fold(kShapeArithmetic, false, &f);
  ASSERT_TRUE(f.live.ok()) << f.live.error().message;
  EXPECT_EQ(f.liveOps(), (std::vector<std::string>{"Shape", "Gather", "Gather", "Mul", "Concat", "Mul", "Reshape",
                                                   "Constant"}));
  EXPECT_EQ(f.floats("d"), (std::vector<float>{3.0f}));
}

TEST(ConstantFold, Int8WeightsAreDequantizedOnce) {
  Folded f;
  fold(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,4] x) => (float[1,2] y)
    <int8[4,2] wq = {-128, -1, 0, 1, 2, 3, 127, 5}, float ws = {0.5}, int8 wz = {1}>
    {
      w = DequantizeLinear (wq, ws, wz)
      y = MatMul (x, w)
    }
  )", true, &f);
  ASSERT_TRUE(f.live.ok()) << f.live.error().message;
  EXPECT_EQ(f.liveOps(), (std::vector<std::string>{"MatMul"}));
  EXPECT_EQ(f.floats("w"), (std::vector<float>{-64.5f, -1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 63.0f, 2.0f}));
}

TEST(ConstantFold, FoldingAWeightTheSkeletonLeftToTheCacheIsAnError) {
  const std::string text = R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,4] x) => (float[1,4] y)
    <float[4,4] w = {1,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,0,1}>
    {
      wt = Transpose (w)
      y = MatMul (x, wt)
    }
  )";
  auto m = graph::parseModelText(text);
  ASSERT_TRUE(m.ok());
  auto* w = m->mutable_graph()->mutable_initializer(0);
  w->clear_float_data();
  w->clear_raw_data();
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* kv = w->add_external_data();
  kv->set_key("location");
  kv->set_value(kSkeletonStrippedLocation);
  Folded f;
  f.model = *m;
  ASSERT_TRUE(loadInitializers(f.model.graph(), true, "m", f.values).ok());
  EXPECT_FALSE(loadInitializers(f.model.graph(), false, "m", f.values).ok()) << "only a skeleton may lack data";
  graph::GraphView view(f.model);
  StaticShapes shapes(view, f.values, true);
  Scratch scratch;
  FoldEnvironment env;
  env.scratch = &scratch;
  env.label = "m.onnx";
  auto live = foldConstants(view, shapes, env, f.values);
  ASSERT_FALSE(live.ok());
  EXPECT_EQ(live.error().message,
            "m.onnx: node 'Transpose_0' would fold initializer 'w', which the skeleton leaves to the cache");
}

TEST(ConstantFold, AnOpThatFailsNamesTheNode) {
  Folded f;
  fold(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2] x) => (float[2] y)
    <float[2] a = {1.0, 2.0}, float[3] b = {1.0, 2.0, 3.0}>
    {
      c = Add (a, b)
      y = Add (x, c)
    }
  )", true, &f);
  ASSERT_FALSE(f.live.ok());
  EXPECT_EQ(f.live.error().message, "m.onnx: node 'Add_0' (Add): shapes [2] [3] cannot be broadcast");
}

}  // namespace
}  // namespace zp::runtime
