// CSV: what the writer quotes reads back as the same fields (RFC 4180), and
// the reader's options for hand-written CSVs (trimming, comments, blank lines).
#include <gtest/gtest.h>

#include <random>

#include "libplan/util/csv.h"

namespace zp {
namespace {

std::vector<std::vector<std::string>> fieldsOf(const std::vector<CsvRecord>& records) {
  std::vector<std::vector<std::string>> out;
  for (const auto& r : records) out.push_back(r.fields);
  return out;
}

TEST(Csv, QuotesOnlyWhatNeedsIt) {
  EXPECT_EQ(csvQuote("plain"), "plain");
  EXPECT_EQ(csvQuote("a,b"), "\"a,b\"");
  EXPECT_EQ(csvQuote("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csvQuote("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(csvQuote(" padded "), "\" padded \"");
  EXPECT_EQ(csvQuote("a;b", ';'), "\"a;b\"");
  EXPECT_EQ(csvQuote("a;b", ','), "a;b");
  EXPECT_EQ(csvLine({"x", "", "1,5"}), "x,,\"1,5\"\n");
}

TEST(Csv, WrittenRecordsReadBackAsTheSameFields) {
  const std::vector<std::vector<std::string>> rows = {
      {"kind", "name", "note"}, {"a", "b,c", "\"quoted\""}, {"", "line\r\nend", " x "}, {"\xc3\xa9t\xc3\xa9", ";", ""}};
  std::string text;
  for (const auto& r : rows) text += csvLine(r);
  auto back = parseCsv(text, "t.csv");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(fieldsOf(*back), rows);
  EXPECT_EQ((*back)[3].line, 5);  // the record after a quoted line end starts one line later
}

TEST(Csv, RandomFieldsRoundTrip) {
  std::mt19937 rng(7);
  const std::string alphabet = "ab ,\"\n\r;x\t";
  for (int iter = 0; iter < 200; ++iter) {
    std::vector<std::vector<std::string>> rows(1 + rng() % 4);
    for (auto& r : rows) {
      r.resize(1 + rng() % 4);
      for (auto& f : r)
        for (size_t n = rng() % 6; n > 0; --n) f += alphabet[rng() % alphabet.size()];
      if (r.size() == 1 && r[0].empty()) r[0] = "z";  // a lone empty field is a blank line
    }
    std::string text;
    for (const auto& r : rows) text += csvLine(r);
    auto back = parseCsv(text, "r.csv");
    ASSERT_TRUE(back.ok()) << back.error().message;
    EXPECT_EQ(fieldsOf(*back), rows) << text;
  }
}

TEST(Csv, OptionsForHandWrittenFiles) {
  const std::string text = "\xEF\xBB\xBF# a comment\nname , value\n\n  x ,\t\"1, 2\" \r\n";
  auto strict = parseCsv(text, "h.csv");
  ASSERT_TRUE(strict.ok());
  EXPECT_EQ(strict->size(), 4u);  // comment, header, blank, row
  auto lenient = parseCsv(text, "h.csv", CsvOptions{',', true, true, true});
  ASSERT_TRUE(lenient.ok()) << lenient.error().message;
  ASSERT_EQ(lenient->size(), 2u);
  EXPECT_EQ((*lenient)[0].fields, (std::vector<std::string>{"name", "value"}));
  EXPECT_EQ((*lenient)[0].line, 2);
  EXPECT_EQ((*lenient)[1].fields, (std::vector<std::string>{"x", "1, 2"}));
  EXPECT_EQ((*lenient)[1].line, 4);
  auto semi = parseCsv("a; b ;c\n", "s.csv", CsvOptions{';', true, false, false});
  ASSERT_TRUE(semi.ok());
  EXPECT_EQ((*semi)[0].fields, (std::vector<std::string>{"a", "b", "c"}));
}

TEST(Csv, MalformedQuotingNamesTheLine) {
  auto open = parseCsv("a,b\nc,\"never closed\n", "bad.csv");
  ASSERT_FALSE(open.ok());
  EXPECT_EQ(open.error().message, "bad.csv:2: unterminated quoted field");
  auto after = parseCsv("a,\"x\"y\n", "bad.csv");
  ASSERT_FALSE(after.ok());
  EXPECT_EQ(after.error().message, "bad.csv:1: text after a closing quote");
}

}  // namespace
}  // namespace zp
