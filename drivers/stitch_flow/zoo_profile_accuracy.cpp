// zoo-profile step 4, accuracy: the original variants' accuracy, the stitched
// variants measured (all of them when affordable), the training sample drawn
// in two rounds, the accuracy estimator (SparseLoom §3.2) and its quality.
#include <cmath>

#include "drivers/stitch_flow/dataset_read.h"
#include "drivers/stitch_flow/zoo_profile_steps.h"
#include "libplan/estimate/accuracy_estimator.h"
#include "libplan/estimate/contested_accuracy.h"
#include "libplan/estimate/metrics.h"
#include "libplan/runtime/session.h"
#include "libplan/util/progress.h"

namespace zp::drivers::zoo_profile {
namespace {

bool isOriginal(const zoo::Combination& c) {
  return std::all_of(c.variants.begin(), c.variants.end(), [&](const auto& v) { return v == c.variants[0]; });
}

const zoo::TaskSpec* taskSpec(const zoo::Zoo& zoo, const std::string& name) {
  const zoo::TaskSpec* spec = nullptr;
  for (const auto& t : zoo.tasks)
    if (t.name == name) spec = &t;
  return spec;
}

// The original variants' accuracy: measured with the runtime on the task's
// dataset (or taken from the shards being merged), or as zoo.json gives it
// when the task has none.
Status originalAccuracy(Run& run, const zoo::TaskStitch& task, const zoo::TaskSpec* spec, TaskAccuracy& acc,
                        Json& tj) {
  const auto& zoo = run.src.zoo;
  if (acc.data) {
    for (const auto& v : spec->variants) {
      std::pair<double, std::vector<uint8_t>> m;
      if (const auto* given = run.given ? findIn(run.given->originals, std::make_pair(task.name, v.id)) : nullptr) m = *given;
      else { ZP_ASSIGN_OR_RETURN(m, measureVariantAccuracy(run, acc, v)); }
      acc.originalAccuracy[v.id] = m.first;
      acc.correctness[v.id] = std::move(m.second);
      run.counts.accuracyModelRuns += acc.data->samples.size();
    }
    tj["accuracy_source"] = "measured with the runtime on " + spec->dataset->inputs;
  } else {
    for (const auto& v : spec->variants) {
      if (!v.accuracy)
        return makeError("{}: task '{}' has no dataset and variant '{}' has no measured accuracy", zoo.file.string(),
                         task.name, v.id);
      acc.originalAccuracy[v.id] = *v.accuracy;
    }
    tj["accuracy_source"] = "zoo.json";
  }
  Json origJ = Json::object();
  for (const auto& [k, v] : acc.originalAccuracy) origJ[k] = v;
  tj["original_accuracy"] = origJ;
  return {};
}

// The estimator's features of every combination, with the stitching signals
// measured on the calibration inputs when the task has a dataset.
Expected<estimate::FeatureMatrix> estimatorFeatures(Run& run, const zoo::TaskStitch& task,
                                                       const zoo::TaskSpec* spec, const TaskAccuracy& acc, Json& tj) {
  const auto tEst = SteadyClock::now();
  estimate::StitchSignals signals;
  if (acc.data) {
    ZP_ASSIGN_OR_RETURN(auto shape, sampleShape(run, task));
    const auto& samples = acc.data->samples;
    std::vector<runtime::Tensor> calib;
    if (!spec->dataset->calibration.empty()) {
      ZP_ASSIGN_OR_RETURN(calib, readSamples(run.src.zoo.resolve(spec->dataset->calibration), shape,
                                             run.params.calibrationSamples));
    } else {
      calib.assign(samples.begin(),
                   samples.begin() + static_cast<std::ptrdiff_t>(std::min(samples.size(), run.params.calibrationSamples)));
    }
    ZP_ASSIGN_OR_RETURN(signals, measure::stitchSignals(task, acc.subgraphs, calib));
    signals.correct = acc.correctness;
    Json dj = Json::object();
    for (const auto& [k, v] : signals.drift) dj[fmt::format("{}/{}", k.first, k.second)] = v;
    tj["subgraph_drift"] = dj;
  }
  auto feats = estimate::accuracyFeatures(task, acc.originalAccuracy, signals);
  run.counts.estimatorSeconds += secondsSince(tEst);
  return feats;
}

}  // namespace

bool affordsExhaustive(const zoo::TaskStitch& task, const TaskAccuracy& acc, size_t limit) {
  if (!acc.data) return false;
  double runs = 0, level = 1;
  for (int p = 0; p < task.positions(); ++p) {
    level *= static_cast<double>(task.variants.size());
    runs += level * static_cast<double>(acc.data->samples.size());
  }
  return runs <= static_cast<double>(limit);
}

namespace {

// Measures the combinations of `combos` not measured yet (with a dataset only).
Status measureCombinations(Run& run, const zoo::TaskStitch& task, TaskAccuracy& acc, const std::vector<size_t>& combos) {
  std::vector<size_t> todo;
  for (size_t k : combos)
    if (!acc.measured.count(k)) todo.push_back(k);
  if (!acc.data || todo.empty()) return {};
  std::vector<size_t> missing;
  for (size_t k : todo) {
    const double* given = run.given ? findIn(run.given->combinations, std::make_pair(task.name, task.combinations[k].id)) : nullptr;
    if (given) acc.measured[k] = *given;
    else missing.push_back(k);
  }
  measure::EvalStats stats;
  ZP_ASSIGN_OR_RETURN(auto measured, measureCombinationAccuracy(run, task, acc, missing, &stats));
  for (size_t i = 0; i < missing.size(); ++i) acc.measured[missing[i]] = measured[i];
  // Merged from shards: counted as the one walk over `todo` a single run makes.
  run.counts.accuracySubgraphRuns += run.given ? measure::walkRuns(task, todo, acc.data->samples.size()) : stats.subgraphRuns;
  run.counts.measuredCombinations += todo.size();
  return {};
}

std::vector<double> labelsOf(const zoo::TaskStitch& task, TaskAccuracy& acc, const std::vector<size_t>& rows) {
  std::vector<double> y;
  for (size_t r : rows)
    y.push_back(acc.measured.count(r) ? acc.measured[r] : acc.originalAccuracy.at(task.combinations[r].variants[0]));
  return y;
}

// Training sample, originals always in it: half drawn at random, then the
// rest where a first estimator trained on that half predicts the highest
// accuracy — the region the top-K and the SLO choices are decided in.
Status drawTrainingSample(Run& run, const zoo::TaskStitch& task, const estimate::FeatureMatrix& feats,
                          TaskAccuracy& acc) {
  const auto& params = run.params;
  const size_t trainCount = trainingCount(run, acc);
  acc.trainRows = firstRoundRows(run, acc);
  acc.firstRoundRows = acc.trainRows.size();
  ZP_TRY(measureCombinations(run, task, acc, acc.trainRows));
  if (acc.trainRows.size() >= trainCount) return {};
  const auto tEst = SteadyClock::now();
  ZP_ASSIGN_OR_RETURN(auto first, estimate::AccuracyEstimator::train(feats, acc.trainRows,
                                                                     labelsOf(task, acc, acc.trainRows), params.xgb));
  auto firstPred = first.predict(feats);
  std::set<size_t> chosen(acc.trainRows.begin(), acc.trainRows.end());
  std::vector<size_t> rest;
  for (size_t k : acc.valid)
    if (!chosen.count(k)) rest.push_back(k);
  std::stable_sort(rest.begin(), rest.end(), [&](size_t x, size_t y) { return firstPred[x] > firstPred[y]; });
  for (size_t i = 0; i < rest.size() && acc.trainRows.size() < trainCount; ++i) acc.trainRows.push_back(rest[i]);
  std::sort(acc.trainRows.begin(), acc.trainRows.end());
  run.counts.estimatorSeconds += secondsSince(tEst);
  return measureCombinations(run, task, acc, acc.trainRows);
}

// Every stitched variant's accuracy composed from the samples its sources
// disagree on (estimate/contested_accuracy.h): it runs on those and on a
// seeded audit of the rest. With a dataset only; originals are as measured.
Status composeFromContestedSamples(Run& run, const zoo::TaskStitch& task, TaskAccuracy& acc, Json& tj) {
  std::vector<size_t> combos;
  std::vector<estimate::ContestedPlan> plans;
  for (size_t k : acc.valid) {
    const auto& c = task.combinations[k];
    if (isOriginal(c)) {
      acc.composed[k] = acc.originalAccuracy.at(c.variants[0]);
      continue;
    }
    std::set<std::string> distinct(c.variants.begin(), c.variants.end());
    std::vector<const std::vector<uint8_t>*> sources;
    for (const auto& v : distinct) sources.push_back(&acc.correctness.at(v));
    combos.push_back(k);
    plans.push_back(estimate::contestedPlan(sources, run.params.auditFraction, run.params.seed ^ (0x9E3779B97F4A7C15ull * (k + 1))));
  }
  std::vector<std::vector<size_t>> samples;
  for (const auto& p : plans) samples.push_back(p.samples());
  Progress progress("accuracy on contested samples (" + task.name + ")", combos.size());
  measure::EvalStats stats;
  ZP_ASSIGN_OR_RETURN(auto correct, measure::combinationCorrectness(task, acc.subgraphs, *acc.data, combos, samples,
                                                                    run.params.jobs, &progress, run.params.stop, &stats));
  std::vector<estimate::ContestedRun> runs;
  for (size_t i = 0; i < combos.size(); ++i) runs.push_back(estimate::tallyContestedRun(plans[i], correct[i]));
  const auto breakage = estimate::pooledBreakage(runs);
  for (size_t i = 0; i < combos.size(); ++i) acc.composed[combos[i]] = estimate::composedAccuracy(plans[i], runs[i], breakage[i]);
  run.counts.accuracySubgraphRuns += stats.subgraphRuns;
  acc.contestedRuns = stats.subgraphRuns;
  const size_t exhaustiveRuns = measure::walkRuns(task, acc.valid, acc.data->samples.size());
  tj["contested_samples"] = Json{
      {"subgraph_runs", stats.subgraphRuns},
      {"exhaustive_subgraph_runs", exhaustiveRuns},
      {"fraction_of_exhaustive", exhaustiveRuns ? static_cast<double>(stats.subgraphRuns) / static_cast<double>(exhaustiveRuns) : 0.0}};
  return {};
}

// What accuracy.csv predicts in the contested mode. A training sample with
// stitched variants in it shows how stitching breaks what the sources agree
// on: the feature estimator learns from it with the composed accuracy as one
// more (monotone) feature. A sample of originals only shows none of that, and
// the composed accuracy is the prediction.
Expected<std::vector<double>> composedPrediction(const Run& run, const zoo::TaskStitch& task,
                                                 const estimate::FeatureMatrix& feats, TaskAccuracy& acc) {
  acc.composedAsFeature = std::any_of(acc.trainRows.begin(), acc.trainRows.end(),
                                      [&](size_t k) { return !isOriginal(task.combinations[k]); });
  std::vector<double> predicted = acc.featurePredicted;
  if (!acc.composedAsFeature) {
    for (const auto& [k, a] : acc.composed) predicted[k] = a;
    return predicted;
  }
  estimate::FeatureMatrix withComposed;
  withComposed.names = feats.names;
  withComposed.names.push_back("composed_accuracy");
  withComposed.monotone = feats.monotone;
  withComposed.monotone.resize(feats.names.size(), 0);
  withComposed.monotone.push_back(1);
  for (size_t r = 0; r < feats.rows(); ++r) {
    withComposed.values.insert(withComposed.values.end(), feats.row(r), feats.row(r) + feats.names.size());
    auto it = acc.composed.find(r);
    withComposed.values.push_back(it == acc.composed.end() ? 0.0f : static_cast<float>(it->second));
  }
  ZP_ASSIGN_OR_RETURN(auto estimator, estimate::AccuracyEstimator::train(withComposed, acc.trainRows,
                                                                         labelsOf(task, acc, acc.trainRows), run.params.xgb));
  return estimator.predict(withComposed);
}

// The variants predicted in the top `activeTop` (not measured yet) measured on
// every sample, round after round, until the predicted top is all measured or
// the accuracy work would pass the budget. What is measured (originals, the
// training sample, these) replaces the prediction: a composed accuracy misses
// the samples stitching breaks among those every source gets right, and in
// the top the variants differ by a few samples.
Status measurePredictedTop(Run& run, const zoo::TaskStitch& task, TaskAccuracy& acc, Json& tj) {
  const size_t samples = acc.data->samples.size();
  const double exhaustive = static_cast<double>(measure::walkRuns(task, acc.valid, samples));
  const double budget = run.params.accuracyBudget * exhaustive;
  std::set<size_t> known;
  std::vector<size_t> trainStitched;
  for (size_t u : acc.uniform) known.insert(acc.valid[u]);
  for (size_t k : acc.trainRows) {
    known.insert(k);
    acc.predicted[k] = acc.measured.at(k);
    if (!isOriginal(task.combinations[k])) trainStitched.push_back(k);
  }
  double used = static_cast<double>(acc.contestedRuns + measure::walkRuns(task, trainStitched, samples));
  size_t rounds = 0, runs = 0, measured = 0;
  bool budgetSpent = false;
  while (true) {
    std::vector<size_t> order = acc.valid;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return acc.predicted[a] > acc.predicted[b]; });
    // The best predicted first, as many as the budget affords.
    std::vector<size_t> pick;
    bool unmeasured = false;
    for (size_t i = 0; i < std::min(run.params.activeTop, order.size()); ++i) {
      if (known.count(order[i])) continue;
      unmeasured = true;
      pick.push_back(order[i]);
      if (used + static_cast<double>(measure::walkRuns(task, pick, samples)) > budget) {
        pick.pop_back();
        budgetSpent = true;
        break;
      }
    }
    if (pick.empty()) {
      budgetSpent = budgetSpent && unmeasured;
      break;
    }
    measure::EvalStats stats;
    ZP_ASSIGN_OR_RETURN(auto a, measureCombinationAccuracy(run, task, acc, pick, &stats));
    for (size_t i = 0; i < pick.size(); ++i) {
      acc.measured[pick[i]] = acc.predicted[pick[i]] = a[i];
      known.insert(pick[i]);
    }
    run.counts.accuracySubgraphRuns += stats.subgraphRuns;
    used += static_cast<double>(stats.subgraphRuns);
    runs += stats.subgraphRuns;
    measured += pick.size();
    ++rounds;
  }
  tj["active_measurement"] = Json{{"top", run.params.activeTop},
                                  {"rounds", rounds},
                                  {"variants_measured", measured},
                                  {"subgraph_runs", runs},
                                  {"budget_spent", budgetSpent},
                                  {"accuracy_work_fraction_of_exhaustive", exhaustive > 0 ? used / exhaustive : 0.0}};
  return {};
}

