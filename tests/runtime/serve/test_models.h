// Models and a loader for the serving tests: each position is a chain of
// MatMuls with one shared weight matrix (ONNX text), heavy enough that runs on
// two processors visibly overlap, and a loader that builds sessions from them in
// memory and counts its loads.
#pragma once
#include <atomic>
#include <map>
#include <string>
#include <vector>

#include "libplan/graph/model_io.h"
#include "libplan/runtime/serve/subgraph_loader.h"
#include "tests/common/onnx_text.h"

namespace zp::runtime::serve::testing {

// in [rows, width] -> out [rows, width] through `depth` MatMuls with W, each
// followed by a Relu; tensor names given so that positions chain.
inline std::string chainText(const std::string& in, const std::string& out, int rows, int width, int depth,
                             float scale) {
  std::string shape = "[" + std::to_string(rows) + "," + std::to_string(width) + "]";
  std::string body, prev = in;
  for (int d = 0; d < depth; ++d) {
    const std::string mm = out + "_mm" + std::to_string(d);
    const std::string next = d + 1 == depth ? out : out + "_h" + std::to_string(d);
    body += mm + " = MatMul (" + prev + ", W)\n" + next + " = Relu (" + mm + ")\n";
    prev = next;
  }
  return "<ir_version: 8, opset_import: [\"\" : 13]>\nchain (float" + shape + " " + in + ") => (float" + shape +
         " " + out + ")\n<" + zp::testing::floatInitializer("W", {width, width}, scale) + ">\n{\n" + body + "}\n";
}

class InMemoryLoader : public SubgraphLoader {
 public:
  explicit InMemoryLoader(std::vector<std::string> texts) : texts_(std::move(texts)), loads_(texts_.size()) {
    for (auto& l : loads_) l = 0;
  }
  Expected<LoadedSubgraph> load(int slot, const ServeSlot& info, const SessionOptions& options) override {
    ++loads_[static_cast<size_t>(slot)];
    ZP_ASSIGN_OR_RETURN(auto model, graph::parseModelText(texts_[static_cast<size_t>(slot)]));
    ZP_ASSIGN_OR_RETURN(auto session, Session::fromModel(model, info.name, options));
    const int64_t bytes = sessionBytes(*session);
    return LoadedSubgraph{std::move(session), bytes};
  }
  int loads(int slot) const { return loads_[static_cast<size_t>(slot)]; }

 private:
  std::vector<std::string> texts_;
  std::vector<std::atomic<int>> loads_;
};

}  // namespace zp::runtime::serve::testing
