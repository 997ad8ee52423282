#include "passes/measure/accuracy_eval.h"

#include <algorithm>
#include <cassert>
#include <numeric>
#include <cmath>
#include <cstring>
#include <functional>
#include <optional>
#include <map>
#include <set>
#include <memory>
#include <mutex>
#include <thread>

#include "libplan/util/signals.h"

namespace zp::measure {

namespace {

int64_t argmax(const runtime::Tensor& t) {
  auto v = t.toF32();
  return static_cast<int64_t>(std::max_element(v.begin(), v.end()) - v.begin());
}

}  // namespace

Expected<double> modelAccuracy(runtime::Session& session, const Dataset& data, std::vector<uint8_t>* correctness) {
  if (data.samples.empty()) return 0.0;
  const std::string in = session.inputs().at(0).name, out = session.outputs().at(0).name;
  size_t correct = 0;
  for (size_t i = 0; i < data.samples.size(); ++i) {
    runtime::TensorMap feeds;
    feeds.emplace(in, data.samples[i]);
    ZP_ASSIGN_OR_RETURN(auto r, session.run(feeds));
    const bool ok = argmax(r.at(out)) == data.labels[i];
    correct += ok;
    if (correctness) correctness->push_back(ok ? 1 : 0);
  }
  return static_cast<double>(correct) / static_cast<double>(data.samples.size());
}

namespace {

// Sessions of one worker: one per (position, variant index), loaded on first use.
class Worker {
 public:
  Worker(const zoo::TaskStitch& task, const stitch::SubgraphModels& models) : task_(task), models_(models) {}

  Expected<runtime::Session*> session(size_t position, size_t variant) {
    auto key = std::make_pair(position, variant);
    auto it = sessions_.find(key);
    if (it != sessions_.end()) return it->second.get();
    const auto& sg = task_.subgraphs[position][variant];
    runtime::SessionOptions o;
    o.threads = 1;
    o.checkModel = false;
    auto model = models_.find(sg.file);
    if (model == models_.end()) return makeError("{}: subgraph model not loaded", sg.file);
    ZP_ASSIGN_OR_RETURN(auto s, runtime::Session::fromModel(model->second, sg.file, o));
    auto* raw = s.get();
    sessions_.emplace(key, std::move(s));
    return raw;
  }

