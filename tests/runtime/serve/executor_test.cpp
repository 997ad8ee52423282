#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <mutex>

#include "libplan/runtime/measure.h"
#include "libplan/runtime/serve/executor.h"
#include "libplan/runtime/serve/serve_records.h"
#include "tests/runtime/serve/test_models.h"
#include "tests/common/processors.h"

namespace zp::runtime::serve {
namespace {

// Two-position tasks "a" and "b": a runs p0 then p1, b runs p1 then p0.
struct TwoTasks {
  std::vector<std::string> texts;
  ServeSetup setup;
};

std::vector<TensorMap> samplesFor(const std::string& input, int count, int rows) {
  std::vector<TensorMap> samples;
  for (int i = 0; i < count; ++i) {
    TensorMap m;
    m[input] = randomInput({input, DType::F32, {rows, 128}}, static_cast<uint64_t>(100 + i));
    samples.push_back(std::move(m));
  }
  return samples;
}

// The labels a plain, sequential run of the positions predicts (argmax of the last output).
std::vector<int64_t> referenceLabels(const std::vector<std::string>& texts, const std::vector<TensorMap>& samples,
                                     const std::string& out) {
  std::vector<std::unique_ptr<Session>> sessions;
  for (const auto& t : texts) sessions.push_back(std::move(Session::fromModel(*graph::parseModelText(t), "ref", {})).value());
  std::vector<int64_t> labels;
  for (const auto& s : samples) {
    TensorMap x = s;
    for (auto& session : sessions) x = *session->run(x);
    const auto v = x.at(out).toF32();
    labels.push_back(std::max_element(v.begin(), v.end()) - v.begin());
  }
  return labels;
}

// Each position: `depth` MatMuls of [rows, 128] x [128, 128].
TwoTasks twoTasks(int depth, int rows = 16) {
  TwoTasks t;
  t.texts = {testing::chainText("xa", "ha", rows, 128, depth, 0.01f),
             testing::chainText("ha", "ya", rows, 128, depth, 0.02f),
             testing::chainText("xb", "hb", rows, 128, depth, 0.03f),
             testing::chainText("hb", "yb", rows, 128, depth, 0.01f)};
  const int c0 = availableCores().front(), c1 = availableCores().back();
  t.setup.processors = {zp::testing::pinned("p0", {c0}), zp::testing::pinned("p1", {c1})};
  t.setup.slots = {{"a/p0", 0, 1000, true}, {"a/p1", 1, 1000, true}, {"b/p0", 1, 1000, true}, {"b/p1", 0, 1000, true}};
  ServeTask a{"a", {0, 1}, 1000, true, samplesFor("xa", 4, rows), {}};
  ServeTask b{"b", {2, 3}, 1000, true, samplesFor("xb", 3, rows), {}};
  a.labels = referenceLabels({t.texts[0], t.texts[1]}, a.samples, "ya");
  b.labels = referenceLabels({t.texts[2], t.texts[3]}, b.samples, "yb");
  t.setup.tasks = {a, b};
  t.setup.memoryBudgetBytes = 4000;
  return t;
}

ArrivalTrace periodic(int count, double rateQps, std::vector<int> samples) {
  ArrivalParams p;
  p.tasks = {{"a", ArrivalProcess::Periodic, rateQps, samples[0]}, {"b", ArrivalProcess::Periodic, rateQps, samples[1]}};
  p.count = count;
  return *generateArrivals(p);
}

// A frame's chain of two DNNs: a's positions, then b's, which start on b's own
// input (its sample of the query's index, modulo its count): the answers are b's,
// as a plain run of b on that sample gives them.
TEST(ServeRecords, WorkerTurnaroundsAreTheGapsBeforeJobsThatWereReady) {
  using K = ExecSlice::Kind;
  ServeResult r;
  r.queries.resize(3);
  r.queries[0].arrivalMs = 0, r.queries[1].arrivalMs = 1, r.queries[2].arrivalMs = 20;
  r.slices = {
      // p0: query 0 runs 0-5; query 1 (arrived at 1) loads at 5.5 and runs 6-8; query 2 arrives after.
      {K::Run, 0, 0, 0, 0, 0, 0.0, 5.0, 5.0},
      {K::Load, 0, 1, 0, 0, 1, 5.5, 6.0, 0.5},
      {K::Run, 0, 1, 0, 0, 1, 6.0, 8.0, 2.0},
      {K::Run, 0, 2, 0, 0, 0, 20.1, 21.0, 0.9},
      // p1: query 0's second position, ready at 5, starts at 5.2 on an idle worker: a hand-over, not a turnaround;
      // query 1's, ready at 8 while p1 is idle: none either.
      {K::Run, 1, 0, 0, 1, 2, 5.2, 9.0, 3.8},
      {K::Run, 1, 1, 0, 1, 2, 9.25, 10.0, 0.75},
  };
  // Query 1's second position was ready (8) before p1's previous job ended (9): 0.25 ms.
  const auto turns = workerTurnaroundsMs(r);
  ASSERT_EQ(turns.size(), 2u);
  EXPECT_DOUBLE_EQ(turns[0], 0.5);   // p0: 5 -> 5.5
  EXPECT_DOUBLE_EQ(turns[1], 0.25);  // p1: 9 -> 9.25
}

TEST(Executor, AFrameChainFeedsEachLaterDnnItsOwnInput) {
  auto t = twoTasks(2);
  const ServeTask a = t.setup.tasks[0], b = t.setup.tasks[1];  // copies: the setup's tasks are replaced below
  ServeTask frame{"cam.0", {0, 1, 2, 3}, 1000, true, a.samples, {}, "cam.0", {{2, b.samples}}};
  for (size_t s = 0; s < a.samples.size(); ++s) frame.labels.push_back(b.labels[s % b.samples.size()]);
  t.setup.tasks = {frame};
  testing::InMemoryLoader loader(t.texts);
  ArrivalParams p;
  p.tasks = {{"cam.0", ArrivalProcess::Periodic, 500, 4}};
  p.count = 8;
  auto r = serve(t.setup, loader, *generateArrivals(p));
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->queries.size(), 8u);
  for (const auto& q : r->queries) EXPECT_TRUE(q.completed && q.correct) << "query " << q.query;
  EXPECT_EQ(r->slices.size(), 32u);
  // A stage that starts no later DNN is a mistake in the setup.
  t.setup.tasks[0].stages = {{4, b.samples}};
  EXPECT_FALSE(serve(t.setup, loader, *generateArrivals(p)).ok());
}

// A run rather than a workload: every arrival at time 0, yet each query starts
// after the one before it ended; each keeps its last outputs, equal to a plain
// sequential run's; the hook sees every run with its unit.
TEST(Executor, AClosedLoopRunsOneQueryAtATimeAndKeepsItsOutputs) {
  auto t = twoTasks(2);
  testing::InMemoryLoader loader(t.texts);
  ArrivalTrace trace{{"a", "b"}, {}};
  for (int i = 0; i < 6; ++i) trace.arrivals.push_back({0.0, i % 2, i / 2});
  ServeParams params;
  params.closedLoop = true;
  params.keepOutputs = true;
  std::mutex mu;
  std::vector<std::pair<int, int>> seen;  // (query, position)
  params.afterRun = [&](const ExecSlice& run, LoadedUnit& unit) {
    ASSERT_TRUE(unit);
    std::lock_guard lock(mu);
    seen.push_back({run.query, run.position});
  };
  auto r = serve(t.setup, loader, trace, params);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->outputs.size(), 6u);
  for (size_t i = 0; i < 6; ++i) {
    const auto& q = r->queries[i];
    EXPECT_TRUE(q.completed && q.correct) << "query " << i;
    if (i > 0) EXPECT_GE(q.arrivalMs, r->queries[i - 1].finishMs) << "query " << i << " overlapped the one before";
    const std::string out = i % 2 ? "yb" : "ya";
    ASSERT_EQ(r->outputs[i].count(out), 1u) << "query " << i;
    const auto v = r->outputs[i].at(out).toF32();
    EXPECT_EQ(std::max_element(v.begin(), v.end()) - v.begin(), q.label);
  }
  std::sort(seen.begin(), seen.end());
  std::vector<std::pair<int, int>> all;
  for (int q = 0; q < 6; ++q) all.insert(all.end(), {{q, 0}, {q, 1}});
  EXPECT_EQ(seen, all);
}

