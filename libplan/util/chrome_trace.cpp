#include "libplan/util/chrome_trace.h"

namespace zp {

Json chromeTraceJson(const std::string& title, const std::vector<std::string>& tracks,
                     const std::vector<TraceSlice>& slices) {
  Json events = Json::array();
  events.push_back({{"ph", "M"}, {"pid", 1}, {"tid", 0}, {"name", "process_name"}, {"args", {{"name", title}}}});
  for (size_t t = 0; t < tracks.size(); ++t) {
    const int tid = static_cast<int>(t) + 1;
    events.push_back({{"ph", "M"}, {"pid", 1}, {"tid", tid}, {"name", "thread_name"},
                      {"args", {{"name", tracks[t]}}}});
    events.push_back({{"ph", "M"}, {"pid", 1}, {"tid", tid}, {"name", "thread_sort_index"},
                      {"args", {{"sort_index", static_cast<int>(t)}}}});
  }
  for (const auto& s : slices) {
    Json ev = {{"ph", "X"}, {"pid", 1}, {"tid", s.track + 1}, {"name", s.name}, {"cat", s.category},
               {"ts", s.startMs * 1000.0}, {"dur", s.durMs * 1000.0}};
    if (!s.args.is_null()) ev["args"] = s.args;
    if (!s.color.empty()) ev["cname"] = s.color;
    events.push_back(std::move(ev));
  }
  return Json{{"traceEvents", events}, {"displayTimeUnit", "ms"}};
}

}  // namespace zp
