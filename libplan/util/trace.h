// The one Chrome-trace / Perfetto writer (the Trace Event Format that
// chrome://tracing and ui.perfetto.dev open): metadata events naming processes
// and threads, and complete ("X") events. Times are given in ms and written in
// µs, the format's unit; the document says to display ms.
#pragma once
#include <optional>
#include <string>

#include "libplan/util/json.h"

namespace zp {

class ChromeTrace {
 public:
  struct Span {
    std::string name, category;
    int pid = 0, tid = 0;
    double startMs = 0, durMs = 0;
    Json args = Json::object();
    std::string color;  // a reserved color name ("bad", "terrible"); empty: the viewer's choice
  };

  // Some viewers group by thread only when the process event names none: `tid` is optional.
  void processName(int pid, const std::string& name, std::optional<int> tid = std::nullopt);
  void threadName(int pid, int tid, const std::string& name);
  void threadSortIndex(int pid, int tid, int index);
  void span(const Span& s);

  // {"traceEvents": [...events in the order added], "displayTimeUnit": "ms"}
  Json json() const;

 private:
  Json events_ = Json::array();
};

}  // namespace zp