TEST(Executor, TwoProcessorsRunDifferentTasksAtTheSameTime) {
  if (availableCores().size() < 2) GTEST_SKIP() << "needs two cores";
  // Positions of about 1 ms and a burst (one query of each task every 0.2 ms), so that both
  // workers have work queued for tens of milliseconds: long enough to overlap even when other
  // processes hand this one's threads the cores in turns.
  auto t = twoTasks(24, 64);
  testing::InMemoryLoader loader(t.texts);
  auto trace = periodic(20, 5000, {4, 3});
  auto r = serve(t.setup, loader, trace);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->queries.size(), 40u);
  for (const auto& q : r->queries) {
    EXPECT_TRUE(q.completed);
    EXPECT_TRUE(q.correct) << "query " << q.query << " predicted " << q.predicted << " label " << q.label;
    EXPECT_GE(q.startMs, q.arrivalMs);
    EXPECT_GT(q.finishMs, q.startMs);
    EXPECT_DOUBLE_EQ(q.latencyMs, q.finishMs - q.arrivalMs);
    EXPECT_EQ(q.loadMs, 0);  // all preloaded
  }
  EXPECT_EQ(r->correct, 40);
  EXPECT_EQ(r->loads, 0);
  // One run slice per position per query; each processor runs one slice at a time.
  ASSERT_EQ(r->slices.size(), 80u);
  int overlapping = 0;
  for (size_t i = 0; i < r->slices.size(); ++i)
    for (size_t j = i + 1; j < r->slices.size(); ++j) {
      const auto &x = r->slices[i], &y = r->slices[j];
      const bool overlap = x.startMs < y.endMs && y.startMs < x.endMs;
      if (x.processor == y.processor) EXPECT_FALSE(overlap) << i << " " << j;
      else if (overlap && x.task != y.task) ++overlapping;
    }
  EXPECT_GT(overlapping, 0) << "no two slices of different tasks ran at the same time";
  // Positions of a query run in order, each on its slot's processor.
  for (const auto& s : r->slices) EXPECT_EQ(s.processor, t.setup.slots[static_cast<size_t>(s.slot)].processor);
  EXPECT_EQ(r->summary.completed, 40);
  EXPECT_GT(r->summary.throughputQps, 0);
  EXPECT_GT(r->peakRssBytes, 0);
  EXPECT_EQ(r->peakResidentBytes, 4000);
  // The trace: one track per processor.
  auto trace_json = serveTrace(*r, "serve");
  int tracks = 0;
  for (const auto& ev : trace_json["traceEvents"]) tracks += ev["name"] == "thread_name";
  EXPECT_EQ(tracks, 2);
}

