#include "libplan/util/trace.h"

namespace zp {

void ChromeTrace::processName(int pid, const std::string& name, std::optional<int> tid) {
  Json e{{"name", "process_name"}, {"ph", "M"}, {"pid", pid}, {"args", Json{{"name", name}}}};
  if (tid) e["tid"] = *tid;
  events_.push_back(std::move(e));
}

void ChromeTrace::threadName(int pid, int tid, const std::string& name) {
  events_.push_back(Json{{"name", "thread_name"}, {"ph", "M"}, {"pid", pid}, {"tid", tid}, {"args", Json{{"name", name}}}});
}

void ChromeTrace::threadSortIndex(int pid, int tid, int index) {
  events_.push_back(
      Json{{"name", "thread_sort_index"}, {"ph", "M"}, {"pid", pid}, {"tid", tid}, {"args", Json{{"sort_index", index}}}});
}

void ChromeTrace::span(const Span& s) {
  Json e{{"name", s.name},          {"cat", s.category},        {"ph", "X"},     {"pid", s.pid}, {"tid", s.tid},
         {"ts", s.startMs * 1000.0}, {"dur", s.durMs * 1000.0}, {"args", s.args}};
  if (!s.color.empty()) e["cname"] = s.color;
  events_.push_back(std::move(e));
}

Json ChromeTrace::json() const { return Json{{"traceEvents", events_}, {"displayTimeUnit", "ms"}}; }

}  // namespace zp
