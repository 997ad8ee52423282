// Loading and destroying sessions over and over holds no memory: serving under a
// memory budget loads and evicts subgraphs for the whole run.
#include <gtest/gtest.h>

#include <malloc.h>

#include <filesystem>

#include "libplan/runtime/measure.h"
#include "libplan/runtime/session.h"
#include "tests/common/temp_dir.h"
#include "tests/common/test_paths.h"

namespace zp::runtime {
namespace {

size_t heapInUse() {
  ::malloc_trim(0);
  struct mallinfo2 m = ::mallinfo2();
  return m.uordblks + m.hblkhd;
}

void expectNoGrowth(const std::filesystem::path& model, SessionOptions o, const char* what) {
  for (int k = 0; k < 5; ++k) ASSERT_TRUE(Session::load(model, o).ok());  // one-off process state
  const size_t before = heapInUse();
  for (int k = 0; k < 100; ++k) {
    auto s = Session::load(model, o);
    ASSERT_TRUE(s.ok()) << s.error().message;
    ASSERT_TRUE((*s)->run(randomInputs(**s, 0)).ok());
  }
  const size_t after = heapInUse();
  EXPECT_LT(after, before + (size_t{4} << 20)) << what << ": " << (after - before) / 100 << " bytes per load held";
}

TEST(SessionLifetime, LoadingAgainAndAgainHoldsNoMemory) {
  const auto model = std::filesystem::path(zp::testing::kSourceDir) / "testdata/digits/models/dense.onnx";
  const auto dir = zp::testing::uniqueTempDir("session_lifetime");
  for (const char* policy : {"default", "sparse"}) {
    SessionOptions o;
    ASSERT_TRUE(parseKernelPolicy(policy).ok());
    o.kernels = *parseKernelPolicy(policy);
    o.computeSourceChecksums = true;
    auto s = Session::load(model, o);
    ASSERT_TRUE(s.ok());
    const auto cache = dir / (std::string(policy) + ".zwc");
    ASSERT_TRUE((*s)->writeCache(cache).ok());
    o.computeSourceChecksums = false;
    expectNoGrowth(model, o, policy);
    o.cache = cache;
    expectNoGrowth(model, o, (std::string(policy) + " with its cache").c_str());
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace zp::runtime
