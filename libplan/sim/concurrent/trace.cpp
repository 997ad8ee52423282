#include "libplan/sim/concurrent/trace.h"

#include <fmt/format.h>

#include "libplan/util/trace.h"

namespace zp::sim {

Json chromeTrace(const Problem& p, const SimResult& r, const std::string& title) {
  ChromeTrace trace;
  const int A = p.numAccelerators();
  trace.processName(1, title, 0);
  for (int a = 0; a <= A; ++a) {
    trace.threadName(1, a + 1, a < A ? p.accelerators[static_cast<size_t>(a)] : std::string("transitions"));
    trace.threadSortIndex(1, a + 1, a);
  }
  for (size_t n = 0; n < r.dnns.size(); ++n) {
    const auto& dnn = p.dnns[n];
    const auto& run = r.dnns[n];
    for (size_t i = 0; i < run.groups.size(); ++i) {
      const auto& g = run.groups[i];
      double slow = (g.end - g.start) / g.standaloneMs;
      bool slowed = !g.slowed.empty();
      std::string name = fmt::format("{}/{}", dnn.name, dnn.groups[i].name);
      if (slowed) name += fmt::format(" [contention x{:.3f}]", slow);
      trace.span({name, slowed ? "group,contention" : "group", 1, g.accelerator + 1, g.start, g.end - g.start,
                  Json{{"dnn", dnn.name}, {"group", dnn.groups[i].name}, {"standaloneMs", g.standaloneMs},
                       {"actualMs", g.end - g.start}, {"slowdown", slow}},
                  slowed ? "bad" : ""});
      for (const auto& s : g.slowed)
        trace.span({fmt::format("contention x{:.3f}", s.slowdown), "contention", 1, g.accelerator + 1, s.start,
                    s.end - s.start, Json{{"slowdown", s.slowdown}}, "terrible"});
    }
    for (const auto& t : run.transitions) {
      if (t.end <= t.start) continue;
      trace.span({fmt::format("{} {}->{}", dnn.name, p.accelerators[static_cast<size_t>(t.from)],
                              p.accelerators[static_cast<size_t>(t.to)]),
                  "transition", 1, A + 1, t.start, t.end - t.start, Json{{"afterGroup", t.afterGroup}}, ""});
    }
  }
  return trace.json();
}

}  // namespace zp::sim
