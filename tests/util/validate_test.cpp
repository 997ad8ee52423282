// The shared checks readers and options apply to numbers, ids, paths and sizes.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "libplan/util/validate.h"

namespace zp {
namespace {

TEST(Validate, NumbersMustBeFiniteAndInRange) {
  EXPECT_FALSE(numberProblem(0.5, 0, 1));
  EXPECT_FALSE(numberProblem(0, 0, 1));
  EXPECT_FALSE(numberProblem(1, 0, 1));
  EXPECT_EQ(*numberProblem(1.7e308, 0, kMaxLatencyMs), "1.7e+308 is above 10000000");
  EXPECT_EQ(*numberProblem(-1, 0, 1), "-1 is below 0");
  EXPECT_EQ(*numberProblem(std::nan(""), 0, 1), "nan is not a finite number");
  EXPECT_EQ(*numberProblem(std::numeric_limits<double>::infinity(), 0, 1e300), "inf is not a finite number");
  EXPECT_EQ(*integerProblem(-5, -1, 10), "-5 is below -1");
  EXPECT_EQ(*integerProblem(11, -1, 10), "11 is above 10");
  EXPECT_FALSE(integerProblem(-1, -1, 10));
}

TEST(Validate, IdsAreSafeFileNames) {
  for (const char* ok : {"dense", "u50", "A-b_c.d", ".hidden", "...", "x..y"}) EXPECT_TRUE(isSafeId(ok)) << ok;
  for (const char* bad : {"", ".", "..", "a/b", "a\\b", "a b", "a+b", "x\ny", "ü"}) EXPECT_FALSE(isSafeId(bad)) << bad;
  EXPECT_EQ(*idProblem(".."), "'..' is not a safe id (it names a directory)");
  EXPECT_EQ(*idProblem("a/b"), "'a/b' is not a safe id (letters, digits, '_', '.' and '-' only)");
  // A control character is not echoed: the message stays one line.
  EXPECT_EQ(idProblem("x\ny")->find('\n'), std::string::npos);
  EXPECT_TRUE(isSafeId(std::string(kMaxIdLength, 'a')));
  EXPECT_FALSE(isSafeId(std::string(kMaxIdLength + 1, 'a')));
}

TEST(Validate, RelativePathsStayInside) {
  for (const char* ok : {"subgraphs/ab.onnx", "a", "a/./b", "a..b/c"}) EXPECT_TRUE(isSafeRelativePath(ok)) << ok;
  for (const char* bad : {"", "/etc/passwd", "../x", "a/../../x", "a/.."}) EXPECT_FALSE(isSafeRelativePath(bad)) << bad;
}

TEST(Validate, ThreadCountsAreBoundedByTheMachine) {
  EXPECT_GE(maxThreads(), kThreadsPerCore);
  EXPECT_EQ(maxThreads() % kThreadsPerCore, 0);
  EXPECT_FALSE(threadCountProblem(1));
  EXPECT_FALSE(threadCountProblem(maxThreads()));
  ASSERT_TRUE(threadCountProblem(maxThreads() + 1));
  EXPECT_NE(threadCountProblem(100000)->find("100000 threads is above"), std::string::npos);
  EXPECT_TRUE(threadCountProblem(0));
  EXPECT_TRUE(threadCountProblem(-3));
}

TEST(Validate, ProductsNeverOverflow) {
  EXPECT_EQ(checkedMul(3, 4), 12u);
  EXPECT_EQ(checkedMul(0, UINT64_MAX), 0u);
  EXPECT_FALSE(checkedMul(uint64_t{1} << 32, uint64_t{1} << 32));
  EXPECT_EQ(checkedMul(uint64_t{1} << 31, uint64_t{1} << 32), uint64_t{1} << 63);
  EXPECT_FALSE(checkedMul(10, 11, 100));
  EXPECT_EQ(checkedMul(10, 10, 100), 100u);
  EXPECT_EQ(checkedPow(9, 3), 729u);
  EXPECT_EQ(checkedPow(9, 0), 1u);
  EXPECT_EQ(checkedPow(0, 5), 0u);
  EXPECT_EQ(checkedPow(1, 1000000), 1u);
  EXPECT_FALSE(checkedPow(9, 12, 100000));
  EXPECT_FALSE(checkedPow(2, 64));
  EXPECT_EQ(checkedPow(2, 63), uint64_t{1} << 63);
  EXPECT_EQ(checkedPow(10, 5, 100000), 100000u);
  EXPECT_FALSE(checkedPow(10, 6, 100000));
}

}  // namespace
}  // namespace zp
