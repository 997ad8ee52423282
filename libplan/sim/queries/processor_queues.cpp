#include "libplan/sim/queries/processor_queues.h"

#include <algorithm>
#include <cmath>

namespace zp::sim {

ProcessorQueues::ProcessorQueues(int processors)
    : arriving_(static_cast<size_t>(processors)),
      queued_(static_cast<size_t>(processors)),
      free_(static_cast<size_t>(processors), 0.0) {}

void ProcessorQueues::push(int processor, const QueuedJob& job) { arriving_[static_cast<size_t>(processor)].push(job); }

std::optional<ProcessorQueues::Next> ProcessorQueues::pop() {
  std::optional<Next> best;
  bool bestQueued = false;  // which of its processor's heaps the best job is on
  for (size_t p = 0; p < arriving_.size(); ++p) {
    auto& arriving = arriving_[p];
    auto& queued = queued_[p];
    // A blocked processor (free at infinity) has not chosen yet: what joins
    // before it is freed is still to be ordered then. A finite free time only
    // grows, so a job queued by it stays queued.
    if (std::isfinite(free_[p]))
      while (!arriving.empty() && arriving.top().ready <= free_[p]) {
        queued.push(arriving.top());
        arriving.pop();
      }
    bool fromQueued = !queued.empty();
    if (fromQueued && !arriving.empty() && !std::isfinite(free_[p]) && DeadlineLater()(queued.top(), arriving.top()))
      fromQueued = false;
    if (!fromQueued && arriving.empty()) continue;
    const QueuedJob& head = fromQueued ? queued.top() : arriving.top();
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
    else arriving_[p].pop();
  }
  return best;
}

}  // namespace zp::sim
