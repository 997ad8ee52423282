#include "libplan/runtime/serve/placed_executor.h"

#include <algorithm>
#include <cassert>
#include <latch>
#include <numeric>
#include <optional>

#include "libplan/util/stats.h"
#include "libplan/util/trace.h"

namespace zp::runtime::serve {
namespace {
using Clock = SteadyClock;

}  // namespace

std::vector<std::pair<int, int>> sharedCorePairs(const std::vector<Processor>& processors) {
  std::vector<std::pair<int, int>> out;
  for (size_t a = 0; a < processors.size(); ++a)
    for (size_t b = a + 1; b < processors.size(); ++b) {
      const auto& ca = processors[a].cores;
      const bool overlap = std::any_of(processors[b].cores.begin(), processors[b].cores.end(),
                                       [&](int c) { return std::find(ca.begin(), ca.end(), c) != ca.end(); });
      if (overlap) out.push_back({static_cast<int>(a), static_cast<int>(b)});
    }
  return out;
}

Expected<std::unique_ptr<PlacedExecutor>> PlacedExecutor::start(std::unique_ptr<PlacedProgram> program,
                                                                std::vector<Processor> processors) {
  assert(program);
  if (static_cast<int>(processors.size()) != program->processors())
    return makeError("placed run: {} processors described for a program on {}", processors.size(),
                     program->processors());
  for (const auto& p : processors) ZP_TRY(checkProcessor(p));
  const auto& exclusive = program->params().exclusive;
  for (const auto& [a, b] : sharedCorePairs(processors))
    if (std::none_of(exclusive.begin(), exclusive.end(), [&, a = a, b = b](const auto& e) {
          return (e.first == a && e.second == b) || (e.first == b && e.second == a);
        }))
      return makeError("processors '{}' and '{}' share cores, but the placed program would run them at the same time",
                       processors[static_cast<size_t>(a)].name, processors[static_cast<size_t>(b)].name);
  std::unique_ptr<PlacedExecutor> e(new PlacedExecutor());
  std::vector<bool> used(processors.size(), false);
  for (int p : program->placement()) used[static_cast<size_t>(p)] = true;
  e->workers_.resize(processors.size());
  for (size_t p = 0; p < processors.size(); ++p) {
    if (!used[p]) continue;
    ZP_ASSIGN_OR_RETURN(e->workers_[p], PinnedWorker::start(processors[p]));
  }
  e->program_ = std::move(program);
  e->processors_ = std::move(processors);
  return e;
}

PlacedExecutor::~PlacedExecutor() { workers_.clear(); }  // joins the workers before the program goes

Expected<TensorMap> PlacedExecutor::run(const TensorMap& inputs, bool profile, double* wallMs) {
  // One processor (a placement that found no mix worth its hand-offs): the plain
  // session on its worker; a profiled run keeps the per-step path for its timings.
  if (const int sole = program_->soleProcessor(); sole >= 0 && !profile) {
    std::optional<Expected<TensorMap>> out;
    const auto t0 = Clock::now();
    workers_[static_cast<size_t>(sole)]->runAndWait([&] { out.emplace(program_->runSole(inputs)); });
    if (wallMs) *wallMs = msSince(t0);
    return std::move(*out);
  }
  ZP_TRY(program_->start(inputs, profile));
  const auto active = std::count_if(workers_.begin(), workers_.end(), [](const auto& w) { return w != nullptr; });
  std::latch done(active);
  PlacedProgram& prog = *program_;
  const auto t0 = Clock::now();
  for (size_t p = 0; p < workers_.size(); ++p)
    if (workers_[p])
      workers_[p]->post([&prog, &done, p] {
        prog.runProcessor(static_cast<int>(p));
        done.count_down();
      });
  done.wait();
  if (wallMs) *wallMs = msSince(t0);
  return program_->finish();
}

Expected<WarmStats> PlacedExecutor::measure(const TensorMap& inputs, int warmup, int repeat) {
  for (int i = 0; i < warmup; ++i) ZP_TRY(run(inputs));
  std::vector<double> t;
  for (int i = 0; i < repeat; ++i) {
    double ms = 0;
    ZP_TRY(run(inputs, false, &ms));
    t.push_back(ms);
  }
  return warmStatsOf(t);
}

Expected<WarmStats> measureOnProcessor(Session& session, const Processor& processor, const TensorMap& inputs,
                                       int warmup, int repeat) {
  ZP_ASSIGN_OR_RETURN(auto worker, PinnedWorker::start(processor));
  std::vector<double> t;
  Status failure;
  for (int i = 0; i < warmup + repeat && failure.ok(); ++i) {
    const auto t0 = Clock::now();
    worker->runAndWait([&] {
      if (auto r = session.run(inputs); !r.ok()) failure = r.error();
    });
    if (i >= warmup) t.push_back(msSince(t0));
  }
  if (!failure.ok()) return failure.error();
  return warmStatsOf(t);
}

Expected<std::vector<WarmStats>> measureInTurnsOnProcessor(const std::vector<Session*>& sessions,
                                                           const Processor& processor,
                                                           const std::vector<TensorMap>& inputs, int warmup, int repeat) {
  assert(sessions.size() == inputs.size());
  ZP_ASSIGN_OR_RETURN(auto worker, PinnedWorker::start(processor));
  std::vector<std::vector<double>> t(sessions.size());
  Status failure;
  for (int i = 0; i < warmup + repeat && failure.ok(); ++i)
    worker->runAndWait([&] {
      for (size_t s = 0; s < sessions.size() && failure.ok(); ++s) {
        const auto t0 = Clock::now();
        auto r = sessions[s]->run(inputs[s]);
        if (!r.ok()) failure = r.error();
        if (i >= warmup) t[s].push_back(msSince(t0));
      }
    });
  if (!failure.ok()) return failure.error();
  std::vector<WarmStats> out;
  for (const auto& ms : t) out.push_back(warmStatsOf(ms));
  return out;
}

Json placedRunTrace(const PlacedProgram& program, const std::vector<Processor>& processors,
                    const std::string& title) {
  ChromeTrace trace;
  trace.processName(1, title, 0);
  for (size_t p = 0; p < processors.size(); ++p) {
    trace.threadName(1, static_cast<int>(p) + 1, processors[p].name);
    trace.threadSortIndex(1, static_cast<int>(p) + 1, static_cast<int>(p));
  }
  for (const auto& t : program.lastProfile()) {
    const NodeInfo& n = program.node(static_cast<size_t>(t.step));
    if (t.startMs > t.waitStartMs)
      trace.span({"wait", "handoff", 1, t.processor + 1, t.waitStartMs, t.startMs - t.waitStartMs,
                  Json{{"before", n.name}}, "grey"});
    trace.span({n.name, "op", 1, t.processor + 1, t.startMs, t.durMs,
                Json{{"op_type", n.opType}, {"kernel", n.kernel}, {"step", t.step}}, ""});
  }
  return trace.json();
}

}  // namespace zp::runtime::serve
