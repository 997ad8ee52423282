#include "libplan/sim/queries/processor_queues.h"

#include <algorithm>

namespace zp::sim {

ProcessorQueues::ProcessorQueues(int processors)
    : queues_(static_cast<size_t>(processors)), free_(static_cast<size_t>(processors), 0.0) {}

void ProcessorQueues::push(int processor, const QueuedJob& job) { queues_[static_cast<size_t>(processor)].push(job); }

std::optional<ProcessorQueues::Next> ProcessorQueues::pop() {
  std::optional<Next> best;
  for (size_t p = 0; p < queues_.size(); ++p) {
    if (queues_[p].empty()) continue;
    const QueuedJob& head = queues_[p].top();
    const double start = std::max(head.ready, free_[p]);
    // The first candidate is taken whatever its start: an infinite time is still
    // a job that must run.
    if (!best || start < best->start ||
        (start == best->start && (head.ready < best->job.ready ||
                                  (head.ready == best->job.ready && head.key < best->job.key))))
      best = Next{static_cast<int>(p), head, start};
  }
  if (best) queues_[static_cast<size_t>(best->processor)].pop();
  return best;
}

}  // namespace zp::sim