TEST(Executor, OnDemandLoadsAreCountedInTheQueryAndPreloadStays) {
  auto t = twoTasks(2);
  const int core = availableCores().front();
  // One processor, task a only; a/p0 preloaded, a/p1 and a third position loaded on demand.
  t.texts.push_back(testing::chainText("ya", "za", 16, 128, 2, 0.01f));  // rows as twoTasks' default
  t.setup.processors = {zp::testing::pinned("p0", {core})};
  t.setup.slots = {{"a/p0", 0, 1000, true}, {"a/p1", 0, 1000, false}, {"b/p0", 0, 1000, false},
                   {"b/p1", 0, 1000, false}, {"a/p2", 0, 1000, false}};
  t.setup.tasks.resize(1);
  t.setup.tasks[0].slots = {0, 1, 4};
  t.setup.tasks[0].labels.clear();
  t.setup.memoryBudgetBytes = 2000;  // preload + one more: p1 and p2 evict each other
  // One query every 100 ms: on a machine that is not overloaded each finishes before the
  // next arrives, and then loads and evictions follow from the LRU rule alone. When queries
  // do overlap, the order in which the worker sees the positions of two queries depends on
  // timing, and only the invariants are checked.
  ArrivalParams p;
  p.tasks = {{"a", ArrivalProcess::Periodic, 10, 4}};
  p.count = 5;
  auto trace = *generateArrivals(p);
  std::vector<ServeResult> sequential;
  for (int rep = 0; rep < 2; ++rep) {
    testing::InMemoryLoader loader(t.texts);
    auto r = serve(t.setup, loader, trace);
    ASSERT_TRUE(r.ok()) << r.error().message;
    bool overlapped = false;
    for (size_t i = 1; i < r->queries.size(); ++i) overlapped |= r->queries[i].arrivalMs < r->queries[i - 1].finishMs;
    // Invariants: the preloaded slot is loaded once and never evicted; the budget holds
    // one on-demand slot, so every load after the first evicts exactly one.
    EXPECT_EQ(loader.loads(0), 1);
    EXPECT_EQ(loader.loads(2) + loader.loads(3), 0);
    EXPECT_EQ(r->loads, loader.loads(1) + loader.loads(4));
    EXPECT_EQ(r->evictions, r->loads - 1);
    EXPECT_EQ(r->overBudgetLoads, 0);
    EXPECT_EQ(r->peakResidentBytes, 2000);
    int loadSlices = 0;
    double loadMs = 0;
    for (const auto& s : r->slices) loadSlices += s.kind == ExecSlice::Kind::Load;
    for (const auto& q : r->queries) {
      EXPECT_GE(q.latencyMs, q.loadMs);
      loadMs += q.loadMs;
    }
    EXPECT_EQ(loadSlices, r->loads);
    EXPECT_GT(loadMs, 0);
    // The trace names runs by task/position and loads by subgraph, all on the one track.
    std::map<std::string, int> names;
    const Json traceJson = serveTrace(*r, "serve");
    for (const auto& ev : traceJson["traceEvents"])
      if (ev["ph"] == "X") {
        ++names[ev["name"].get<std::string>()];
        EXPECT_EQ(ev["tid"], 1);
      }
    EXPECT_EQ(names["a/p0"] + names["a/p1"] + names["a/p2"], 15);
    EXPECT_EQ(names["load a/p1"] + names["load a/p2"], r->loads);
    if (overlapped) continue;
    // Sequential queries: p1 and p2 evict each other, so each query loads both.
    EXPECT_EQ(r->loads, 10);
    for (const auto& q : r->queries) EXPECT_GT(q.loadMs, 0);
    sequential.push_back(std::move(r).value());
  }
  // Everything that is not a time is the same in two sequential runs.
  if (sequential.size() < 2) return;
  for (size_t i = 0; i < sequential[0].queries.size(); ++i) {
    EXPECT_EQ(sequential[0].queries[i].predicted, sequential[1].queries[i].predicted);
    EXPECT_EQ(sequential[0].queries[i].sample, sequential[1].queries[i].sample);
  }
  ASSERT_EQ(sequential[0].slices.size(), sequential[1].slices.size());
  for (size_t i = 0; i < sequential[0].slices.size(); ++i) {
    EXPECT_EQ(sequential[0].slices[i].kind, sequential[1].slices[i].kind);
    EXPECT_EQ(sequential[0].slices[i].slot, sequential[1].slices[i].slot);
    EXPECT_EQ(sequential[0].slices[i].query, sequential[1].slices[i].query);
  }
}

