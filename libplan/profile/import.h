// Importers of device profiler outputs (formats and their awkward cases:
// testdata/profiles/README.md). Each importer reads one profiler file into the
// profiler's own layers (LayerTime), then maps them onto the ONNX nodes of the
// variant's model (NameMapper) and returns node rows (kind node) for
// (params.task, params.variant, params.processor, params.policy), together with a
// report of what could not be matched. mapToSubgraphs (subgraph_map.h) then sums the
// node rows per stitched subgraph.
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "libplan/graph/analysis.h"
#include "libplan/profile/profile_db.h"
#include "libplan/util/error.h"

namespace zp::profile {

// One layer as a profiler names it, with its time per inference.
struct LayerTime {
  std::string name;                    // the profiler's layer name
  std::vector<std::string> onnxNames;  // ONNX node names the profiler says the layer covers (TensorRT metadata)
  std::string opType;                  // the profiler's op/layer type, when given
  std::optional<int> nodeIndex;        // ORT node_index (used for unnamed nodes only)
  double medianMs = 0;
  std::optional<double> p90Ms;
  int64_t runs = 1;
};

// How a layer that covers several ONNX nodes shares its time among them.
enum class SplitRule {
  ByFlops,  // in proportion to each node's FLOPs (GraphView::nodeStats); evenly when they are all 0
  Even,     // evenly
};

struct ImportParams {
  std::string task, variant, processor;
  std::string policy = std::string(kDefaultPolicy);
  SplitRule split = SplitRule::ByFlops;
  int skipRuns = 0;     // ORT: drop the first N model_run events (warm-up)
  int reportNames = 5;  // how many unmatched names the report lists
};

// How a profiler name was resolved onto ONNX nodes.
enum class MatchRule {
  None,          // unmatched
  NodeName,      // exact ONNX node name
  OutputTensor,  // the name of an output tensor of the node
  NodeOf,        // TensorRT "node_of_<output0>"
  Metadata,      // TensorRT layer-info metadata "[ONNX Layer: X]"
  Fused,         // "A + B" or "PWN(A, B)" (TensorRT fusions)
  Merged,        // "A || B" (TensorRT horizontal merge)
  Reformat,      // TensorRT reformat / copy node inserted before a layer: counted to that layer
  ForeignNode,   // TensorRT "{ForeignNode[first...last]}": every node between in topological order
  Prefix,        // "<node or tensor>_<suffix>" (OpenVINO "<node>_<output>", ORT "<tensor>_nchwc")
  NodeIndex,     // ORT unnamed node ("_kernel_time"), by node_index and op type
};
std::string_view matchRuleName(MatchRule r);

struct Resolution {
  MatchRule rule = MatchRule::None;
  std::vector<int> nodes;  // indices into the model's graph, topological order, no duplicates
  bool approximate() const { return nodes.size() > 1; }
};

// Resolves profiler names onto the nodes of one ONNX model.
class NameMapper {
 public:
  explicit NameMapper(const graph::GraphView& view);

  Resolution resolve(const LayerTime& layer) const;
  Resolution resolveName(const std::string& name) const;

  // The identifier a node row uses for node `index`: its name, or "node_of_<output0>"
  // for an unnamed node (the TensorRT convention, which resolve() understands).
  std::string nodeKey(int index) const;

  const graph::GraphView& view() const { return view_; }

 private:
  Resolution resolveInner(const std::string& name, int depth) const;
  Resolution single(int index, MatchRule rule) const;

  const graph::GraphView& view_;
  std::map<std::string, int> byName_;
  std::vector<int> topoPos_;  // node index -> position in topoOrder
};
std::string nodeKey(const onnx::NodeProto& node);

struct ImportReport {
  std::string file;
  int layers = 0;           // profiler layers seen (after skipping non-layer entries)
  int matched = 0;
  int approximate = 0;      // layers whose time was split among several nodes
  int unmatched = 0;
  double totalMs = 0, matchedMs = 0, approximateMs = 0, unmatchedMs = 0;  // per inference
  std::vector<std::string> unmatchedNames;  // the first ImportParams::reportNames, in file order
  std::map<std::string, int> rules;         // MatchRule name -> layers resolved by it
  std::vector<std::string> notes;           // skipped entries and choices made, one line each

