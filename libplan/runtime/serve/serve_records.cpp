#include "libplan/runtime/serve/serve_records.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "libplan/util/trace.h"

namespace zp::runtime::serve {

QuerySummary summarize(const std::vector<QueryRecord>& queries, const std::vector<double>& sloMsOfTask,
                       const std::vector<bool>& accuracySloMetOfTask) {
  std::vector<QueryOutcome> outcomes;
  outcomes.reserve(queries.size());
  for (const auto& q : queries) {
    const auto t = static_cast<size_t>(q.task);
    outcomes.push_back({q.arrivalMs, q.finishMs, q.completed, sloMsOfTask[t], accuracySloMetOfTask[t]});
  }
  return summarizeQueries(outcomes);
}

std::vector<double> workerTurnaroundsMs(const ServeResult& r) {
  std::map<std::pair<int, int>, double> endOf;  // (query, position) -> the end of its run
  for (const auto& x : r.slices)
    if (x.kind == ExecSlice::Kind::Run) endOf[{x.query, x.position}] = x.endMs;
  std::map<int, std::vector<const ExecSlice*>> byProcessor;
  for (const auto& x : r.slices) byProcessor[x.processor].push_back(&x);
  std::vector<double> out;
  for (auto& [processor, slices] : byProcessor) {
    std::stable_sort(slices.begin(), slices.end(),
                     [](const ExecSlice* a, const ExecSlice* b) { return a->startMs < b->startMs; });
    for (size_t i = 1; i < slices.size(); ++i) {
      const ExecSlice& prev = *slices[i - 1];
      const ExecSlice& x = *slices[i];
      if (x.query == prev.query && x.position == prev.position) continue;  // the run after its load
      double ready = INFINITY;
      if (x.position == 0) {
        if (x.query >= 0 && static_cast<size_t>(x.query) < r.queries.size())
          ready = r.queries[static_cast<size_t>(x.query)].arrivalMs;
      } else if (auto it = endOf.find({x.query, x.position - 1}); it != endOf.end()) {
        ready = it->second;
      }
      if (ready < prev.endMs) out.push_back(x.startMs - prev.endMs);
    }
  }
  return out;
}

Json toJson(const ServeResult& r) {
  Json queries = Json::array();
  for (const auto& q : r.queries)
    queries.push_back({{"query", q.query}, {"task", r.tasks[static_cast<size_t>(q.task)]}, {"sample", q.sample},
                       {"arrival_ms", q.arrivalMs}, {"posted_ms", q.postedMs}, {"start_ms", q.startMs},
                       {"finish_ms", q.finishMs},
                       {"latency_ms", q.latencyMs}, {"load_ms", q.loadMs}, {"completed", q.completed},
                       {"slo_met", q.sloMet}, {"predicted", q.predicted}, {"label", q.label},
                       {"correct", q.correct}, {"dropped", q.dropped}});
  const auto& s = r.summary;
  return Json{{"queries", queries},
              {"summary",
               {{"queries", s.queries}, {"completed", s.completed}, {"violations", s.violations},
                {"violation_rate", s.violationRate}, {"p50_ms", s.p50Ms}, {"p99_ms", s.p99Ms},
                {"span_ms", s.spanMs}, {"throughput_qps", s.throughputQps}, {"dropped", r.dropped},
                {"accuracy", r.labelled > 0 ? Json(static_cast<double>(r.correct) / r.labelled) : Json(nullptr)},
                {"peak_rss_bytes", r.peakRssBytes}, {"peak_resident_bytes", r.peakResidentBytes},
                {"loads", r.loads}, {"evictions", r.evictions}, {"over_budget_loads", r.overBudgetLoads},
                {"preload_ms", r.preloadMs}}}};
}

Json serveTrace(const ServeResult& r, const std::string& title) {
  ChromeTrace trace;
  trace.processName(1, title, 0);
  for (size_t p = 0; p < r.processors.size(); ++p) {
    trace.threadName(1, static_cast<int>(p) + 1, r.processors[p]);
    trace.threadSortIndex(1, static_cast<int>(p) + 1, static_cast<int>(p));
  }
  for (const auto& e : r.slices) {
    const std::string& task = r.tasks[static_cast<size_t>(e.task)];
    const std::string& slot = r.slots[static_cast<size_t>(e.slot)];
    const bool load = e.kind == ExecSlice::Kind::Load;
    Json args{{"query", e.query}, {"task", task}, {"position", e.position}, {"subgraph", slot}, {"cpu_ms", e.cpuMs}};
    // When the query arrived, so a slice shows how long its query had waited.
    if (static_cast<size_t>(e.query) < r.queries.size())
      args["arrival_ms"] = r.queries[static_cast<size_t>(e.query)].arrivalMs;
    trace.span({load ? "load " + slot : fmt::format("{}/p{}", task, e.position), load ? "load" : "run", 1,
                e.processor + 1, e.startMs, e.endMs - e.startMs, args, load ? "bad" : ""});
  }
  return trace.json();
}

}  // namespace zp::runtime::serve