TEST(Executor, SloViolationsFollowTheLatencies) {
  auto t = twoTasks(2);
  const int core = availableCores().front();
  t.setup.processors = {zp::testing::pinned("p0", {core})};
  for (auto& s : t.setup.slots) s.processor = 0;
  t.setup.tasks[0].sloMs = 1e6;              // always met
  t.setup.tasks[1].accuracySloMet = false;   // never met, whatever the latency
  auto r = serve(t.setup, *std::make_unique<testing::InMemoryLoader>(t.texts), periodic(3, 100, {4, 3}));
  ASSERT_TRUE(r.ok()) << r.error().message;
  for (const auto& q : r->queries) EXPECT_EQ(q.sloMet, q.task == 0);
  EXPECT_DOUBLE_EQ(r->summary.violationRate, 0.5);
}

// Serves `trace` (a long query 0 at 0, two more at 2.0 and 2.5 ms) first come and
// earliest deadline first, and checks the order the runs took: arrival order, and
// `deadlineOrder`. Skipped when the host does not let the long run start before the
// others arrive and last until `endsAfterMs`.
void expectRunOrders(const ServeSetup& setup, const std::vector<std::string>& texts, const ArrivalTrace& trace,
                     double endsAfterMs, const std::vector<int>& deadlineOrder) {
  for (const auto order : {ServingOrder::FirstCome, ServingOrder::EarliestDeadline}) {
    testing::InMemoryLoader loader(texts);
    auto r = serve(setup, loader, trace, {.order = order});
    ASSERT_TRUE(r.ok()) << r.error().message;
    ASSERT_EQ(r->slices.size(), 3u);
    if (r->slices[0].query != 0 || r->slices[0].startMs > 1.9)
      GTEST_SKIP() << "the worker woke after the others had arrived (a busy host): nothing to order";
    if (r->slices[0].endMs < endsAfterMs) GTEST_SKIP() << "the long run ended too soon: nothing to order";
    std::vector<int> ran;
    for (const auto& x : r->slices) ran.push_back(x.query);
    EXPECT_EQ(ran, (order == ServingOrder::FirstCome ? std::vector<int>{0, 1, 2} : deadlineOrder))
        << servingOrderName(order);
  }
}

