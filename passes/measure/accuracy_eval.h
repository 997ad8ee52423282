// Accuracy on a task's dataset, measured with the runtime: original variants
// run whole, stitched variants run subgraph by subgraph with shared prefixes
// computed once (a depth-first walk over the positions), so measuring all
// V^S combinations costs V + V^2 + ... + V^S subgraph passes, not S * V^S.
// The caller reads the datasets and the subgraph models.
#pragma once
#include <atomic>
#include <map>
#include <string>
#include <vector>

#include "libplan/estimate/accuracy_estimator.h"
#include "libplan/runtime/session.h"
#include "libplan/util/error.h"
#include "libplan/util/progress.h"
#include "libplan/zoo/stitch_manifest.h"
#include "passes/stitch/stitch.h"

namespace zp::measure {

struct Dataset {
  std::vector<runtime::Tensor> samples;  // one batch-1 tensor per sample
  std::vector<int64_t> labels;
};

// Top-1 accuracy of a whole model; `correct` (optional) receives 1/0 per sample.
Expected<double> modelAccuracy(runtime::Session& session, const Dataset& data, std::vector<uint8_t>* correct = nullptr);

struct EvalStats {
  size_t subgraphRuns = 0;  // subgraph executions (one sample each)
};

// Accuracy of each combination in `combos` (indices into task.combinations),
// in the same order. `jobs` threads split the first position's variants.
// `subgraphs` holds the task's subgraph models (shapes inferred), by file.
Expected<std::vector<double>> combinationAccuracy(const zoo::TaskStitch& task, const stitch::SubgraphModels& subgraphs,
                                                  const Dataset& data, const std::vector<size_t>& combos, int jobs,
                                                  Progress* progress, const std::atomic<bool>* stop, EvalStats* stats);

// Per-sample correctness (1/0) of each combination in `combos` on its own
// samples (`samples[k]`: sorted indices into data.samples, in that order).
// A shared prefix runs once, on the union of the samples below it.
Expected<std::vector<std::vector<uint8_t>>> combinationCorrectness(
    const zoo::TaskStitch& task, const stitch::SubgraphModels& subgraphs, const Dataset& data,
    const std::vector<size_t>& combos, const std::vector<std::vector<size_t>>& samples, int jobs, Progress* progress,
    const std::atomic<bool>* stop, EvalStats* stats);

// The subgraph runs combinationAccuracy makes for `combos` on `samples`
// samples: one per distinct prefix of the combinations, per sample.
size_t walkRuns(const zoo::TaskStitch& task, const std::vector<size_t>& combos, size_t samples);

// The signals of estimate::StitchSignals, measured on `samples`.
Expected<estimate::StitchSignals> stitchSignals(const zoo::TaskStitch& task, const stitch::SubgraphModels& subgraphs,
                                                const std::vector<runtime::Tensor>& samples);

}  // namespace zp::measure