// One estimate's agreement with the measured accuracies: the tie-aware top-K
// recall for K = 1..20 (a hit is a variant whose measured accuracy is at least
// the K-th best's), Spearman and MAE.
Json agreement(const std::vector<double>& p, const std::vector<double>& t) {
  Json curve = Json::object();
  for (size_t k = 1; k <= std::min<size_t>(20, t.size()); ++k) curve[fmt::format("{:02d}", k)] = estimate::topKRecall(p, t, k);
  return Json{{"top10_recall_tie_aware", estimate::topKRecall(p, t, 10)},
              {"topk_recall_tie_aware", curve},
              {"spearman", estimate::spearman(p, t)},
              {"mae", estimate::meanAbsoluteError(p, t)}};
}

// The estimate plan-solve gets against every measured variant (exhaustive runs
// only), beside SparseLoom's feature-based estimator and the baseline both
// must beat: the mean of the sources' accuracies.
Json estimatorQuality(const zoo::TaskStitch& task, TaskAccuracy& acc) {
  std::set<size_t> trainSet(acc.trainRows.begin(), acc.trainRows.end());
  std::vector<double> p, f, t, fh, th, naive, composed;
  for (size_t k : acc.valid) {
    p.push_back(acc.predicted[k]);
    f.push_back(acc.featurePredicted[k]);
    if (auto it = acc.composed.find(k); it != acc.composed.end()) composed.push_back(it->second);
    t.push_back(acc.measured[k]);
    if (!trainSet.count(k)) {
      fh.push_back(acc.featurePredicted[k]);
      th.push_back(acc.measured[k]);
    }
    double s = 0;
    for (const auto& v : task.combinations[k].variants) s += acc.originalAccuracy.at(v);
    naive.push_back(s / static_cast<double>(task.positions()));
  }
  Json features = agreement(f, t);
  features["held_out"] = Json{{"variants", fh.size()}, {"spearman", estimate::spearman(fh, th)},
                              {"mae", estimate::meanAbsoluteError(fh, th)}};
  Json q = features;
  q["method"] = "features";
  if (!acc.composed.empty()) {
    q = agreement(p, t);
    q["method"] = acc.composedAsFeature ? "contested: features and composed" : "contested: composed";
    q["feature_estimator"] = features;
    if (composed.size() == t.size()) q["composed_alone"] = agreement(composed, t);
  }
  q["mean_source_accuracy_baseline"] = agreement(naive, t);
  return q;
}

}  // namespace

