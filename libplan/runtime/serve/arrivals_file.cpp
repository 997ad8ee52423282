#include "libplan/runtime/serve/arrivals_file.h"

#include <charconv>
#include <cmath>
#include <sstream>

#include <fmt/format.h>

#include "libplan/util/file.h"
#include "libplan/util/validate.h"

namespace zp::runtime::serve {

namespace {
constexpr const char* kHeader = "time_ms,task,sample";

std::vector<std::string> splitFields(const std::string& line) {
  std::vector<std::string> fields;
  std::stringstream ss(line);
  std::string f;
  while (std::getline(ss, f, ',')) fields.push_back(f);
  if (!line.empty() && line.back() == ',') fields.emplace_back();
  return fields;
}

std::string knownNames(const std::vector<KnownTask>& known) {
  std::string s;
  for (const auto& k : known) s += (s.empty() ? "" : ", ") + k.name;
  return s;
}

// Parses one data line into `a`; the problem as text otherwise.
std::optional<std::string> parseLine(const std::string& line, const std::vector<KnownTask>& known, Arrival* a) {
  const auto fields = splitFields(line);
  if (fields.size() != 3) return fmt::format("expected 3 fields (time_ms,task,sample), found {}", fields.size());
  const std::string& t = fields[0];
  auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), a->timeMs);
  if (ec != std::errc() || end != t.data() + t.size() || t.empty()) return fmt::format("time '{}' is not a number", t);
  if (!std::isfinite(a->timeMs)) return fmt::format("time {} is not a finite number", t);
  if (a->timeMs < 0) return fmt::format("time {} is negative", t);
  a->task = -1;
  for (size_t i = 0; i < known.size(); ++i)
    if (known[i].name == fields[1]) a->task = static_cast<int>(i);
  if (a->task < 0) return fmt::format("task '{}' is not known (known: {})", fields[1], knownNames(known));
  const std::string& s = fields[2];
  auto [send, sec] = std::from_chars(s.data(), s.data() + s.size(), a->sample);
  if (sec != std::errc() || send != s.data() + s.size() || s.empty())
    return fmt::format("sample '{}' is not an integer", s);
  const int samples = known[static_cast<size_t>(a->task)].samples;
  if (a->sample < 0 || a->sample >= samples)
    return fmt::format("sample {} is outside the {} samples of task '{}'", a->sample, samples, fields[1]);
  return std::nullopt;
}
}  // namespace

Expected<ArrivalTrace> parseArrivals(const std::string& text, const std::string& file,
                                     const std::vector<KnownTask>& known) {
  ArrivalTrace trace;
  for (const auto& k : known) trace.tasks.push_back(k.name);
  std::stringstream in(text);
  std::string line;
  int lineNo = 0;
  while (std::getline(in, line)) {
    ++lineNo;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (lineNo == 1) {
      if (line != kHeader) return makeError("{}:1: expected the header '{}', found '{}'", file, kHeader, line);
      continue;
    }
    if (line.empty()) continue;
    Arrival a;
    if (auto problem = parseLine(line, known, &a)) return makeError("{}:{}: {}", file, lineNo, *problem);
    if (!trace.arrivals.empty() && a.timeMs < trace.arrivals.back().timeMs)
      return makeError("{}:{}: time {} is before the previous line's {} (times must not decrease)", file, lineNo,
                       a.timeMs, trace.arrivals.back().timeMs);
    trace.arrivals.push_back(a);
  }
  if (lineNo == 0) return makeError("{}: empty file (expected the header '{}')", file, kHeader);
  if (trace.arrivals.empty()) return makeError("{}: no arrivals", file);
  return trace;
}

Expected<ArrivalTrace> readArrivals(const std::filesystem::path& path, const std::vector<KnownTask>& known) {
  ZP_ASSIGN_OR_RETURN(auto text, readFile(path));
  return parseArrivals(text, path.string(), known);
}

std::string arrivalsToCsv(const ArrivalTrace& trace) {
  std::string out = std::string(kHeader) + "\n";
  for (const auto& a : trace.arrivals)
    out += fmt::format("{},{},{}\n", a.timeMs, trace.tasks[static_cast<size_t>(a.task)], a.sample);
  return out;
}

Status writeArrivals(const std::filesystem::path& path, const ArrivalTrace& trace) {
  return writeFileAtomic(path, arrivalsToCsv(trace));
}

}  // namespace zp::runtime::serve
