#include "tests/select/random_space.h"

#include <fmt/format.h>

namespace zp::select::testing {

namespace {

zoo::TaskStitch taskStitch(std::mt19937_64& rng, const std::string& name, const Shape& shape) {
  zoo::TaskStitch ts;
  ts.name = name;
  for (int v = 0; v < shape.V; ++v) ts.variants.push_back(zoo::VariantInfo{fmt::format("v{}", v), "dense", "", "", {}, {}});
  ts.reference = "v0";
  ts.subgraphs.resize(static_cast<size_t>(shape.S));
  for (int p = 0; p < shape.S; ++p)
    for (int v = 0; v < shape.V; ++v) {
      zoo::SubgraphInfo sg;
      sg.position = p;
      sg.variant = fmt::format("v{}", v);
      sg.hash = fmt::format("{}-{}-{}", name, p, v);
      sg.file = "subgraphs/" + sg.hash + ".onnx";
      sg.cost.weightBytes = 1000 + static_cast<int64_t>(rng() % 9000);
      ts.subgraphs[static_cast<size_t>(p)].push_back(sg);
    }
  return ts;
}

std::shared_ptr<const AccuracyModel> accuracyModel(std::mt19937_64& rng, const Shape& shape,
                                                    const SpaceOptions& options) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  auto value = [&] { return options.ties ? 0.6 + 0.1 * static_cast<double>(rng() % 4) : 0.5 + 0.5 * u(rng); };
  Combinations c(shape.V, shape.S);
  if (options.meanAccuracy) {
    std::vector<std::vector<double>> perPosition(static_cast<size_t>(shape.S));
    for (auto& row : perPosition)
      for (int v = 0; v < shape.V; ++v) row.push_back(value());
    return std::make_shared<MeanSourceAccuracy>(c, perPosition);
  }
  std::vector<AccuracyEntry> entries;
  for (uint64_t k = 0; k < c.size(); ++k) {
    const bool original = c.original(k);
    if (!original && u(rng) < options.invalid) continue;
    AccuracyEntry e{k, value(), -1.0};
    if (original || u(rng) < 0.3) e.measured = value();
    entries.push_back(e);
  }
  return std::make_shared<AccuracyTable>(c, entries);
}

}  // namespace

StitchSpace randomSpace(std::mt19937_64& rng, const Shape& shape, const SpaceOptions& options) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  auto ms = [&] { return options.ties ? 1.0 + static_cast<double>(rng() % 3) : 0.5 + 9.5 * u(rng); };
  StitchSpace sp;
  std::vector<std::string> names;
  for (int p = 0; p < shape.P; ++p) {
    names.push_back(fmt::format("p{}", p));
    sp.processors.push_back({names.back(), "cpu", "host", "default", 1, {}, "onednn"});
  }
  for (int t = 0; t < shape.T; ++t) sp.manifest.tasks.push_back(taskStitch(rng, fmt::format("t{}", t), shape));
  for (int t = 0; t < shape.T; ++t) {
    TaskSpace ts;
    ts.name = fmt::format("t{}", t);
    ts.positions = shape.S;
    ts.stitch = &sp.manifest.tasks[static_cast<size_t>(t)];
    for (int v = 0; v < shape.V; ++v) ts.variants.push_back(fmt::format("v{}", v));
    for (int pos = 0; pos < shape.S; ++pos)
      for (const auto& v : ts.variants)
        for (const auto& p : names)
          if (u(rng) >= options.unprofiled) ts.latency.setSubgraph(pos, v, p, ms());
    for (const auto& p : names) ts.latency.setOverhead(p, options.ties ? 0.5 * static_cast<double>(rng() % 2) : ms() / 20);
    for (const auto& a : names)
      for (const auto& b : names)
        if (a != b) ts.latency.setTransition(a, b, {options.ties ? 0.5 * static_cast<double>(rng() % 2) : ms() / 10, 1e-6});
    for (int pos = 0; pos + 1 < shape.S; ++pos) ts.boundaryBytes.push_back(options.ties ? 0.0 : 4096.0 * (1 + pos));
    ts.accuracy = accuracyModel(rng, shape, options);
    for (int pos = 0; pos < shape.S; ++pos)  // some memory as profiled, the rest from the subgraphs' weights
      if (u(rng) < 0.5) ts.memory[{pos, "v0", names[0]}] = 5000 + static_cast<int64_t>(rng() % 5000);
    ts.buildDense(names);
    sp.tasks.push_back(std::move(ts));
  }
  return sp;
}

plan::SloConfiguration randomSlo(std::mt19937_64& rng, const StitchSpace& space, const std::string& id) {
  std::uniform_real_distribution<double> acc(0.55, 0.95), lat(1.0, 3.5);
  plan::SloConfiguration c;
  c.id = id;
  for (const auto& t : space.tasks) c.tasks[t.name] = plan::TaskSlo{acc(rng), lat(rng) * t.positions};
  return c;
}

}  // namespace zp::select::testing