Status prepareTaskAccuracy(const Run& run, const zoo::TaskStitch& task, TaskAccuracy& acc) {
  for (size_t k = 0; k < task.combinations.size(); ++k) {
    const auto& c = task.combinations[k];
    if (!c.valid) continue;
    acc.valid.push_back(k);
    if (isOriginal(c)) acc.uniform.push_back(acc.valid.size() - 1);
  }
  const zoo::TaskSpec* spec = taskSpec(run.src.zoo, task.name);
  if (!spec || !spec->dataset) return {};
  const auto& zoo = run.src.zoo;
  ZP_ASSIGN_OR_RETURN(auto shape, sampleShape(run, task));
  ZP_ASSIGN_OR_RETURN(acc.data, readDataset(zoo.resolve(spec->dataset->inputs), zoo.resolve(spec->dataset->labels), shape));
  ZP_ASSIGN_OR_RETURN(acc.subgraphs, readSubgraphModels(run, task, kSubgraphLoad));
  return {};
}

Expected<std::pair<double, std::vector<uint8_t>>> measureVariantAccuracy(const Run& run, const TaskAccuracy& acc,
                                                                         const zoo::VariantSpec& v) {
  runtime::SessionOptions o;
  o.checkModel = false;
  ZP_ASSIGN_OR_RETURN(auto session, runtime::Session::load(run.src.zoo.resolve(v.onnx), o));
  std::vector<uint8_t> correct;
  ZP_ASSIGN_OR_RETURN(double a, measure::modelAccuracy(*session, *acc.data, &correct));
  return std::make_pair(a, std::move(correct));
}

