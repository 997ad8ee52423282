// What zoo-stitch found and wrote (stitch.json) — per task the cut points, the
// subgraph of every (position, variant) with its content hash and costs, and
// which combinations of subgraphs form valid stitched variants. Its reader and
// writer are libplan/artifacts/stitch_json.h.
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>


namespace zp::zoo {

// The largest stitching space a task may have. What still lists every
// combination: stitch.json (one entry each), zoo-profile (the estimator's
// features and prediction of each, accuracy.csv's row of each, and its
// lookup-table check of each under every placement order) and plan-solve's
// accuracy table read from accuracy.csv. plan-solve's selection itself
// searches without listing them (passes/select/README.md).
// The zoo's weight-shared groups, stitched into the stitch directory as
// zoo-mts writes them (their ONNX files and mts.json).
inline constexpr const char* kStitchGroupsDir = "groups";
inline constexpr const char* kStitchGroupsManifest = "groups/mts.json";

inline constexpr int kMaxPositions = 32;
inline constexpr uint64_t kMaxCombinations = 100'000;
// variants^positions, or nothing when that exceeds kMaxCombinations.
std::optional<uint64_t> combinationCount(size_t variants, size_t positions);

// A combination id ("dense+u50+u50": a variant id per position, joined by
// '+') and its parts; the one place the form is spelled out.
std::vector<std::string> combinationVariants(std::string_view id);
std::string combinationId(const std::vector<std::string>& variants);
// Why `id` is not safe variant ids joined by '+' (nothing: it is).
std::optional<std::string> combinationIdProblem(std::string_view id);

struct TensorSig {
  std::string name;
  std::string type;             // "float32", "int8", ...
  std::vector<int64_t> shape;   // -1 for a dimension that is not fixed
  bool sameShapeAndType(const TensorSig& o) const { return type == o.type && shape == o.shape; }
  std::string str() const;      // "float32[1,16,8,8]"
  int64_t bytes() const;        // size of one such tensor (unknown dimensions count as 1)
};

// Cost figures shared by variants and subgraphs.
struct CostFigures {
  double flops = 0;
  int64_t params = 0;
  int64_t weightBytes = 0;
  double weightSparsity = 0;  // exact zeros / elements of weight tensors (rank >= 2)
  std::string precision;      // fp32 | fp16 | int8
  int nodes = 0;
};

struct SubgraphInfo {
  int position = 0;
  std::string variant;
  std::string hash;    // SHA-256 of the stand-alone model's bytes
  std::string file;    // relative to the stitch directory
  std::vector<TensorSig> inputs, outputs;
  CostFigures cost;
};

struct VariantInfo {
  std::string id, kind, onnx;  // onnx: as written in zoo.json
  std::string sha256;          // of the ONNX file
  CostFigures cost;
  std::optional<double> accuracy;  // from zoo.json, when given there
};

struct CutInfo {
  int after = 0;         // main-sequence position (see passes/partition)
  TensorSig tensor;      // as in the reference variant
  std::string producer;  // node producing it in the reference variant
};

struct Combination {
  std::string id;                     // variant ids joined by '+', one per position
  std::vector<std::string> variants;
  bool valid = true;
  std::string reason;                 // why not, when invalid
  std::string file;                   // materialized ONNX, relative to the stitch directory, or empty
};

struct TaskStitch {
  std::string name;
  std::string reference;              // variant whose FLOPs balance the parts
  std::vector<VariantInfo> variants;
  std::vector<CutInfo> candidateCuts; // every cut common to all variants
  std::vector<CutInfo> cuts;          // the chosen ones (S-1)
  std::vector<double> partFlopsShare; // reference FLOPs per position / total
  std::vector<std::vector<SubgraphInfo>> subgraphs;  // [position][variant]
  std::vector<Combination> combinations;             // all V^S, lexicographic by variant order

  int positions() const { return static_cast<int>(subgraphs.size()); }
  const SubgraphInfo& subgraph(int position, const std::string& variant) const;
};

struct StitchManifest {
  std::string tool;          // "zoo-stitch <version>"
  std::string zooPath;       // zoo.json, relative to the stitch directory
  std::string zooSha256;
  int subgraphs = 0;
  std::vector<std::string> requestedCuts;
  std::string materialize;   // none | all | list
  // The batch the analysis bound symbolic leading dims to (FLOPs, signatures
  // and the profile are at this batch), and every named symbolic dim the
  // variants carry with the value it was bound to. Files without them: 1, none.
  int64_t batch = 1;
  std::map<std::string, int64_t> dims;
  std::vector<TaskStitch> tasks;

  const TaskStitch* task(const std::string& name) const;
};

}  // namespace zp::zoo
