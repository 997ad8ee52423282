#include "libplan/sim/trace.h"

#include <fmt/format.h>

#include "libplan/util/chrome_trace.h"

namespace zp::sim {

Json chromeTrace(const Problem& p, const SimResult& r, const std::string& title) {
  const int A = p.numAccelerators();
  std::vector<std::string> tracks(p.accelerators.begin(), p.accelerators.end());
  tracks.push_back("transitions");
  std::vector<TraceSlice> slices;
  for (size_t n = 0; n < r.dnns.size(); ++n) {
    const auto& dnn = p.dnns[n];
    const auto& run = r.dnns[n];
    for (size_t i = 0; i < run.groups.size(); ++i) {
      const auto& g = run.groups[i];
      double slow = (g.end - g.start) / g.standaloneMs;
      bool slowed = !g.slowed.empty();
      std::string name = fmt::format("{}/{}", dnn.name, dnn.groups[i].name);
      if (slowed) name += fmt::format(" [contention x{:.3f}]", slow);
      slices.push_back({g.accelerator, name, slowed ? "group,contention" : "group", g.start, g.end - g.start,
                        {{"dnn", dnn.name}, {"group", dnn.groups[i].name}, {"standaloneMs", g.standaloneMs},
                         {"actualMs", g.end - g.start}, {"slowdown", slow}},
                        slowed ? "bad" : ""});
      for (const auto& s : g.slowed)
        slices.push_back({g.accelerator, fmt::format("contention x{:.3f}", s.slowdown), "contention", s.start,
                          s.end - s.start, {{"slowdown", s.slowdown}}, "terrible"});
    }
    for (const auto& t : run.transitions) {
      if (t.end <= t.start) continue;
      slices.push_back({A,
                        fmt::format("{} {}->{}", dnn.name, p.accelerators[static_cast<size_t>(t.from)],
                                    p.accelerators[static_cast<size_t>(t.to)]),
                        "transition", t.start, t.end - t.start, {{"afterGroup", t.afterGroup}}, ""});
    }
  }
  return chromeTraceJson(title, tracks, slices);
}

}  // namespace zp::sim
