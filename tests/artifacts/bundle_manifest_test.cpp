// The bundle manifest: written and read back as the same manifest.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>

#include "libplan/artifacts/bundle_manifest.h"
#include "libplan/util/file.h"

namespace zp::artifacts {
namespace {
namespace fs = std::filesystem;

TEST(artifactsBundleManifest, WrittenManifestReadsBackTheSame) {
  char tmpl[] = "/tmp/zp_bundle_manifest_XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const fs::path dir = tmpl;
  BundleManifest m;
  m.tool = "plan-emit 0.1.0";
  m.inputs = {{"plan", "plan", "../plan.json", std::string(64, 'a')},
              {"subgraph", "subgraphs/0123.onnx", "../stitch/subgraphs/0123.onnx", std::string(64, 'b')}};
  m.artifacts = {{"plan.json", 120, std::string(64, 'c')}, {cacheFileName(std::string(64, 'd'), "winograd"), 4096, std::string(64, 'e')}};
  ASSERT_TRUE(writeBundleManifest(m, dir).ok());
  auto back = readBundleManifest(dir);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back, m);
  auto again = manifestFromJson(toJson(*back), "manifest.json");
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(*again, m);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace zp::artifacts
