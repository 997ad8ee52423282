// The arrivals file, its reader and writer: CSV with the header
// "time_ms,task,sample" and one query per line, times in milliseconds from the
// start of serving, non-decreasing; task by name; sample an index into the
// task's dataset.
#pragma once
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "libplan/runtime/serve/arrivals.h"

namespace zp::artifacts {

inline constexpr std::string_view kArrivalsCsvHeader = "time_ms,task,sample";

struct KnownTask {
  std::string name;
  int samples = 0;     // valid sample indices are [0, samples)
  std::string bound;   // what sets `samples`, said with an index outside them (e.g. the option to raise)
};

// The trace's tasks are `known` in its order (arrivals index into it). Bad input
// is one line naming file and line: "arr.csv:7: task 'foo' is not known (known:
// digits, wine)", "arr.csv:4: time 3.5 is before the previous line's 4".
Expected<runtime::serve::ArrivalTrace> parseArrivalsCsv(std::string_view text, const std::string& label,
                                                        const std::vector<KnownTask>& known);
Expected<runtime::serve::ArrivalTrace> readArrivalsCsv(const std::filesystem::path& path,
                                                       const std::vector<KnownTask>& known);

// Shortest round-trip number formatting: reading the text back gives the same trace.
std::string formatArrivalsCsv(const runtime::serve::ArrivalTrace& trace);
Status writeArrivalsCsv(const std::filesystem::path& path, const runtime::serve::ArrivalTrace& trace);  // atomic

}  // namespace zp::artifacts
