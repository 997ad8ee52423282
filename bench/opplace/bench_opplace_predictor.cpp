// The per-processor operator latency predictor on this host: per-node
// profiles of the torchvision set (export_models.py) and the bundled zoos'
// models under every host processor of the zoos, then leave-one-model-out
// validation per processor in nn-Meter's metric (share within +-10%).
// Prints a table and writes JSON; node_profile.csv is kept and reused.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <filesystem>
#include <map>

#include <nlohmann/json.hpp>

#include "drivers/opplace_flow/node_profiles.h"
#include "libplan/artifacts/zoo_json.h"
#include "libplan/util/file.h"

using namespace zp;
namespace of = zp::drivers::opplace_flow;

int main(int argc, char** argv) {
  CLI::App app{"Operator latency predictor: per-node host profiles and leave-one-model-out accuracy"};
  std::vector<std::string> zoos, models;
  std::string profile = "node_profile.csv", jsonOut = "opplace_predictor.json";
  bool remeasure = false;
  of::ProfileParams pp;
  auto xgb = estimate::defaultOpLatencyParams();
  double tolerance = 0.1;
  app.add_option("--zoo", zoos, "zoo.json: its host processors and its models")->required();
  app.add_option("--models", models, "more ONNX models (the torchvision set)");
  app.add_option("--profile", profile, "node_profile.csv to reuse, or to write");
  app.add_flag("--remeasure", remeasure, "measure even when --profile exists");
  app.add_option("--repeat", pp.measure.repeat, "timed runs per model and processor");
  app.add_option("--warmup", pp.measure.warmup, "untimed runs first");
  app.add_option("--rounds", xgb.rounds, "boosting rounds");
  app.add_option("--tolerance", tolerance, "relative tolerance of a correct prediction");
  app.add_option("--json", jsonOut, "results JSON");
  CLI11_PARSE(app, argc, argv);

  std::vector<Processor> configs;
  std::vector<of::ModelSource> sources;
  for (const auto& z : zoos) {
    auto zoo = artifacts::loadZoo(z);
    if (!zoo.ok()) return fmt::print(stderr, "error: {}\n", zoo.error().message), 1;
    for (const auto& c : of::hostConfigs(*zoo))
      if (std::find(configs.begin(), configs.end(), c) == configs.end()) configs.push_back(c);
    for (auto& m : of::zooModels(*zoo)) sources.push_back(m);
  }
  for (const auto& m : models) sources.push_back(of::ModelSource{std::filesystem::path(m).stem().string(), m});

  std::vector<artifacts::NodeProfileRow> rows;
  if (!remeasure && std::filesystem::exists(profile)) {
    auto r = artifacts::readNodeProfileCsv(profile);
    if (!r.ok()) return fmt::print(stderr, "error: {}\n", r.error().message), 1;
    rows = std::move(*r);
    fmt::print("read {} rows from {}\n", rows.size(), profile);
  } else {
    for (const auto& s : sources) {
      fmt::print(stderr, "profiling {}\n", s.name);
      auto r = of::profileModels({s}, configs, pp);
      if (!r.ok()) return fmt::print(stderr, "error: {}\n", r.error().message), 1;
      rows.insert(rows.end(), r->begin(), r->end());
    }
    if (auto st = writeFileAtomic(profile, artifacts::formatNodeProfileCsv(rows)); !st.ok())
      return fmt::print(stderr, "error: {}\n", st.error().message), 1;
    fmt::print("wrote {} rows to {}\n", rows.size(), profile);
  }

  nlohmann::json out = {{"tolerance", tolerance}, {"rounds", xgb.rounds}, {"max_depth", xgb.maxDepth},
                        {"profile", profile}, {"processors", nlohmann::json::array()}};
  fmt::print("\n| processor | models | nodes | self-agreement | LOMO nodes within {:.0f}% | LOMO models within {:.0f}% | train s | model KB |\n",
             tolerance * 100, tolerance * 100);
  fmt::print("|---|---|---|---|---|---|---|---|\n");
  for (const auto& c : configs) {
    auto samples = of::samplesOf(rows, c);
    auto rep = estimate::leaveOneModelOut(samples, xgb, tolerance);
    if (!rep.ok()) return fmt::print(stderr, "error: {}: {}\n", c.label(), rep.error().message), 1;
    const double self = of::selfAgreement(rows, c, tolerance);
    fmt::print("| {} | {} | {} | {:.3f} | {:.3f} | {:.3f} | {:.2f} | {:.0f} |\n", c.label(), rep->models.size(), rep->nodes,
               self, rep->nodeWithinShare, rep->modelWithinShare, rep->trainSeconds, rep->modelBytes / 1024.0);
    nlohmann::json per = nlohmann::json::array();
    for (const auto& m : rep->models)
      per.push_back({{"model", m.model}, {"nodes", m.nodes}, {"node_within_share", m.withinShare},
                     {"measured_ms", m.measuredMs}, {"predicted_ms", m.predictedMs}});
    out["processors"].push_back({{"processor", c.label()}, {"nodes", rep->nodes}, {"self_agreement", self},
                                 {"lomo_node_within_share", rep->nodeWithinShare},
                                 {"lomo_model_within_share", rep->modelWithinShare},
                                 {"train_seconds_mean", rep->trainSeconds}, {"model_bytes", rep->modelBytes},
                                 {"models", per}});
  }
  if (auto st = writeFileAtomic(jsonOut, out.dump(2) + "\n"); !st.ok())
    return fmt::print(stderr, "error: {}\n", st.error().message), 1;
  fmt::print("\nwrote {}\n", jsonOut);
  return 0;
}