// On one processor a long "loose" query runs while a second loose one and a
// short "tight" one (a bound far below loose's) queue behind it: first come
// first served runs them in arrival order, earliest deadline first runs tight
// next, never interrupting the run under way.
TEST(Executor, EarliestDeadlineFirstRunsTheTightQueryBeforeAnEarlierLooseOne) {
  ServeSetup setup;
  setup.processors = {zp::testing::pinned("p0", {availableCores().front()})};
  setup.slots = {{"loose", 0, 1000, true}, {"tight", 0, 1000, true}};
  // Tight's bound leaves it on time when the first run ends (late, it would go last).
  setup.tasks = {ServeTask{"loose", {0}, 100000, true, samplesFor("xa", 1, 64), {}},
                 ServeTask{"tight", {1}, 1000, true, samplesFor("xb", 1, 16), {}}};
  setup.memoryBudgetBytes = 2000;
  const std::vector<std::string> texts = {testing::chainText("xa", "ya", 64, 128, 256, 0.01f),
                                          testing::chainText("xb", "yb", 16, 128, 2, 0.01f)};
  const ArrivalTrace trace{{"loose", "tight"}, {{0, 0, 0}, {2.0, 0, 0}, {2.5, 1, 0}}};
  expectRunOrders(setup, texts, trace, 2.5, {0, 2, 1});
}

