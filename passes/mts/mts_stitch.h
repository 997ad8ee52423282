// MTS model stitching (MTS §IV): merges T weight-shared task models into one
// ONNX graph. Every member keeps its own input and outputs ("<task>/<name>").
//
// Mode Mts: the members' inputs are concatenated along the batch (Eq. 1, 7),
// zero-padded into a common neuron layout (Eq. 4); every Conv / Gemm becomes
// block-structured weights over that layout (Eq. 2, 3, 5, 8) in which each
// shared block U is stored once and each member's exclusive blocks X, Y, Z once,
// with no zero blocks stored; BatchNormalization is folded into its Conv first
// (§IV-B3); residual Adds and other element-wise operators run on the stitched
// activations (§IV-B2/3), re-aligned when the two branches' layouts differ; the
// redundant products (P1·X2 in Eq. 6) are zeroed by a mask before they reach the
// next weighted layer.
//
// Mode NetFuse (the baseline of MTS §VI): no weight sharing; the members' inputs
// are concatenated along the channels, each Conv becomes one grouped Conv and
// each Gemm one block per member, every member's weights stored in full.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "libplan/util/error.h"
#include "libplan/zoo/member_io.h"
#include "passes/mts/task_net.h"

namespace zp::mts {

enum class StitchMode { Mts, NetFuse };

struct StitchParams {
  StitchMode mode = StitchMode::Mts;
  std::string graphName = "mts";
  std::vector<std::string> declaredShared;  // initializer names every member must share
  // Mode Mts: compute a weight block whose columns belong to some members only
  // on those members' batch rows (when contiguous) and zero-pad the others,
  // instead of on every row (the redundant P1·X2 products of Eq. 6). Off: the
  // paper's formulation, one product over all rows per block.
  bool restrictRows = true;
  // Mode Mts: members whose inputs have the same shape read ONE input (several
  // tasks on the same image): their batch rows stay one block until their
  // computations diverge, so layers they share run once on it.
  bool sharedInput = false;
};

using zoo::MemberIo;  // a member's input and outputs, original and stitched names

struct StitchStats {
  int64_t sharedBytes = 0;      // weight bytes stored once for several members
  int64_t exclusiveBytes = 0;   // weight bytes of one member
  int64_t auxBytes = 0;         // masks and index constants
  int64_t memberFoldedBytes = 0;  // sum over members of their (BN-folded) weight bytes
  int64_t memberBytes = 0;        // sum over members of their ONNX initializer bytes
  double flops = 0;             // of the stitched Conv / Gemm nodes (a MAC counts 2)
  double memberFlops = 0;       // of the members' own Conv / Gemm nodes
  int masks = 0, realignments = 0, weightedNodes = 0;
  std::vector<int64_t> memberSharedBytes;  // per member: bytes of its blocks that another member shares
  int64_t weightBytes() const { return sharedBytes + exclusiveBytes; }
};

struct StitchedGroup {
  onnx::ModelProto model;
  std::vector<MemberIo> members;
  StitchStats stats;
};

// Stitches the members (in this order; at most 32). Errors for bad groups:
// members that are not structurally aligned (same nodes in the same order),
// different input ranks or spatial sizes, a declared shared initializer missing,
// of different shapes or contents, and (mode Mts) a member that shares no weights.
// `models` are the members' shape-inferred ONNX models, `tasks` their names.
Expected<StitchedGroup> stitchGroup(const std::vector<const onnx::ModelProto*>& models,
                                    const std::vector<std::string>& tasks, const StitchParams& params);

}  // namespace zp::mts