 private:
  const zoo::TaskStitch& task_;
  const stitch::SubgraphModels& models_;
  std::map<std::pair<size_t, size_t>, std::unique_ptr<runtime::Session>> sessions_;
};

struct Trie {
  std::map<size_t, Trie> next;  // variant index at the next position
  std::vector<size_t> leaves;   // positions in the `combos` list ending here
  std::vector<size_t> need;     // samples (sorted) some combination at or below this node runs on
};

// Sorted union of every leaf's samples below `node`, stored in node.need.
void collectNeeds(Trie& node, const std::vector<std::vector<size_t>>& samples) {
  std::set<size_t> need;
  for (size_t leaf : node.leaves) need.insert(samples[leaf].begin(), samples[leaf].end());
  for (auto& [v, child] : node.next) {
    collectNeeds(child, samples);
    need.insert(child.need.begin(), child.need.end());
  }
  node.need.assign(need.begin(), need.end());
}

// Where each of the samples `to` (a sorted subset of the sorted `from`) sits in `from`.
std::vector<size_t> indicesIn(const std::vector<size_t>& from, const std::vector<size_t>& to) {
  std::vector<size_t> at;
  at.reserve(to.size());
  size_t j = 0;
  for (size_t sample : to) {
    while (from[j] != sample) ++j;
    at.push_back(j);
  }
  return at;
}

}  // namespace

Expected<std::vector<std::vector<uint8_t>>> combinationCorrectness(
    const zoo::TaskStitch& task, const stitch::SubgraphModels& subgraphs, const Dataset& data,
    const std::vector<size_t>& combos, const std::vector<std::vector<size_t>>& samples, int jobs, Progress* progress,
    const std::atomic<bool>* stop, EvalStats* stats) {
  assert(samples.size() == combos.size());
  std::map<std::string, size_t> variantIndex;
  for (size_t v = 0; v < task.variants.size(); ++v) variantIndex[task.variants[v].id] = v;
  Trie root;
  for (size_t k = 0; k < combos.size(); ++k) {
    Trie* node = &root;
    for (const auto& v : task.combinations[combos[k]].variants) node = &node->next[variantIndex.at(v)];
    node->leaves.push_back(k);
  }
  collectNeeds(root, samples);
  std::vector<std::vector<uint8_t>> result(combos.size());
  std::vector<std::pair<size_t, const Trie*>> firstLevel;
  for (const auto& [v, child] : root.next) firstLevel.emplace_back(v, &child);

  std::mutex mu;
  std::optional<Error> firstError;
  std::atomic<size_t> nextItem{0};
  std::atomic<size_t> runs{0};

  auto workerMain = [&]() {
    Worker w(task, subgraphs);
    // Depth-first: `inputs` holds the current prefix's boundary tensors for the samples `node.need`.
    std::function<Status(size_t, size_t, const Trie&, const std::vector<runtime::Tensor>&)> walk =
        [&](size_t position, size_t variant, const Trie& node, const std::vector<runtime::Tensor>& inputs) -> Status {
      if (stop && stop->load()) return makeError("interrupted");
      ZP_ASSIGN_OR_RETURN(auto* s, w.session(position, variant));
      const std::string in = s->inputs().at(0).name, out = s->outputs().at(0).name;
      std::vector<runtime::Tensor> outputs;
      outputs.reserve(inputs.size());
      for (const auto& x : inputs) {
        runtime::TensorMap feeds;
        feeds.emplace(in, x);
        ZP_ASSIGN_OR_RETURN(auto r, s->run(feeds));
        outputs.push_back(std::move(r.at(out)));
      }
      runs += inputs.size();
      for (size_t leaf : node.leaves) {
        const auto at = indicesIn(node.need, samples[leaf]);
        for (size_t i = 0; i < at.size(); ++i)
          result[leaf].push_back(argmax(outputs[at[i]]) == data.labels[samples[leaf][i]]);
      }
      if (progress && !node.leaves.empty()) progress->advance(node.leaves.size());
      for (const auto& [v, child] : node.next) {
        if (child.need.size() == node.need.size()) {  // the same samples: no copy
          ZP_TRY(walk(position + 1, v, child, outputs));
          continue;
        }
        std::vector<runtime::Tensor> inputs;
        for (size_t j : indicesIn(node.need, child.need)) inputs.push_back(outputs[j]);
        ZP_TRY(walk(position + 1, v, child, inputs));
      }
      return {};
    };
    while (true) {
      size_t item = nextItem++;
      if (item >= firstLevel.size()) return;
      const Trie& first = *firstLevel[item].second;
      std::vector<runtime::Tensor> inputs;
      for (size_t i : first.need) inputs.push_back(data.samples[i]);
      auto st = walk(0, firstLevel[item].first, first, inputs);
      if (!st.ok()) {
        std::lock_guard<std::mutex> lock(mu);
        if (!firstError) firstError = st.error();
        return;
      }
    }
  };
  const int n = std::max(1, std::min<int>(jobs, static_cast<int>(firstLevel.size())));
  std::vector<std::thread> threads;
  {
    const AsyncSignalsBlocked quiet;  // the process's signals reach the calling thread only
    for (int j = 1; j < n; ++j) threads.emplace_back(workerMain);
  }
  workerMain();
  for (auto& t : threads) t.join();
  if (stats) stats->subgraphRuns += runs.load();
  if (firstError) return *firstError;
  return result;
}

Expected<std::vector<double>> combinationAccuracy(const zoo::TaskStitch& task, const stitch::SubgraphModels& subgraphs,
                                                  const Dataset& data, const std::vector<size_t>& combos, int jobs,
                                                  Progress* progress, const std::atomic<bool>* stop, EvalStats* stats) {
  std::vector<size_t> all(data.samples.size());
  std::iota(all.begin(), all.end(), size_t{0});
  ZP_ASSIGN_OR_RETURN(auto correct, combinationCorrectness(task, subgraphs, data, combos,
                                                           std::vector<std::vector<size_t>>(combos.size(), all), jobs,
                                                           progress, stop, stats));
  std::vector<double> result;
  for (const auto& c : correct)
    result.push_back(c.empty() ? 0.0 : static_cast<double>(std::count(c.begin(), c.end(), 1)) / static_cast<double>(c.size()));
  return result;
}

size_t walkRuns(const zoo::TaskStitch& task, const std::vector<size_t>& combos, size_t samples) {
  std::set<std::vector<std::string>> prefixes;
  for (size_t k : combos) {
    const auto& vs = task.combinations[k].variants;
    for (size_t p = 1; p <= vs.size(); ++p) prefixes.insert(std::vector<std::string>(vs.begin(), vs.begin() + static_cast<std::ptrdiff_t>(p)));
  }
  return prefixes.size() * samples;
}

namespace {
double relativeDistance(const runtime::Tensor& a, const runtime::Tensor& b) {
  auto x = a.toF32(), y = b.toF32();
  double num = 0, den = 0;
  for (size_t k = 0; k < x.size() && k < y.size(); ++k) {
    num += (x[k] - y[k]) * (x[k] - y[k]);
    den += y[k] * y[k];
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}
}  // namespace

Expected<estimate::StitchSignals> stitchSignals(const zoo::TaskStitch& task, const stitch::SubgraphModels& subgraphs,
                                                const std::vector<runtime::Tensor>& samples) {
  estimate::StitchSignals sig;
  size_t ref = 0;
  for (size_t v = 0; v < task.variants.size(); ++v)
    if (task.variants[v].id == task.reference) ref = v;
  Worker w(task, subgraphs);
  auto runAll = [&](size_t position, size_t variant,
                    const std::vector<runtime::Tensor>& in) -> Expected<std::vector<runtime::Tensor>> {
    ZP_ASSIGN_OR_RETURN(auto* s, w.session(position, variant));
    std::vector<runtime::Tensor> out;
    for (const auto& x : in) {
      runtime::TensorMap feeds;
      feeds.emplace(s->inputs().at(0).name, x);
      ZP_ASSIGN_OR_RETURN(auto r, s->run(feeds));
      out.push_back(std::move(r.at(s->outputs().at(0).name)));
    }
    return out;
  };
  auto meanDistance = [](const std::vector<runtime::Tensor>& a, const std::vector<runtime::Tensor>& b) {
    double sum = 0;
    for (size_t i = 0; i < a.size(); ++i) sum += relativeDistance(a[i], b[i]);
    return a.empty() ? 0.0 : sum / static_cast<double>(a.size());
  };
  const size_t nv = task.variants.size();
  // Each variant's own boundary activations, and drift against the reference chain.
  std::vector<std::vector<std::vector<runtime::Tensor>>> own(nv);  // [variant][boundary][sample]
  std::vector<runtime::Tensor> refIn = samples;
  for (int p = 0; p < task.positions(); ++p) {
    ZP_ASSIGN_OR_RETURN(auto refOut, runAll(static_cast<size_t>(p), ref, refIn));
    for (size_t v = 0; v < nv; ++v) {
      const auto& sg = task.subgraphs[static_cast<size_t>(p)][v];
      const auto& rsg = task.subgraphs[static_cast<size_t>(p)][ref];
      // A structured variant whose boundary width differs cannot take the reference's input.
      bool fits = sg.inputs.at(0).sameShapeAndType(rsg.inputs.at(0)) && sg.outputs.at(0).sameShapeAndType(rsg.outputs.at(0));
      if (fits) {
        ZP_ASSIGN_OR_RETURN(auto out, runAll(static_cast<size_t>(p), v, refIn));
        sig.drift[{p, task.variants[v].id}] = meanDistance(out, refOut);
      }
      if (p + 1 < task.positions()) {
        const auto& in = p == 0 ? samples : own[v][static_cast<size_t>(p - 1)];
        ZP_ASSIGN_OR_RETURN(auto out, runAll(static_cast<size_t>(p), v, in));
        own[v].push_back(std::move(out));
      }
    }
    refIn = std::move(refOut);
  }
  for (int p = 0; p + 1 < task.positions(); ++p)
    for (size_t a = 0; a < nv; ++a)
      for (size_t b = 0; b < nv; ++b) {
        const auto& pa = own[a][static_cast<size_t>(p)];
        const auto& pb = own[b][static_cast<size_t>(p)];
        if (pa.empty() || pa[0].shape != pb[0].shape) continue;
        sig.mismatch[{p, task.variants[a].id, task.variants[b].id}] = a == b ? 0.0 : meanDistance(pa, pb);
      }
  return sig;
}

}  // namespace zp::measure