// No thread beside the workers hands queries on: arrivals that fall due while
// the only worker runs are posted by it once that run has ended; on two
// processors the idle one takes its own arrival while the other still runs.
TEST(Executor, TheWorkersHandOnTheArrivalsThatFallDue) {
  const std::vector<std::string> texts = {testing::chainText("xa", "ya", 64, 128, 256, 0.01f),
                                          testing::chainText("xb", "yb", 16, 128, 2, 0.01f)};
  auto setupOn = [&](int processors) {
    ServeSetup setup;
    setup.processors = {zp::testing::pinned("p0", {availableCores().front()})};
    if (processors == 2) setup.processors.push_back(zp::testing::pinned("p1", {availableCores().back()}));
    setup.slots = {{"long", 0, 1000, true}, {"short", processors - 1, 1000, true}};
    setup.tasks = {ServeTask{"long", {0}, 1000, true, samplesFor("xa", 1, 64), {}},
                   ServeTask{"short", {1}, 1000, true, samplesFor("xb", 1, 16), {}}};
    setup.memoryBudgetBytes = 2000;
    return setup;
  };
  const ArrivalTrace trace{{"long", "short"}, {{0, 0, 0}, {0.5, 1, 0}, {1.0, 1, 0}}};
  {
    testing::InMemoryLoader loader(texts);
    auto r = serve(setupOn(1), loader, trace);
    ASSERT_TRUE(r.ok()) << r.error().message;
    ASSERT_EQ(r->slices.size(), 3u);
    if (r->slices[0].query != 0 || r->slices[0].startMs > 0.4)
      GTEST_SKIP() << "the worker woke after the others had arrived (a busy host)";
    if (r->slices[0].endMs < 1.0) GTEST_SKIP() << "the long run ended before the others arrived";
    for (int q : {1, 2}) {
      EXPECT_GE(r->queries[q].postedMs, r->slices[0].endMs) << q;
      EXPECT_LE(r->queries[q].postedMs, r->queries[q].startMs) << q;
    }
  }
  if (availableCores().size() < 2) return;
  testing::InMemoryLoader loader(texts);
  auto r = serve(setupOn(2), loader, trace);
  ASSERT_TRUE(r.ok()) << r.error().message;
  double longEnd = 0;
  for (const auto& x : r->slices)
    if (x.query == 0) longEnd = x.endMs;
  if (longEnd < 5.0) GTEST_SKIP() << "the long run took under 5 ms: too short to see the other worker take its own";
  EXPECT_LT(r->queries[1].postedMs, longEnd);
  EXPECT_LT(r->queries[1].finishMs, longEnd);
}

// Earliest deadline first among the queries that can still make their bound: a
// query whose deadline passed while a long run held the processor goes after one
// queued behind it whose deadline has not (first come keeps arrival order).
TEST(Executor, EarliestDeadlineFirstTakesALateQueryLast) {
  ServeSetup setup;
  setup.processors = {zp::testing::pinned("p0", {availableCores().front()})};
  setup.slots = {{"long", 0, 1000, true}, {"short", 0, 1000, true}};
  setup.tasks = {ServeTask{"long", {0}, 100000, true, samplesFor("xa", 1, 64), {}},
                 ServeTask{"tight", {1}, 0.5, true, samplesFor("xb", 1, 16), {}},
                 ServeTask{"mid", {1}, 100000, true, samplesFor("xb", 1, 16), {}}};
  setup.memoryBudgetBytes = 2000;
  const std::vector<std::string> texts = {testing::chainText("xa", "ya", 64, 128, 256, 0.01f),
                                          testing::chainText("xb", "yb", 16, 128, 2, 0.01f)};
  const ArrivalTrace trace{{"long", "tight", "mid"}, {{0, 0, 0}, {2.0, 1, 0}, {2.5, 2, 0}}};
  expectRunOrders(setup, texts, trace, 2.6, {0, 2, 1});  // tight's deadline (2.5) passed under the long run
}

