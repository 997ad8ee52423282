// The arrivals file: CSV with the header "time_ms,task,sample" and one query per
// line, times in milliseconds from the start of serving, non-decreasing; task by
// name; sample an index into the task's dataset. One reader, one writer.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "libplan/runtime/serve/arrivals.h"

namespace zp::runtime::serve {

struct KnownTask {
  std::string name;
  int samples = 0;  // dataset size: valid sample indices are [0, samples)
};

// The trace's tasks are `known` in its order (arrivals index into it). Bad input
// is one line naming file and line: "arr.csv:7: task 'foo' is not in the zoo
// (known: digits, wine)", "arr.csv:4: time 3.5 is before the previous 4".
Expected<ArrivalTrace> parseArrivals(const std::string& text, const std::string& file,
                                     const std::vector<KnownTask>& known);
Expected<ArrivalTrace> readArrivals(const std::filesystem::path& path, const std::vector<KnownTask>& known);

// Shortest round-trip number formatting: reading the text back gives the same trace.
std::string arrivalsToCsv(const ArrivalTrace& trace);
Status writeArrivals(const std::filesystem::path& path, const ArrivalTrace& trace);  // atomic

}  // namespace zp::runtime::serve
