// Chrome-trace / Perfetto JSON of a timeline: named tracks (one thread id each,
// shown in the order given) holding complete ("X") slices. Simulated schedules
// and measured serving runs are both written through this.
#pragma once
#include <string>
#include <vector>

#include "libplan/util/json.h"

namespace zp {

struct TraceSlice {
  int track = 0;          // index into the track names
  std::string name;
  std::string category;   // "cat"
  double startMs = 0, durMs = 0;
  Json args;              // left out when null
  std::string color;      // Chrome's reserved color name ("cname"), left out when empty
};

// {"traceEvents": [...], "displayTimeUnit": "ms"}: a process named `title`, one
// thread per track (tid = index + 1), then the slices in the order given.
Json chromeTraceJson(const std::string& title, const std::vector<std::string>& tracks,
                     const std::vector<TraceSlice>& slices);

}  // namespace zp