TEST(Executor, AdmissionControlBoundsEachQueueAcrossItsSetupTasks) {
  // One processor, slow positions, 40 queries at time 0 alternating a and b.
  ArrivalTrace burst;
  burst.tasks = {"a", "b"};
  for (int i = 0; i < 40; ++i) burst.arrivals.push_back({0.0, i % 2, 0});
  ServeParams params;
  params.maxQueuedPerTask = 3;
  auto dropped = [&](const std::string& queueA, const std::string& queueB) {
    auto t = twoTasks(8, 64);
    t.setup.processors = {zp::testing::pinned("p0", {availableCores().front()})};
    for (auto& s : t.setup.slots) s.processor = 0;
    t.setup.tasks[0].queue = queueA;
    t.setup.tasks[1].queue = queueB;
    auto r = serve(t.setup, *std::make_unique<testing::InMemoryLoader>(t.texts), burst, params);
    EXPECT_TRUE(r.ok()) << r.error().message;
    int admitted = 0;
    for (const auto& q : r->queries) admitted += !q.dropped;
    EXPECT_EQ(admitted + r->dropped, 40);
    return r->dropped;
  };
  // Own queues: 3 of each admitted at once; one shared queue (a task's SLO
  // configurations): 3 in all. Later arrivals may find room as queries finish.
  const int separate = dropped("", "");
  const int shared = dropped("digits", "digits");
  EXPECT_GE(separate, 40 - 6 - 4) << "each queue holds 3";
  EXPECT_GT(shared, separate) << "one shared bound admits fewer";
  EXPECT_GE(shared, 40 - 3 - 4);
}

TEST(Executor, BadSetupsAreRefusedBeforeServing) {
  auto t = twoTasks(1);
  testing::InMemoryLoader loader(t.texts);
  auto trace = periodic(1, 100, {4, 3});
  auto bad = t.setup;
  bad.processors[1].cores = {availableCores().back() + 1};
  auto r = serve(bad, loader, trace);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("processor 'p1': core"), std::string::npos) << r.error().message;
  bad = t.setup;
  bad.memoryBudgetBytes = 3999;
  r = serve(bad, loader, trace);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("preload set needs 4000 bytes"), std::string::npos) << r.error().message;
  auto badTrace = trace;
  badTrace.tasks[1] = "c";
  r = serve(t.setup, loader, badTrace);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "arrivals: task 'c' is not served");
  badTrace = trace;
  badTrace.arrivals[0].sample = 9;
  EXPECT_FALSE(serve(t.setup, loader, badTrace).ok());
  bad = t.setup;
  bad.tasks[0].slots = {0, 7};
  EXPECT_FALSE(serve(bad, loader, trace).ok());
  for (int s = 0; s < 4; ++s) EXPECT_EQ(loader.loads(s), 0);  // nothing loaded for a refused setup
}

// Loads slot 0 as an operator-placed unit: the first half of its nodes on
// processor 0, the rest on processor 1, run by the unit's own pinned workers.
class PlacedLoader : public SubgraphLoader {
 public:
  PlacedLoader(std::string text, std::vector<Processor> processors)
      : text_(std::move(text)), processors_(std::move(processors)) {}
  Expected<LoadedSubgraph> load(int, const ServeSlot& info, const SessionOptions&) override {
    ZP_ASSIGN_OR_RETURN(auto model, graph::parseModelText(text_));
    std::vector<std::unique_ptr<Session>> sessions;
    for (const auto& p : processors_) {
      ZP_ASSIGN_OR_RETURN(auto session, Session::fromModel(model, info.name, sessionOptions(p)));
      sessions.push_back(std::move(session));
    }
    std::vector<int> placement(sessions.front()->nodes().size(), 0);
    for (size_t i = placement.size() / 2; i < placement.size(); ++i) placement[i] = 1;
    ZP_ASSIGN_OR_RETURN(auto program, PlacedProgram::create(std::move(sessions), placement));
    const int64_t bytes = placedBytes(*program);
    ZP_ASSIGN_OR_RETURN(auto placed, PlacedExecutor::start(std::move(program), processors_));
    ++loads;
    return LoadedSubgraph{std::move(placed), bytes};
  }
  std::atomic<int> loads{0};

 private:
  std::string text_;
  std::vector<Processor> processors_;
};

