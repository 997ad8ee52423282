// Canonical JSON: sorted keys, two-space indent, a trailing newline, floats
// rounded to 9 significant digits (or exact, for canonicalJsonExact), so the
// same content always gives the same bytes.
#include <gtest/gtest.h>

#include <cmath>

#include "libplan/util/json.h"

namespace zp {
namespace {

TEST(CanonicalJson, SortsKeysIndentsAndEndsWithANewline) {
  Json a = Json::object();
  a["zeta"] = 1;
  a["alpha"] = Json{{"b", true}, {"a", "x"}};
  EXPECT_EQ(canonicalJson(a), "{\n  \"alpha\": {\n    \"a\": \"x\",\n    \"b\": true\n  },\n  \"zeta\": 1\n}\n");
  Json b = Json::object();
  b["alpha"] = Json{{"a", "x"}, {"b", true}};
  b["zeta"] = 1;
  EXPECT_EQ(canonicalJson(a), canonicalJson(b));  // insertion order does not matter
}

TEST(CanonicalJson, RoundsFloatsToNineSignificantDigits) {
  EXPECT_EQ(canonicalJson(Json{{"x", 0.1 + 0.2}}), canonicalJson(Json{{"x", 0.3}}));
  EXPECT_EQ(canonicalJson(Json::array({1.23456789012345})), "[\n  1.23456789\n]\n");
  EXPECT_EQ(canonicalJson(Json::array({Json::array({2.000000000001e-7})})), "[\n  [\n    2e-07\n  ]\n]\n");
  EXPECT_EQ(roundSig(123456.7891234, 4), 123500.0);
  EXPECT_EQ(roundSig(0.0), 0.0);
  EXPECT_TRUE(std::isinf(roundSig(INFINITY)));
}

TEST(CanonicalJson, ExactKeepsEveryDigitAndReadsBackTheSameDouble) {
  const double x = 0.1 + 0.2;  // 0.30000000000000004
  const std::string text = canonicalJsonExact(Json{{"b", x}, {"a", 1}});
  EXPECT_EQ(text, "{\n  \"a\": 1,\n  \"b\": 0.30000000000000004\n}\n");
  EXPECT_EQ(Json::parse(text)["b"].get<double>(), x);
  for (double v : {1e-300, 123.456, 2.0 / 3.0, 6.02214076e23})
    EXPECT_EQ(Json::parse(canonicalJsonExact(Json{{"v", v}}))["v"].get<double>(), v);
}

}  // namespace
}  // namespace zp
