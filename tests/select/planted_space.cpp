#include "tests/select/planted_space.h"

#include <fmt/format.h>

namespace zp::select::testing {

StitchSpace plantedSpace(const std::vector<std::pair<double, double>>& accuracy,
                         const std::vector<std::vector<double>>& ms, const std::vector<int64_t>& bytes) {
  StitchSpace sp;
  sp.processors = {{"cpu", "cpu", "host", "default", 1, {}, "onednn"}, {"gpu", "gpu", "host", "default", 1, {}, "onednn"}};
  const std::vector<std::string> variants{"dense", "u90"};
  zoo::TaskStitch stitch;
  stitch.name = "digits";
  stitch.reference = "dense";
  stitch.subgraphs.resize(2);
  for (size_t v = 0; v < variants.size(); ++v) {
    stitch.variants.push_back(zoo::VariantInfo{variants[v], "dense", "", "", {}, {}});
    for (int p = 0; p < 2; ++p) {
      zoo::SubgraphInfo sg;
      sg.position = p;
      sg.variant = variants[v];
      sg.hash = fmt::format("{:064x}", 2 * p + static_cast<int>(v) + 1);  // a sha256's form
      sg.file = fmt::format("subgraphs/digits-{}-{}.onnx", p, variants[v]);
      sg.cost.weightBytes = bytes.empty() ? 1000 : bytes[v];
      stitch.subgraphs[static_cast<size_t>(p)].push_back(sg);
    }
  }
  sp.manifest.tasks.push_back(std::move(stitch));
  TaskSpace ts;
  ts.name = "digits";
  ts.positions = 2;
  ts.variants = variants;
  ts.stitch = &sp.manifest.tasks.front();  // the vector's buffer moves with the space
  std::vector<AccuracyEntry> entries;
  for (uint64_t k = 0; k < 4; ++k) entries.push_back(AccuracyEntry{k, accuracy[k].first, accuracy[k].second});
  ts.accuracy = std::make_shared<AccuracyTable>(Combinations(2, 2), entries);
  for (int pos = 0; pos < 2; ++pos)
    for (size_t v = 0; v < variants.size(); ++v)
      for (const char* p : {"cpu", "gpu"}) {
        ts.latency.setSubgraph(pos, variants[v], p, ms[static_cast<size_t>(pos)][v]);
        if (!bytes.empty()) ts.memory[{pos, variants[v], p}] = bytes[v];
      }
  addCpuGpuTask(sp, std::move(ts));
  return sp;
}

void addCpuGpuTask(StitchSpace& sp, TaskSpace ts) {
  ts.latency.setTransition("cpu", "gpu", {0.0, 1e-9});
  ts.latency.setTransition("gpu", "cpu", {0.0, 1e-9});
  ts.boundaryBytes = {1024};
  ts.buildDense({"cpu", "gpu"});
  sp.tasks.push_back(std::move(ts));
}

TaskSpace plainTask(StitchSpace& sp, const std::string& name, double ms, int64_t bytes, double accuracy) {
  zoo::TaskStitch stitch;
  stitch.name = name;
  stitch.reference = "dense";
  stitch.variants.push_back(zoo::VariantInfo{"dense", "dense", "", "", {}, {}});
  stitch.subgraphs.resize(2);
  for (int p = 0; p < 2; ++p) {
    zoo::SubgraphInfo sg;
    sg.position = p;
    sg.variant = "dense";
    sg.hash = fmt::format("{:064x}", std::hash<std::string>()(name) + static_cast<size_t>(p));
    sg.file = fmt::format("subgraphs/{}-{}-dense.onnx", name, p);
    sg.cost.weightBytes = bytes;
    stitch.subgraphs[static_cast<size_t>(p)].push_back(sg);
  }
  sp.manifest.tasks.push_back(std::move(stitch));
  TaskSpace ts;
  ts.name = name;
  ts.positions = 2;
  ts.variants = {"dense"};
  ts.stitch = &sp.manifest.tasks.back();
  ts.accuracy = std::make_shared<AccuracyTable>(Combinations(1, 2), std::vector<AccuracyEntry>{{0, accuracy, accuracy}});
  for (int pos = 0; pos < 2; ++pos)
    for (const char* p : {"cpu", "gpu"}) {
      ts.latency.setSubgraph(pos, "dense", p, ms);
      ts.memory[{pos, "dense", p}] = bytes;
    }
  return ts;
}

}  // namespace zp::select::testing
