// Helpers shared by the graph tests.
#pragma once
#include <gtest/gtest.h>

#include <string>

#include "libplan/graph/model_io.h"

namespace zp::graph::test_util {

// The model written in ONNX text; a parse error fails the test and gives an empty model.
inline onnx::ModelProto parse(const std::string& text, const LoadOptions& options = {}) {
  auto m = parseModelText(text, options);
  EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().message);
  return m.ok() ? *m : onnx::ModelProto();
}

}  // namespace zp::graph::test_util
