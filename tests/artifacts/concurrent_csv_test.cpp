// The concurrent flow's CSVs: group rows and the contention surfaces written
// and read back are the same (names that need quoting, a group that cannot
// run everywhere, a name starting with '#'), and rewriting gives the same bytes.
#include <gtest/gtest.h>

#include <random>

#include "libplan/artifacts/contention_csv.h"
#include "libplan/artifacts/group_rows_csv.h"
#include "tests/artifacts/concurrent_inputs_test.h"
#include "tests/common/test_paths.h"

namespace zp::artifacts {
namespace {
namespace fs = std::filesystem;

TEST(artifactsGroupRowsCsv, RandomGroupsRoundTripAndRewriteToTheSameBytes) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const std::vector<std::string> accs = {"GPU", "DLA, v2", "CPU"};
  const std::vector<std::string> names = {"0-9", "conv \"a\"", "#not a comment", " padded ", "inception/4a"};
  std::vector<sim::GroupCost> groups;
  for (size_t i = 0; i < 40; ++i) {
    sim::GroupCost g;
    g.name = names[i % names.size()] + std::to_string(i);
    for (size_t a = 0; a < accs.size(); ++a) {
      g.timeMs.push_back(a > 0 && i % 4 == a ? -1 : 1e-3 + 20 * u(rng));
      // A group's row is absent on an accelerator it cannot run on: the reader gives 0 there.
      const bool allowed = g.timeMs.back() >= 0;
      g.transitionOutMs.push_back(allowed ? u(rng) / 3 : 0);
      g.transitionInMs.push_back(allowed ? u(rng) / 9 : 0);
      g.demand.push_back(allowed ? 100 * u(rng) : 0);
    }
    groups.push_back(g);
  }
  const std::string text = formatGroupRowsCsv(groups, accs);
  auto back = parseGroupRowsCsv(text, "groups.csv", accs);
  ASSERT_TRUE(back.ok()) << back.error().message;
  testing::expectSameGroups(*back, groups);
  EXPECT_EQ(formatGroupRowsCsv(*back, accs), text);
}

TEST(artifactsContentionCsv, SurfacesRoundTripAndRewriteToTheSameBytes) {
  std::mt19937_64 rng(9);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const std::vector<std::string> accs = {"GPU", "DLA"};
  std::vector<sim::ContentionModel::Surface> surfaces;
  for (size_t a = 0; a < accs.size(); ++a) {
    sim::ContentionModel::Surface s;
    s.own = {0, 12.5, 50.0 + static_cast<double>(a), 100};
    s.external = {0, 1.0 / 3, 90, 120, 200};
    for (size_t k = 0; k < s.own.size() * s.external.size(); ++k) s.slowdown.push_back(1 + 2 * u(rng));
    surfaces.push_back(s);
  }
  const auto model = sim::ContentionModel::fromSurfaces(surfaces);
  const std::string text = formatContentionCsv(model, accs);
  auto back = parseContentionCsv(text, "soc.csv", accs);
  ASSERT_TRUE(back.ok()) << back.error().message;
  ASSERT_EQ(back->surfaces().size(), surfaces.size());
  for (size_t a = 0; a < surfaces.size(); ++a) {
    EXPECT_EQ(back->surfaces()[a].own, surfaces[a].own);
    EXPECT_EQ(back->surfaces()[a].external, surfaces[a].external);
    EXPECT_EQ(back->surfaces()[a].slowdown, surfaces[a].slowdown);
  }
  EXPECT_EQ(formatContentionCsv(*back, accs), text);
  // The bundled illustrative surface reads back through the writer unchanged.
  auto bundled = readContentionCsv(fs::path(zp::testing::kSourceDir) / "testdata/concurrent/contention-illustrative.csv", accs);
  ASSERT_TRUE(bundled.ok()) << bundled.error().message;
  auto again = parseContentionCsv(formatContentionCsv(*bundled, accs), "again.csv", accs);
  ASSERT_TRUE(again.ok()) << again.error().message;
  for (size_t a = 0; a < accs.size(); ++a) EXPECT_EQ(again->surfaces()[a].slowdown, bundled->surfaces()[a].slowdown);
}

}  // namespace
}  // namespace zp::artifacts
