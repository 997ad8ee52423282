#include "tests/common/temp_dir.h"
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "libplan/graph/model_io.h"

namespace zp::graph {
namespace {
namespace fs = std::filesystem;

TEST(ModelIo, NotOnnxIsAOneLineErrorNamingTheFile) {
  fs::path p = zp::testing::uniqueTempDir("not_onnx") / "zp_not_onnx.onnx";
  std::ofstream(p) << "this is not a protobuf at all\n";
  auto m = loadModel(p);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().message.find(p.string()), 0u);
  EXPECT_EQ(m.error().message.find('\n'), std::string::npos);
  fs::remove(p);
}

TEST(ModelIo, RoundTripIsByteIdenticalAndInlinesExternalData) {
  auto m = parseModelText(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,2] x) => (float[1,2] y)
    <float[2] b = {1.0, 2.0}>
    { y = Add (x, b) }
  )");
  ASSERT_TRUE(m.ok());
  fs::path dir = zp::testing::uniqueTempDir("model_io");
  // Move b's data to an external file, as large exported models do.
  onnx::ModelProto ext = *m;
  auto* t = ext.mutable_graph()->mutable_initializer(0);
  std::string bytes(8, '\0');
  float vals[2] = {1.0f, 2.0f};
  std::memcpy(bytes.data(), vals, 8);
  std::ofstream(dir / "weights.bin", std::ios::binary) << "PAD!" << bytes;
  t->clear_float_data();
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  auto add = [&](const char* k, const std::string& v) {
    auto* e = t->add_external_data();
    e->set_key(k);
    e->set_value(v);
  };
  add("location", "weights.bin");
  add("offset", "4");
  add("length", "8");
  ASSERT_TRUE(saveModel(ext, dir / "ext.onnx").ok());
  auto loaded = loadModel(dir / "ext.onnx");
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  EXPECT_EQ(loaded->graph().initializer(0).raw_data(), bytes);

  ASSERT_TRUE(saveModel(*loaded, dir / "a.onnx").ok());
  auto again = loadModel(dir / "a.onnx");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(serializeModel(*again), serializeModel(*loaded));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace zp::graph
