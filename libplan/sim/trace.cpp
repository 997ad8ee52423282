#include "libplan/sim/trace.h"

#include <fmt/format.h>

namespace zp::sim {

Json chromeTrace(const Problem& p, const SimResult& r, const std::string& title) {
  Json events = Json::array();
  const int A = p.numAccelerators();
  events.push_back({{"ph", "M"}, {"pid", 1}, {"tid", 0}, {"name", "process_name"},
                    {"args", {{"name", title}}}});
  for (int a = 0; a <= A; ++a) {
    std::string name = a < A ? p.accelerators[static_cast<size_t>(a)] : std::string("transitions");
    events.push_back({{"ph", "M"}, {"pid", 1}, {"tid", a + 1}, {"name", "thread_name"},
                      {"args", {{"name", name}}}});
    events.push_back({{"ph", "M"}, {"pid", 1}, {"tid", a + 1}, {"name", "thread_sort_index"},
                      {"args", {{"sort_index", a}}}});
  }
  auto us = [](double ms) { return ms * 1000.0; };
  for (size_t n = 0; n < r.dnns.size(); ++n) {
    const auto& dnn = p.dnns[n];
    const auto& run = r.dnns[n];
    for (size_t i = 0; i < run.groups.size(); ++i) {
      const auto& g = run.groups[i];
      double slow = (g.end - g.start) / g.standaloneMs;
      bool slowed = !g.slowed.empty();
      std::string name = fmt::format("{}/{}", dnn.name, dnn.groups[i].name);
      if (slowed) name += fmt::format(" [contention x{:.3f}]", slow);
      Json ev = {{"ph", "X"}, {"pid", 1}, {"tid", g.accelerator + 1}, {"name", name},
                 {"cat", slowed ? "group,contention" : "group"},
                 {"ts", us(g.start)}, {"dur", us(g.end - g.start)},
                 {"args", {{"dnn", dnn.name}, {"group", dnn.groups[i].name},
                           {"standaloneMs", g.standaloneMs}, {"actualMs", g.end - g.start},
                           {"slowdown", slow}}}};
      if (slowed) ev["cname"] = "bad";
      events.push_back(ev);
      for (const auto& s : g.slowed)
        events.push_back({{"ph", "X"}, {"pid", 1}, {"tid", g.accelerator + 1},
                          {"name", fmt::format("contention x{:.3f}", s.slowdown)}, {"cat", "contention"},
                          {"cname", "terrible"}, {"ts", us(s.start)}, {"dur", us(s.end - s.start)},
                          {"args", {{"slowdown", s.slowdown}}}});
    }
    for (const auto& t : run.transitions) {
      if (t.end <= t.start) continue;
      events.push_back({{"ph", "X"}, {"pid", 1}, {"tid", A + 1},
                        {"name", fmt::format("{} {}->{}", dnn.name, p.accelerators[static_cast<size_t>(t.from)],
                                             p.accelerators[static_cast<size_t>(t.to)])},
                        {"cat", "transition"}, {"ts", us(t.start)}, {"dur", us(t.end - t.start)},
                        {"args", {{"afterGroup", t.afterGroup}}}});
    }
  }
  return Json{{"traceEvents", events}, {"displayTimeUnit", "ms"}};
}

}  // namespace zp::sim
