#include "libplan/sim/queries/processor_queues.h"

#include <algorithm>
#include <cmath>

namespace zp::sim {

ProcessorQueues::ProcessorQueues(int processors)
    : inflow_(static_cast<size_t>(processors)),
      inflowHead_(static_cast<size_t>(processors), 0),
      arriving_(static_cast<size_t>(processors)),
      queued_(static_cast<size_t>(processors)),
      free_(static_cast<size_t>(processors), 0.0) {}

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
  bool bestQueued = false;  // which of its processor's heaps the best job is on
  for (size_t p = 0; p < arriving_.size(); ++p) {
    auto& queued = queued_[p];
    // A blocked processor (free at infinity) has not chosen yet: what joins
    // before it is freed is still to be ordered then. A finite free time only
    // grows, so a job queued by it stays queued.
    if (std::isfinite(free_[p]))
      for (const QueuedJob* a = firstArriving(p); a && a->ready <= free_[p]; a = firstArriving(p)) {
        queued.push(*a);
        popArriving(p);
      }
    const QueuedJob* arriving = firstArriving(p);
    bool fromQueued = !queued.empty();
    if (fromQueued && arriving && !std::isfinite(free_[p]) && DeadlineLater()(queued.top(), *arriving))
      fromQueued = false;
    if (!fromQueued && !arriving) continue;
    const QueuedJob& head = fromQueued ? queued.top() : *arriving;
    const double start = std::max(head.ready, free_[p]);
    // The first candidate is taken whatever its start: an infinite time is still
    // a job that must run.
    if (!best || start < best->start ||
        (start == best->start && (head.ready < best->job.ready ||
                                  (head.ready == best->job.ready && head.key < best->job.key)))) {
      best = Next{static_cast<int>(p), head, start};
      bestQueued = fromQueued;
    }
  }
  if (best) {
    const auto p = static_cast<size_t>(best->processor);
    if (bestQueued) queued_[p].pop();
    else popArriving(p);
  }
  return best;
}

}  // namespace zp::sim
