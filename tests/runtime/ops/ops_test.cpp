// Every operator of ops/op_list.def against ONNX Runtime on random inputs, through
// the one helper of op_case.h; ORT runs once for all cases.
//
//   runtime_ops_test                          ORT through node, here
//   runtime_ops_test --write-references DIR   the same, keeping the cases and ORT's outputs in DIR
//   runtime_ops_test --references DIR         no ORT: against the outputs in DIR (another machine's:
//                                             the aarch64 build under qemu-user)
#include <gtest/gtest.h>

#include <stdlib.h>

#include <iostream>
#include <map>
#include <set>

#include "libplan/runtime/ops/op.h"
#include "tests/runtime/ops/op_case.h"
#include "tests/common/test_paths.h"

namespace zp::runtime::testing {
namespace {
namespace fs = std::filesystem;

fs::path gWriteReferences, gReferences;  // from the command line

std::vector<OpCase> allCases() {
  std::vector<OpCase> all;
  for (auto family : {elementwiseCases, unaryCases, shapeCases, movementCases, generatorCases, reduceCases, quantCases,
                      convCases, gemmCases, poolCases, normCases, softmaxCases, resizeCases,
                      convTransposeCases, indexCases, matrixCases}) {
    auto cases = family();
    all.insert(all.end(), cases.begin(), cases.end());
  }
  return all;
}

TEST(OpsAgainstOnnxRuntime, EveryOperatorOfTheListHasCasesAndEveryCaseIsOfTheList) {
  std::map<std::string, int> count;
  std::set<std::string> names;
  for (const auto& c : allCases()) {
    ++count[c.op];
    EXPECT_TRUE(names.insert(c.name()).second) << "two cases named " << c.name();
  }
  for (const auto& op : supportedOpTypes()) EXPECT_GE(count[op], 2) << op << " needs cases of its own";
  for (const auto& [op, n] : count)
    EXPECT_NE(std::find(supportedOpTypes().begin(), supportedOpTypes().end(), op), supportedOpTypes().end()) << op;
}

// The failures of every case, one line each; and the count.
int reportFailures(const std::vector<CaseResult>& results) {
  int failed = 0;
  for (const auto& r : results) {
    for (const auto& f : r.failures) ADD_FAILURE() << r.name << ": " << f;
    failed += !r.failures.empty();
  }
  return failed;
}

TEST(OpsAgainstOnnxRuntime, EveryOperatorMatchesOnnxRuntimeOnRandomInputs) {
  const auto cases = allCases();
  if (!gReferences.empty()) {
    auto results = checkAgainstOrtOutputs(cases, gReferences);
    ASSERT_TRUE(results.ok()) << results.error().message;
    ASSERT_EQ(results->size(), cases.size());
    const int failed = reportFailures(*results);
    EXPECT_EQ(failed, 0) << failed << " of " << cases.size() << " cases failed against " << gReferences;
    return;
  }
  fs::path dir = gWriteReferences;
  if (dir.empty()) {
    std::string pattern = (fs::temp_directory_path() / "zp_ops_vs_ort_XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir = pattern;
  } else {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  auto results = runAgainstOnnxRuntime(cases, dir, zp::testing::kNodeExecutable, zp::testing::kSourceDir);
  ASSERT_TRUE(results.ok()) << results.error().message << " (models and inputs kept in " << dir << ")";
  ASSERT_EQ(results->size(), cases.size());
  const int failed = reportFailures(*results);
  if (failed == 0) {
    if (gWriteReferences.empty()) fs::remove_all(dir);
  } else {
    ADD_FAILURE() << failed << " of " << cases.size() << " cases failed; models and ORT outputs kept in " << dir;
  }
}

}  // namespace
}  // namespace zp::runtime::testing

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if ((arg == "--references" || arg == "--write-references") && i + 1 < argc) {
      (arg == "--references" ? zp::runtime::testing::gReferences : zp::runtime::testing::gWriteReferences) = argv[++i];
    } else {
      std::cerr << "runtime_ops_test: unknown argument '" << arg
                << "' (--references DIR or --write-references DIR, and gtest's own)\n";
      return 2;
    }
  }
  return RUN_ALL_TESTS();
}
