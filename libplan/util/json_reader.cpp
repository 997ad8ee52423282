#include "libplan/util/json_reader.h"

#include <algorithm>
#include <set>

#include "libplan/util/file.h"
#include "libplan/util/validate.h"

namespace zp {

std::string jsonExceptionText(const std::exception& e) {
  std::string what = e.what();
  if (what.rfind("[json.exception.", 0) == 0) {
    size_t close = what.find("] ");
    if (close != std::string::npos) what = what.substr(close + 2);
  }
  std::replace(what.begin(), what.end(), '\n', ' ');
  return what;
}

Expected<Json> parseJson(std::string_view text, const std::string& label) {
  // nlohmann keeps the last of two values for one key; which one the writer
  // meant is unknown, so such a document is refused.
  std::vector<std::set<std::string>> keys;  // per open object
  std::string duplicate;
  auto track = [&](int, Json::parse_event_t event, Json& parsed) {
    if (event == Json::parse_event_t::object_start) keys.emplace_back();
    if (event == Json::parse_event_t::object_end && !keys.empty()) keys.pop_back();
    if (event == Json::parse_event_t::key && !keys.empty() && !keys.back().insert(parsed.get<std::string>()).second &&
        duplicate.empty())
      duplicate = parsed.get<std::string>();
    return true;
  };
  try {
    Json j = Json::parse(text, track);
    if (!duplicate.empty()) return makeError("{}: key '{}' appears twice in one object", label, duplicate);
    return j;
  } catch (const Json::exception& e) {
    return makeError("{}: not valid JSON: {}", label, jsonExceptionText(e));
  }
}

Expected<Json> readJsonFile(const std::filesystem::path& path) {
  ZP_ASSIGN_OR_RETURN(std::string text, readFile(path));
  return parseJson(text, path.string());
}

Error JsonAt::error(std::string_view problem) const { return makeError("{}: {}: {}", *file_, path_, problem); }

Expected<JsonAt> JsonAt::at(std::string_view key) const {
  if (!j_->is_object()) return error("expected an object");
  auto it = j_->find(key);
  if (it == j_->end()) return error(fmt::format("missing field '{}'", key));
  return JsonAt(*it, *file_, fmt::format("{}.{}", path_, key));
}

Expected<std::vector<JsonAt>> JsonAt::array() const {
  if (!j_->is_array()) return error("expected an array");
  std::vector<JsonAt> out;
  out.reserve(j_->size());
  for (size_t i = 0; i < j_->size(); ++i) out.emplace_back((*j_)[i], *file_, fmt::format("{}[{}]", path_, i));
  return out;
}

Expected<std::vector<std::pair<std::string, JsonAt>>> JsonAt::members() const {
  if (!j_->is_object()) return error("expected an object");
  std::vector<std::pair<std::string, JsonAt>> out;
  for (auto it = j_->begin(); it != j_->end(); ++it)
    out.emplace_back(it.key(), JsonAt(it.value(), *file_, fmt::format("{}.{}", path_, it.key())));
  return out;
}

Status JsonAt::onlyKeys(std::initializer_list<std::string_view> allowed) const {
  if (!j_->is_object()) return error("expected an object");
  for (auto it = j_->begin(); it != j_->end(); ++it)
    if (std::find(allowed.begin(), allowed.end(), it.key()) == allowed.end())
      return JsonAt(it.value(), *file_, fmt::format("{}.{}", path_, it.key())).error("unknown field");
  return {};
}

Expected<std::string> JsonAt::string() const {
  if (!j_->is_string()) return error("expected a string");
  return j_->get<std::string>();
}

Expected<std::string> JsonAt::id() const {
  ZP_ASSIGN_OR_RETURN(std::string s, string());
  if (auto p = idProblem(s)) return error(*p);
  return s;
}

Expected<bool> JsonAt::boolean() const {
  if (!j_->is_boolean()) return error("expected true or false");
  return j_->get<bool>();
}

Expected<double> JsonAt::number(double lo, double hi) const {
  if (!j_->is_number()) return error("expected a number");
  const double v = j_->get<double>();
  if (auto p = numberProblem(v, lo, hi)) return error(*p);
  return v;
}

Expected<int64_t> JsonAt::integer(int64_t lo, int64_t hi) const {
  if (!j_->is_number_integer()) return error("expected an integer");
  if (j_->is_number_unsigned() && j_->get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    return error(fmt::format("{} is above {}", j_->get<uint64_t>(), hi));
  const int64_t v = j_->get<int64_t>();
  if (auto p = integerProblem(v, lo, hi)) return error(*p);
  return v;
}

Expected<std::vector<std::string>> JsonAt::strings() const {
  ZP_ASSIGN_OR_RETURN(auto items, array());
  std::vector<std::string> out;
  out.reserve(items.size());
  for (const auto& e : items) {
    ZP_ASSIGN_OR_RETURN(std::string s, e.string());
    out.push_back(std::move(s));
  }
  return out;
}

Expected<double> JsonAt::number(std::string_view key, double lo, double hi) const {
  ZP_ASSIGN_OR_RETURN(JsonAt v, at(key));
  return v.number(lo, hi);
}

Expected<int64_t> JsonAt::integer(std::string_view key, int64_t lo, int64_t hi) const {
  ZP_ASSIGN_OR_RETURN(JsonAt v, at(key));
  return v.integer(lo, hi);
}

}  // namespace zp
