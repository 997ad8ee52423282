// Reading JSON documents without letting the JSON library's exceptions escape,
// and with every problem reported as "<file>: <JSON path>: <problem>".
#pragma once
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "libplan/util/error.h"
#include "libplan/util/json.h"

namespace zp {

// Parses `text`. Any exception of the JSON library (bad syntax, a number beyond
// the range of double, ...) becomes "<label>: not valid JSON: <what it says>".
Expected<Json> parseJson(std::string_view text, const std::string& label);
// readFile + parseJson, labelled with the path.
Expected<Json> readJsonFile(const std::filesystem::path& path);

// The message of a JSON library exception without its "[json.exception.x.N] " prefix.
std::string jsonExceptionText(const std::exception& e);

// A value inside a parsed document together with where it is. Accessors check
// the type (and range) and return "<file>: <path>: <problem>" otherwise:
//   JsonAt root(doc, "zoo.json");
//   ZP_ASSIGN_OR_RETURN(auto tasks, root.array("tasks"));
//   ZP_ASSIGN_OR_RETURN(std::string name, tasks[0].id("name"));  // "zoo.json: $.tasks[0].name: ..."
// The document and the file label must outlive every JsonAt made from them.
class JsonAt {
 public:
  static constexpr double kAnyNumber = std::numeric_limits<double>::max();

  JsonAt(const Json& value, const std::string& file, std::string path = "$")
      : j_(&value), file_(&file), path_(std::move(path)) {}

  const Json& json() const { return *j_; }
  const std::string& path() const { return path_; }
  const std::string& file() const { return *file_; }
  Error error(std::string_view problem) const;  // "<file>: <path>: <problem>"

  // Members and elements.
  bool has(std::string_view key) const { return j_->is_object() && j_->contains(key); }
  Expected<JsonAt> at(std::string_view key) const;  // "expected an object" / "missing field 'key'"
  Expected<std::vector<JsonAt>> array() const;      // the elements; "expected an array"
  Expected<std::vector<JsonAt>> array(std::string_view key) const { return then(key, &JsonAt::array); }
  // An object's members in key order; "expected an object".
  Expected<std::vector<std::pair<std::string, JsonAt>>> members() const;
  // Fails on any member whose key is not in `allowed`: "<path>.<key>: unknown field".
  Status onlyKeys(std::initializer_list<std::string_view> allowed) const;

  // Values. Numbers must be finite and in [lo, hi]; integers must be JSON integers.
  Expected<std::string> string() const;
  Expected<std::string> id() const;  // a safe id (util/validate.h)
  Expected<bool> boolean() const;
  Expected<double> number(double lo = -kAnyNumber, double hi = kAnyNumber) const;
  Expected<int64_t> integer(int64_t lo = std::numeric_limits<int64_t>::min(),
                            int64_t hi = std::numeric_limits<int64_t>::max()) const;
  Expected<std::vector<std::string>> strings() const;  // an array of strings

  // The same for a member: at(key) first.
  Expected<std::string> string(std::string_view key) const { return then(key, &JsonAt::string); }
  Expected<std::string> id(std::string_view key) const { return then(key, &JsonAt::id); }
  Expected<bool> boolean(std::string_view key) const { return then(key, &JsonAt::boolean); }
  Expected<double> number(std::string_view key, double lo = -kAnyNumber, double hi = kAnyNumber) const;
  Expected<int64_t> integer(std::string_view key, int64_t lo = std::numeric_limits<int64_t>::min(),
                            int64_t hi = std::numeric_limits<int64_t>::max()) const;
  Expected<std::vector<std::string>> strings(std::string_view key) const { return then(key, &JsonAt::strings); }

 private:
  template <typename T>
  Expected<T> then(std::string_view key, Expected<T> (JsonAt::*get)() const) const {
    auto v = at(key);
    if (!v.ok()) return v.error();
    return ((*v).*get)();
  }

  const Json* j_;
  const std::string* file_;
  std::string path_;
};

}  // namespace zp