Expected<std::vector<double>> measureCombinationAccuracy(const Run& run, const zoo::TaskStitch& task,
                                                         const TaskAccuracy& acc, const std::vector<size_t>& combos,
                                                         measure::EvalStats* stats) {
  if (combos.empty()) return std::vector<double>{};
  Progress progress("accuracy of stitched variants (" + task.name + ")", combos.size());
  return measure::combinationAccuracy(task, acc.subgraphs, *acc.data, combos, run.params.jobs, &progress,
                                      run.params.stop, stats);
}

size_t trainingCount(const Run& run, const TaskAccuracy& acc) {
  return std::max(acc.uniform.size(), static_cast<size_t>(std::floor(run.params.trainingFraction *
                                                                     static_cast<double>(acc.valid.size()))));
}

std::vector<size_t> firstRoundRows(const Run& run, const TaskAccuracy& acc) {
  std::vector<size_t> rows;
  for (size_t i : estimate::sampleIndices(acc.valid.size(), std::max(acc.uniform.size(), trainingCount(run, acc) / 2),
                                          run.params.seed, acc.uniform))
    rows.push_back(acc.valid[i]);
  return rows;
}

Expected<TaskAccuracy> profileTaskAccuracy(Run& run, const zoo::TaskStitch& task, Json& tj) {
  const zoo::TaskSpec* spec = taskSpec(run.src.zoo, task.name);
  TaskAccuracy acc;
  ZP_TRY(prepareTaskAccuracy(run, task, acc));
  ZP_TRY(originalAccuracy(run, task, spec, acc, tj));
  // Features first: the sample is drawn in two rounds and the second round
  // looks at the first round's predictions.
  ZP_ASSIGN_OR_RETURN(auto feats, estimatorFeatures(run, task, spec, acc, tj));
  acc.exhaustive = affordsExhaustive(task, acc, run.params.exhaustiveLimit);
  if (!acc.data)
    for (size_t u : acc.uniform)
      acc.measured[acc.valid[u]] = acc.originalAccuracy.at(task.combinations[acc.valid[u]].variants[0]);
  if (acc.exhaustive) ZP_TRY(measureCombinations(run, task, acc, acc.valid));
  ZP_TRY(drawTrainingSample(run, task, feats, acc));
  if (acc.data) {
    // Uniform combinations are the originals, run subgraph by subgraph: they must agree.
    int mismatches = 0;
    for (size_t u : acc.uniform) {
      const auto& c = task.combinations[acc.valid[u]];
      mismatches += std::abs(acc.measured[acc.valid[u]] - acc.originalAccuracy.at(c.variants[0])) > 1e-12;
    }
    tj["original_vs_chained_subgraph_mismatches"] = mismatches;
  }
  tj["valid_combinations"] = acc.valid.size();
  tj["measured_combinations"] = acc.measured.size();
  tj["exhaustive"] = acc.exhaustive;
  tj["training_sample"] = acc.trainRows.size();
  tj["training_sample_random"] = acc.firstRoundRows;
  tj["training_fraction"] = acc.valid.empty() ? 0.0
                                              : static_cast<double>(acc.trainRows.size()) / static_cast<double>(acc.valid.size());

  const auto tEst = SteadyClock::now();
  ZP_ASSIGN_OR_RETURN(auto estimator, estimate::AccuracyEstimator::train(feats, acc.trainRows,
                                                                         labelsOf(task, acc, acc.trainRows), run.params.xgb));
  acc.featurePredicted = estimator.predict(feats);
  run.counts.estimatorSeconds += secondsSince(tEst);
  acc.predicted = acc.featurePredicted;
  if (acc.data && run.params.accuracyEstimator == "contested") {
    ZP_TRY(composeFromContestedSamples(run, task, acc, tj));
    ZP_ASSIGN_OR_RETURN(acc.predicted, composedPrediction(run, task, feats, acc));
    tj["accuracy_prediction"] = acc.composedAsFeature ? "features and composed" : "composed";
    if (run.params.activeTop > 0) {
      ZP_TRY(measurePredictedTop(run, task, acc, tj));
      tj["accuracy_prediction"] = tj["accuracy_prediction"].get<std::string>() + ", the predicted top measured";
    }
  }
  if (acc.exhaustive) tj["accuracy_estimator"] = estimatorQuality(task, acc);
  return acc;
}

std::vector<artifacts::AccuracyCsvRow> accuracyRows(const zoo::TaskStitch& task, const TaskAccuracy& acc) {
  std::set<size_t> trainSet(acc.trainRows.begin(), acc.trainRows.end());
  std::vector<artifacts::AccuracyCsvRow> rows;
  for (size_t k : acc.valid) {
    const auto& c = task.combinations[k];
    artifacts::AccuracyRow row;
    row.original = isOriginal(c);
    if (auto it = acc.measured.find(k); it != acc.measured.end()) row.measured = it->second;
    row.predicted = acc.predicted[k];
    row.inTrainingSample = trainSet.count(k) > 0;
    rows.push_back(artifacts::AccuracyCsvRow{task.name, c.id, row});
  }
  return rows;
}

}  // namespace zp::drivers::zoo_profile