TEST(Executor, AnOperatorPlacedUnitServesLikeAnyOther) {
  const int c0 = availableCores().front(), c1 = availableCores().back();
  const std::vector<Processor> procs{zp::testing::pinned("p0", {c0}), zp::testing::pinned("p1", {c1})};
  const std::string text = testing::chainText("x", "y", 16, 128, 6, 0.02f);
  ServeSetup setup;
  setup.processors = procs;
  setup.slots = {{"placed", 0, 1000, false}};
  ServeTask task{"a", {0}, 1000, true, samplesFor("x", 4, 16), {}};
  task.labels = referenceLabels({text}, task.samples, "y");
  setup.tasks = {task};
  setup.memoryBudgetBytes = 1000;
  PlacedLoader loader(text, procs);
  ArrivalParams ap;
  ap.tasks = {{"a", ArrivalProcess::Periodic, 200, 4}};
  ap.count = 12;
  auto r = serve(setup, loader, *generateArrivals(ap));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(loader.loads, 1);  // loaded on demand once, then resident
  EXPECT_EQ(r->loads, 1);
  ASSERT_EQ(r->queries.size(), 12u);
  for (const auto& q : r->queries) {
    EXPECT_TRUE(q.completed);
    EXPECT_TRUE(q.correct) << "query " << q.query << " predicted " << q.predicted << " label " << q.label;
  }
  EXPECT_EQ(r->correct, 12);
}

TEST(Executor, ARunHoldingAnotherProcessorHasItsWorkerToItself) {
  if (availableCores().size() < 2) GTEST_SKIP() << "needs two cores";
  // a's slot runs on p0 and holds p1 (as an operator-placed unit's run does); b
  // runs on p1. Queries of both come in a burst, so p1 always has b's work queued.
  const int c0 = availableCores().front(), c1 = availableCores().back();
  const std::vector<std::string> texts = {testing::chainText("xa", "ya", 64, 128, 24, 0.01f),
                                          testing::chainText("xb", "yb", 64, 128, 24, 0.02f)};
  ServeSetup setup;
  setup.processors = {zp::testing::pinned("p0", {c0}), zp::testing::pinned("p1", {c1})};
  setup.slots = {{"a", 0, 1000, true, {1}}, {"b", 1, 1000, true}};
  ServeTask a{"a", {0}, 1000, true, samplesFor("xa", 4, 64), {}};
  ServeTask b{"b", {1}, 1000, true, samplesFor("xb", 3, 64), {}};
  a.labels = referenceLabels({texts[0]}, a.samples, "ya");
  b.labels = referenceLabels({texts[1]}, b.samples, "yb");
  setup.tasks = {a, b};
  setup.memoryBudgetBytes = 2000;
  testing::InMemoryLoader loader(texts);
  auto r = serve(setup, loader, periodic(10, 5000, {4, 3}));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->correct, 20);
  int aRuns = 0, bRuns = 0;
  for (const auto& x : r->slices) {
    (x.task == 0 ? aRuns : bRuns) += x.kind == ExecSlice::Kind::Run;
    for (const auto& y : r->slices)
      if (x.task == 0 && y.task == 1)
        EXPECT_TRUE(x.endMs <= y.startMs || y.endMs <= x.startMs)
            << "b ran over [" << y.startMs << ", " << y.endMs << "] while a held p1 over [" << x.startMs << ", "
            << x.endMs << "]";
  }
  EXPECT_EQ(aRuns, 10);
  EXPECT_EQ(bRuns, 10);
  // A held processor must be above the runner's.
  setup.slots[0].holds = {0};
  auto bad = serve(setup, loader, periodic(1, 100, {4, 3}));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("subgraph 'a' on processor 0 holds processor 0"), std::string::npos)
      << bad.error().message;
}

TEST(Executor, ALoadFailureStopsServingWithItsError) {
  auto t = twoTasks(1);
  t.setup.slots[3].preload = false;
  t.texts[3] = "not onnx";
  testing::InMemoryLoader loader(t.texts);
  auto r = serve(t.setup, loader, periodic(4, 100, {4, 3}));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message.rfind("subgraph 'b/p1': ", 0), 0u) << r.error().message;
}

}  // namespace
}  // namespace zp::runtime::serve
