#include "libplan/sim/queries/processor_queues.h"

#include <algorithm>
#include <cmath>

namespace zp::sim {

ProcessorQueues::ProcessorQueues(int processors, bool lateLast)
    : inflow_(static_cast<size_t>(processors)),
      inflowHead_(static_cast<size_t>(processors), 0),
      arriving_(static_cast<size_t>(processors)),
      queued_(static_cast<size_t>(processors)),
      late_(static_cast<size_t>(processors)),
      free_(static_cast<size_t>(processors), 0.0),
      lateLast_(lateLast) {}

void ProcessorQueues::push(int processor, const QueuedJob& job) {
  const auto p = static_cast<size_t>(processor);
  auto& inflow = inflow_[p];
  if (inflowHead_[p] == inflow.size()) inflow.clear(), inflowHead_[p] = 0;
  if (inflow.empty() || !ReadyLater()(inflow.back(), job)) inflow.push_back(job);  // joins no earlier than the last
  else arriving_[p].push(job);
}

const QueuedJob* ProcessorQueues::firstArriving(size_t p) const {
  const auto& heap = arriving_[p];
  if (inflowHead_[p] == inflow_[p].size()) return heap.empty() ? nullptr : &heap.top();
  const QueuedJob& head = inflow_[p][inflowHead_[p]];
  return heap.empty() || !ReadyLater()(head, heap.top()) ? &head : &heap.top();
}

void ProcessorQueues::popArriving(size_t p) {
  const QueuedJob* first = firstArriving(p);
  if (inflowHead_[p] < inflow_[p].size() && first == &inflow_[p][inflowHead_[p]]) ++inflowHead_[p];
  else arriving_[p].pop();
}

std::optional<ProcessorQueues::Next> ProcessorQueues::pop() {
  std::optional<Next> best;
  enum class From { Arriving, Queued, Late };
  From bestFrom = From::Arriving;  // which of its processor's heaps the best job is on
  for (size_t p = 0; p < arriving_.size(); ++p) {
    auto& queued = queued_[p];
    auto& late = late_[p];
    // A blocked processor (free at infinity) has not chosen yet: what joins
    // before it is freed is still to be ordered then. A finite free time only
    // grows, so a job queued by it stays queued.
    if (std::isfinite(free_[p])) {
      for (const QueuedJob* a = firstArriving(p); a && a->ready <= free_[p]; a = firstArriving(p)) {
        queued.push(*a);
        popArriving(p);
      }
      for (; lateLast_ && !queued.empty() && queued.top().deadline < free_[p]; queued.pop()) late.push(queued.top());
    }
    const QueuedJob* arriving = firstArriving(p);
    From from = !queued.empty() ? From::Queued : !late.empty() ? From::Late : From::Arriving;
    if (from == From::Queued && arriving && !std::isfinite(free_[p]) && DeadlineLater()(queued.top(), *arriving))
      from = From::Arriving;
    if (from == From::Arriving && !arriving) continue;
    const QueuedJob& head = from == From::Queued ? queued.top() : from == From::Late ? late.top() : *arriving;
    const double start = std::max(head.ready, free_[p]);
    // The first candidate is taken whatever its start: an infinite time is still
    // a job that must run.
    if (!best || start < best->start ||
        (start == best->start && (head.ready < best->job.ready ||
                                  (head.ready == best->job.ready && head.key < best->job.key)))) {
      best = Next{static_cast<int>(p), head, start};
      bestFrom = from;
    }
  }
  if (!best) return best;
  const auto p = static_cast<size_t>(best->processor);
  if (bestFrom == From::Arriving && lateLast_ && std::isfinite(best->start)) {
    // The processor idles until `start` and chooses then, among every job joined by it: no job
    // pushed after this one starts joins earlier (jobs are popped in start-time order).
    for (const QueuedJob* a = firstArriving(p); a && a->ready <= best->start; a = firstArriving(p)) {
      queued_[p].push(*a);
      popArriving(p);
    }
    for (; !queued_[p].empty() && queued_[p].top().deadline < best->start; queued_[p].pop())
      late_[p].push(queued_[p].top());
    bestFrom = !queued_[p].empty() ? From::Queued : From::Late;
    best->job = bestFrom == From::Queued ? queued_[p].top() : late_[p].top();
  }
  if (bestFrom == From::Queued) queued_[p].pop();
  else if (bestFrom == From::Late) late_[p].pop();
  else popArriving(p);
  return best;
}

}  // namespace zp::sim
