// Shared by the MTS tests: ONNX text for small weight-shared members, and the
// check that a stitched group reproduces every member's outputs in the runtime.
#pragma once
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "libplan/graph/model_io.h"
#include "libplan/graph/tensor.h"
#include "libplan/runtime/session.h"
#include "passes/mts/mts_stitch.h"

namespace zp::mts::testing {

// Deterministic values that depend on (seed, position): two tensors made with
// one seed agree on every position they both have, so a wider tensor of the
// same seed extends a narrower one (shared neurons plus exclusive ones).
inline float value(int seed, int64_t o, int64_t i, int64_t k) {
  return 0.1f * static_cast<float>((seed * 31 + o * 7 + i * 3 + k * 5) % 11 - 5);
}

inline std::string tensor(const std::string& name, std::vector<int64_t> dims, int seed, float offset = 0.f) {
  std::string d, v;
  int64_t inner = 1;
  for (size_t j = 0; j < dims.size(); ++j) {
    if (j) d += ',';
    d += std::to_string(dims[j]);
  }
  for (size_t j = 2; j < dims.size(); ++j) inner *= dims[j];
  const int64_t o = dims[0], i = dims.size() > 1 ? dims[1] : 1;
  for (int64_t a = 0; a < o; ++a)
    for (int64_t b = 0; b < i; ++b)
      for (int64_t k = 0; k < inner; ++k) {
        if (!v.empty()) v += ',';
        v += std::to_string(value(seed, a, b, k) + offset);
      }
  return "float[" + d + "] " + name + " = {" + v + "}";
}

inline onnx::ModelProto parse(const std::string& text) {
  auto m = graph::parseModelText(text);
  EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().message);
  return m.ok() ? *m : onnx::ModelProto{};
}

inline double relDiff(const runtime::Tensor& a, const runtime::Tensor& b) {
  double num = 0, den = 1e-12;
  for (int64_t j = 0; j < b.size(); ++j) {
    num = std::max(num, static_cast<double>(std::fabs(a.ptr<float>()[j] - b.ptr<float>()[j])));
    den = std::max(den, static_cast<double>(std::fabs(b.ptr<float>()[j])));
  }
  return num / std::max(den, 1.0);
}

// Stitches, checks the model, runs every member alone and the stitched graph on
// the same random inputs, and expects equal outputs. Returns the group.
inline StitchedGroup expectEquivalent(const std::vector<onnx::ModelProto>& models, const StitchParams& params = {},
                                      double tol = 1e-5) {
  std::vector<const onnx::ModelProto*> ptrs;
  std::vector<std::string> tasks;
  for (size_t t = 0; t < models.size(); ++t) {
    ptrs.push_back(&models[t]);
    tasks.push_back("m" + std::to_string(t));
  }
  auto group = stitchGroup(ptrs, tasks, params);
  EXPECT_TRUE(group.ok()) << (group.ok() ? "" : group.error().message);
  if (!group.ok()) return {};
  runtime::SessionOptions options;
  auto stitched = runtime::Session::fromModel(group->model, "stitched", options);
  EXPECT_TRUE(stitched.ok()) << (stitched.ok() ? "" : stitched.error().message);
  if (!stitched.ok()) return std::move(*group);
  runtime::TensorMap feeds;
  std::vector<runtime::TensorMap> own;
  for (size_t t = 0; t < models.size(); ++t) {
    auto member = runtime::Session::fromModel(models[t], tasks[t], options);
    EXPECT_TRUE(member.ok());
    const std::string& name = group->members[t].stitchedInput;  // members may share one
    if (!feeds.count(name)) feeds[name] = runtime::randomInput((*member)->inputs()[0], 100 + t);
    auto out = (*member)->run({{(*member)->inputs()[0].name, feeds[name]}});
    EXPECT_TRUE(out.ok());
    own.push_back(std::move(*out));
  }
  auto got = (*stitched)->run(feeds);
  EXPECT_TRUE(got.ok()) << (got.ok() ? "" : got.error().message);
  for (size_t t = 0; t < models.size() && got.ok(); ++t)
    for (size_t k = 0; k < group->members[t].outputs.size(); ++k) {
      const auto& want = own[t].at(group->members[t].outputs[k]);
      const auto& have = got->at(group->members[t].stitchedOutputs[k]);
      EXPECT_EQ(want.shape, have.shape);
      EXPECT_LE(relDiff(have, want), tol) << tasks[t] << " output " << group->members[t].outputs[k];
      float peak = 0;
      for (int64_t j = 0; j < want.size(); ++j) peak = std::max(peak, std::fabs(want.ptr<float>()[j]));
      EXPECT_GT(peak, 0.f) << tasks[t] << ": all-zero outputs would make the comparison vacuous";
    }
  // Storage: the stitched weights are exactly the shared plus the exclusive
  // blocks, and those cover every member's (BN-folded) weights exactly once.
  int64_t stored = 0;
  for (const auto& init : group->model.graph().initializer()) {
    const std::string& n = init.name();
    if (n.ends_with("/weight") || n.ends_with("/bias")) stored += graph::byteSize(init);
  }
  EXPECT_EQ(stored, group->stats.weightBytes());
  int64_t covered = group->stats.exclusiveBytes;
  for (int64_t b : group->stats.memberSharedBytes) covered += b;
  EXPECT_EQ(covered, group->stats.memberFoldedBytes);
  return std::move(*group);
}

// The same in every Mts variant: rows restricted (the default), the paper's
// all-rows products, and one shared input; returns the default's group.
inline StitchedGroup expectEquivalentAllModes(const std::vector<onnx::ModelProto>& models, double tol = 1e-5) {
  StitchParams allRows, shared;
  allRows.restrictRows = false;
  shared.sharedInput = true;
  {
    SCOPED_TRACE("all rows");
    expectEquivalent(models, allRows, tol);
  }
  {
    SCOPED_TRACE("shared input");
    expectEquivalent(models, shared, tol);
  }
  return expectEquivalent(models, StitchParams{}, tol);
}

}  // namespace zp::mts::testing
