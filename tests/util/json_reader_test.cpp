// JsonAt and parseJson: no exception of the JSON library escapes, and every
// problem names the file and the JSON path.
#include <gtest/gtest.h>

#include "libplan/util/json_reader.h"

namespace zp {
namespace {

std::string parseError(const std::string& text) {
  auto r = parseJson(text, "f.json");
  return r.ok() ? "" : r.error().message;
}

TEST(JsonReader, EveryParserExceptionBecomesAnError) {
  EXPECT_EQ(parseError("{\"x\": 1e400}"), "f.json: not valid JSON: number overflow parsing '1e400'");
  EXPECT_EQ(parseError("{\"x\": -1e400}"), "f.json: not valid JSON: number overflow parsing '-1e400'");
  EXPECT_EQ(parseError("{").rfind("f.json: not valid JSON: parse error at line 1, column 2: syntax error", 0), 0u)
      << parseError("{");
  EXPECT_EQ(parseError("\"\xff\"").rfind("f.json: not valid JSON: ", 0), 0u);
  EXPECT_EQ(parseError(""), "f.json: not valid JSON: parse error at line 1, column 1: syntax error while parsing "
                            "value - unexpected end of input; expected '[', '{', or a literal");
  EXPECT_EQ(parseError("[1, 2]"), "");
}

class JsonAtTest : public ::testing::Test {
 protected:
  Json doc = Json::parse(R"({"name": "a", "id": "..", "n": 5, "x": 0.5, "big": 18446744073709551615,
                             "neg": -2, "flag": true, "list": [1, "two", {"k": []}], "names": ["p", "q"],
                             "obj": {"b": 1, "a": 2}})");
  std::string file = "doc.json";
  JsonAt root{doc, file};
};

TEST_F(JsonAtTest, TypesAreCheckedWithThePath) {
  EXPECT_EQ(*root.string("name"), "a");
  EXPECT_EQ(root.string("n").error().message, "doc.json: $.n: expected a string");
  EXPECT_EQ(root.number("name").error().message, "doc.json: $.name: expected a number");
  EXPECT_EQ(root.integer("x").error().message, "doc.json: $.x: expected an integer");
  EXPECT_EQ(root.boolean("n").error().message, "doc.json: $.n: expected true or false");
  EXPECT_EQ(root.array("obj").error().message, "doc.json: $.obj: expected an array");
  EXPECT_EQ(root.at("missing").error().message, "doc.json: $: missing field 'missing'");
  auto list = root.array("list");
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 3u);
  EXPECT_EQ((*list)[1].path(), "$.list[1]");
  EXPECT_EQ((*list)[0].at("k").error().message, "doc.json: $.list[0]: expected an object");
  auto inner = (*list)[2].array("k");
  ASSERT_TRUE(inner.ok());
  EXPECT_TRUE(inner->empty());
  EXPECT_EQ(root.strings("list").error().message, "doc.json: $.list[0]: expected a string");
  EXPECT_EQ(*root.strings("names"), (std::vector<std::string>{"p", "q"}));
  EXPECT_TRUE(*root.boolean("flag"));
}

TEST_F(JsonAtTest, NumbersAreInRange) {
  EXPECT_EQ(*root.number("x", 0, 1), 0.5);
  EXPECT_EQ(root.number("n", 0, 1).error().message, "doc.json: $.n: 5 is above 1");
  EXPECT_EQ(*root.integer("n", 1, 5), 5);
  EXPECT_EQ(root.integer("neg", 0, 5).error().message, "doc.json: $.neg: -2 is below 0");
  // Above int64: an error, not a wrapped negative number.
  EXPECT_EQ(root.integer("big").error().message, "doc.json: $.big: 18446744073709551615 is above 9223372036854775807");
  EXPECT_EQ(root.integer("big", 0, 10).error().message, "doc.json: $.big: 18446744073709551615 is above 10");
}

TEST_F(JsonAtTest, IdsAreSafe) {
  EXPECT_EQ(*root.id("name"), "a");
  EXPECT_EQ(root.id("id").error().message, "doc.json: $.id: '..' is not a safe id (it names a directory)");
}

TEST_F(JsonAtTest, MembersInKeyOrderAndUnknownKeys) {
  auto obj = root.at("obj");
  ASSERT_TRUE(obj.ok());
  auto members = obj->members();
  ASSERT_TRUE(members.ok());
  ASSERT_EQ(members->size(), 2u);
  EXPECT_EQ((*members)[0].first, "a");
  EXPECT_EQ((*members)[0].second.path(), "$.obj.a");
  EXPECT_TRUE(obj->onlyKeys({"a", "b"}).ok());
  EXPECT_EQ(obj->onlyKeys({"a"}).error().message, "doc.json: $.obj.b: unknown field");
  EXPECT_FALSE(root.has("nope"));
  EXPECT_FALSE((*root.at("n")).has("x"));  // not an object: no member, no exception
}

}  // namespace
}  // namespace zp
