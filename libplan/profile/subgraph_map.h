// From node rows of a whole variant model to subgraph rows: the node times summed per
// stitched subgraph (task, position, variant), using the node names of the subgraph
// models that zoo-stitch wrote. The caller loads those models (subgraphFilesFor says
// which); the mapping itself reads no files.
#pragma once
#include <map>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "libplan/profile/profile_db.h"
#include "libplan/util/error.h"
#include "libplan/zoo/stitch_manifest.h"

namespace zp::profile {

struct SubgraphMapParams {
  int reportNames = 5;  // how many unmapped node names the result lists
};

struct SubgraphMapping {
  std::vector<ProfileRow> rows;  // kind subgraph, sorted by key
  int nodes = 0;                 // node rows given
  int mappedNodes = 0;
  double totalMs = 0, mappedMs = 0;
  std::vector<std::string> unmappedNames;  // node rows found in no subgraph (the first few)
  int untimedNodes = 0;                    // non-constant subgraph nodes that had no node row
  std::vector<std::string> missing;        // "task/position/variant/processor" subgraphs without any timed node

  double coverage() const { return totalMs > 0 ? mappedMs / totalMs : 0.0; }
  std::string summary() const;  // "29 node rows, 29 mapped (100.0% of time); 0 untimed subgraph nodes"
};

// Subgraph models by their file name in stitch.json (SubgraphInfo::file).
using SubgraphModels = std::map<std::string, onnx::ModelProto>;

// The subgraph files a mapping of these node rows needs: every position's subgraph
// of each (task, variant) the rows name, sorted. Errors as mapToSubgraphs's.
Expected<std::vector<std::string>> subgraphFilesFor(const std::vector<ProfileRow>& nodeRows,
                                                    const zoo::StitchManifest& manifest);

// Node rows are grouped by (task, variant, processor, policy, source); each group
// becomes one subgraph row per position of that task. A node belongs to the subgraph
// that contains it; a node present in several subgraphs (constants are duplicated
// into every subgraph that reads them) is counted once, in the first position where
// it is not a constant node (or the first where it appears, if it is constant
// everywhere). Node rows match subgraph nodes by node key (name, or
// "node_of_<output0>" for unnamed nodes). A subgraph row's median is the sum of its
// nodes' medians; its p90 the sum of their p90s (an upper estimate), when all have one.
// Errors: a task or variant not in the manifest, a subgraph model not in `models`.
Expected<SubgraphMapping> mapToSubgraphs(const std::vector<ProfileRow>& nodeRows, const zoo::StitchManifest& manifest,
                                         const SubgraphModels& models, const SubgraphMapParams& params = {});

}  // namespace zp::profile
