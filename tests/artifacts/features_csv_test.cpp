// features.csv: rows written read back as the same rows (names that need
// quoting included), and the reader names the file and line of a bad cell.
#include <gtest/gtest.h>

#include <random>

#include "libplan/artifacts/features_csv.h"

namespace zp::artifacts {
namespace {

TEST(artifactsFeaturesCsv, RandomRowsRoundTripAndRewriteToTheSameBytes) {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<FeatureRow> rows;
  const std::vector<std::string> names = {"conv1", "block/conv,2", "say \"hi\"", " padded ", "Gemm_0"};
  for (int i = 0; i < 200; ++i)
    rows.push_back(FeatureRow{"digits", i % 3, i % 2 ? "dense" : "u50", names[static_cast<size_t>(i) % names.size()],
                              "Conv", "winograd", 1e6 * u(rng), u(rng), u(rng), 100 * u(rng), u(rng)});
  const std::string text = formatFeaturesCsv(rows);
  auto back = parseFeaturesCsv(text, "features.csv");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back, rows);
  EXPECT_EQ(formatFeaturesCsv(*back), text);
}

TEST(artifactsFeaturesCsv, BadCellIsAOneLineErrorNamingFileAndLine) {
  std::string text = std::string(kFeaturesCsvHeader) + "\n" + "digits,0,dense,conv1,Conv,im2col,10,0.5,0.2,3,-1\n";
  auto r = parseFeaturesCsv(text, "features.csv");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message.rfind("features.csv:2:", 0), 0u) << r.error().message;
  EXPECT_NE(r.error().message.find("'ms'"), std::string::npos) << r.error().message;
  EXPECT_EQ(r.error().message.find('\n'), std::string::npos);
}

}  // namespace
}  // namespace zp::artifacts