  double matchedShare() const { return totalMs > 0 ? matchedMs / totalMs : 1.0; }
  // "f.json: 31 layers, 30 matched (99.1% of time, 2 split approximately), 1 unmatched (0.9%): ReorderOutput"
  std::string summary() const;
};

struct NodeImport {
  std::vector<ProfileRow> rows;  // kind node, one per ONNX node, sorted by node key
  ImportReport report;
};

// Maps profiler layers onto the model's nodes: a node hit by several layers gets their
// sum; a layer covering several nodes is split by params.split. `notes` (what the
// reader noticed about the file) go into the report.
// Errors: a node's time (or runs) out of the range a profile row holds, named by `file`.
Expected<NodeImport> mapLayersToNodes(const std::vector<LayerTime>& layers, const NameMapper& mapper,
                                      const ImportParams& params, const std::string& source, const std::string& file,
                                      std::vector<std::string> notes = {});

// An error unless task, variant, processor and policy are given ("<label>: ...").
Status checkImportParams(const ImportParams& params, const std::string& label);

// --- the profiler formats -------------------------------------------------------------

// ONNX Runtime profiling JSON. Node events "<name>_kernel_time" (cat Node); their `dur`
// (µs) summed per node within each model_run (cat Session) event; median and p90 over
// runs after skipping params.skipRuns warm-up runs. Tolerates unescaped quotes and
// backslashes in names.
Expected<std::vector<LayerTime>> readOrtProfile(const std::filesystem::path& file, const ImportParams& params,
                                                std::vector<std::string>* notes = nullptr);
Expected<NodeImport> importOrtProfile(const std::filesystem::path& file, const graph::GraphView& model,
                                      const ImportParams& params);

// TensorRT trtexec --exportProfile JSON, with the optional --exportLayerInfo JSON.
// Per layer: medianMs when given, else averageMs, else timeMs / count.
Expected<std::vector<LayerTime>> readTrtexecProfile(const std::filesystem::path& profile,
                                                    const std::optional<std::filesystem::path>& layerInfo,
                                                    std::vector<std::string>* notes = nullptr);
Expected<NodeImport> importTrtexecProfile(const std::filesystem::path& profile,
                                          const std::optional<std::filesystem::path>& layerInfo,
                                          const graph::GraphView& model, const ImportParams& params);

// OpenVINO benchmark_app average_counters / detailed_counters CSV (';'-separated).
// realTime (ms) per layer, EXECUTED rows only; several header blocks (one per infer
// request) are averaged: median_ms is the mean over blocks, p90_ms the p90 over blocks
// when there are two or more.
Expected<std::vector<LayerTime>> readOpenVinoCounters(const std::filesystem::path& file,
                                                      std::vector<std::string>* notes = nullptr);
Expected<NodeImport> importOpenVinoCounters(const std::filesystem::path& file, const graph::GraphView& model,
                                            const ImportParams& params);

// The rows of a generic profile CSV (`label`: its file). Rows of params.task /
// params.variant / params.processor (each when non-empty) are kept, others
// skipped (counted in the notes). Node rows are resolved onto `model` (when
// given) like any other profiler's names and re-keyed to the ONNX node;
// subgraph and transition rows are returned as they are.
struct CsvImport {
  ProfileDb rows;
  ImportReport report;  // about the node rows
};
Expected<CsvImport> importProfileRows(const ProfileDb& db, const std::string& label, const graph::GraphView* model,
                                      const ImportParams& params);

}  // namespace zp::profile
